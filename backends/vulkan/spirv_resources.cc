// The interface resources of a shader: its descriptor bindings and its
// push-constant block (spirv_scan.h: SpirvBinding, SpirvPushMember).
#include <algorithm>
#include <tuple>
#include <utility>

#include "spirv_module.h"

namespace modrt {
namespace vulkan {

void SpirvModule::Resources(ShaderInfo* info) const {
  for (const Variable& v : variables_) {
    const SpirvInst* pointer = Type(v.type);
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
    if (b.kind == SpirvBinding::Kind::kUniformBuffer) b.size = Extent(pointee);
    if (b.kind != SpirvBinding::Kind::kOther) {
      b.dtype = ElementType(pointee);
      b.readonly = b.kind == SpirvBinding::Kind::kUniformBuffer;  // shaders never write those
      const SpirvInst* block = Type(pointee);
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

void SpirvModule::PushBlock(uint32_t block, ShaderInfo* info) const {
  const SpirvInst* t = Type(block);
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
    const SpirvInst* member = Type(t->ops[m]);
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

uint32_t SpirvModule::Extent(uint32_t type) const {
  const SpirvInst* t = Type(type);
  if (t == nullptr || t->ops.empty()) return 0;
  if (t->op == spv::OpTypeArray && t->ops.size() >= 2) {
    auto stride = array_strides_.find(type);
    auto length = constants_.find(t->ops[1]);
    if (stride == array_strides_.end() || length == constants_.end()) return 0;
    return stride->second * length->second;
  }
  if (t->op != spv::OpTypeStruct) return Size(type);
  uint32_t end = 0;
  for (uint32_t m = 0; m < t->ops.size(); ++m) {
    auto offset = member_offsets_.find({type, m});
    if (offset == member_offsets_.end()) return 0;
    uint32_t bytes = 0;
    const SpirvInst* member = Type(t->ops[m]);
    if (member != nullptr && member->op == spv::OpTypeMatrix && member->ops.size() >= 2) {
      // Columns (or rows, row-major) MatrixStride apart.
      auto stride = member_matrix_strides_.find({type, m});
      const SpirvInst* column = Type(member->ops[0]);
      if (stride == member_matrix_strides_.end() || column == nullptr || column->ops.size() < 2) {
        return 0;
      }
      const bool row_major = member_row_major_.count({type, m}) > 0;
      bytes = stride->second * (row_major ? column->ops[1] : member->ops[1]);
    } else {
      bytes = Extent(t->ops[m]);
    }
    if (bytes == 0) return 0;
    end = std::max(end, offset->second + bytes);
  }
  return end;
}

}  // namespace vulkan
}  // namespace modrt
