// Cross-compiling for CUDA where no CUDA runtime exists: a C++ program links
// modrt's core and @modrt//backends/cuda:fallback alone (no
// libmodrt_compiler.so, no libmodrt_runtime_cuda.so), creates a module from a
// PTX payload, and gets the fallback: same kind and bytes, refuses to launch.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "modrt/core/backend.h"

namespace {

constexpr char kPtx[] = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry scale(.param .u64 x, .param .u32 n) { ret; }
)";

int failures = 0;

void Expect(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++failures;
}

}  // namespace

int main() {
  auto payload = modrt::MakeObject<modrt::PayloadObj>();
  payload->fmt = "ptx";
  payload->code = kPtx;
  payload->fmap["scale"] =
      modrt::FunctionInfo::Parse("scale(float32*, int32; blockIdx.x, threadIdx.x)");

  modrt::Ref<modrt::FunctionObj> create = modrt::GetGlobal("codegen.cuda.create_module");
  Expect(static_cast<bool>(create),
         "codegen.cuda.create_module is registered by the fallback library");
  if (!create) return 1;
  ModrtValue arg = modrt::ObjValue(payload.get());
  modrt::OwnedValue result;
  create->Call(&arg, 1, result.out());
  modrt::Ref<modrt::Object> object = result.TakeObject();
  auto* module = modrt::ObjectAs<modrt::ModuleObj>(object.get(), kModrtObjModule, "module");

  Expect(module->kind() == "cuda", "the module's kind is cuda");
  Expect(module->is_fallback(), "it is the fallback (no CUDA runtime in this process)");
  Expect(module->SaveToBytes() == payload->Save(), "it saves exactly the payload's bytes");
  Expect(module->InspectSource("ptx") == kPtx, "its PTX is inspectable");
  try {
    module->GetFunction("scale");
    Expect(false, "get_function refuses to launch");
  } catch (const modrt::Error& e) {
    Expect(std::string(e.what()).find("CUDA runtime is not linked into this build") !=
               std::string::npos,
           "get_function refuses to launch, naming the missing runtime");
  }
  try {
    modrt::LoadModuleFromBytes("cuda", module->SaveToBytes());
    Expect(false, "loading the bytes needs the CUDA runtime");
  } catch (const modrt::Error& e) {
    Expect(std::string(e.what()).find("cuda") != std::string::npos,
           "loading the bytes needs the CUDA runtime, and says so");
    std::printf("  (%s: %s)\n", e.kind().c_str(), e.what());
  }
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
