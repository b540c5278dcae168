// NVRTC, driven in one place for all of modrt: CUDA C++ to PTX (or a cubin)
// through libnvrtc, dlopen'ed, so nothing needs a CUDA header or library to
// build. Compiled into both users, each with its own hidden copy:
//   - libmodrt_compiler.so (nvrtc_codegen.cc): `modrt.compile` for cuda,
//     through the backend.cuda.nvrtc.* globals, with or without the runtime;
//   - libmodrt_runtime_cuda.so (cuda_runtime.cc): modules of fmt "cuda"
//     compiled when they are created or loaded.
// So the library search and the arch policy below are the same for both.
// Neither calls up into Python: where Python packages live (the package
// roots) is passed down, as an argument of each codegen global, and as the
// runtime's load option kPackageRootsOption when the CUDA hook loads it.
#ifndef MODRT_BACKENDS_CUDA_NVRTC_H_
#define MODRT_BACKENDS_CUDA_NVRTC_H_

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace modrt {
namespace cuda_nvrtc __attribute__((visibility("hidden"))) {

  // An error for the caller to raise through its own API; `kind` is the Python
  // exception class ("ValueError", "RuntimeError").
  class Error : public std::runtime_error {
   public:
    Error(std::string kind, const std::string& message)
        : std::runtime_error(message), kind_(std::move(kind)) {}
    const std::string& kind() const { return kind_; }

   private:
    std::string kind_;
  };

  // NVRTC refused the source: `option` is the --gpu-architecture it compiled
  // for, `detail` NVRTC's status and then its log.
  class CompileFailure : public Error {
   public:
    CompileFailure(std::string option, std::string detail)
        : Error("ValueError", detail), option(std::move(option)), detail(std::move(detail)) {}
    std::string option;
    std::string detail;
  };

  // Where libnvrtc is looked for, in order (the one place this is written):
  //   1. MODRT_NVRTC_LIBRARY, when set: that file and nothing else;
  //   2. an nvidia-cuda-nvrtc wheel: <root>/nvidia/cuda_nvrtc/lib/libnvrtc.so.12
  //      (or libnvrtc.so) for each root in `package_roots`, the directories
  //      Python packages live in (sys.path, then pip --target roots such as
  //      /opt/modrt/pip: modrt.backend.cuda.nvrtc.package_roots(), passed down);
  //   3. libnvrtc.so.12, libnvrtc.so on the loader's path (a CUDA toolkit).
  // Returns the path (or soname) to load, or "" when there is none, with
  // `*why` saying what was tried.
  std::string Find(const std::vector<std::string>& package_roots, std::string* why);

  // The runtime DSO's load option (plugin_api.h: load_option) that holds the
  // package roots, one directory a line.
  inline constexpr char kPackageRootsOption[] = "nvrtc.package_roots";

  // Text of one item a line (package roots, NVRTC options) as its items;
  // empty lines are kept (an empty sys.path entry is the current directory).
  std::vector<std::string> SplitLines(std::string_view text);

  // The CUDA headers NVRTC compiles with (cuda_fp16.h, cuda_bf16.h, <cuda/std/...>),
  // from the NVIDIA wheels the modrt-cuda wheel depends on: for each of
  // <root>/nvidia/cuda_runtime/include (nvidia-cuda-runtime-cu12) and
  // <root>/nvidia/cuda_cccl/include (nvidia-cuda-cccl-cu12), the first root of
  // `package_roots` that has it. Absent ones are left out (kernels that include
  // nothing still compile).
  std::vector<std::string> HeaderDirs(const std::vector<std::string>& package_roots);

  // An arch as targets spell it: "sm_86", "sm_90a", "compute_86".
  struct Arch {
    int number = 0;      // 86
    std::string suffix;  // "a" / "f": arch-specific features, that exact arch only
    std::string spelled;
  };
  // ValueError naming `spelled` when it is not an arch.
  Arch ParseArch(std::string_view spelled);

  // How an arch's code is produced.
  enum class Output {
    kPtx,             // PTX for the chosen virtual arch (codegen: runs on it and newer GPUs)
    kCubinWhenExact,  // a cubin when the chosen arch is the one asked for, else PTX
  };

  // A loaded libnvrtc.
  class Nvrtc {
   public:
    // The library at `path`, loaded once per path for the process.
    // RuntimeError "libnvrtc: <why>" when it does not load.
    static const Nvrtc& Load(const std::string& path);

    const std::string& path() const { return path_; }
    const std::string& version() const { return version_; }   // "12.9"
    const std::vector<int>& archs() const { return archs_; }  // ascending: 50 ... 121
    int newest_arch() const { return archs_.empty() ? 0 : archs_.back(); }

    // THE arch policy, for codegen and for compile-on-load alike: the newest
    // arch this NVRTC supports that is <= the one asked for (its PTX runs there:
    // the driver JIT-compiles it); an arch-specific one (sm_90a) only as itself.
    // ValueError naming the supported archs when there is none.
    int Choose(const Arch& arch) const;
    // The --gpu-architecture value for `arch` under that policy.
    std::string Option(const Arch& arch, Output output) const;

    struct Image {
      std::string bytes;  // PTX text (with its terminating NUL) or a cubin
      bool cubin = false;
      std::string option;
    };
    // Compiles `source` (named `program_name` in NVRTC's log) for `arch`,
    // with -I for each of `include_dirs`, then `options` (the user's, passed
    // as they are). CompileFailure when NVRTC refuses it; ValueError as Choose.
    Image Compile(const std::string& source, const std::string& program_name, const Arch& arch,
                  Output output, const std::vector<std::string>& include_dirs = {},
                  const std::vector<std::string>& options = {}) const;

    struct Api;

   private:
    Nvrtc() = default;
    std::string path_;
    std::string version_;
    std::vector<int> archs_;
    std::shared_ptr<const Api> api_;
  };

  // Find() then Load(): null with `*why` when there is no usable NVRTC.
  const Nvrtc* Acquire(const std::vector<std::string>& package_roots, std::string* why);

}  // namespace cuda_nvrtc
}  // namespace modrt

#endif  // MODRT_BACKENDS_CUDA_NVRTC_H_
