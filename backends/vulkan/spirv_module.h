// The first pass of the SPIR-V scan (spirv_scan.h): the instruction stream
// walked once and what it declares recorded by result id, with the type
// queries the later readers share. Private to the scan: spirv_scan.cc reads
// the entry point, workgroup size and grid axes from it,
// spirv_resources.cc the bindings and the push-constant block.
#ifndef MODRT_BACKENDS_VULKAN_SPIRV_MODULE_H_
#define MODRT_BACKENDS_VULKAN_SPIRV_MODULE_H_

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spirv_scan.h"

// spirv.hpp with its utility code (spv::HasResultAndType, for the grid axes).
#define SPV_ENABLE_UTILITY_CODE
#include <spirv/unified1/spirv.hpp>

namespace modrt {
namespace vulkan {

// One instruction's operands (the words after its opcode word).
struct SpirvInst {
  spv::Op op;
  std::vector<uint32_t> ops;
};

class SpirvModule {
 public:
  // Walks `code`; SpirvError when it is not a whole SPIR-V module.
  SpirvModule(const std::string& function, const std::string& code);

  // SpirvError "the shader of '<function>' is not valid SPIR-V: <why>".
  [[noreturn]] void Bad(const std::string& why) const;

  // The shader of the function (spirv_scan.cc).
  ShaderInfo Scan() const;

  std::string Name(uint32_t id) const;
  const SpirvInst* Type(uint32_t id) const;
  // "float32", "uint8", "int32x4"; empty for anything else.
  std::string DType(uint32_t type) const;
  // Bytes of a scalar or vector type; 0 for anything else.
  uint32_t Size(uint32_t type) const;
  // For messages: what a type is.
  std::string Describe(uint32_t type) const;
  // A block's element type: the type of its one trailing array's elements,
  // or of its members when they are all one scalar type.
  std::string ElementType(uint32_t block) const;

 private:
  void Read(const SpirvInst& in, size_t at);
  void Decorate(uint32_t id, uint32_t decoration, uint32_t value);

  // The readers of the recorded tables.
  void WorkgroupSize(uint32_t entry, ShaderInfo* info) const;  // spirv_scan.cc
  int GridAxes() const;                                        // spirv_scan.cc
  void Resources(ShaderInfo* info) const;                      // spirv_resources.cc
  void PushBlock(uint32_t block, ShaderInfo* info) const;      // spirv_resources.cc
  uint32_t Extent(uint32_t type) const;                        // spirv_resources.cc

  struct Variable {
    uint32_t id;
    uint32_t type;
    spv::StorageClass storage;
  };

  std::string function_;
  std::vector<uint32_t> words_;
  std::vector<SpirvInst> insts_;
  std::vector<std::pair<uint32_t, std::string>> entries_;  // GLCompute only
  // The source the module carries: OpSource's language and text, continued
  // by OpSourceContinued (modrt's WGSL-to-SPIR-V step records its WGSL so).
  uint32_t source_language_ = 0;
  std::string source_;
  std::map<uint32_t, std::array<uint32_t, 3>> local_size_;     // entry -> LocalSize
  std::map<uint32_t, std::array<uint32_t, 3>> local_size_id_;  // entry -> LocalSizeId ids
  std::map<uint32_t, std::string> names_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> member_names_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> member_offsets_;
  std::map<uint32_t, std::set<uint32_t>> member_readonly_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> member_matrix_strides_;
  std::set<std::pair<uint32_t, uint32_t>> member_row_major_;
  std::map<uint32_t, uint32_t> array_strides_;
  std::map<uint32_t, uint32_t> sets_, bindings_, spec_ids_, builtins_;
  std::set<uint32_t> buffer_blocks_, readonly_;
  std::map<uint32_t, SpirvInst> types_;
  std::map<uint32_t, uint32_t> constants_;   // 32-bit (and spec constants' defaults)
  std::map<uint32_t, uint32_t> spec_types_;  // spec constant -> its type
  std::map<uint32_t, std::vector<uint32_t>> composites_;
  std::vector<Variable> variables_;
  std::map<uint32_t, std::vector<uint32_t>> function_params_;  // every OpFunction
  uint32_t current_function_ = 0;
};

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_SPIRV_MODULE_H_
