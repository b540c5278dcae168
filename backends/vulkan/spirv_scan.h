// What modrt reads from a compute shader's SPIR-V: the entry point, its
// workgroup size and which specialization constants set it, the grid axes it
// reads, its descriptor bindings (storage buffers with their element types),
// its push-constant block's members, and its specialization constants. A scan
// of the instruction stream, not a validator.
//
// Compiled twice, like NVRTC's driver in the CUDA backend: into the runtime
// DSO (which builds its layouts from it) and into libmodrt_compiler.so (the
// codegen side's reflection, spirv_reflect_codegen.cc). So it depends on
// neither side's headers: its errors are SpirvError.
#ifndef MODRT_BACKENDS_VULKAN_SPIRV_SCAN_H_
#define MODRT_BACKENDS_VULKAN_SPIRV_SCAN_H_

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace modrt {
namespace vulkan {

// A module that is not SPIR-V of a compute shader modrt can read, or one
// whose entry point `function` cannot be chosen. what() is the whole message.
class SpirvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SPIR-V's SourceLanguage WGSL.
constexpr uint32_t kSourceLanguageWgsl = 10;

// One descriptor binding the module declares.
struct SpirvBinding {
  enum class Kind { kStorageBuffer, kUniformBuffer, kOther };
  uint32_t set = 0;
  uint32_t binding = 0;
  Kind kind = Kind::kOther;
  std::string what;  // for messages: "a storage buffer", "a uniform block", "a storage image", ...
  std::string name;  // the block's only member, else its instance, else its type; may be empty
  std::string
      dtype;  // element type ("float32", "int8x4"); empty when not one scalar or vector type
  bool readonly = false;  // NonWritable: the shader never writes it
  // A uniform block's bytes: where its last member ends (Offset, ArrayStride
  // and MatrixStride decide). 0 for storage buffers and when not known.
  uint32_t size = 0;
};

// One member of the push-constant block.
struct SpirvPushMember {
  std::string name;  // OpMemberName, may be empty
  uint32_t offset = 0;
  uint32_t size = 0;  // bytes; 0 when not a plain scalar
  std::string dtype;  // "int32", "float32", ...; empty when not a scalar
  std::string type;   // for messages: "float32", "vector of 4 float32", "a struct", ...
};

struct SpirvSpecConstant {
  uint32_t id = 0;  // SpecId
  std::string name;
  std::string dtype;
};

// What modrt knows about the shader of one function.
struct ShaderInfo {
  std::string entry;                 // the GLCompute entry point
  std::vector<std::string> entries;  // every GLCompute entry point in the module
  // The workgroup size: per axis either fixed at size[a] (size_spec_id[a] <
  // 0) or set by specialization constant size_spec_id[a], whose default is size[a].
  std::array<uint32_t, 3> size{1, 1, 1};
  std::array<int64_t, 3> size_spec_id{-1, -1, -1};
  int grid_axes = 1;                   // 1 + the highest workgroup/global-id axis the shader reads
  std::vector<SpirvBinding> bindings;  // in (set, binding) order
  std::vector<SpirvPushMember> push;   // in offset order
  uint32_t push_size = 0;              // bytes the block spans, a multiple of 4
  std::vector<SpirvSpecConstant> spec_constants;  // in SpecId order
  // The source the module carries (OpSource, OpSourceContinued). modrt's
  // WGSL-to-SPIR-V step embeds the WGSL (kSourceLanguageWgsl), whose
  // declarations are then the kernel's interface (docs/formats/spirv.md).
  uint32_t source_language = 0;
  std::string source;
  bool from_wgsl() const { return source_language == kSourceLanguageWgsl && !source.empty(); }

  bool fixed_size() const {
    return size_spec_id[0] < 0 && size_spec_id[1] < 0 && size_spec_id[2] < 0;
  }
  const SpirvSpecConstant* spec_constant(uint32_t id) const {
    for (const auto& c : spec_constants) {
      if (c.id == id) return &c;
    }
    return nullptr;
  }
};

// The shader of `function`: its entry point is the one named `function`, or
// the only one (the first when `function` is empty). Throws SpirvError when `code` is not such a
// SPIR-V module.
ShaderInfo ScanSpirv(const std::string& function, const std::string& code);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_SPIRV_SCAN_H_
