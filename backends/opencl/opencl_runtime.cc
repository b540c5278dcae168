// libmodrt_runtime_opencl.so: OpenCL devices and modules on a lazily loaded
// libOpenCL (PoCL on a plain CPU machine).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend_identity.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/launch_limits.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace opencl {
namespace {

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
  X(clEnqueueMarkerWithWaitList)  \
  X(clEnqueueBarrierWithWaitList) \
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

std::string ClError(cl_int code) {
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

struct Device {
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
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
        devices_.push_back(d);
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

// The queue a stream names: its own, or the device's default queue (NULL).
cl_command_queue QueueOf(int device_id, void* stream) {
  return stream ? static_cast<cl_command_queue>(stream) : Workspace::Get().device(device_id).queue;
}

// The queue a launch or copy on `device_id` goes to now (core->current_stream).
cl_command_queue CurrentQueue(int device_id) {
  return QueueOf(device_id, CurrentStream(kDLOpenCL, device_id));
}

// Native streams (plugin_api.h, ModrtStreamExtension): a modrt stream is a
// command queue with profiling, an event a marker (clEnqueueMarkerWithWaitList)
// whose CL_PROFILING_COMMAND_END is its device time. No graph extension: PoCL
// has no cl_khr_command_buffer, so graphs replay the core's list.
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
    return q;
  }
  void StreamDestroy(int, void* stream) override {
    Workspace::Get().cl().clReleaseCommandQueue(static_cast<cl_command_queue>(stream));
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
};

// Creates a program from `code` (OpenCL C when fmt is "cl", else a device
// binary) and builds it for one device. On a build failure returns null with
// the build status and log in `log`; driver errors throw.
cl_program CreateAndBuild(int device_id, const std::string& fmt, const std::string& code,
                          std::string* log) {
  Workspace& ws = Workspace::Get();
  const ClApi& cl = ws.cl();
  const Device& dev = ws.device(device_id);
  cl_int err = CL_SUCCESS;
  cl_program program = nullptr;
  if (fmt == "cl") {
    const char* text = code.c_str();
    size_t length = code.size();
    program = cl.clCreateProgramWithSource(dev.context, 1, &text, &length, &err);
  } else {
    auto bytes = reinterpret_cast<const unsigned char*>(code.data());
    size_t length = code.size();
    cl_int binary_status = CL_SUCCESS;
    program = cl.clCreateProgramWithBinary(dev.context, 1, &dev.id, &length, &bytes, &binary_status,
                                           &err);
  }
  MODRT_CL_CHECK(err, StrCat("loading the ", fmt, " program"));
  cl_int status = cl.clBuildProgram(program, 1, &dev.id, "", nullptr, nullptr);
  if (status == CL_SUCCESS) return program;
  size_t size = 0;
  cl.clGetProgramBuildInfo(program, dev.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string text(size, '\0');
  cl.clGetProgramBuildInfo(program, dev.id, CL_PROGRAM_BUILD_LOG, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  cl.clReleaseProgram(program);
  *log = StrCat(ClError(status), ":\n", text);
  return nullptr;
}

// `opencl.check_build(device_id, source, names)`: builds OpenCL C on a device
// and creates each kernel named in the space-separated `names`, then releases
// them: "" when all is well, else the build log or the missing kernel. What
// modrt.compile runs where this runtime and a device are present.
std::string CheckBuild(int device_id, const std::string& source, const std::string& names) {
  std::string log;
  cl_program program = CreateAndBuild(device_id, "cl", source, &log);
  if (program == nullptr) return log;
  const ClApi& cl = Workspace::Get().cl();
  std::string missing;
  size_t at = 0;
  while (at < names.size()) {
    size_t end = names.find(' ', at);
    if (end == std::string::npos) end = names.size();
    std::string name = names.substr(at, end - at);
    at = end + 1;
    if (name.empty()) continue;
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = cl.clCreateKernel(program, name.c_str(), &err);
    if (kernel != nullptr) cl.clReleaseKernel(kernel);
    if (err != CL_SUCCESS) {
      missing += StrCat("no kernel '", name, "' in the built program (", ClError(err), ")\n");
    }
  }
  cl.clReleaseProgram(program);
  return missing;
}

// One kernel on one device. cl_kernel argument state is shared, so setting
// arguments and enqueueing happen under one lock.
struct Kernel {
  std::mutex mu;
  cl_kernel kernel = nullptr;
  size_t max_group_size = 0;  // CL_KERNEL_WORK_GROUP_SIZE on its device
};

class OpenCLModule final : public PayloadModule {
 public:
  explicit OpenCLModule(Payload payload) : PayloadModule(std::move(payload)) {}
  ~OpenCLModule() override {
    const ClApi& cl = Workspace::Get().cl();
    for (auto& per_device : kernels_) {
      for (auto& k : per_device) {
        if (k && k->kernel) cl.clReleaseKernel(k->kernel);
      }
    }
    for (cl_program p : programs_) {
      if (p) cl.clReleaseProgram(p);
    }
  }

  ObjectRef GetFunction(const std::string& name) override {
    return PackedLaunchingFunction(name, kDLOpenCL);
  }
  // A launch goes down once: the core packs the arguments, then calls here.
  bool LaunchesPacked() const override { return true; }
  void LaunchPacked(const FunctionInfo& info, size_t index, const PackedArgs& k) override {
    const int device_id = k.device_id;
    Workspace& ws = Workspace::Get();
    const Device& dev = ws.device(device_id);
    Kernel& kernel = GetKernel(device_id, index, info.name);
    const ClApi& cl = ws.cl();
    bool has_block = false, has_dyn_shared = false;
    for (const auto& tag : info.launch_tags) {
      has_block |= tag.rfind("threadIdx", 0) == 0;
      has_dyn_shared |= tag == "dyn_shared_mem";
    }
    CheckLimits(info, k.launch, dev, kernel);
    size_t global[3], local[3];
    for (int d = 0; d < 3; ++d) {
      local[d] = static_cast<size_t>(k.launch.block[d]);
      global[d] = static_cast<size_t>(k.launch.grid[d]) * local[d];
    }
    std::lock_guard lock(kernel.mu);
    for (size_t i = 0; i < k.ptrs.size(); ++i) {
      MODRT_CL_CHECK(
          cl.clSetKernelArg(kernel.kernel, static_cast<cl_uint>(i), k.sizes[i], k.ptrs[i]),
          StrCat("setting argument ", i, " of ", info.name));
    }
    if (has_dyn_shared) {
      // Dynamic shared memory is the kernel's trailing __local pointer.
      MODRT_CL_CHECK(cl.clSetKernelArg(kernel.kernel, static_cast<cl_uint>(k.ptrs.size()),
                                       static_cast<size_t>(k.launch.dyn_shared_bytes), nullptr),
                     StrCat("setting the dynamic local memory of ", info.name));
    }
    cl_command_queue queue = CurrentQueue(device_id);
    MODRT_CL_CHECK(cl.clEnqueueNDRangeKernel(queue, kernel.kernel, 3, nullptr, global,
                                             has_block ? local : nullptr, 0, nullptr, nullptr),
                   StrCat("launch of ", info.name));
  }

 private:
  // OpenCL reports a block over the limits only as CL_INVALID_WORK_GROUP_SIZE
  // and has none for the grid (PoCL traps at 2**32 work items): checked here,
  // before the driver sees the launch.
  static void CheckLimits(const FunctionInfo& info, const LaunchConfig& launch, const Device& dev,
                          const Kernel& kernel) {
    int64_t threads = 1;
    for (int a = 0; a < 3; ++a) {
      const std::string axis(1, "xyz"[a]);
      if (static_cast<uint64_t>(launch.grid[a]) > kMaxGroups) {
        Fail("ValueError", LaunchLimitExceeded(info.name, "blockIdx." + axis, launch.grid[a],
                                               kMaxGroups, "work-groups per dimension", dev.name));
      }
      if (static_cast<uint64_t>(launch.block[a]) > dev.max_item_sizes[a]) {
        Fail("ValueError",
             LaunchLimitExceeded(info.name, "threadIdx." + axis, launch.block[a],
                                 dev.max_item_sizes[a],
                                 StrCat("CL_DEVICE_MAX_WORK_ITEM_SIZES[", a, "]"), dev.name));
      }
      const uint64_t items =
          static_cast<uint64_t>(launch.grid[a]) * static_cast<uint64_t>(launch.block[a]);
      if (items > kMaxGlobalItems) {
        Fail("ValueError",
             LaunchLimitExceeded(info.name, "blockIdx." + axis + " * threadIdx." + axis,
                                 static_cast<int64_t>(items), kMaxGlobalItems,
                                 "work items per dimension", dev.name));
      }
      threads *= launch.block[a];
    }
    if (static_cast<uint64_t>(threads) > kernel.max_group_size) {
      Fail("ValueError",
           LaunchLimitExceeded(info.name, "threads per block", threads, kernel.max_group_size,
                               "CL_KERNEL_WORK_GROUP_SIZE", dev.name));
    }
  }

  // Builds the program for a device on first use (source is compiled here:
  // the receiving end of a cross-compile), then creates the kernel.
  Kernel& GetKernel(int device_id, size_t index, const std::string& name) {
    std::lock_guard lock(mu_);
    Workspace& ws = Workspace::Get();
    const ClApi& cl = ws.cl();
    if (programs_.size() <= static_cast<size_t>(device_id)) {
      programs_.resize(device_id + 1, nullptr);
      kernels_.resize(device_id + 1);
    }
    cl_program& program = programs_[device_id];
    if (program == nullptr) program = BuildProgram(device_id);
    auto& per_device = kernels_[device_id];
    if (per_device.empty()) per_device.resize(payload().fmap.size());
    std::unique_ptr<Kernel>& slot = per_device[index];
    if (!slot) {
      cl_int err = CL_SUCCESS;
      cl_kernel kernel = cl.clCreateKernel(program, name.c_str(), &err);
      MODRT_CL_CHECK(err,
                     StrCat("creating kernel '", name, "' (is it a __kernel in the program?)"));
      slot = std::make_unique<Kernel>();
      slot->kernel = kernel;
      const Device& dev = ws.device(device_id);
      slot->max_group_size = dev.max_group_size;
      cl.clGetKernelWorkGroupInfo(kernel, dev.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(size_t),
                                  &slot->max_group_size, nullptr);
    }
    return *slot;
  }

  cl_program BuildProgram(int device_id) {
    std::string log;
    cl_program program = CreateAndBuild(device_id, payload().fmt, payload().code, &log);
    if (program == nullptr) {
      Fail("RuntimeError", "OpenCL program build failed on ",
           Workspace::Get().DeviceString(device_id, CL_DEVICE_NAME), ":\n", log);
    }
    return program;
  }

  std::mutex mu_;
  std::vector<cl_program> programs_;                           // per device
  std::vector<std::vector<std::unique_ptr<Kernel>>> kernels_;  // per device, per function
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<OpenCLModule>(std::move(p));
  });
  static OpenCLDeviceAPI api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
  RegisterGlobal("opencl.check_build", [](const Args& args, Ret* ret) {
    args.ExpectCount(3, "opencl.check_build");
    ret->SetStr(CheckBuild(static_cast<int>(args.Int(0)), std::string(args.Str(1)),
                           std::string(args.Str(2))));
  });
}

}  // namespace
}  // namespace opencl
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::opencl::InitPlugin)
