// The OpenCL device layer of libmodrt_runtime_opencl.so: the device (memory,
// copies, attributes) and pinned host memory here, the queues in
// opencl_streams.cc, the graphs in opencl_graphs.cc.
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
#include "opencl_streams.h"

namespace modrt {
namespace opencl {
namespace {

// The device: memory, whole and ranged copies (the offset, from the tensor's
// first byte, is into the cl_mem, not a host address), attributes.
class OpenCLDeviceAPI final : public DriverDeviceAPI<Workspace>, public RangedCopies {
 public:
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
};

class OpenCLPinnedHost final : public PinnedHost {
 public:
  // A CL_MEM_ALLOC_HOST_PTR buffer (the driver places it
  // where the device reads host memory directly), mapped for the host's
  // whole use of it; the pointer's copies are then the driver's fast path.
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

 private:
  std::mutex pinned_mu_;
  std::map<void*, cl_mem> pinned_;  // mapped pointer -> its buffer
};

}  // namespace

void RegisterDeviceApi() {
  static OpenCLDeviceAPI api;
  static OpenCLPinnedHost pinned;
  DeviceLayer layer;
  layer.device = &api;
  layer.ranged_copies = &api;
  layer.pinned_host = &pinned;
  AddQueues(&layer);
  AddGraphs(&layer);
  RegisterDeviceLayer(kBackendIdentity.name, layer);
}

}  // namespace opencl
}  // namespace modrt
