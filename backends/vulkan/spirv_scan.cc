#include "spirv_scan.h"

#define SPV_ENABLE_UTILITY_CODE  // spv::HasResultAndType
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <spirv/unified1/spirv.hpp>
#include <utility>

namespace modrt {
namespace vulkan {

namespace {

// One instruction's operands (the words after its opcode word).
struct Inst {
  spv::Op op;
  std::vector<uint32_t> ops;
};

// Everything the scan reads in its first pass, by result id.
class Module {
 public:
  Module(const std::string& function, const std::string& code) : function_(function) {
    if (code.size() < 20 || code.size() % 4 != 0) {
      Bad(std::to_string(code.size()) +
          " bytes is not a whole SPIR-V module (a 20-byte header, then 4-byte words)");
    }
    words_.resize(code.size() / 4);
    std::memcpy(words_.data(), code.data(), code.size());
    if (words_[0] != spv::MagicNumber) Bad("wrong magic number");
    for (size_t i = 5; i < words_.size();) {
      const uint32_t count = words_[i] >> spv::WordCountShift;
      if (count == 0 || i + count > words_.size()) {
        Bad("instruction at word " + std::to_string(i) + " overruns the module");
      }
      insts_.push_back({static_cast<spv::Op>(words_[i] & spv::OpCodeMask),
                        std::vector<uint32_t>(words_.begin() + i + 1, words_.begin() + i + count)});
      Read(insts_.back(), i);
      i += count;
    }
  }

  [[noreturn]] void Bad(const std::string& why) const {
    throw SpirvError("the shader of '" + function_ + "' is not valid SPIR-V: " + why);
  }

  ShaderInfo Scan() const {
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

 private:
  void Read(const Inst& in, size_t at) {
    const auto& o = in.ops;
    auto text = [&](size_t from) {
      const char* s = reinterpret_cast<const char*>(o.data() + from);
      const size_t max = (o.size() - from) * 4;
      const size_t len = strnlen(s, max);
      if (len == max) Bad("unterminated string at word " + std::to_string(at));
      return std::string(s, len);
    };
    switch (in.op) {
      case spv::OpEntryPoint:
        if (o.size() >= 3 && o[0] == spv::ExecutionModelGLCompute)
          entries_.emplace_back(o[1], text(2));
        break;
      case spv::OpExecutionMode:
        if (o.size() >= 5 && o[1] == spv::ExecutionModeLocalSize) {
          local_size_[o[0]] = {o[2], o[3], o[4]};
        }
        break;
      case spv::OpExecutionModeId:
        if (o.size() >= 5 && o[1] == spv::ExecutionModeLocalSizeId) {
          local_size_id_[o[0]] = {o[2], o[3], o[4]};
        }
        break;
      case spv::OpSource:
        // OpSource Language Version [File [Source]], continued by
        // OpSourceContinued; one without text (a compiler's note) is skipped.
        if (o.size() >= 4) {
          source_language_ = o[0];
          source_ = text(3);
        }
        break;
      case spv::OpSourceContinued:
        if (!o.empty()) source_ += text(0);
        break;
      case spv::OpName:
        if (o.size() >= 2) names_[o[0]] = text(1);
        break;
      case spv::OpMemberName:
        if (o.size() >= 3) member_names_[{o[0], o[1]}] = text(2);
        break;
      case spv::OpDecorate:
        if (o.size() >= 2) Decorate(o[0], o[1], o.size() >= 3 ? o[2] : 0);
        break;
      case spv::OpMemberDecorate:
        if (o.size() >= 3 && o[2] == spv::DecorationOffset && o.size() >= 4) {
          member_offsets_[{o[0], o[1]}] = o[3];
        } else if (o.size() >= 3 && o[2] == spv::DecorationNonWritable) {
          member_readonly_[o[0]].insert(o[1]);
        }
        break;
      case spv::OpTypeInt:
      case spv::OpTypeFloat:
      case spv::OpTypeBool:
      case spv::OpTypeVector:
      case spv::OpTypeMatrix:
      case spv::OpTypeImage:
      case spv::OpTypeSampler:
      case spv::OpTypeSampledImage:
      case spv::OpTypeArray:
      case spv::OpTypeRuntimeArray:
      case spv::OpTypeStruct:
      case spv::OpTypePointer:
        if (!o.empty()) types_[o[0]] = {in.op, std::vector<uint32_t>(o.begin() + 1, o.end())};
        break;
      case spv::OpConstant:
        if (o.size() >= 3) constants_[o[1]] = o[2];
        break;
      case spv::OpSpecConstant:
        if (o.size() >= 3) {
          constants_[o[1]] = o[2];
          spec_types_[o[1]] = o[0];
        }
        break;
      case spv::OpSpecConstantTrue:
      case spv::OpSpecConstantFalse:
        if (o.size() >= 2) {
          constants_[o[1]] = in.op == spv::OpSpecConstantTrue;
          spec_types_[o[1]] = o[0];
        }
        break;
      case spv::OpConstantComposite:
      case spv::OpSpecConstantComposite:
        if (o.size() >= 2) composites_[o[1]].assign(o.begin() + 2, o.end());
        break;
      case spv::OpVariable:
        if (o.size() >= 3) variables_.push_back({o[1], o[0], static_cast<spv::StorageClass>(o[2])});
        break;
      case spv::OpFunction:
        if (o.size() >= 2) {
          current_function_ = o[1];
          function_params_[o[1]];
        }
        break;
      case spv::OpFunctionParameter:
        if (o.size() >= 2) function_params_[current_function_].push_back(o[1]);
        break;
      default: break;
    }
  }

  void Decorate(uint32_t id, uint32_t decoration, uint32_t value) {
    switch (decoration) {
      case spv::DecorationDescriptorSet: sets_[id] = value; break;
      case spv::DecorationBinding: bindings_[id] = value; break;
      case spv::DecorationSpecId: spec_ids_[id] = value; break;
      case spv::DecorationBuiltIn: builtins_[id] = value; break;
      case spv::DecorationBufferBlock: buffer_blocks_.insert(id); break;
      case spv::DecorationNonWritable: readonly_.insert(id); break;
      default: break;
    }
  }

  std::string Name(uint32_t id) const {
    auto n = names_.find(id);
    return n == names_.end() ? "" : n->second;
  }

  const Inst* Type(uint32_t id) const {
    auto t = types_.find(id);
    return t == types_.end() ? nullptr : &t->second;
  }

  // "float32", "uint8", "int32x4"; empty for anything else.
  std::string DType(uint32_t type) const {
    const Inst* t = Type(type);
    if (t == nullptr || t->ops.empty()) return "";
    if (t->op == spv::OpTypeInt && t->ops.size() >= 2) {
      return (t->ops[1] ? "int" : "uint") + std::to_string(t->ops[0]);
    }
    if (t->op == spv::OpTypeFloat && t->ops.size() == 1) return "float" + std::to_string(t->ops[0]);
    if (t->op == spv::OpTypeVector && t->ops.size() >= 2) {
      const std::string lane = DType(t->ops[0]);
      return lane.empty() ? "" : lane + "x" + std::to_string(t->ops[1]);
    }
    return "";
  }

  // Bytes of a scalar or vector type; 0 for anything else.
  uint32_t Size(uint32_t type) const {
    const Inst* t = Type(type);
    if (t == nullptr || t->ops.empty()) return 0;
    if (t->op == spv::OpTypeInt || t->op == spv::OpTypeFloat) return t->ops[0] / 8;
    if (t->op == spv::OpTypeVector && t->ops.size() >= 2) return Size(t->ops[0]) * t->ops[1];
    return 0;
  }

  // For messages: what a type is.
  std::string Describe(uint32_t type) const {
    const Inst* t = Type(type);
    if (t == nullptr) return "an unknown type";
    switch (t->op) {
      case spv::OpTypeInt:
      case spv::OpTypeFloat: return DType(type);
      case spv::OpTypeBool: return "a bool";
      case spv::OpTypeVector:
        return "a vector of " + std::to_string(t->ops.at(1)) + " " + Describe(t->ops.at(0));
      case spv::OpTypeMatrix: return "a matrix";
      case spv::OpTypeStruct: return "a struct";
      case spv::OpTypeArray:
      case spv::OpTypeRuntimeArray: return "an array of " + Describe(t->ops.at(0));
      case spv::OpTypeImage:
        return t->ops.size() >= 6 && t->ops[5] == 2 ? "a storage image" : "a sampled image";
      case spv::OpTypeSampler: return "a sampler";
      case spv::OpTypeSampledImage: return "a combined image sampler";
      default: return "an unknown type";
    }
  }

  // A block's element type: the type of its one trailing array's elements,
  // or of its members when they are all one scalar type.
  std::string ElementType(uint32_t block) const {
    const Inst* t = Type(block);
    if (t == nullptr || t->op != spv::OpTypeStruct || t->ops.empty()) return "";
    uint32_t last = t->ops.back();
    const Inst* l = Type(last);
    if (l != nullptr && (l->op == spv::OpTypeArray || l->op == spv::OpTypeRuntimeArray)) {
      while (l != nullptr && (l->op == spv::OpTypeArray || l->op == spv::OpTypeRuntimeArray)) {
        last = l->ops.at(0);
        l = Type(last);
      }
      return t->ops.size() == 1 ? DType(last) : "";
    }
    const std::string first = DType(t->ops[0]);
    for (uint32_t m : t->ops) {
      if (DType(m) != first) return "";
    }
    return first;
  }

  void WorkgroupSize(uint32_t entry, ShaderInfo* info) const {
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
          Bad("its workgroup size is not made of constants (axis " + std::string(1, "xyz"[a]) +
              ")");
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
  int GridAxes() const {
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
      for (const Inst& in : insts_) {
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

  void Resources(ShaderInfo* info) const {
    for (const Variable& v : variables_) {
      const Inst* pointer = Type(v.type);
      if (pointer == nullptr || pointer->op != spv::OpTypePointer || pointer->ops.size() < 2)
        continue;
      const uint32_t pointee = pointer->ops[1];
      if (v.storage == spv::StorageClassPushConstant) {
        PushBlock(pointee, info);
        continue;
      }
      auto set = sets_.find(v.id);
      auto binding = bindings_.find(v.id);
      if (set == sets_.end() || binding == bindings_.end()) continue;
      SpirvBinding b;
      b.set = set->second;
      b.binding = binding->second;
      const bool buffer_block = buffer_blocks_.count(pointee) > 0;
      if (v.storage == spv::StorageClassStorageBuffer ||
          (v.storage == spv::StorageClassUniform && buffer_block)) {
        b.kind = SpirvBinding::Kind::kStorageBuffer;
        b.what = "a storage buffer";
      } else if (v.storage == spv::StorageClassUniform) {
        b.kind = SpirvBinding::Kind::kUniformBuffer;
        b.what = "a uniform block";
      } else {
        b.what = Describe(pointee);
      }
      if (b.kind != SpirvBinding::Kind::kOther) {
        b.dtype = ElementType(pointee);
        b.readonly = b.kind == SpirvBinding::Kind::kUniformBuffer;  // shaders never write those
        const Inst* block = Type(pointee);
        const size_t members =
            block != nullptr && block->op == spv::OpTypeStruct ? block->ops.size() : 0;
        auto readonly_members = member_readonly_.find(pointee);
        b.readonly = b.readonly || readonly_.count(v.id) > 0 ||
                     (members > 0 && readonly_members != member_readonly_.end() &&
                      readonly_members->second.size() == members);
        auto only = member_names_.find({pointee, 0});
        if (members == 1 && only != member_names_.end() && !only->second.empty())
          b.name = only->second;
        // tint wraps WGSL's `var<storage> data0: array<f32>` as a struct
        // "data0_block..." whose one member is "inner": the name is WGSL's.
        const std::string block_name = Name(pointee);
        const size_t wrapped = block_name.find("_block");
        if (b.name == "inner" && wrapped != std::string::npos && wrapped > 0) {
          b.name = block_name.substr(0, wrapped);
        }
      }
      if (b.name.empty()) b.name = Name(v.id);
      if (b.name.empty()) b.name = Name(pointee);
      info->bindings.push_back(std::move(b));
    }
    std::sort(info->bindings.begin(), info->bindings.end(),
              [](const SpirvBinding& a, const SpirvBinding& b) {
                return std::tie(a.set, a.binding) < std::tie(b.set, b.binding);
              });
  }

  void PushBlock(uint32_t block, ShaderInfo* info) const {
    const Inst* t = Type(block);
    if (t == nullptr || t->op != spv::OpTypeStruct) Bad("its push-constant block is not a struct");
    uint32_t end = 0;
    for (uint32_t m = 0; m < t->ops.size(); ++m) {
      auto offset = member_offsets_.find({block, m});
      if (offset == member_offsets_.end()) {
        Bad("member " + std::to_string(m) + " of its push-constant block has no Offset");
      }
      SpirvPushMember p;
      auto name = member_names_.find({block, m});
      if (name != member_names_.end()) p.name = name->second;
      p.offset = offset->second;
      p.type = Describe(t->ops[m]);
      const Inst* member = Type(t->ops[m]);
      if (member != nullptr && (member->op == spv::OpTypeInt || member->op == spv::OpTypeFloat)) {
        p.dtype = DType(t->ops[m]);
        p.size = Size(t->ops[m]);
      }
      end = std::max(end, p.offset + std::max<uint32_t>(Size(t->ops[m]), 4));
      info->push.push_back(std::move(p));
    }
    std::stable_sort(
        info->push.begin(), info->push.end(),
        [](const SpirvPushMember& a, const SpirvPushMember& b) { return a.offset < b.offset; });
    info->push_size = (end + 3) / 4 * 4;
  }

  struct Variable {
    uint32_t id;
    uint32_t type;
    spv::StorageClass storage;
  };

  std::string function_;
  std::vector<uint32_t> words_;
  std::vector<Inst> insts_;
  std::vector<std::pair<uint32_t, std::string>> entries_;      // GLCompute only
  uint32_t source_language_ = 0;                               // OpSource's
  std::string source_;                                         // OpSource's text, continued
  std::map<uint32_t, std::array<uint32_t, 3>> local_size_;     // entry -> LocalSize
  std::map<uint32_t, std::array<uint32_t, 3>> local_size_id_;  // entry -> LocalSizeId ids
  std::map<uint32_t, std::string> names_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> member_names_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> member_offsets_;
  std::map<uint32_t, std::set<uint32_t>> member_readonly_;
  std::map<uint32_t, uint32_t> sets_, bindings_, spec_ids_, builtins_;
  std::set<uint32_t> buffer_blocks_, readonly_;
  std::map<uint32_t, Inst> types_;
  std::map<uint32_t, uint32_t> constants_;   // 32-bit (and spec constants' defaults)
  std::map<uint32_t, uint32_t> spec_types_;  // spec constant -> its type
  std::map<uint32_t, std::vector<uint32_t>> composites_;
  std::vector<Variable> variables_;
  std::map<uint32_t, std::vector<uint32_t>> function_params_;  // every OpFunction
  uint32_t current_function_ = 0;
};

}  // namespace

ShaderInfo ScanSpirv(const std::string& function, const std::string& code) {
  return Module(function, code).Scan();
}

}  // namespace vulkan
}  // namespace modrt
