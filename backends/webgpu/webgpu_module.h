// The WebGPU runtime's module: a payload of WGSL shaders, one per function,
// compiled on the device of webgpu_device.h into shader modules, bind group
// and pipeline layouts and compute pipelines (one per launch shape), and
// launched into the device's batch (webgpu_module.cc).
#ifndef MODRT_BACKENDS_WEBGPU_WEBGPU_MODULE_H_
#define MODRT_BACKENDS_WEBGPU_WEBGPU_MODULE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "modrt/plugin.h"
#include "webgpu_device.h"
#include "wgpu_native.h"
#include "wgsl_scan.h"

namespace modrt {
namespace webgpu {

// How one function runs: its shader module, entry point and bindings. The
// bindings are the shader's own (wgsl_scan.h's Interface): argument i is the
// shader's argument i, in (group, binding) order; every uniform the shader
// declares is a block of one uniform slot.
struct Kernel {
  const plugin::FunctionInfo* info = nullptr;
  std::string entry;
  EntryPoint scan;
  bool has_dyn_shared_override = false;
  WgslInfo wgsl;
  Interface iface;
  size_t num_buffers = 0;
  std::vector<uint32_t> scalar_offsets;  // per argument: its byte offset in a slot (scalars)
  std::vector<uint32_t> block_offsets;   // per uniform block: its offset in a slot
  uint32_t uniform_size = 0;             // bytes of a slot; 0 without uniforms
  WGPUShaderModule shader = nullptr;
  std::vector<WGPUBindGroupLayout> bind_layouts;  // groups 0..iface.max_group
  WGPUPipelineLayout layout = nullptr;
  // The uniform ring: kMaxBatch slots of `uniform_stride` bytes, one per
  // launch of a batch, each uniform bound with the same dynamic offset.
  WGPUBuffer uniform_buffer = nullptr;
  uint32_t uniform_stride = 0;
};

// What launches of one kernel remember between them; guarded by the
// workspace's submit_mu().
struct LaunchCache {
  // The last bind groups (one per group number), for these buffers (by id).
  std::vector<uint64_t> buffer_ids;
  std::vector<WGPUBindGroup> groups;
  // The uniform ring's use in the batch being recorded.
  uint64_t batch = UINT64_MAX;
  uint32_t next_slot = 0;
  bool has_last = false;
  uint32_t last_offset = 0;
  std::vector<uint8_t> last_uniform;
};

// One compute pipeline: a kernel with its override constants set.
struct Pipeline {
  WGPUComputePipeline pipeline = nullptr;
};

class WebGpuModule final : public plugin::PayloadModule {
 public:
  explicit WebGpuModule(plugin::Payload payload);
  ~WebGpuModule() override;

  plugin::ObjectRef GetFunction(const std::string& name) override;

  int64_t pipelines_created() const { return pipelines_created_.load(); }

 private:
  // (function, override values of x, y, z (0 when fixed), dynamic shared bytes)
  using Key = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>;

  // Compiles every function; on an error, releases what was made (the
  // destructor of a module whose constructor throws never runs) and rethrows.
  void CompileAll(Workspace& ws);
  void ReleaseAll(const WgpuApi& api);

  // Creates the shader module (wgpu validates the WGSL here), the bind group
  // and pipeline layouts, and, when the workgroup size is fixed, the pipeline.
  void Compile(Workspace& ws, const plugin::FunctionInfo& info);

  static Key KeyOf(const Kernel& k, const plugin::LaunchConfig& launch);

  // Callers hold mu_.
  const Pipeline& CreatePipeline(Workspace& ws, const Kernel& k, const Key& key,
                                 const plugin::LaunchConfig& launch);

  void Launch(const plugin::FunctionInfo& info, const plugin::Args& args);

  // The pipeline for this launch shape, created on first use under the
  // module's lock, so concurrent first launches create it once.
  WGPUComputePipeline GetPipeline(Workspace& ws, const Kernel& kernel,
                                  const plugin::FunctionInfo& info,
                                  const plugin::LaunchConfig& launch);

  std::mutex compile_mu_;
  std::atomic<bool> compiled_{false};
  std::map<std::string, Kernel> kernels_;  // filled once, by the constructor or the first launch
  std::map<std::string, LaunchCache>
      caches_;  // one per kernel, guarded by the workspace's submit_mu()
  std::mutex mu_;
  std::map<Key, Pipeline> pipelines_;
  std::atomic<int64_t> pipelines_created_{0};
};

}  // namespace webgpu
}  // namespace modrt

#endif  // MODRT_BACKENDS_WEBGPU_WEBGPU_MODULE_H_
