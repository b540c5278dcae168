// The SPIR-V reflection (spirv_scan.h) on the codegen side, in
// libmodrt_compiler.so, so `modrt.compile(..., "vulkan")` reads a shader's
// interface whether or not the Vulkan runtime is built. The Vulkan hook calls
//   backend.vulkan.reflect_spirv(spirv bytes, function) -> JSON (ShaderInfoJson)
// and SPIR-V modrt cannot read is a ValueError with the scan's message.
#include <sstream>
#include <string>

#include "backends/vulkan/spirv_scan.h"
#include "modrt/codegen/codegen.h"

namespace modrt {
namespace {

using plugin::Args;
using plugin::Fail;
using plugin::RegisterGlobal;
using plugin::Ret;

void JsonString(std::ostringstream& out, const std::string& s) {
  out << '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      out << "\\u00" << hex[c >> 4] << hex[c & 15];
    } else {
      out << c;
    }
  }
  out << '"';
}

// The reflection as JSON, for the Vulkan hook.
std::string ShaderInfoJson(const vulkan::ShaderInfo& info) {
  std::ostringstream out;
  out << "{\"entry\": ";
  JsonString(out, info.entry);
  out << ", \"entries\": [";
  for (size_t i = 0; i < info.entries.size(); ++i) {
    if (i) out << ", ";
    JsonString(out, info.entries[i]);
  }
  out << "], \"size\": [" << info.size[0] << ", " << info.size[1] << ", " << info.size[2]
      << "], \"size_spec_ids\": [" << info.size_spec_id[0] << ", " << info.size_spec_id[1] << ", "
      << info.size_spec_id[2] << "], \"grid_axes\": " << info.grid_axes << ", \"bindings\": [";
  static const char* kinds[] = {"storage", "uniform", "other"};
  for (size_t i = 0; i < info.bindings.size(); ++i) {
    const vulkan::SpirvBinding& b = info.bindings[i];
    out << (i ? ", " : "") << "{\"set\": " << b.set << ", \"binding\": " << b.binding
        << ", \"kind\": \"" << kinds[static_cast<int>(b.kind)] << "\", \"what\": ";
    JsonString(out, b.what);
    out << ", \"name\": ";
    JsonString(out, b.name);
    out << ", \"dtype\": ";
    JsonString(out, b.dtype);
    out << ", \"readonly\": " << (b.readonly ? "true" : "false") << ", \"size\": " << b.size << "}";
  }
  out << "], \"push\": [";
  for (size_t i = 0; i < info.push.size(); ++i) {
    const vulkan::SpirvPushMember& p = info.push[i];
    out << (i ? ", " : "") << "{\"name\": ";
    JsonString(out, p.name);
    out << ", \"offset\": " << p.offset << ", \"size\": " << p.size << ", \"dtype\": ";
    JsonString(out, p.dtype);
    out << ", \"type\": ";
    JsonString(out, p.type);
    out << "}";
  }
  out << "], \"push_size\": " << info.push_size << ", \"spec_constants\": [";
  for (size_t i = 0; i < info.spec_constants.size(); ++i) {
    const vulkan::SpirvSpecConstant& c = info.spec_constants[i];
    out << (i ? ", " : "") << "{\"id\": " << c.id << ", \"name\": ";
    JsonString(out, c.name);
    out << ", \"dtype\": ";
    JsonString(out, c.dtype);
    out << "}";
  }
  out << "], \"wgsl\": ";
  JsonString(out, info.from_wgsl() ? info.source : std::string());
  out << "}";
  return out.str();
}

void Register() {
  RegisterGlobal("backend.vulkan.reflect_spirv", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "backend.vulkan.reflect_spirv");
    try {
      r->SetStr(ShaderInfoJson(vulkan::ScanSpirv(std::string(a.Str(1)), std::string(a.Bytes(0)))));
    } catch (const vulkan::SpirvError& e) {
      Fail("ValueError", e.what());
    }
  });
}

MODRT_CODEGEN_INIT(Register);

}  // namespace
}  // namespace modrt
