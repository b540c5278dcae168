// CUDA codegen's NVRTC (nvrtc.h), in libmodrt_compiler.so: loaded whether or
// not the CUDA runtime is, so `modrt.compile` makes PTX on any machine with a
// libnvrtc. Python reaches it through modrt.backend.cuda.nvrtc, which calls
// these, passing `roots`, the directories Python packages live in, one a line
// (nvrtc.h's package roots: given, never asked of Python):
//   backend.cuda.nvrtc.find(roots)                  -> path | None
//   backend.cuda.nvrtc.version(path)                -> "12.9"
//   backend.cuda.nvrtc.supported_archs(path)        -> "50,52,...,121"
//   backend.cuda.nvrtc.target(path, arch)           -> "compute_86" (the arch policy's choice)
//   backend.cuda.nvrtc.header_dirs(roots)           -> the wheels' include dirs, one a line
//   backend.cuda.nvrtc.compile_ptx(path, source, arch, program_name, options, roots) -> PTX
//     bytes (`options`: the user's NVRTC options, one a line, after -I for each header dir)
// A path that does not load is a RuntimeError "cannot load NVRTC from <path>:
// ..."; source NVRTC refuses is a ValueError "CUDA C++ does not compile
// (NVRTC <version>, <target>): <status>\n<log>".
#include <string>
#include <vector>

#include "backends/cuda/nvrtc.h"
#include "modrt/codegen/codegen.h"

namespace modrt {
namespace {

using plugin::Args;
using plugin::Fail;
using plugin::RegisterGlobal;
using plugin::Ret;

namespace nv = ::modrt::cuda_nvrtc;

// Runs `body`, re-raising nvrtc.h's errors as modrt errors of the same kind.
template <typename Body>
void Translated(Body&& body) {
  try {
    body();
  } catch (const nv::Error& e) {
    Fail(e.kind().c_str(), e.what());
  }
}

const nv::Nvrtc& Loaded(std::string_view path) {
  try {
    return nv::Nvrtc::Load(std::string(path));
  } catch (const nv::Error& e) {
    Fail("RuntimeError", "cannot load NVRTC from ", path, ": ", e.what());
  }
}

std::string Target(const nv::Nvrtc& nvrtc, std::string_view arch) {
  return nvrtc.Option(nv::ParseArch(arch), nv::Output::kPtx)
      .substr(sizeof("--gpu-architecture=") - 1);
}

void Register() {
  RegisterGlobal("backend.cuda.nvrtc.find", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "backend.cuda.nvrtc.find");
    std::string path = nv::Find(nv::SplitLines(a.Str(0)), nullptr);
    if (!path.empty()) r->SetStr(path);
  });
  RegisterGlobal("backend.cuda.nvrtc.version", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "backend.cuda.nvrtc.version");
    r->SetStr(Loaded(a.Str(0)).version());
  });
  RegisterGlobal("backend.cuda.nvrtc.supported_archs", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "backend.cuda.nvrtc.supported_archs");
    std::string list;
    for (int arch : Loaded(a.Str(0)).archs())
      list += (list.empty() ? "" : ",") + std::to_string(arch);
    r->SetStr(list);
  });
  RegisterGlobal("backend.cuda.nvrtc.target", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "backend.cuda.nvrtc.target");
    const nv::Nvrtc& nvrtc = Loaded(a.Str(0));
    Translated([&] { r->SetStr(Target(nvrtc, a.Str(1))); });
  });
  RegisterGlobal("backend.cuda.nvrtc.header_dirs", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "backend.cuda.nvrtc.header_dirs");
    std::string list;
    for (const std::string& dir : nv::HeaderDirs(nv::SplitLines(a.Str(0)))) list += dir + "\n";
    r->SetStr(list);
  });
  RegisterGlobal("backend.cuda.nvrtc.compile_ptx", [](const Args& a, Ret* r) {
    a.ExpectCount(6, "backend.cuda.nvrtc.compile_ptx");
    const nv::Nvrtc& nvrtc = Loaded(a.Str(0));
    Translated([&] {
      const nv::Arch arch = nv::ParseArch(a.Str(2));
      std::vector<std::string> options;
      for (std::string& option : nv::SplitLines(a.Str(4))) {
        if (!option.empty()) options.push_back(std::move(option));
      }
      try {
        nv::Nvrtc::Image image =
            nvrtc.Compile(std::string(a.Str(1)), std::string(a.Str(3)), arch, nv::Output::kPtx,
                          nv::HeaderDirs(nv::SplitLines(a.Str(5))), options);
        image.bytes.resize(image.bytes.find_last_not_of('\0') + 1);  // PTX text, without its NUL
        r->SetBytes(std::move(image.bytes));
      } catch (const nv::CompileFailure& e) {
        Fail("ValueError", "CUDA C++ does not compile (NVRTC ", nvrtc.version(), ", ",
             Target(nvrtc, arch.spelled), "): ", e.detail);
      }
    });
  });
}

MODRT_CODEGEN_INIT(Register);

}  // namespace
}  // namespace modrt
