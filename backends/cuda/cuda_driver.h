// The CUDA driver API (libcuda.so.1) as libmodrt_runtime_cuda.so uses it:
// the few driver types, constants and entry points, declared from their
// documented, stable C ABI (no CUDA header or library is needed to build),
// resolved lazily with dlopen, and the process-wide Workspace that holds
// them with each device's primary context.
#ifndef MODRT_BACKENDS_CUDA_CUDA_DRIVER_H_
#define MODRT_BACKENDS_CUDA_CUDA_DRIVER_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backend_identity.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT: the driver's 64-bit device address
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUgraph = CUgraph_st*;
using CUgraphExec = CUgraphExec_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
// CUdevice_attribute
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMaxSharedMemoryPerBlock = 8;
constexpr int kAttrWarpSize = 10;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
// CUfunction_attribute
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
// CUjit_option
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;
// CUstream_flags: no implicit synchronization with the legacy default stream.
constexpr unsigned kStreamNonBlocking = 1;
// CUevent_flags
constexpr unsigned kEventDefault = 0;
constexpr unsigned kEventDisableTiming = 2;
// cuMemHostAlloc: page-locked memory usable with every context.
constexpr unsigned kMemHostAllocPortable = 1;
// CUstreamCaptureMode: only this thread's unsafe calls are refused while it captures.
constexpr int kCaptureModeThreadLocal = 1;
// Dynamic shared memory above this needs the kernel's opt-in.
constexpr int64_t kDefaultSharedMemoryLimit = 48 * 1024;

// (member, exported symbol, return type, parameters)
#define MODRT_CU_FUNCTIONS(X)                                                                    \
  X(cuInit, "cuInit", CUresult, (unsigned int))                                                  \
  X(cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int*))                                  \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int*))                                      \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice*, int))                                      \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char*, int, CUdevice))                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int*, int, CUdevice))               \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t*, CUdevice))                      \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext*, CUdevice))      \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                                   \
  X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, ())                                          \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr*, size_t))                               \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                                          \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr, const void*, size_t))               \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void*, CUdeviceptr, size_t))                     \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult,                                         \
    (CUdeviceptr, const void*, size_t, CUstream))                                                \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult, (void*, CUdeviceptr, size_t, CUstream)) \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUresult,                                         \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                                                \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                                          \
    (CUmodule*, const void*, unsigned int, int*, void**))                                        \
  X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                                      \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction*, CUmodule, const char*))  \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction, int, int))                  \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                                  \
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,           \
     unsigned int, unsigned int, CUstream, void**, void**))                                      \
  X(cuStreamCreate, "cuStreamCreate", CUresult, (CUstream*, unsigned int))                       \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream))                                 \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))                            \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", CUresult, (CUstream, CUevent, unsigned int))         \
  X(cuEventCreate, "cuEventCreate", CUresult, (CUevent*, unsigned int))                          \
  X(cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))                               \
  X(cuEventQuery, "cuEventQuery", CUresult, (CUevent))                                           \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent))                               \
  X(cuEventElapsedTime, "cuEventElapsedTime", CUresult, (float*, CUevent, CUevent))              \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                                    \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", CUresult, (CUstream, int))                  \
  X(cuStreamEndCapture, "cuStreamEndCapture", CUresult, (CUstream, CUgraph*))                    \
  X(cuGraphInstantiate, "cuGraphInstantiateWithFlags", CUresult,                                 \
    (CUgraphExec*, CUgraph, unsigned long long))                                                 \
  X(cuGraphLaunch, "cuGraphLaunch", CUresult, (CUgraphExec, CUstream))                           \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", CUresult, (CUgraphExec))                           \
  X(cuGraphExecUpdate, "cuGraphExecUpdate_v2", CUresult, (CUgraphExec, CUgraph, void*))          \
  X(cuMemHostAlloc, "cuMemHostAlloc", CUresult, (void**, size_t, unsigned int))                  \
  X(cuMemFreeHost, "cuMemFreeHost", CUresult, (void*))                                           \
  X(cuGraphDestroy, "cuGraphDestroy", CUresult, (CUgraph))                                       \
  X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult, const char**))                        \
  X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult, const char**))

struct CuApi {
#define MODRT_CU_DECLARE(member, symbol, ret, params) ret(*member) params = nullptr;
  MODRT_CU_FUNCTIONS(MODRT_CU_DECLARE)
#undef MODRT_CU_DECLARE
};

struct Device {
  CUdevice handle = 0;
  std::once_flag context_once;
  CUcontext context = nullptr;
  std::string context_error;
};

// Process-wide CUDA state: the driver, and each device's primary context
// (retained on the device's first use).
class Workspace : public plugin::LazyDriverState<Workspace> {
 public:
  static constexpr DLDeviceType kDeviceType = kDLCUDA;
  using ModuleHandle = CUmodule;
  using FunctionHandle = CUfunction;

  int count() const { return static_cast<int>(devices_.size()); }
  const CuApi& cu() const { return cu_; }
  const std::string& library() const { return library_; }
  int driver_version() const { return driver_version_; }

  std::string ErrorText(CUresult code) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (cu_.cuGetErrorName != nullptr) cu_.cuGetErrorName(code, &name);
    if (cu_.cuGetErrorString != nullptr) cu_.cuGetErrorString(code, &text);
    std::string s = name ? name : "CUDA error " + std::to_string(code);
    if (text != nullptr) s += plugin::StrCat(" (", text, ")");
    return s;
  }

  // Fails naming `what` (the driver call, and what it was for) and the
  // driver's error: MemoryError when the device ran out of memory.
  void Check(CUresult code, const std::string& what) const {
    if (code == CUDA_SUCCESS) return;
    plugin::Fail(code == CUDA_ERROR_OUT_OF_MEMORY ? "MemoryError" : "RuntimeError", "CUDA ", what,
                 " failed: ", ErrorText(code));
  }

  // Makes `id`'s primary context current on this thread.
  void Activate(int id) {
    Device& d = device(id);
    std::call_once(d.context_once, [&] {
      CUresult status = cu_.cuDevicePrimaryCtxRetain(&d.context, d.handle);
      if (status != CUDA_SUCCESS) d.context_error = ErrorText(status);
    });
    if (!d.context_error.empty()) {
      plugin::Fail("RuntimeError", "cannot create a context on cuda(", id, "): ", d.context_error);
    }
    Check(cu_.cuCtxSetCurrent(d.context), "cuCtxSetCurrent");
    active_device_ = id;
  }

  Device& device(int id) {
    CheckDevice(kBackendIdentity, id);
    return *devices_[id];
  }

  int Attribute(int id, int attr) {
    int v = 0;
    Check(cu_.cuDeviceGetAttribute(&v, attr, device(id).handle), "cuDeviceGetAttribute");
    return v;
  }

  // What IndexedModule calls (driver.h).
  // Modules are unloaded only where the context was made current before.
  void ActivateQuietly(int id) noexcept {
    if (id >= 0 && id < count()) cu_.cuCtxSetCurrent(devices_[id]->context);
  }
  void UnloadQuietly(CUmodule module) noexcept { cu_.cuModuleUnload(module); }
  // On `native_stream`, the launch's (ModrtKernelArgs; NULL: the legacy
  // default stream), on the device IndexedModule has just activated.
  void Launch(CUfunction function, const plugin::LaunchConfig& c, void** params,
              const std::string& name, void* native_stream) {
    auto stream = static_cast<CUstream>(native_stream);
    Check(plugin::CallLaunch(cu_.cuLaunchKernel, function, c, stream, params),
          plugin::StrCat("cuLaunchKernel of ", name));
  }

  void Attr(int id, std::string_view name, plugin::Ret* ret) {
    constexpr plugin::IndexedAttributeIds kIds = {
        kAttrComputeCapabilityMajor,  kAttrComputeCapabilityMinor,
        kAttrMaxThreadsPerBlock,      kAttrWarpSize,
        kAttrMaxSharedMemoryPerBlock, kAttrMultiprocessorCount};
    if (plugin::IndexedAttr(name, kIds, [&](int attr) { return Attribute(id, attr); }, ret)) {
      return;
    }
    if (name == "name") {
      char text[256] = {};
      Check(cu_.cuDeviceGetName(text, sizeof(text) - 1, device(id).handle), "cuDeviceGetName");
      return ret->SetStr(text);
    }
    if (name == "max_shared_memory_per_block_optin") {
      return ret->SetInt(Attribute(id, kAttrMaxSharedMemoryPerBlockOptin));
    }
    if (name == "global_memory") {
      size_t bytes = 0;
      Check(cu_.cuDeviceTotalMem(&bytes, device(id).handle), "cuDeviceTotalMem");
      return ret->SetInt(static_cast<int64_t>(bytes));
    }
    if (name == "driver_version") {
      return ret->SetStr(
          plugin::StrCat(driver_version_ / 1000, ".", (driver_version_ % 1000) / 10));
    }
  }

 private:
  friend class plugin::LazyDriverState<Workspace>;

  std::string Init() {
    // MODRT_CUDA_DRIVER_LIBRARY, else the system's libcuda.
    std::vector<std::string> candidates =
        plugin::DriverLibraryCandidates(kBackendIdentity.name, {"libcuda.so.1", "libcuda.so"});
    library_ = candidates.front();
    if (!lib_.Open(candidates)) return library_ + " (the CUDA driver): " + lib_.error();
#define MODRT_CU_RESOLVE(member, symbol, ret, params) \
  if (!lib_.Resolve(symbol, &cu_.member)) return library_ + ": " + lib_.error();
    MODRT_CU_FUNCTIONS(MODRT_CU_RESOLVE)
#undef MODRT_CU_RESOLVE
    CUresult status = cu_.cuInit(0);
    if (status != CUDA_SUCCESS) return library_ + ": cuInit failed: " + ErrorText(status);
    cu_.cuDriverGetVersion(&driver_version_);
    int n = 0;
    status = cu_.cuDeviceGetCount(&n);
    if (status != CUDA_SUCCESS) return library_ + ": cuDeviceGetCount failed: " + ErrorText(status);
    for (int i = 0; i < n; ++i) {
      auto d = std::make_unique<Device>();
      if (cu_.cuDeviceGet(&d->handle, i) != CUDA_SUCCESS) continue;
      devices_.push_back(std::move(d));
    }
    if (devices_.empty()) return library_ + ": the CUDA driver reports no device";
    return "";
  }

  // The device Activate made current on this thread: the one a launch is for.
  static inline thread_local int active_device_ = 0;

  plugin::DriverLibrary lib_;
  CuApi cu_;
  std::string library_;
  int driver_version_ = 0;
  std::vector<std::unique_ptr<Device>> devices_;
};

// CUDA's device API (cuda_device.cc): memory, whole and ranged copies, and
// the native device layer (streams, events with device timing, async and
// device-to-device copies, page-locked host memory, foreign streams, graphs
// by stream capture).
void RegisterDeviceApi();

}  // namespace cuda
}  // namespace modrt

#endif  // MODRT_BACKENDS_CUDA_CUDA_DRIVER_H_
