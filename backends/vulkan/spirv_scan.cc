// ScanSpirv: the shader of one function, read from the module's first pass
// (spirv_module.h): its entry point, workgroup size and grid axes here, its
// resources in spirv_resources.cc.
#include "spirv_scan.h"

#include <algorithm>
#include <map>

#include "spirv_module.h"

namespace modrt {
namespace vulkan {

ShaderInfo SpirvModule::Scan() const {
  if (entries_.empty()) Bad("it has no GLCompute entry point");
  const std::pair<uint32_t, std::string>* chosen = nullptr;
  for (const auto& e : entries_) {
    if (e.second == function_) chosen = &e;
  }
  // No name asks for the first (a listing of the entries reads them all).
  if (chosen == nullptr && (entries_.size() == 1 || function_.empty())) chosen = &entries_[0];
  ShaderInfo info;
  for (const auto& e : entries_) info.entries.push_back(e.second);
  if (chosen == nullptr) {
    std::string names;
    for (const auto& e : entries_) names += (names.empty() ? "" : ", ") + e.second;
    throw SpirvError("the shader of '" + function_ + "' has several compute entry points (" +
                     names + ") and none is named '" + function_ + "'");
  }
  if (function_params_.count(chosen->first) == 0) {
    Bad("its entry point '" + chosen->second + "' names %" + std::to_string(chosen->first) +
        ", which is not a function");
  }
  info.entry = chosen->second;
  info.source_language = source_language_;
  info.source = source_;
  WorkgroupSize(chosen->first, &info);
  info.grid_axes = GridAxes();
  Resources(&info);
  for (const auto& [id, spec_id] : spec_ids_) {
    auto type = spec_types_.find(id);
    if (type == spec_types_.end()) continue;  // a SpecId on a composite or an operation
    info.spec_constants.push_back({spec_id, Name(id), DType(type->second)});
  }
  std::sort(info.spec_constants.begin(), info.spec_constants.end(),
            [](const SpirvSpecConstant& a, const SpirvSpecConstant& b) { return a.id < b.id; });
  return info;
}

void SpirvModule::WorkgroupSize(uint32_t entry, ShaderInfo* info) const {
  std::vector<uint32_t> parts;  // ids of the three components
  for (const auto& [id, builtin] : builtins_) {
    auto c = composites_.find(id);
    if (builtin == spv::BuiltInWorkgroupSize && c != composites_.end()) parts = c->second;
  }
  auto by_id = local_size_id_.find(entry);
  if (parts.empty() && by_id != local_size_id_.end()) {
    parts.assign(by_id->second.begin(), by_id->second.end());
  }
  if (parts.size() == 3) {
    for (int a = 0; a < 3; ++a) {
      auto value = constants_.find(parts[a]);
      if (value == constants_.end()) {
        Bad("its workgroup size is not made of constants (axis " + std::string(1, "xyz"[a]) + ")");
      }
      info->size[a] = value->second;
      auto spec = spec_ids_.find(parts[a]);
      if (spec != spec_ids_.end()) info->size_spec_id[a] = spec->second;
    }
    return;
  }
  auto literal = local_size_.find(entry);
  if (literal != local_size_.end()) info->size = literal->second;
}

// Which axes of the workgroup id, global id and workgroup count the shader
// reads: followed through loads, access chains, extracts, shuffles, copies
// and calls; any other use counts as reading all three.
int SpirvModule::GridAxes() const {
  std::map<uint32_t, bool> tracked;  // id -> is a pointer (else a loaded vec3)
  for (const auto& [id, builtin] : builtins_) {
    if (builtin == spv::BuiltInWorkgroupId || builtin == spv::BuiltInGlobalInvocationId ||
        builtin == spv::BuiltInNumWorkgroups) {
      tracked[id] = true;
    }
  }
  if (tracked.empty()) return 1;
  unsigned axes = 0;
  auto mark = [&](uint32_t index) { axes |= index < 3 ? 1u << index : 7u; };
  for (size_t grown = 1, round = 0; grown && round < 16; ++round) {
    const size_t before = tracked.size();
    bool in_function = false;  // outside, operands are mostly literals and types
    for (const SpirvInst& in : insts_) {
      const auto& o = in.ops;
      if (in.op == spv::OpFunction || in.op == spv::OpFunctionEnd)
        in_function = in.op == spv::OpFunction;
      auto value = [&](size_t i) { return i < o.size() ? tracked.find(o[i]) : tracked.end(); };
      switch (in.op) {
        case spv::OpName:
        case spv::OpMemberName:
        case spv::OpDecorate:
        case spv::OpMemberDecorate:
        case spv::OpDecorateId:
        case spv::OpEntryPoint:
        case spv::OpExecutionMode:
        case spv::OpExecutionModeId:
        case spv::OpVariable:
        case spv::OpFunctionParameter: continue;
        case spv::OpLoad:
        case spv::OpCopyObject:
          if (auto v = value(2); v != tracked.end())
            tracked[o[1]] = in.op == spv::OpCopyObject && v->second;
          continue;
        case spv::OpAccessChain:
        case spv::OpInBoundsAccessChain:
          if (value(2) != tracked.end()) {
            auto index = o.size() > 3 ? constants_.find(o[3]) : constants_.end();
            mark(index == constants_.end() ? 3 : index->second);
          }
          continue;
        case spv::OpCompositeExtract:
          if (value(2) != tracked.end()) mark(o.size() > 3 ? o[3] : 3);
          continue;
        case spv::OpVectorShuffle:
          for (size_t i = 4; i < o.size(); ++i) {
            const uint32_t c = o[i];
            if ((c < 3 && value(2) != tracked.end()) ||
                (c >= 3 && c < 6 && value(3) != tracked.end())) {
              mark(c % 3);
            }
          }
          continue;
        case spv::OpFunctionCall: {
          auto callee = o.size() > 2 ? function_params_.find(o[2]) : function_params_.end();
          for (size_t i = 3; i < o.size(); ++i) {
            auto v = value(i);
            if (v == tracked.end()) continue;
            if (callee == function_params_.end() || i - 3 >= callee->second.size()) {
              mark(3);
            } else {
              tracked[callee->second[i - 3]] = v->second;
            }
          }
          continue;
        }
        default: {
          if (!in_function) continue;
          bool has_result = false, has_type = false;
          spv::HasResultAndType(in.op, &has_result, &has_type);
          for (size_t i = (has_result ? 1 : 0) + (has_type ? 1 : 0); i < o.size(); ++i) {
            if (tracked.count(o[i])) mark(3);
          }
        }
      }
    }
    grown = tracked.size() != before;
  }
  return axes & 4 ? 3 : axes & 2 ? 2 : 1;
}

ShaderInfo ScanSpirv(const std::string& function, const std::string& code) {
  return SpirvModule(function, code).Scan();
}

}  // namespace vulkan
}  // namespace modrt
