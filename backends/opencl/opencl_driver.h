// The OpenCL runtime's driver side (libmodrt_runtime_opencl.so): the
// libOpenCL entry points it resolves at first use, its devices, and the
// process-wide state with a context and queue per device. Shared by the
// device API (opencl_device_api.cc) and the modules (opencl_runtime.cc).
#ifndef MODRT_BACKENDS_OPENCL_OPENCL_DRIVER_H_
#define MODRT_BACKENDS_OPENCL_OPENCL_DRIVER_H_

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend_identity.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace opencl {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

// The driver entry points we use, resolved from libOpenCL at first use.
// clang-format off
#define MODRT_CL_FUNCTIONS(X)  \
  X(clGetPlatformIDs)          \
  X(clGetDeviceIDs)            \
  X(clGetDeviceInfo)           \
  X(clGetKernelWorkGroupInfo)  \
  X(clCreateContext)           \
  X(clReleaseContext)          \
  X(clCreateCommandQueue)      \
  X(clReleaseCommandQueue)     \
  X(clCreateBuffer)            \
  X(clReleaseMemObject)        \
  X(clEnqueueWriteBuffer)      \
  X(clEnqueueReadBuffer)       \
  X(clCreateProgramWithSource) \
  X(clCreateProgramWithBinary) \
  X(clBuildProgram)            \
  X(clGetProgramBuildInfo)     \
  X(clReleaseProgram)          \
  X(clCreateKernel)            \
  X(clReleaseKernel)           \
  X(clSetKernelArg)            \
  X(clEnqueueNDRangeKernel)    \
  X(clEnqueueCopyBuffer)       \
  X(clEnqueueMapBuffer)        \
  X(clEnqueueUnmapMemObject)   \
  X(clEnqueueMarkerWithWaitList)  \
  X(clEnqueueBarrierWithWaitList) \
  X(clCreateUserEvent)         \
  X(clSetUserEventStatus)      \
  X(clGetEventInfo)            \
  X(clGetEventProfilingInfo)   \
  X(clWaitForEvents)           \
  X(clReleaseEvent)            \
  X(clFlush)                   \
  X(clFinish)
// clang-format on

struct ClApi {
#define MODRT_CL_DECLARE(name) decltype(&::name) name = nullptr;
  MODRT_CL_FUNCTIONS(MODRT_CL_DECLARE)
#undef MODRT_CL_DECLARE
};

inline std::string ClError(cl_int code) {
  switch (code) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_PROFILING_INFO_NOT_AVAILABLE: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
      return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (a command before it failed)";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL ICD is installed)";
    default: return "OpenCL error " + std::to_string(code);
  }
}

#define MODRT_CL_CHECK(call, what)                                                  \
  do {                                                                              \
    cl_int modrt_cl_status = (call);                                                \
    if (modrt_cl_status != CL_SUCCESS) {                                            \
      Fail("RuntimeError", "OpenCL ", what, " failed: ", ClError(modrt_cl_status)); \
    }                                                                               \
  } while (0)

// Work items per dimension of a launch (grid x block): the ids kernels take
// from get_global_id fit in 32 bits on the drivers here (PoCL traps beyond it),
// and work-group ids in an int.
constexpr uint64_t kMaxGlobalItems = (uint64_t{1} << 32) - 1;
constexpr uint64_t kMaxGroups = (uint64_t{1} << 31) - 1;

class Graph;  // opencl_graphs.h

// A modrt stream on OpenCL, the plugin's stream object: a command queue, and
// the graph it records into while a capture is under way (graph_begin ..
// graph_end; the core captures on one thread, and a launch's arguments say
// whether its stream captures, ModrtKernelArgs.capturing).
struct Stream {
  explicit Stream(cl_command_queue queue);
  ~Stream();  // opencl_graphs.cc: a capture left unfinished goes with it
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  const cl_command_queue queue;
  std::unique_ptr<Graph> capture;
};

struct Device {
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  // The default stream (a NULL stream from the core): on `queue`.
  std::unique_ptr<Stream> default_stream;
  // The launch limits, read once (launches check them).
  std::string name;
  size_t max_item_sizes[3] = {1, 1, 1};  // CL_DEVICE_MAX_WORK_ITEM_SIZES
  size_t max_group_size = 1;             // CL_DEVICE_MAX_WORK_GROUP_SIZE
};

// Process-wide OpenCL state: the driver, and a context and queue per device.
class Workspace : public LazyDriverState<Workspace> {
 public:
  int count() const { return static_cast<int>(devices_.size()); }
  const ClApi& cl() const { return cl_; }
  const Device& device(int id) const {
    CheckDevice(kBackendIdentity, id);
    return devices_[id];
  }

  std::string DeviceString(int id, cl_device_info param) const {
    size_t size = 0;
    MODRT_CL_CHECK(cl_.clGetDeviceInfo(device(id).id, param, 0, nullptr, &size), "clGetDeviceInfo");
    std::string s(size, '\0');
    MODRT_CL_CHECK(cl_.clGetDeviceInfo(device(id).id, param, size, s.data(), nullptr),
                   "clGetDeviceInfo");
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
  }

  template <typename T>
  T DeviceValue(int id, cl_device_info param) const {
    T v{};
    MODRT_CL_CHECK(cl_.clGetDeviceInfo(device(id).id, param, sizeof(T), &v, nullptr),
                   "clGetDeviceInfo");
    return v;
  }

 private:
  friend class LazyDriverState<Workspace>;

  std::string Init() {
    // MODRT_OPENCL_DRIVER_LIBRARY, else the system's ICD loader.
    std::vector<std::string> candidates =
        DriverLibraryCandidates(kBackendIdentity.name, {"libOpenCL.so.1", "libOpenCL.so"});
    const std::string& library = candidates.front();
    if (!lib_.Open(candidates)) return library + ": " + lib_.error();
#define MODRT_CL_RESOLVE(name) \
  if (!lib_.Resolve(#name, &cl_.name)) return library + ": " + lib_.error();
    MODRT_CL_FUNCTIONS(MODRT_CL_RESOLVE)
#undef MODRT_CL_RESOLVE
    cl_uint nplatforms = 0;
    cl_int status = cl_.clGetPlatformIDs(0, nullptr, &nplatforms);
    if (status != CL_SUCCESS || nplatforms == 0) {
      return "no OpenCL platform found (clGetPlatformIDs: " +
             (status == CL_SUCCESS ? std::string("0 platforms") : ClError(status)) +
             "); is an ICD such as PoCL installed?";
    }
    std::vector<cl_platform_id> platforms(nplatforms);
    MODRT_CL_CHECK(cl_.clGetPlatformIDs(nplatforms, platforms.data(), nullptr), "clGetPlatformIDs");
    for (cl_platform_id p : platforms) {
      cl_uint ndev = 0;
      if (cl_.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev) != CL_SUCCESS) continue;
      std::vector<cl_device_id> ids(ndev);
      if (cl_.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, ids.data(), nullptr) != CL_SUCCESS)
        continue;
      for (cl_device_id id : ids) {
        cl_int err = CL_SUCCESS;
        Device d;
        d.id = id;
        d.context = cl_.clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err);
        if (err != CL_SUCCESS) continue;
        // Profiling on every queue: events carry device timestamps.
        d.queue = cl_.clCreateCommandQueue(d.context, id, CL_QUEUE_PROFILING_ENABLE, &err);
        if (err != CL_SUCCESS) {
          cl_.clReleaseContext(d.context);
          continue;
        }
        ReadLimits(&d);
        d.default_stream = std::make_unique<Stream>(d.queue);
        devices_.push_back(std::move(d));
      }
    }
    if (devices_.empty()) return "the OpenCL platforms report no usable device";
    return "";
  }

  void ReadLimits(Device* d) const {
    char name[256] = {};
    cl_.clGetDeviceInfo(d->id, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
    d->name = name;
    cl_uint dims = 0;
    cl_.clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof(dims), &dims, nullptr);
    std::vector<size_t> sizes(std::max<cl_uint>(dims, 3), 1);
    cl_.clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t) * dims, sizes.data(),
                        nullptr);
    std::copy_n(sizes.begin(), 3, d->max_item_sizes);
    cl_.clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t), &d->max_group_size,
                        nullptr);
  }

  DriverLibrary lib_;
  ClApi cl_;
  std::vector<Device> devices_;
};

// The stream the core names: one of stream_create's, or the device's default (NULL).
inline Stream& StreamOf(int device_id, void* stream) {
  return stream ? *static_cast<Stream*>(stream)
                : *Workspace::Get().device(device_id).default_stream;
}
inline cl_command_queue QueueOf(int device_id, void* stream) {
  return StreamOf(device_id, stream).queue;
}

// Registers the device layer (opencl_device_api.cc) with the core.
void RegisterDeviceApi();

}  // namespace opencl
}  // namespace modrt

#endif  // MODRT_BACKENDS_OPENCL_OPENCL_DRIVER_H_
