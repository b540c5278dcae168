#include "spirv_module.h"

#include <cstring>

namespace modrt {
namespace vulkan {

SpirvModule::SpirvModule(const std::string& function, const std::string& code)
    : function_(function) {
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

void SpirvModule::Bad(const std::string& why) const {
  throw SpirvError("the shader of '" + function_ + "' is not valid SPIR-V: " + why);
}

void SpirvModule::Read(const SpirvInst& in, size_t at) {
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
      } else if (o.size() >= 4 && o[2] == spv::DecorationMatrixStride) {
        member_matrix_strides_[{o[0], o[1]}] = o[3];
      } else if (o.size() >= 3 && o[2] == spv::DecorationRowMajor) {
        member_row_major_.insert({o[0], o[1]});
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

void SpirvModule::Decorate(uint32_t id, uint32_t decoration, uint32_t value) {
  switch (decoration) {
    case spv::DecorationDescriptorSet: sets_[id] = value; break;
    case spv::DecorationBinding: bindings_[id] = value; break;
    case spv::DecorationSpecId: spec_ids_[id] = value; break;
    case spv::DecorationBuiltIn: builtins_[id] = value; break;
    case spv::DecorationBufferBlock: buffer_blocks_.insert(id); break;
    case spv::DecorationNonWritable: readonly_.insert(id); break;
    case spv::DecorationArrayStride: array_strides_[id] = value; break;
    default: break;
  }
}

std::string SpirvModule::Name(uint32_t id) const {
  auto n = names_.find(id);
  return n == names_.end() ? "" : n->second;
}

const SpirvInst* SpirvModule::Type(uint32_t id) const {
  auto t = types_.find(id);
  return t == types_.end() ? nullptr : &t->second;
}

std::string SpirvModule::DType(uint32_t type) const {
  const SpirvInst* t = Type(type);
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

uint32_t SpirvModule::Size(uint32_t type) const {
  const SpirvInst* t = Type(type);
  if (t == nullptr || t->ops.empty()) return 0;
  if (t->op == spv::OpTypeInt || t->op == spv::OpTypeFloat) return t->ops[0] / 8;
  if (t->op == spv::OpTypeVector && t->ops.size() >= 2) return Size(t->ops[0]) * t->ops[1];
  return 0;
}

std::string SpirvModule::Describe(uint32_t type) const {
  const SpirvInst* t = Type(type);
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

std::string SpirvModule::ElementType(uint32_t block) const {
  const SpirvInst* t = Type(block);
  if (t == nullptr || t->op != spv::OpTypeStruct || t->ops.empty()) return "";
  uint32_t last = t->ops.back();
  const SpirvInst* l = Type(last);
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

}  // namespace vulkan
}  // namespace modrt
