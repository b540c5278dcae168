// WGSL reflection at compile time (docs/formats/wgsl.md), in
// libmodrt_compiler.so so that it works with the WebGPU runtime off. The
// WebGPU hook's reflector calls:
//   webgpu.reflect(source)             -> one inferred signature per @compute
//                                         entry point, a line each
//   webgpu.buffer_fits(given, source, entry, index)
//                                      -> whether a buffer of dtype `given`
//                                         may be bound as argument `index`
// The runtime reads the same declarations through the same scanner
// (wgsl_scan.h), so what is inferred here is what it binds.
#include <string>

#include "backends/webgpu/wgsl_scan.h"
#include "modrt/codegen/codegen.h"

namespace modrt {
namespace {

using plugin::Args;
using plugin::Fail;
using plugin::RegisterGlobal;
using plugin::Ret;

using webgpu::Interface;
using webgpu::WgslInfo;

Interface ReadChecked(const WgslInfo& info) {
  Interface iface = webgpu::ReadInterface(info);
  if (!iface.error.empty()) Fail("ValueError", "WGSL kernel cannot be bound: ", iface.error);
  return iface;
}

MODRT_CODEGEN_INIT([] {
  RegisterGlobal("webgpu.reflect", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "webgpu.reflect");
    const WgslInfo info = webgpu::ScanWgsl(std::string(a.Str(0)));
    std::string lines;
    if (!info.entries.empty()) {
      const Interface iface = ReadChecked(info);
      for (const webgpu::EntryPoint& e : info.entries) {
        lines += webgpu::InferredSignature(info, iface, e) + "\n";
      }
    }
    r->SetStr(lines);
  });
  RegisterGlobal("webgpu.buffer_fits", [](const Args& a, Ret* r) {
    a.ExpectCount(3, "webgpu.buffer_fits");
    const WgslInfo info = webgpu::ScanWgsl(std::string(a.Str(1)));
    const Interface iface = ReadChecked(info);
    const int64_t index = a.Int(2);
    if (index < 0 || index >= static_cast<int64_t>(iface.args.size())) {
      Fail("IndexError", "the WGSL kernel has no argument ", index);
    }
    r->SetInt(webgpu::BufferDtypeFits(std::string(a.Str(0)), iface.args[index]) ? 1 : 0);
  });
});

}  // namespace
}  // namespace modrt
