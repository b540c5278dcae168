// What the Vulkan runtime reads from a shader's SPIR-V before the driver sees
// it: the GLCompute entry point to launch and its workgroup size, when the
// module fixes one. A scan of the instruction stream, not a validator.
#ifndef MODRT_BACKENDS_VULKAN_SPIRV_SCAN_H_
#define MODRT_BACKENDS_VULKAN_SPIRV_SCAN_H_

#include <array>
#include <cstdint>
#include <string>

namespace modrt {
namespace vulkan {

// What a launch needs to know about a shader, read from its SPIR-V. The
// driver never sees a module that fails these checks.
struct ShaderInfo {
  std::string entry;               // the GLCompute entry point
  bool fixed_size = false;         // LocalSize given as literals ...
  std::array<uint32_t, 3> size{};  // ... of this size
};

// The shader of `function`: its entry point is the one named `function`, or
// the only one. Throws ValueError when `code` is not such a SPIR-V module.
ShaderInfo ScanSpirv(const std::string& function, const std::string& code);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_SPIRV_SCAN_H_
