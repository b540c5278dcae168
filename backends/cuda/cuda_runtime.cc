// libmodrt_runtime_cuda.so: CUDA modules on the driver API (cuda_driver.h;
// libcuda.so.1, loaded lazily), and NVRTC (nvrtc.h, also dlopen'ed) to
// compile modules whose fmt is "cuda" source when they are created or loaded.
// The device API and the device layer are in cuda_device.cc.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend_identity.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/nvrtc.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace cuda {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

// NVRTC (nvrtc.h, shared with codegen in libmodrt_compiler.so), for modules
// carried as CUDA C++ source (fmt "cuda"): found and used exactly as codegen
// finds and uses it, under the same arch policy.
namespace nv = ::modrt::cuda_nvrtc;

// The package roots nvrtc.h's Find() searches: the directories Python
// packages live in, which the CUDA hook passes down when it loads this DSO
// (load option nvrtc.package_roots, one a line). None when it was loaded
// otherwise: MODRT_NVRTC_LIBRARY and the loader's path remain.
std::vector<std::string>& NvrtcPackageRootsSlot() {
  static std::vector<std::string> roots;  // written once, while the plugin registers
  return roots;
}
const std::vector<std::string>& NvrtcPackageRoots() { return NvrtcPackageRootsSlot(); }

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
  if (std::optional<std::string> roots = LoadOption(nv::kPackageRootsOption)) {
    NvrtcPackageRootsSlot() = nv::SplitLines(*roots);
  }
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<CudaModule>(std::move(p));
  });
  RegisterDeviceApi();
}

}  // namespace
}  // namespace cuda
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::cuda::InitPlugin)
