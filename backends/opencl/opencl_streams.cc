// The OpenCL device layer's queues (plugin::Queues): a modrt stream is a
// Stream (opencl_driver.h), a command queue with profiling, an event a marker
// (clEnqueueMarkerWithWaitList) whose CL_PROFILING_COMMAND_END is its device
// time.
#include "opencl_streams.h"

#include <memory>

namespace modrt {
namespace opencl {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

class OpenCLQueues final : public Queues {
 public:
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

  const char* QueueDescription(int, bool is_default) override {
    return is_default ? "the device's OpenCL command queue"
                      : "an OpenCL command queue of its own (profiling enabled)";
  }
};

}  // namespace

void AddQueues(DeviceLayer* layer) {
  static OpenCLQueues queues;
  layer->queues = &queues;
}

}  // namespace opencl
}  // namespace modrt
