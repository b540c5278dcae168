#include "spirv_scan.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <spirv/unified1/spirv.hpp>
#include <utility>
#include <vector>

#include "modrt/plugin.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

ShaderInfo ScanSpirv(const std::string& function, const std::string& code) {
  auto bad = [&](const std::string& why) -> ShaderInfo {
    Fail("ValueError", "the shader of '", function, "' is not valid SPIR-V: ", why);
  };
  if (code.size() < 20 || code.size() % 4 != 0) {
    return bad(StrCat(code.size(),
                      " bytes is not a whole SPIR-V module (a 20-byte header, then 4-byte words)"));
  }
  std::vector<uint32_t> w(code.size() / 4);
  std::memcpy(w.data(), code.data(), code.size());
  if (w[0] != spv::MagicNumber) return bad("wrong magic number");
  std::vector<std::pair<uint32_t, std::string>> entries;   // GLCompute only
  std::vector<uint32_t> functions;                         // result ids of OpFunction
  std::map<uint32_t, std::array<uint32_t, 3>> local_size;  // entry point -> LocalSize
  bool local_size_id = false;                              // LocalSizeId: set by constants
  // A WorkgroupSize built-in overrides LocalSize: fixed when it is a constant
  // composite of constants, set at launch when a specialization constant one.
  std::vector<uint32_t> workgroup_size_ids;
  std::map<uint32_t, uint32_t> constants;                // OpConstant (32-bit) values
  std::map<uint32_t, std::vector<uint32_t>> composites;  // OpConstantComposite parts
  for (size_t i = 5; i < w.size();) {
    const uint32_t count = w[i] >> spv::WordCountShift, op = w[i] & spv::OpCodeMask;
    if (count == 0 || i + count > w.size())
      return bad(StrCat("instruction at word ", i, " overruns the module"));
    if (op == spv::OpEntryPoint && count >= 4 && w[i + 1] == spv::ExecutionModelGLCompute) {
      const char* text = reinterpret_cast<const char*>(&w[i + 3]);
      const size_t max = (count - 3) * 4;
      const size_t len = strnlen(text, max);
      if (len == max) return bad("unterminated entry point name");
      entries.emplace_back(w[i + 2], std::string(text, len));
    } else if (op == spv::OpFunction && count >= 5) {
      functions.push_back(w[i + 2]);
    } else if (op == spv::OpExecutionMode && count >= 6 &&
               w[i + 2] == spv::ExecutionModeLocalSize) {
      local_size[w[i + 1]] = {w[i + 3], w[i + 4], w[i + 5]};
    } else if (op == spv::OpExecutionModeId && count >= 3 &&
               w[i + 2] == spv::ExecutionModeLocalSizeId) {
      local_size_id = true;
    } else if (op == spv::OpDecorate && count >= 4 && w[i + 2] == spv::DecorationBuiltIn &&
               w[i + 3] == spv::BuiltInWorkgroupSize) {
      workgroup_size_ids.push_back(w[i + 1]);
    } else if (op == spv::OpConstant && count == 4) {  // 32-bit
      constants[w[i + 2]] = w[i + 3];
    } else if (op == spv::OpConstantComposite && count >= 3) {
      composites[w[i + 2]].assign(w.begin() + i + 3, w.begin() + i + count);
    }
    i += count;
  }
  if (entries.empty()) return bad("it has no GLCompute entry point");
  const std::pair<uint32_t, std::string>* chosen = nullptr;
  for (const auto& e : entries) {
    if (e.second == function) chosen = &e;
  }
  if (chosen == nullptr && entries.size() == 1) chosen = &entries[0];
  if (chosen == nullptr) {
    std::string names;
    for (const auto& e : entries) names += (names.empty() ? "" : ", ") + e.second;
    Fail("ValueError", "the shader of '", function, "' has several compute entry points (", names,
         ") and none is named '", function, "'");
  }
  if (std::find(functions.begin(), functions.end(), chosen->first) == functions.end()) {
    return bad(StrCat("its entry point '", chosen->second, "' names %", chosen->first,
                      ", which is not a function"));
  }
  ShaderInfo info;
  info.entry = chosen->second;
  if (!workgroup_size_ids.empty()) {
    auto composite = composites.find(workgroup_size_ids.front());
    if (composite == composites.end() || composite->second.size() != 3) return info;  // specialised
    for (int a = 0; a < 3; ++a) {
      auto value = constants.find(composite->second[a]);
      if (value == constants.end()) return info;
      info.size[a] = value->second;
    }
    info.fixed_size = true;
    return info;
  }
  auto size = local_size.find(chosen->first);
  if (size != local_size.end() && !local_size_id) {
    info.fixed_size = true;
    info.size = size->second;
  }
  return info;
}

}  // namespace vulkan
}  // namespace modrt
