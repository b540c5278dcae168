// The HIP runtime (libamdhip64.so.6) as libmodrt_runtime_rocm.so uses it:
// the few HIP types, constants and entry points, declared here (the enum
// values are those of HIP 6, which is why only that soname is loaded),
// resolved lazily with dlopen, and the process-wide Workspace.
#ifndef MODRT_BACKENDS_ROCM_ROCM_DRIVER_H_
#define MODRT_BACKENDS_ROCM_ROCM_DRIVER_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backend_identity.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace rocm {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

using hipError_t = int;
struct ihipModule_t;
struct ihipModuleSymbol_t;
struct ihipStream_t;
struct ihipEvent_t;
struct ihipGraph;
struct hipGraphExec;
struct hipGraphNode;
using hipModule_t = ihipModule_t*;
using hipFunction_t = ihipModuleSymbol_t*;
using hipStream_t = ihipStream_t*;
using hipEvent_t = ihipEvent_t*;
using hipGraph_t = ihipGraph*;
using hipGraphExec_t = hipGraphExec*;
using hipGraphNode_t = hipGraphNode*;

constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr hipError_t hipErrorNotReady = 600;
// hipStreamCreateWithFlags: no implicit synchronization with the null stream.
constexpr unsigned kStreamNonBlocking = 1;
// hipEventCreateWithFlags
constexpr unsigned kEventDefault = 0;
constexpr unsigned kEventDisableTiming = 2;
// hipHostMalloc: page-locked memory usable with every device.
constexpr unsigned kHostMallocPortable = 1;
// hipStreamCaptureMode: only this thread's unsafe calls are refused while it captures.
constexpr int kCaptureModeThreadLocal = 1;
// hipDeviceAttribute_t (HIP 6)
constexpr int kAttrComputeCapabilityMajor = 23;
constexpr int kAttrMaxThreadsPerBlock = 56;
constexpr int kAttrComputeCapabilityMinor = 61;
constexpr int kAttrMultiprocessorCount = 63;
constexpr int kAttrMaxSharedMemoryPerBlock = 74;
constexpr int kAttrWarpSize = 87;
// hipDeviceProp_t of hipGetDevicePropertiesR0600 (1472 bytes in HIP 6):
// where gcnArchName ("gfx90a:sramecc+:xnack-") lies, and a buffer larger than it.
constexpr size_t kPropsGcnArchNameOffset = 1160;
constexpr size_t kPropsGcnArchNameSize = 256;
constexpr size_t kPropsBufferSize = 4096;

// (member, exported symbol, return type, parameters)
#define MODRT_HIP_FUNCTIONS(X)                                                                     \
  X(hipInit, "hipInit", hipError_t, (unsigned int))                                                \
  X(hipDriverGetVersion, "hipDriverGetVersion", hipError_t, (int*))                                \
  X(hipGetDeviceCount, "hipGetDeviceCount", hipError_t, (int*))                                    \
  X(hipSetDevice, "hipSetDevice", hipError_t, (int))                                               \
  X(hipDeviceGetName, "hipDeviceGetName", hipError_t, (char*, int, int))                           \
  X(hipDeviceGetAttribute, "hipDeviceGetAttribute", hipError_t, (int*, int, int))                  \
  X(hipDeviceTotalMem, "hipDeviceTotalMem", hipError_t, (size_t*, int))                            \
  X(hipGetDeviceProperties, "hipGetDevicePropertiesR0600", hipError_t, (void*, int))               \
  X(hipDeviceSynchronize, "hipDeviceSynchronize", hipError_t, ())                                  \
  X(hipMalloc, "hipMalloc", hipError_t, (void**, size_t))                                          \
  X(hipFree, "hipFree", hipError_t, (void*))                                                       \
  X(hipMemcpyHtoD, "hipMemcpyHtoD", hipError_t, (void*, void*, size_t))                            \
  X(hipMemcpyDtoH, "hipMemcpyDtoH", hipError_t, (void*, void*, size_t))                            \
  X(hipModuleLoadData, "hipModuleLoadData", hipError_t, (hipModule_t*, const void*))               \
  X(hipModuleUnload, "hipModuleUnload", hipError_t, (hipModule_t))                                 \
  X(hipModuleGetFunction, "hipModuleGetFunction", hipError_t,                                      \
    (hipFunction_t*, hipModule_t, const char*))                                                    \
  X(hipModuleLaunchKernel, "hipModuleLaunchKernel", hipError_t,                                    \
    (hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,          \
     unsigned int, unsigned int, hipStream_t, void**, void**))                                     \
  X(hipGetErrorName, "hipGetErrorName", const char*, (hipError_t))                                 \
  X(hipGetErrorString, "hipGetErrorString", const char*, (hipError_t))                             \
  X(hipStreamCreateWithFlags, "hipStreamCreateWithFlags", hipError_t,                              \
    (hipStream_t*, unsigned int))                                                                  \
  X(hipStreamDestroy, "hipStreamDestroy", hipError_t, (hipStream_t))                               \
  X(hipStreamSynchronize, "hipStreamSynchronize", hipError_t, (hipStream_t))                       \
  X(hipStreamWaitEvent, "hipStreamWaitEvent", hipError_t, (hipStream_t, hipEvent_t, unsigned int)) \
  X(hipEventCreateWithFlags, "hipEventCreateWithFlags", hipError_t, (hipEvent_t*, unsigned int))   \
  X(hipEventRecord, "hipEventRecord", hipError_t, (hipEvent_t, hipStream_t))                       \
  X(hipEventQuery, "hipEventQuery", hipError_t, (hipEvent_t))                                      \
  X(hipEventSynchronize, "hipEventSynchronize", hipError_t, (hipEvent_t))                          \
  X(hipEventElapsedTime, "hipEventElapsedTime", hipError_t, (float*, hipEvent_t, hipEvent_t))      \
  X(hipEventDestroy, "hipEventDestroy", hipError_t, (hipEvent_t))                                  \
  X(hipMemcpyHtoDAsync, "hipMemcpyHtoDAsync", hipError_t, (void*, void*, size_t, hipStream_t))     \
  X(hipMemcpyDtoHAsync, "hipMemcpyDtoHAsync", hipError_t, (void*, void*, size_t, hipStream_t))     \
  X(hipMemcpyDtoDAsync, "hipMemcpyDtoDAsync", hipError_t, (void*, void*, size_t, hipStream_t))     \
  X(hipHostMalloc, "hipHostMalloc", hipError_t, (void**, size_t, unsigned int))                    \
  X(hipHostFree, "hipHostFree", hipError_t, (void*))

// Graphs by stream capture: resolved too, but a HIP runtime without them
// still runs everything else (Workspace::graphs_missing says why not).
#define MODRT_HIP_GRAPH_FUNCTIONS(X)                                                    \
  X(hipStreamBeginCapture, "hipStreamBeginCapture", hipError_t, (hipStream_t, int))     \
  X(hipStreamEndCapture, "hipStreamEndCapture", hipError_t, (hipStream_t, hipGraph_t*)) \
  X(hipGraphInstantiate, "hipGraphInstantiate", hipError_t,                             \
    (hipGraphExec_t*, hipGraph_t, hipGraphNode_t*, char*, size_t))                      \
  X(hipGraphLaunch, "hipGraphLaunch", hipError_t, (hipGraphExec_t, hipStream_t))        \
  X(hipGraphExecUpdate, "hipGraphExecUpdate", hipError_t,                               \
    (hipGraphExec_t, hipGraph_t, hipGraphNode_t*, int*))                                \
  X(hipGraphExecDestroy, "hipGraphExecDestroy", hipError_t, (hipGraphExec_t))           \
  X(hipGraphDestroy, "hipGraphDestroy", hipError_t, (hipGraph_t))

struct HipApi {
#define MODRT_HIP_DECLARE(member, symbol, ret, params) ret(*member) params = nullptr;
  MODRT_HIP_FUNCTIONS(MODRT_HIP_DECLARE)
  MODRT_HIP_GRAPH_FUNCTIONS(MODRT_HIP_DECLARE)
#undef MODRT_HIP_DECLARE
};

// Process-wide HIP state. HIP keeps a current device per thread: every
// operation selects its device first.
class Workspace : public LazyDriverState<Workspace> {
 public:
  static constexpr DLDeviceType kDeviceType = kDLROCM;
  using ModuleHandle = hipModule_t;
  using FunctionHandle = hipFunction_t;

  int count() const { return count_; }
  const HipApi& hip() const { return hip_; }
  // "" when the HIP runtime has the graph entry points, else which it lacks.
  const std::string& graphs_missing() const { return graphs_missing_; }

  std::string ErrorText(hipError_t code) const {
    const char* name = hip_.hipGetErrorName ? hip_.hipGetErrorName(code) : nullptr;
    const char* text = hip_.hipGetErrorString ? hip_.hipGetErrorString(code) : nullptr;
    std::string s = name ? name : "HIP error " + std::to_string(code);
    if (text != nullptr) s += StrCat(" (", text, ")");
    return s;
  }

  // Fails naming `what` and the runtime's error: MemoryError when the
  // device ran out of memory.
  void Check(hipError_t code, const std::string& what) const {
    if (code == hipSuccess) return;
    Fail(code == hipErrorOutOfMemory ? "MemoryError" : "RuntimeError", "HIP ", what,
         " failed: ", ErrorText(code));
  }

  void CheckDevice(int id) const { LazyDriverState::CheckDevice(kBackendIdentity, id); }

  void Activate(int id) const {
    CheckDevice(id);
    Check(hip_.hipSetDevice(id), "hipSetDevice");
    active_device_ = id;
  }

  int Attribute(int id, int attr) const {
    CheckDevice(id);
    int v = 0;
    Check(hip_.hipDeviceGetAttribute(&v, attr, id), "hipDeviceGetAttribute");
    return v;
  }

  // What IndexedModule calls (driver.h).
  void ActivateQuietly(int id) noexcept { hip_.hipSetDevice(id); }
  void UnloadQuietly(hipModule_t module) noexcept { hip_.hipModuleUnload(module); }
  // On the stream the core makes current for the device IndexedModule has
  // just activated (NULL: the null stream).
  // On `stream`, the launch's (null: the default stream).
  void Launch(hipFunction_t function, const LaunchConfig& c, void** params, const std::string& name,
              void* native_stream) {
    auto stream = static_cast<hipStream_t>(native_stream);
    Check(CallLaunch(hip_.hipModuleLaunchKernel, function, c, stream, params),
          StrCat("hipModuleLaunchKernel of ", name));
  }

  void Attr(int id, std::string_view name, Ret* ret) {
    constexpr IndexedAttributeIds kIds = {kAttrComputeCapabilityMajor,  kAttrComputeCapabilityMinor,
                                          kAttrMaxThreadsPerBlock,      kAttrWarpSize,
                                          kAttrMaxSharedMemoryPerBlock, kAttrMultiprocessorCount};
    if (IndexedAttr(name, kIds, [&](int attr) { return Attribute(id, attr); }, ret)) return;
    if (name == "name") {
      CheckDevice(id);
      char text[256] = {};
      Check(hip_.hipDeviceGetName(text, sizeof(text) - 1, id), "hipDeviceGetName");
      return ret->SetStr(text);
    }
    if (name == "gcn_arch") {
      CheckDevice(id);
      std::vector<char> props(kPropsBufferSize, '\0');
      Check(hip_.hipGetDeviceProperties(props.data(), id), "hipGetDeviceProperties");
      std::string arch(props.data() + kPropsGcnArchNameOffset, kPropsGcnArchNameSize);
      arch = arch.substr(0, arch.find('\0'));
      return ret->SetStr(arch.substr(0, arch.find(':')));  // "gfx90a", without feature flags
    }
    if (name == "global_memory") {
      CheckDevice(id);
      size_t bytes = 0;
      Check(hip_.hipDeviceTotalMem(&bytes, id), "hipDeviceTotalMem");
      return ret->SetInt(static_cast<int64_t>(bytes));
    }
  }

 private:
  friend class LazyDriverState<Workspace>;

  std::string Init() {
    // MODRT_ROCM_DRIVER_LIBRARY, else the system's HIP 6 runtime.
    std::vector<std::string> candidates =
        DriverLibraryCandidates(kBackendIdentity.name, {"libamdhip64.so.6"});
    const std::string& library = candidates.front();
    if (!lib_.Open(candidates)) return library + " (the HIP runtime): " + lib_.error();
#define MODRT_HIP_RESOLVE(member, symbol, ret, params) \
  if (!lib_.Resolve(symbol, &hip_.member)) return library + ": " + lib_.error();
    MODRT_HIP_FUNCTIONS(MODRT_HIP_RESOLVE)
#undef MODRT_HIP_RESOLVE
#define MODRT_HIP_RESOLVE_GRAPHS(member, symbol, ret, params)                \
  if (graphs_missing_.empty() && !lib_.Resolve(symbol, &hip_.member)) {      \
    graphs_missing_ = "HIP graphs are unavailable: " + library +             \
                      " (the HIP runtime) lacks " symbol                     \
                      "; graphs replay the core's list of launches instead"; \
  }
    MODRT_HIP_GRAPH_FUNCTIONS(MODRT_HIP_RESOLVE_GRAPHS)
#undef MODRT_HIP_RESOLVE_GRAPHS
    hipError_t status = hip_.hipInit(0);
    if (status != hipSuccess) return library + ": hipInit failed: " + ErrorText(status);
    status = hip_.hipGetDeviceCount(&count_);
    if (status != hipSuccess) return library + ": hipGetDeviceCount failed: " + ErrorText(status);
    if (count_ == 0) return library + ": the HIP runtime reports no device";
    return "";
  }

  // The device Activate made current on this thread: the one a launch is for.
  static inline thread_local int active_device_ = 0;

  DriverLibrary lib_;
  HipApi hip_;
  std::string graphs_missing_;
  int count_ = 0;
};

// ROCm's device API (rocm_device.cc): memory, copies, and the native device
// layer (HIP streams, events with device timing, async and device-to-device
// copies, page-locked host memory, foreign streams, graphs by stream capture).
void RegisterDeviceApi();

}  // namespace rocm
}  // namespace modrt

#endif  // MODRT_BACKENDS_ROCM_ROCM_DRIVER_H_
