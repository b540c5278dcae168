// The pipeline cache: one compute pipeline per function, workgroup size and
// dynamic shared memory size on one device, created on first use, and the
// argument layout read from the function's SPIR-V.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_PIPELINES_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_PIPELINES_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "modrt/plugin/plugin.h"
#include "vulkan_api.h"
#include "vulkan_device.h"

namespace modrt {
namespace vulkan {

// Where each argument of a function goes, read from its shader. For a
// GLSL or SPIR-V shader, the i-th buffer argument binds the i-th buffer
// binding in (set, binding) order and the j-th scalar argument fills the
// j-th member of the push-constant block. For a shader compiled from WGSL
// (ShaderInfo::from_wgsl), the WGSL's declarations decide: each argument is
// the resource at its @group/@binding (a scalar at its offset in its
// uniform), and a resource the SPIR-V no longer binds (tint drops those the
// entry point does not use) takes its argument and ignores it.
struct ArgLayout {
  struct Bound {
    uint32_t set;
    uint32_t binding;
    VkDescriptorType type;
    uint32_t offset = 0;  // scalar uniforms: the block's offset in the launch's uniform data
    uint32_t size = 0;    // scalar uniforms: the block's bytes
  };
  enum class Place { kBuffer, kPush, kUniform, kUnused };
  struct Arg {
    Place place = Place::kUnused;
    uint32_t offset = 0;  // kPush: in the push-constant block; kUniform: in the uniform data
  };
  // The descriptors of a dispatch: first one per bound buffer argument, in
  // argument order (`tensor_bindings` of them), then one per scalar uniform
  // block, each a range of the launch's uniform data.
  std::vector<Bound> buffers;
  std::vector<Arg> args;  // per argument
  uint32_t tensor_bindings = 0;
  uint32_t uniform_bytes = 0;  // a launch's scalar-uniform data, its blocks aligned
  uint32_t push_size = 0;
  uint32_t set_count = 0;  // descriptor sets of the pipeline layout: 0 .. highest set
  uint32_t storage_count = 0, uniform_count = 0;
};

// One compute pipeline: a function specialised for one workgroup size and
// dynamic shared memory size on one device.
struct Pipeline {
  VkShaderModule shader = VK_NULL_HANDLE;
  std::vector<VkDescriptorSetLayout> set_layouts;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  ArgLayout args;
};

// A module's pipelines. Creation is under the cache's lock, so concurrent
// first launches of one shape create its pipeline once.
class PipelineCache {
 public:
  PipelineCache() = default;
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;
  // Waits for the launches that may still use the pipelines, then destroys them.
  ~PipelineCache();

  // The pipeline of `info` (whose SPIR-V is `spirv`) for this launch shape on
  // device `device_id`; ValueError when the shape or the arguments exceed the
  // device's limits or disagree with the shader.
  const Pipeline& Get(int device_id, Device& d, const plugin::FunctionInfo& info,
                      const plugin::LaunchConfig& launch, const std::string& spirv);

  int64_t created() const { return created_.load(); }

 private:
  // (device, function, block x, y, z, dynamic shared bytes)
  using Key = std::tuple<int, std::string, int64_t, int64_t, int64_t, int64_t>;

  std::mutex mu_;
  std::map<Key, std::unique_ptr<Pipeline>> pipelines_;
  std::atomic<int64_t> created_{0};
};

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_PIPELINES_H_
