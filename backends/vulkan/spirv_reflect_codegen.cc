// The SPIR-V reflection (spirv_scan.h) on the codegen side, in
// libmodrt_compiler.so, so `modrt.compile(..., "vulkan")` reads a shader's
// interface whether or not the Vulkan runtime is built. The Vulkan hook calls
//   backend.vulkan.reflect_spirv(spirv bytes, function) -> JSON (ShaderInfoJson)
// and SPIR-V modrt cannot read is a ValueError with the scan's message.
#include <string>

#include "backends/vulkan/spirv_scan.h"
#include "modrt/function.h"

namespace modrt {
namespace {

void Register() {
  RegisterGlobal("backend.vulkan.reflect_spirv", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "backend.vulkan.reflect_spirv");
    try {
      r->SetStr(vulkan::ShaderInfoJson(
          vulkan::ScanSpirv(std::string(a.Str(1)), std::string(a.Bytes(0)))));
    } catch (const vulkan::SpirvError& e) {
      Fail("ValueError", e.what());
    }
  });
}

MODRT_STATIC_INIT(Register);

}  // namespace
}  // namespace modrt
