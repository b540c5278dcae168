// libmodrt_runtime_rocm.so: ROCm devices and code-object (hsaco) modules on
// the HIP runtime, libamdhip64.so.6, loaded lazily like every vendor driver.
//
// The few HIP types, constants and entry points used here are declared below;
// the enum values are those of HIP 6 (libamdhip64.so.6), which is why only
// that soname is loaded.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend_identity.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace rocm {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

using hipError_t = int;
struct ihipModule_t;
struct ihipModuleSymbol_t;
struct ihipStream_t;
using hipModule_t = ihipModule_t*;
using hipFunction_t = ihipModuleSymbol_t*;
using hipStream_t = ihipStream_t*;

constexpr hipError_t hipSuccess = 0;
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
#define MODRT_HIP_FUNCTIONS(X)                                                            \
  X(hipInit, "hipInit", hipError_t, (unsigned int))                                       \
  X(hipDriverGetVersion, "hipDriverGetVersion", hipError_t, (int*))                       \
  X(hipGetDeviceCount, "hipGetDeviceCount", hipError_t, (int*))                           \
  X(hipSetDevice, "hipSetDevice", hipError_t, (int))                                      \
  X(hipDeviceGetName, "hipDeviceGetName", hipError_t, (char*, int, int))                  \
  X(hipDeviceGetAttribute, "hipDeviceGetAttribute", hipError_t, (int*, int, int))         \
  X(hipDeviceTotalMem, "hipDeviceTotalMem", hipError_t, (size_t*, int))                   \
  X(hipGetDeviceProperties, "hipGetDevicePropertiesR0600", hipError_t, (void*, int))      \
  X(hipDeviceSynchronize, "hipDeviceSynchronize", hipError_t, ())                         \
  X(hipMalloc, "hipMalloc", hipError_t, (void**, size_t))                                 \
  X(hipFree, "hipFree", hipError_t, (void*))                                              \
  X(hipMemcpyHtoD, "hipMemcpyHtoD", hipError_t, (void*, void*, size_t))                   \
  X(hipMemcpyDtoH, "hipMemcpyDtoH", hipError_t, (void*, void*, size_t))                   \
  X(hipModuleLoadData, "hipModuleLoadData", hipError_t, (hipModule_t*, const void*))      \
  X(hipModuleUnload, "hipModuleUnload", hipError_t, (hipModule_t))                        \
  X(hipModuleGetFunction, "hipModuleGetFunction", hipError_t,                             \
    (hipFunction_t*, hipModule_t, const char*))                                           \
  X(hipModuleLaunchKernel, "hipModuleLaunchKernel", hipError_t,                           \
    (hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, \
     unsigned int, unsigned int, hipStream_t, void**, void**))                            \
  X(hipGetErrorName, "hipGetErrorName", const char*, (hipError_t))                        \
  X(hipGetErrorString, "hipGetErrorString", const char*, (hipError_t))

struct HipApi {
#define MODRT_HIP_DECLARE(member, symbol, ret, params) ret(*member) params = nullptr;
  MODRT_HIP_FUNCTIONS(MODRT_HIP_DECLARE)
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

  std::string ErrorText(hipError_t code) const {
    const char* name = hip_.hipGetErrorName ? hip_.hipGetErrorName(code) : nullptr;
    const char* text = hip_.hipGetErrorString ? hip_.hipGetErrorString(code) : nullptr;
    std::string s = name ? name : "HIP error " + std::to_string(code);
    if (text != nullptr) s += StrCat(" (", text, ")");
    return s;
  }

  void Check(hipError_t code, const std::string& what) const {
    if (code != hipSuccess) Fail("RuntimeError", "HIP ", what, " failed: ", ErrorText(code));
  }

  void CheckDevice(int id) const { LazyDriverState::CheckDevice(kBackendIdentity, id); }

  void Activate(int id) const {
    CheckDevice(id);
    Check(hip_.hipSetDevice(id), "hipSetDevice");
  }

  int Attribute(int id, int attr) const {
    CheckDevice(id);
    int v = 0;
    Check(hip_.hipDeviceGetAttribute(&v, attr, id), "hipDeviceGetAttribute");
    return v;
  }

  // What IndexedDeviceAPI and IndexedModule call (driver.h).
  void ActivateQuietly(int id) noexcept { hip_.hipSetDevice(id); }
  void* Malloc(size_t nbytes) {
    void* ptr = nullptr;
    Check(hip_.hipMalloc(&ptr, std::max<size_t>(nbytes, 1)),
          StrCat("allocation of ", nbytes, " bytes"));
    return ptr;
  }
  void FreeQuietly(void* ptr) noexcept { hip_.hipFree(ptr); }
  void CopyIn(void* dst, const void* src, size_t nbytes) {
    Check(hip_.hipMemcpyHtoD(dst, const_cast<void*>(src), nbytes), "host-to-device copy");
  }
  void CopyOut(void* dst, const void* src, size_t nbytes) {
    Check(hip_.hipMemcpyDtoH(dst, const_cast<void*>(src), nbytes), "device-to-host copy");
  }
  void Synchronize() { Check(hip_.hipDeviceSynchronize(), "hipDeviceSynchronize"); }
  void UnloadQuietly(hipModule_t module) noexcept { hip_.hipModuleUnload(module); }
  void Launch(hipFunction_t function, const LaunchConfig& c, void** params,
              const std::string& name) {
    Check(LaunchOnDefaultStream(hip_.hipModuleLaunchKernel, function, c, params),
          StrCat("launch of ", name));
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
    hipError_t status = hip_.hipInit(0);
    if (status != hipSuccess) return library + ": hipInit failed: " + ErrorText(status);
    status = hip_.hipGetDeviceCount(&count_);
    if (status != hipSuccess) return library + ": hipGetDeviceCount failed: " + ErrorText(status);
    if (count_ == 0) return library + ": the HIP runtime reports no device";
    return "";
  }

  DriverLibrary lib_;
  HipApi hip_;
  int count_ = 0;
};

class RocmModule final : public IndexedModule<Workspace, hipFunction_t> {
 public:
  using IndexedModule::IndexedModule;

 private:
  hipModule_t LoadOn(int device_id) override {
    Workspace& ws = Workspace::Get();
    hipModule_t module = nullptr;
    ws.Check(ws.hip().hipModuleLoadData(&module, payload().code.data()),
             StrCat("loading the code object on rocm(", device_id,
                    ") (built for this GPU's gfx arch?)"));
    return module;
  }

  hipFunction_t Prepare(int, hipModule_t module, const std::string& name, const LaunchConfig&,
                        hipFunction_t* function) override {
    if (*function == nullptr) {
      Workspace& ws = Workspace::Get();
      ws.Check(ws.hip().hipModuleGetFunction(function, module, name.c_str()),
               StrCat("finding kernel '", name,
                      "' in the code object (is it extern \"C\" __global__?)"));
    }
    return *function;
  }
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<RocmModule>(std::move(p));
  });
  static IndexedDeviceAPI<Workspace> api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
}

}  // namespace
}  // namespace rocm
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::rocm::InitPlugin)
