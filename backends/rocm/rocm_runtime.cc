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
#include "modrt/driver.h"
#include "modrt/plugin.h"

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
#define MODRT_HIP_FUNCTIONS(X)                                                               \
  X(hipInit, "hipInit", hipError_t, (unsigned int))                                          \
  X(hipDriverGetVersion, "hipDriverGetVersion", hipError_t, (int*))                          \
  X(hipGetDeviceCount, "hipGetDeviceCount", hipError_t, (int*))                              \
  X(hipSetDevice, "hipSetDevice", hipError_t, (int))                                         \
  X(hipDeviceGetName, "hipDeviceGetName", hipError_t, (char*, int, int))                     \
  X(hipDeviceGetAttribute, "hipDeviceGetAttribute", hipError_t, (int*, int, int))            \
  X(hipDeviceTotalMem, "hipDeviceTotalMem", hipError_t, (size_t*, int))                      \
  X(hipGetDeviceProperties, "hipGetDevicePropertiesR0600", hipError_t, (void*, int))         \
  X(hipDeviceSynchronize, "hipDeviceSynchronize", hipError_t, ())                            \
  X(hipMalloc, "hipMalloc", hipError_t, (void**, size_t))                                    \
  X(hipFree, "hipFree", hipError_t, (void*))                                                 \
  X(hipMemcpyHtoD, "hipMemcpyHtoD", hipError_t, (void*, void*, size_t))                      \
  X(hipMemcpyDtoH, "hipMemcpyDtoH", hipError_t, (void*, void*, size_t))                      \
  X(hipModuleLoadData, "hipModuleLoadData", hipError_t, (hipModule_t*, const void*))         \
  X(hipModuleUnload, "hipModuleUnload", hipError_t, (hipModule_t))                           \
  X(hipModuleGetFunction, "hipModuleGetFunction", hipError_t, (hipFunction_t*, hipModule_t, const char*)) \
  X(hipModuleLaunchKernel, "hipModuleLaunchKernel", hipError_t,                              \
    (hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,    \
     unsigned int, unsigned int, hipStream_t, void**, void**))                               \
  X(hipGetErrorName, "hipGetErrorName", const char*, (hipError_t))                           \
  X(hipGetErrorString, "hipGetErrorString", const char*, (hipError_t))

struct HipApi {
#define MODRT_HIP_DECLARE(member, symbol, ret, params) ret(*member) params = nullptr;
  MODRT_HIP_FUNCTIONS(MODRT_HIP_DECLARE)
#undef MODRT_HIP_DECLARE
};

// MODRT_ROCM_DRIVER_LIBRARY when set, else the system's HIP 6 runtime.
std::vector<std::string> DriverCandidates() {
  const char* chosen = std::getenv("MODRT_ROCM_DRIVER_LIBRARY");
  if (chosen != nullptr && *chosen != '\0') return {chosen};
  return {"libamdhip64.so.6"};
}

// Process-wide HIP state. HIP keeps a current device per thread: every
// operation selects its device first.
class Workspace : public LazyDriverState<Workspace> {
 public:

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

  void CheckDevice(int id) const {
    if (id < 0 || id >= count()) {
      Fail("ValueError", "rocm(", id, ") does not exist: ",
           ok() ? StrCat(count(), " ROCm devices") : reason());
    }
  }

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

 private:
  friend class LazyDriverState<Workspace>;

  std::string Init() {
    std::vector<std::string> candidates = DriverCandidates();
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

void* DevicePtr(const DLTensor* t) { return static_cast<char*>(t->data) + t->byte_offset; }

class RocmDeviceAPI final : public DeviceAPI {
 public:
  int DeviceCount() override {
    Workspace& ws = Workspace::Get();
    return ws.ok() ? ws.count() : 0;
  }
  std::string UnavailableReason() override {
    Workspace& ws = Workspace::Get();
    return ws.ok() ? "" : ws.reason();
  }
  void GetAttr(int id, std::string_view name, Ret* ret) override {
    Workspace& ws = Workspace::Get();
    if (name == "name") {
      ws.CheckDevice(id);
      char text[256] = {};
      ws.Check(ws.hip().hipDeviceGetName(text, sizeof(text) - 1, id), "hipDeviceGetName");
      return ret->SetStr(text);
    }
    if (name == "gcn_arch") {
      ws.CheckDevice(id);
      std::vector<char> props(kPropsBufferSize, '\0');
      ws.Check(ws.hip().hipGetDeviceProperties(props.data(), id), "hipGetDeviceProperties");
      std::string arch(props.data() + kPropsGcnArchNameOffset, kPropsGcnArchNameSize);
      arch = arch.substr(0, arch.find('\0'));
      return ret->SetStr(arch.substr(0, arch.find(':')));  // "gfx90a", without feature flags
    }
    if (name == "compute_version") {
      return ret->SetStr(StrCat(ws.Attribute(id, kAttrComputeCapabilityMajor), ".",
                                ws.Attribute(id, kAttrComputeCapabilityMinor)));
    }
    if (name == "max_threads_per_block") return ret->SetInt(ws.Attribute(id, kAttrMaxThreadsPerBlock));
    if (name == "warp_size") return ret->SetInt(ws.Attribute(id, kAttrWarpSize));
    if (name == "max_shared_memory_per_block") {
      return ret->SetInt(ws.Attribute(id, kAttrMaxSharedMemoryPerBlock));
    }
    if (name == "multi_processor_count") return ret->SetInt(ws.Attribute(id, kAttrMultiprocessorCount));
    if (name == "global_memory") {
      ws.CheckDevice(id);
      size_t bytes = 0;
      ws.Check(ws.hip().hipDeviceTotalMem(&bytes, id), "hipDeviceTotalMem");
      return ret->SetInt(static_cast<int64_t>(bytes));
    }
  }
  void* Alloc(int id, size_t nbytes) override {
    Workspace& ws = Workspace::Get();
    ws.Activate(id);
    void* ptr = nullptr;
    ws.Check(ws.hip().hipMalloc(&ptr, std::max<size_t>(nbytes, 1)), StrCat("allocation of ", nbytes, " bytes"));
    return ptr;
  }
  // Runs from tensor destructors: never throws.
  void Free(int id, void* ptr) override {
    const HipApi& hip = Workspace::Get().hip();
    hip.hipSetDevice(id);
    hip.hipFree(ptr);
  }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    ws.Activate(t->device.device_id);
    ws.Check(ws.hip().hipMemcpyHtoD(DevicePtr(t), const_cast<void*>(src), nbytes), "host-to-device copy");
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    ws.Activate(t->device.device_id);
    ws.Check(ws.hip().hipMemcpyDtoH(dst, DevicePtr(t), nbytes), "device-to-host copy");
  }
  void Sync(int id) override {
    Workspace& ws = Workspace::Get();
    ws.Activate(id);
    ws.Check(ws.hip().hipDeviceSynchronize(), "hipDeviceSynchronize");
  }
};

class RocmModule final : public PayloadModule {
 public:
  explicit RocmModule(Payload payload) : PayloadModule(std::move(payload)) {}
  ~RocmModule() override {
    const HipApi& hip = Workspace::Get().hip();
    for (size_t id = 0; id < modules_.size(); ++id) {
      if (modules_[id] == nullptr) continue;
      hip.hipSetDevice(static_cast<int>(id));
      hip.hipModuleUnload(modules_[id]);
    }
  }

  ObjectRef GetFunction(const std::string& name) override {
    return LaunchingFunction(name, [this](const FunctionInfo& info, size_t index, const Args& args) {
      Launch(info, index, args);
    });
  }

 private:
  void Launch(const FunctionInfo& info, size_t index, const Args& args) {
    KernelArgs k = KernelArgs::Pack(info, args, kDLROCM);
    const int device_id = k.device_id;
    Workspace& ws = Workspace::Get();
    ws.Activate(device_id);
    hipFunction_t function = Prepare(device_id, index, info.name);
    const LaunchConfig& c = k.launch;
    ws.Check(ws.hip().hipModuleLaunchKernel(
                 function, static_cast<unsigned>(c.grid[0]), static_cast<unsigned>(c.grid[1]),
                 static_cast<unsigned>(c.grid[2]), static_cast<unsigned>(c.block[0]),
                 static_cast<unsigned>(c.block[1]), static_cast<unsigned>(c.block[2]),
                 static_cast<unsigned>(c.dyn_shared_bytes), nullptr,
                 k.ptrs.empty() ? nullptr : k.ptrs.data(), nullptr),
             StrCat("launch of ", info.name));
  }

  // The kernel's function on a device, loading the code object there first.
  hipFunction_t Prepare(int device_id, size_t index, const std::string& name) {
    std::lock_guard lock(mu_);
    Workspace& ws = Workspace::Get();
    if (modules_.size() <= static_cast<size_t>(device_id)) {
      modules_.resize(device_id + 1, nullptr);
      functions_.resize(device_id + 1);
    }
    hipModule_t& module = modules_[device_id];
    if (module == nullptr) {
      ws.Check(ws.hip().hipModuleLoadData(&module, payload().code.data()),
               StrCat("loading the code object on rocm(", device_id, ") (built for this GPU's gfx arch?)"));
    }
    auto& per_device = functions_[device_id];
    if (per_device.empty()) per_device.resize(payload().fmap.size(), nullptr);
    hipFunction_t& function = per_device[index];
    if (function == nullptr) {
      ws.Check(ws.hip().hipModuleGetFunction(&function, module, name.c_str()),
               StrCat("finding kernel '", name, "' in the code object (is it extern \"C\" __global__?)"));
    }
    return function;
  }

  std::mutex mu_;
  std::vector<hipModule_t> modules_;                  // per device
  std::vector<std::vector<hipFunction_t>> functions_;  // per device, per function
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<RocmModule>(std::move(p));
  });
  static RocmDeviceAPI api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
}

}  // namespace
}  // namespace rocm
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::rocm::InitPlugin)
