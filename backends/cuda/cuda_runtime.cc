// libmodrt_runtime_cuda.so: CUDA devices and modules on the driver API
// (libcuda.so.1, loaded lazily), and NVRTC (nvrtc.h, also dlopen'ed) to
// compile modules whose fmt is "cuda" source when they are created or loaded.
//
// No CUDA header or library is needed to build this: the few driver types,
// constants and entry points used here are declared below from their
// documented, stable C ABI.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend_identity.h"
#include "backends/cuda/nvrtc.h"
#include "modrt/driver.h"
#include "modrt/plugin.h"

namespace modrt {
namespace cuda {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT: the driver's 64-bit device address
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
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
// Dynamic shared memory above this needs the kernel's opt-in.
constexpr int64_t kDefaultSharedMemoryLimit = 48 * 1024;

// (member, exported symbol, return type, parameters)
#define MODRT_CU_FUNCTIONS(X)                                                                   \
  X(cuInit, "cuInit", CUresult, (unsigned int))                                                 \
  X(cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int*))                                 \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int*))                                     \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice*, int))                                     \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char*, int, CUdevice))                       \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int*, int, CUdevice))              \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t*, CUdevice))                     \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext*, CUdevice))     \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                                  \
  X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, ())                                         \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr*, size_t))                              \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                                         \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr, const void*, size_t))              \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void*, CUdeviceptr, size_t))                    \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                                         \
    (CUmodule*, const void*, unsigned int, int*, void**))                                       \
  X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                                     \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction*, CUmodule, const char*)) \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction, int, int))                 \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                                 \
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,          \
     unsigned int, unsigned int, CUstream, void**, void**))                                     \
  X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult, const char**))                       \
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
class Workspace : public LazyDriverState<Workspace> {
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
    if (text != nullptr) s += StrCat(" (", text, ")");
    return s;
  }

  void Check(CUresult code, const std::string& what) const {
    if (code != CUDA_SUCCESS) Fail("RuntimeError", "CUDA ", what, " failed: ", ErrorText(code));
  }

  // Makes `id`'s primary context current on this thread.
  void Activate(int id) {
    Device& d = device(id);
    std::call_once(d.context_once, [&] {
      CUresult status = cu_.cuDevicePrimaryCtxRetain(&d.context, d.handle);
      if (status != CUDA_SUCCESS) d.context_error = ErrorText(status);
    });
    if (!d.context_error.empty()) {
      Fail("RuntimeError", "cannot create a context on cuda(", id, "): ", d.context_error);
    }
    Check(cu_.cuCtxSetCurrent(d.context), "cuCtxSetCurrent");
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

  // What IndexedDeviceAPI and IndexedModule call (driver.h).
  // Memory is freed and modules unloaded only where the context was made current before.
  void ActivateQuietly(int id) noexcept {
    if (id >= 0 && id < count()) cu_.cuCtxSetCurrent(devices_[id]->context);
  }
  void* Malloc(size_t nbytes) {
    CUdeviceptr ptr = 0;
    Check(cu_.cuMemAlloc(&ptr, std::max<size_t>(nbytes, 1)),
          StrCat("allocation of ", nbytes, " bytes"));
    return reinterpret_cast<void*>(ptr);
  }
  void FreeQuietly(void* ptr) noexcept { cu_.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)); }
  void CopyIn(void* dst, const void* src, size_t nbytes) {
    Check(cu_.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, nbytes), "host-to-device copy");
  }
  void CopyOut(void* dst, const void* src, size_t nbytes) {
    Check(cu_.cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), nbytes), "device-to-host copy");
  }
  void Synchronize() { Check(cu_.cuCtxSynchronize(), "cuCtxSynchronize"); }
  void UnloadQuietly(CUmodule module) noexcept { cu_.cuModuleUnload(module); }
  void Launch(CUfunction function, const LaunchConfig& c, void** params, const std::string& name) {
    Check(LaunchOnDefaultStream(cu_.cuLaunchKernel, function, c, params),
          StrCat("launch of ", name));
  }

  void Attr(int id, std::string_view name, Ret* ret) {
    constexpr IndexedAttributeIds kIds = {kAttrComputeCapabilityMajor,  kAttrComputeCapabilityMinor,
                                          kAttrMaxThreadsPerBlock,      kAttrWarpSize,
                                          kAttrMaxSharedMemoryPerBlock, kAttrMultiprocessorCount};
    if (IndexedAttr(name, kIds, [&](int attr) { return Attribute(id, attr); }, ret)) return;
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
      return ret->SetStr(StrCat(driver_version_ / 1000, ".", (driver_version_ % 1000) / 10));
    }
  }

 private:
  friend class LazyDriverState<Workspace>;

  std::string Init() {
    // MODRT_CUDA_DRIVER_LIBRARY, else the system's libcuda.
    std::vector<std::string> candidates =
        DriverLibraryCandidates(kBackendIdentity.name, {"libcuda.so.1", "libcuda.so"});
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

  DriverLibrary lib_;
  CuApi cu_;
  std::string library_;
  int driver_version_ = 0;
  std::vector<std::unique_ptr<Device>> devices_;
};

// NVRTC (nvrtc.h, shared with codegen in libmodrt_compiler.so), for modules
// carried as CUDA C++ source (fmt "cuda"): found and used exactly as codegen
// finds and uses it, under the same arch policy.
namespace nv = ::modrt::cuda_nvrtc;

// The Python package roots nvrtc.h's Find() searches, as the CUDA hook reports
// them (none without the hook: MODRT_NVRTC_LIBRARY and the loader's path remain).
std::vector<std::string> NvrtcPackageRoots() {
  ObjectRef f = GetGlobal("backend.cuda.nvrtc_package_roots");
  if (!f) return {};
  OwnedValue out;
  CallFunction(f, nullptr, 0, &out);
  if (out.value().type_code == kModrtNone) return {};
  return nv::SplitPackageRoots(Args(&out.value(), 1).Str(0));
}

// The NVRTC found now; null, with `*why`, when there is none.
const nv::Nvrtc* FindNvrtc(std::string* why) { return nv::Acquire(NvrtcPackageRoots(), why); }

// CUDA C++ to a cubin for sm_<arch> when NVRTC supports that arch, else to PTX
// for the newest virtual arch it supports below it (the driver JITs it).
std::string CompileSource(const std::string& source, int arch) {
  std::string why;
  const nv::Nvrtc* nvrtc = FindNvrtc(&why);
  if (nvrtc == nullptr) {
    Fail("RuntimeError", "this module holds CUDA C++ source (fmt 'cuda'), which needs NVRTC to ",
         "compile: ", why, ". Install the nvidia-cuda-nvrtc-cu12 wheel or a CUDA ",
         "toolkit, or set MODRT_NVRTC_LIBRARY");
  }
  try {
    // The same CUDA headers codegen compiles with (the NVIDIA wheels'), so a
    // kernel that includes cuda_fp16.h or <cuda/std/...> builds here too.
    return nvrtc
        ->Compile(source, "module.cu", nv::ParseArch(StrCat("sm_", arch)),
                  nv::Output::kCubinWhenExact, nv::HeaderDirs(NvrtcPackageRoots()))
        .bytes;
  } catch (const nv::CompileFailure& e) {
    Fail("RuntimeError", "NVRTC ", nvrtc->version(),
         " could not compile the module's CUDA source (", e.option, "): ", e.detail);
  } catch (const nv::Error& e) {
    Fail(e.kind().c_str(), e.what());
  }
}

// One kernel on one device.
struct Kernel {
  CUfunction function = nullptr;
  int64_t dyn_shared_opt_in = kDefaultSharedMemoryLimit;  // guarded by the module's lock
};

class CudaModule final : public IndexedModule<Workspace, Kernel> {
 public:
  explicit CudaModule(Payload payload) : IndexedModule(std::move(payload)) {
    // Source is compiled now where NVRTC is present (for the newest arch it
    // knows; no device needed), so bad source fails when the module is
    // created or loaded, with NVRTC's log, not at its first launch.
    if (this->payload().fmt != "cuda") return;
    if (const nv::Nvrtc* nvrtc = FindNvrtc(nullptr)) {
      const int arch = nvrtc->newest_arch();
      compiled_.emplace(arch, CompileSource(this->payload().code, arch));
    }
  }

 private:
  // The kernel's function, opting in to more dynamic shared memory than the
  // default when the launch asks for it.
  CUfunction Prepare(int, CUmodule module, const std::string& name, const LaunchConfig& launch,
                     Kernel* kernel) override {
    Workspace& ws = Workspace::Get();
    if (kernel->function == nullptr) {
      ws.Check(
          ws.cu().cuModuleGetFunction(&kernel->function, module, name.c_str()),
          StrCat("finding kernel '", name, "' in the module (is it extern \"C\" __global__?)"));
    }
    const int64_t dyn_shared = launch.dyn_shared_bytes;
    if (dyn_shared > kernel->dyn_shared_opt_in) {
      ws.Check(ws.cu().cuFuncSetAttribute(kernel->function, kFuncAttrMaxDynamicSharedSizeBytes,
                                          static_cast<int>(dyn_shared)),
               StrCat("allowing ", dyn_shared, " bytes of dynamic shared memory for ", name));
      kernel->dyn_shared_opt_in = dyn_shared;
    }
    return kernel->function;
  }

  CUmodule LoadOn(int device_id) override {
    Workspace& ws = Workspace::Get();
    const std::string* image = &payload().code;
    if (payload().fmt == "cuda") {
      // Source from a cross-compile: built here, for this device.
      int arch = ws.Attribute(device_id, kAttrComputeCapabilityMajor) * 10 +
                 ws.Attribute(device_id, kAttrComputeCapabilityMinor);
      auto done = compiled_.find(arch);
      if (done == compiled_.end())
        done = compiled_.emplace(arch, CompileSource(payload().code, arch)).first;
      image = &done->second;
    }
    char log[8192] = {};
    int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes};
    void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log) - 1))};
    // PTX is text the driver reads up to its NUL; std::string keeps one after the data.
    CUmodule module = nullptr;
    CUresult status = ws.cu().cuModuleLoadDataEx(&module, image->c_str(), 2, options, values);
    if (status != CUDA_SUCCESS) {
      std::string hint;
      if (status == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
        hint =
            StrCat("; the PTX is newer than this driver (CUDA ", ws.driver_version() / 1000, ".",
                   (ws.driver_version() % 1000) / 10,
                   ") accepts: compile with an older NVRTC/nvcc, or carry the source (fmt 'cuda')");
      }
      Fail("RuntimeError", "CUDA could not load the ", payload().fmt, " module on cuda(", device_id,
           "): ", ws.ErrorText(status), hint, log[0] ? StrCat("\n", log) : "");
    }
    return module;
  }

  std::map<int, std::string>
      compiled_;  // fmt "cuda": NVRTC's output per arch (under the module's lock)
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<CudaModule>(std::move(p));
  });
  static IndexedDeviceAPI<Workspace> api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
}

}  // namespace
}  // namespace cuda
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::cuda::InitPlugin)
