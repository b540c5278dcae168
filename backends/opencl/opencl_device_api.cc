// The OpenCL device API of libmodrt_runtime_opencl.so: memory, copies, device
// attributes, and native streams and events on command queues.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "modrt/plugin/plugin.h"
#include "opencl_driver.h"
#include "opencl_graphs.h"

namespace modrt {
namespace opencl {
namespace {

// Native streams (plugin_api.h, ModrtStreamExtension): a modrt stream is a
// Stream (opencl_driver.h), a command queue with profiling, an event a marker
// (clEnqueueMarkerWithWaitList) whose CL_PROFILING_COMMAND_END is its device time. Graphs
// (ModrtGraphExtension) without cl_khr_command_buffer, which PoCL does not offer: a captured launch
// is kept as a cl_kernel with its arguments set (opencl_graphs.h), a replay
// enqueues them, a rebound replay is re-recorded (graph_update).
class OpenCLDeviceAPI final : public DriverDeviceAPI<Workspace> {
 public:
  bool HasStreams() const override { return true; }
  void* StreamCreate(int id) override {
    Workspace& ws = Workspace::Get();
    const Device& dev = ws.device(id);
    cl_int err = CL_SUCCESS;
    cl_command_queue q =
        ws.cl().clCreateCommandQueue(dev.context, dev.id, CL_QUEUE_PROFILING_ENABLE, &err);
    MODRT_CL_CHECK(err, "clCreateCommandQueue");
    return std::make_unique<Stream>(q).release();  // owned by the core until StreamDestroy
  }
  void StreamDestroy(int, void* stream) override {
    std::unique_ptr<Stream> owned(static_cast<Stream*>(stream));
    Workspace::Get().cl().clReleaseCommandQueue(owned->queue);
  }
  void StreamSynchronize(int id, void* stream) override {
    MODRT_CL_CHECK(Workspace::Get().cl().clFinish(QueueOf(id, stream)), "clFinish");
  }
  void* EventRecord(int id, void* stream, bool) override {
    const ClApi& cl = Workspace::Get().cl();
    cl_command_queue q = QueueOf(id, stream);
    cl_event event = nullptr;
    MODRT_CL_CHECK(cl.clEnqueueMarkerWithWaitList(q, 0, nullptr, &event),
                   "clEnqueueMarkerWithWaitList");
    // Submitted now (with the work before it): another queue may wait for
    // it (stream_wait_event), which does not flush this one.
    cl.clFlush(q);
    return event;
  }
  bool EventQuery(int, void* event) override {
    cl_int status = CL_QUEUED;
    MODRT_CL_CHECK(Workspace::Get().cl().clGetEventInfo(static_cast<cl_event>(event),
                                                        CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                        sizeof(status), &status, nullptr),
                   "clGetEventInfo");
    if (status < 0) MODRT_CL_CHECK(status, "a command before the event");
    return status == CL_COMPLETE;
  }
  void EventSynchronize(int id, void* event) override {
    cl_event e = static_cast<cl_event>(event);
    if (Workspace::Get().cl().clWaitForEvents(1, &e) != CL_SUCCESS) {
      EventQuery(id, event);  // the command's own failure, when it has one
      Fail("RuntimeError", "OpenCL clWaitForEvents failed");
    }
  }
  double EventElapsedMs(int, void* start, void* end) override {
    const ClApi& cl = Workspace::Get().cl();
    cl_ulong t0 = 0, t1 = 0;
    MODRT_CL_CHECK(cl.clGetEventProfilingInfo(static_cast<cl_event>(start),
                                              CL_PROFILING_COMMAND_END, sizeof(t0), &t0, nullptr),
                   "clGetEventProfilingInfo");
    MODRT_CL_CHECK(cl.clGetEventProfilingInfo(static_cast<cl_event>(end), CL_PROFILING_COMMAND_END,
                                              sizeof(t1), &t1, nullptr),
                   "clGetEventProfilingInfo");
    return (static_cast<double>(t1) - static_cast<double>(t0)) * 1e-6;
  }
  void EventDestroy(int, void* event) override {
    Workspace::Get().cl().clReleaseEvent(static_cast<cl_event>(event));
  }
  void StreamWaitEvent(int id, void* stream, void* event) override {
    cl_event e = static_cast<cl_event>(event);
    MODRT_CL_CHECK(
        Workspace::Get().cl().clEnqueueBarrierWithWaitList(QueueOf(id, stream), 1, &e, nullptr),
        "clEnqueueBarrierWithWaitList");
  }

  bool HasGraphs() const override { return true; }
  void GraphBegin(int id, void* stream) override {
    Stream& s = StreamOf(id, stream);
    if (s.capture != nullptr)
      Fail("RuntimeError", "this OpenCL queue is already capturing a graph");
    s.capture = std::make_unique<Graph>(id);
  }
  void* GraphEnd(int id, void* stream) override {
    std::unique_ptr<Graph> graph = std::move(StreamOf(id, stream).capture);
    if (graph == nullptr) Fail("RuntimeError", "no graph is being captured on this OpenCL queue");
    return graph.release();  // owned by the core until GraphDestroy
  }
  void GraphLaunch(int id, void* graph, void* stream) override {
    static_cast<Graph*>(graph)->Launch(QueueOf(id, stream));
  }
  void GraphDestroy(int, void* graph) override {
    std::unique_ptr<Graph> owned(static_cast<Graph*>(graph));  // freed on return
  }
  bool HasGraphUpdate() const override { return true; }
  void GraphUpdate(int id, void* stream, void* graph) override {
    std::unique_ptr<Graph> recorded(static_cast<Graph*>(GraphEnd(id, stream)));
    static_cast<Graph*>(graph)->Replace(std::move(*recorded));
  }

  void CopyFromHostAsync(const void* host, DLTensor* t, size_t offset, size_t nbytes,
                         void* stream) override {
    if (nbytes == 0) return;
    const ClApi& cl = Workspace::Get().cl();
    cl_command_queue q = QueueOf(t->device.device_id, stream);
    MODRT_CL_CHECK(
        cl.clEnqueueWriteBuffer(q, static_cast<cl_mem>(t->data), CL_FALSE, t->byte_offset + offset,
                                nbytes, host, 0, nullptr, nullptr),
        "host-to-device copy");
  }
  void CopyToHostAsync(const DLTensor* t, size_t offset, void* host, size_t nbytes,
                       void* stream) override {
    if (nbytes == 0) return;
    const ClApi& cl = Workspace::Get().cl();
    cl_command_queue q = QueueOf(t->device.device_id, stream);
    MODRT_CL_CHECK(
        cl.clEnqueueReadBuffer(q, static_cast<cl_mem>(t->data), CL_FALSE, t->byte_offset + offset,
                               nbytes, host, 0, nullptr, nullptr),
        "device-to-host copy");
  }
  void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
                          size_t nbytes, void* stream) override {
    if (nbytes == 0) return;
    const ClApi& cl = Workspace::Get().cl();
    cl_command_queue q = QueueOf(dst->device.device_id, stream);
    MODRT_CL_CHECK(
        cl.clEnqueueCopyBuffer(q, static_cast<cl_mem>(src->data), static_cast<cl_mem>(dst->data),
                               src->byte_offset + src_offset, dst->byte_offset + dst_offset, nbytes,
                               0, nullptr, nullptr),
        "device-to-device copy");
  }

  void GetAttr(int id, std::string_view name, Ret* ret) override {
    Workspace& ws = Workspace::Get();
    if (name == "name") return ret->SetStr(ws.DeviceString(id, CL_DEVICE_NAME));
    if (name == "vendor") return ret->SetStr(ws.DeviceString(id, CL_DEVICE_VENDOR));
    if (name == "driver_version") return ret->SetStr(ws.DeviceString(id, CL_DRIVER_VERSION));
    if (name == "device_version") return ret->SetStr(ws.DeviceString(id, CL_DEVICE_VERSION));
    if (name == "max_threads_per_block") {
      return ret->SetInt(
          static_cast<int64_t>(ws.DeviceValue<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE)));
    }
    if (name == "max_shared_memory_per_block") {
      return ret->SetInt(
          static_cast<int64_t>(ws.DeviceValue<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE)));
    }
    if (name == "multi_processor_count") {
      return ret->SetInt(ws.DeviceValue<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
    }
    if (name == "global_memory") {
      return ret->SetInt(
          static_cast<int64_t>(ws.DeviceValue<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE)));
    }
    if (name == "max_alloc_size") {
      return ret->SetInt(
          static_cast<int64_t>(ws.DeviceValue<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE)));
    }
    if (name == "warp_size") return ret->SetInt(1);  // OpenCL has no fixed SIMD width
  }
  void* Alloc(int id, size_t nbytes) override {
    Workspace& ws = Workspace::Get();
    cl_int err = CL_SUCCESS;
    // A CPU device's memory is host memory: CL_MEM_ALLOC_HOST_PTR has PoCL
    // allocate it now, so that running out is this call's error. Without it
    // PoCL allocates at the buffer's first use and aborts (an assertion) when
    // that fails.
    const bool host_memory =
        (ws.DeviceValue<cl_device_type>(id, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
    const cl_mem_flags flags = CL_MEM_READ_WRITE | (host_memory ? CL_MEM_ALLOC_HOST_PTR : 0);
    cl_mem mem = ws.cl().clCreateBuffer(ws.device(id).context, flags, std::max<size_t>(nbytes, 1),
                                        nullptr, &err);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
        err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE) {
      Fail("MemoryError", "opencl(", id, "): cannot allocate ", nbytes,
           " bytes: the driver refused (", ClError(err), ")");
    }
    MODRT_CL_CHECK(err, StrCat("allocation of ", nbytes, " bytes"));
    return mem;
  }
  void Free(int, void* ptr) override {
    Workspace::Get().cl().clReleaseMemObject(static_cast<cl_mem>(ptr));
  }

  // Pinned host memory: a CL_MEM_ALLOC_HOST_PTR buffer (the driver places it
  // where the device reads host memory directly), mapped for the host's
  // whole use of it; the pointer's copies are then the driver's fast path.
  bool HasPinnedHost() const override { return true; }
  void* PinnedHostAlloc(int id, size_t nbytes) override {
    Workspace& ws = Workspace::Get();
    const Device& dev = ws.device(id);
    cl_int err = CL_SUCCESS;
    cl_mem mem = ws.cl().clCreateBuffer(dev.context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                        nbytes, nullptr, &err);
    if (err != CL_SUCCESS) {
      Fail(err == CL_OUT_OF_HOST_MEMORY || err == CL_MEM_OBJECT_ALLOCATION_FAILURE ? "MemoryError"
                                                                                   : "RuntimeError",
           "opencl(", id, "): cannot allocate ", nbytes, " bytes of pinned host memory (",
           ClError(err), ")");
    }
    void* ptr = ws.cl().clEnqueueMapBuffer(dev.queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                           nbytes, 0, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
      ws.cl().clReleaseMemObject(mem);
      MODRT_CL_CHECK(err, "clEnqueueMapBuffer of pinned host memory");
    }
    std::lock_guard lock(pinned_mu_);
    pinned_[ptr] = mem;
    return ptr;
  }
  void PinnedHostFree(int id, void* ptr) override {
    cl_mem mem = nullptr;
    {
      std::lock_guard lock(pinned_mu_);
      auto it = pinned_.find(ptr);
      if (it == pinned_.end()) Fail("ValueError", "not pinned host memory of opencl(", id, ")");
      mem = it->second;
      pinned_.erase(it);
    }
    Workspace& ws = Workspace::Get();
    ws.cl().clEnqueueUnmapMemObject(ws.device(id).queue, mem, ptr, 0, nullptr, nullptr);
    ws.cl().clFinish(ws.device(id).queue);
    ws.cl().clReleaseMemObject(mem);
  }
  const char* PinnedHostDescription() const override {
    return "a mapped CL_MEM_ALLOC_HOST_PTR buffer (host memory the device reads directly)";
  }
  const char* QueueDescription(int, bool is_default) override {
    return is_default ? "the device's OpenCL command queue"
                      : "an OpenCL command queue of its own (profiling enabled)";
  }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    MODRT_CL_CHECK(ws.cl().clEnqueueWriteBuffer(ws.device(t->device.device_id).queue,
                                                static_cast<cl_mem>(t->data), CL_TRUE,
                                                t->byte_offset, nbytes, src, 0, nullptr, nullptr),
                   "host-to-device copy");
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    MODRT_CL_CHECK(ws.cl().clEnqueueReadBuffer(ws.device(t->device.device_id).queue,
                                               static_cast<cl_mem>(t->data), CL_TRUE,
                                               t->byte_offset, nbytes, dst, 0, nullptr, nullptr),
                   "device-to-host copy");
  }
  void Sync(int id) override {
    Workspace& ws = Workspace::Get();
    MODRT_CL_CHECK(ws.cl().clFinish(ws.device(id).queue), "clFinish");
  }
  // Part of a buffer: the offset (from the tensor's first byte) is into the
  // cl_mem, not a host address.
  bool HasRangedCopy() const override { return true; }
  void CopyRangeFromHost(const void* src, DLTensor* t, size_t offset, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    MODRT_CL_CHECK(ws.cl().clEnqueueWriteBuffer(
                       ws.device(t->device.device_id).queue, static_cast<cl_mem>(t->data), CL_TRUE,
                       t->byte_offset + offset, nbytes, src, 0, nullptr, nullptr),
                   "host-to-device copy");
  }
  void CopyRangeToHost(const DLTensor* t, size_t offset, void* dst, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    MODRT_CL_CHECK(ws.cl().clEnqueueReadBuffer(
                       ws.device(t->device.device_id).queue, static_cast<cl_mem>(t->data), CL_TRUE,
                       t->byte_offset + offset, nbytes, dst, 0, nullptr, nullptr),
                   "device-to-host copy");
  }

 private:
  std::mutex pinned_mu_;
  std::map<void*, cl_mem> pinned_;  // mapped pointer -> its buffer
};

}  // namespace

void RegisterDeviceApi() {
  static OpenCLDeviceAPI api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
}

}  // namespace opencl
}  // namespace modrt
