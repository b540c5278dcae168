// The WebGPU runtime's module: a payload of WGSL shaders, one per function,
// compiled on the device of webgpu_device.h into shader modules, bind group
// and pipeline layouts and compute pipelines (one per launch shape), and
// launched into the device's batch. The parts, one concern each (the Vulkan
// runtime is split the same way):
// - webgpu_pipelines.cc: a function's WGSL to a Kernel, and the pipeline cache;
// - webgpu_bind_groups.cc: a launch's buffers checked and bound, and the
//   bind-group cache;
// - webgpu_commands.cc: the uniform ring and the compute passes recorded;
// - webgpu_submit.cc (with webgpu_device.h): the batch and its submission;
// - webgpu_module.cc: the module, and a launch going through the four.
#ifndef MODRT_BACKENDS_WEBGPU_WEBGPU_MODULE_H_
#define MODRT_BACKENDS_WEBGPU_WEBGPU_MODULE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "modrt/plugin/plugin.h"
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
  std::vector<uint32_t> scalar_offsets;      // per argument: its byte offset in a slot (scalars)
  std::vector<uint32_t> block_offsets;       // per uniform block: its offset in a slot
  std::vector<uint32_t> uniforms_per_group;  // per bind group: its uniform blocks
  uint32_t uniform_size = 0;                 // bytes of a slot; 0 without uniforms
  WGPUShaderModule shader = nullptr;
  std::vector<WGPUBindGroupLayout> bind_layouts;  // groups 0..iface.max_group
  WGPUPipelineLayout layout = nullptr;
  // The uniform ring: kMaxBatch slots of `uniform_stride` bytes, one per
  // launch of a batch, each uniform bound with the same dynamic offset.
  WGPUBuffer uniform_buffer = nullptr;
  uint32_t uniform_stride = 0;
};

// A uniform ring beyond a kernel's own (webgpu_commands.cc), released with
// its LaunchCache.
struct ReleaseBuffer {
  void operator()(WGPUBuffer buffer) const;
};
using UniformRing = std::unique_ptr<std::remove_pointer_t<WGPUBuffer>, ReleaseBuffer>;

// What launches of one kernel remember between them; guarded by the
// workspace's submit_mu().
struct LaunchCache {
  // The last bind groups (one per group number), for these buffers (by id)
  // and this uniform ring.
  std::vector<uint64_t> buffer_ids;
  WGPUBuffer groups_uniform = nullptr;
  std::vector<WGPUBindGroup> groups;
  // A batch that outgrows the kernel's ring while the work before it runs
  // (webgpu_device.h) goes on with another: ring 0 is the kernel's
  // uniform_buffer, ring i extra_rings[i - 1], kept for later batches.
  std::vector<UniformRing> extra_rings;
  // The rings' use in the batch being recorded.
  uint64_t batch = UINT64_MAX;
  size_t ring = 0;
  uint32_t next_slot = 0;
  bool has_last = false;
  uint32_t last_offset = 0;
  std::vector<uint8_t> last_uniform;
};

// One compute pipeline: a kernel with its override constants set.
struct Pipeline {
  WGPUComputePipeline pipeline = nullptr;
};

// One launch's arguments, as the kernel binds them.
struct LaunchArgs {
  std::vector<const Buffer*> buffers;  // per argument; null for scalars
  std::vector<uint8_t> uniform;        // the kernel's uniform slot (uniform_size bytes)
  uint32_t grid[3] = {1, 1, 1};
};

// webgpu_pipelines.cc: the WGSL of `info` compiled into a Kernel (shader,
// layouts, uniform ring), checked against the adapter's limits and the
// signature; ValueError naming what does not fit.
Kernel CompileKernel(Workspace& ws, const plugin::FunctionInfo& info, const std::string& wgsl);
void ReleaseKernel(const WgpuApi& api, Kernel& k);

// webgpu_bind_groups.cc: the launch's buffers and scalars as the kernel binds
// them; ValueError for a buffer smaller than its binding or one buffer bound
// both read-only and writable.
LaunchArgs BindArguments(const Kernel& kernel, const plugin::PackedArgs& k);
// The kernel's bind groups for these buffers: the cached ones when they are
// the same as the last launch's, else new ones (ValueError if wgpu refuses
// them). `uniform_buffer` backs the kernel's uniforms. Callers hold submit_mu().
const std::vector<WGPUBindGroup>& CachedBindGroups(Workspace& ws, const Kernel& kernel,
                                                   const LaunchArgs& args,
                                                   WGPUBuffer uniform_buffer, LaunchCache& cache);
std::vector<WGPUBindGroup> CreateBindGroups(Workspace& ws, const Kernel& kernel,
                                            const LaunchArgs& args, WGPUBuffer uniform_buffer);
void ReleaseBindGroups(const WgpuApi& api, std::vector<WGPUBindGroup>& groups);

// webgpu_commands.cc: the launch's uniform slot, a ring's buffer and the
// dynamic offset in it (written to the queue unless it equals the last slot
// of this batch; a full ring submits the batch first if the queue is idle,
// else the batch goes on with the next ring). Callers hold submit_mu().
std::pair<WGPUBuffer, uint32_t> UniformSlot(Workspace& ws, const Kernel& kernel,
                                            const LaunchArgs& args, LaunchCache& cache);
// One dispatch into an open compute pass: pipeline, bind groups (each uniform
// at `uniform_offset`), workgroups.
void EncodeDispatch(const WgpuApi& api, WGPUComputePassEncoder pass, WGPUComputePipeline pipeline,
                    const std::vector<WGPUBindGroup>& groups,
                    const std::vector<uint32_t>& uniforms_per_group, uint32_t uniform_offset,
                    const uint32_t grid[3]);
// One dispatch as a compute pass of its own in the batch. Callers hold submit_mu().
void RecordDispatch(Workspace& ws, const Kernel& kernel, WGPUComputePipeline pipeline,
                    const std::vector<WGPUBindGroup>& groups, uint32_t uniform_offset,
                    const uint32_t grid[3]);

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
  // The first launch compiles a module loaded where there was no adapter.
  void EnsureCompiled(Workspace& ws);
  void ReleaseAll(const WgpuApi& api);

  // Compiles one function and, when its workgroup size is fixed, creates its
  // pipeline, so that a shader that does not fit its bindings fails at load.
  void Compile(Workspace& ws, const plugin::FunctionInfo& info);

  static Key KeyOf(const Kernel& k, const plugin::LaunchConfig& launch);

  // Callers hold mu_.
  const Pipeline& CreatePipeline(Workspace& ws, const Kernel& k, const Key& key,
                                 const plugin::LaunchConfig& launch);

  // A launch goes down once: the core packs the arguments, then calls here.
  bool LaunchesPacked() const override { return true; }
  void LaunchPacked(const plugin::FunctionInfo& info, size_t index,
                    const plugin::PackedArgs& k) override;

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
