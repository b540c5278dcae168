// The WebGPU runtime's command recording (webgpu_module.h): the uniform rings
// of each kernel (a slot per launch of a batch, written through the queue so
// that it lands before the batch runs) and the dispatches encoded into
// compute passes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "webgpu_module.h"
#include "wgpu_native.h"
#include "wgsl_scan.h"

namespace modrt {
namespace webgpu {

void ReleaseBuffer::operator()(WGPUBuffer buffer) const {
  Workspace::Get().api().wgpuBufferRelease(buffer);
}

namespace {

// A ring like the kernel's own (webgpu_pipelines.cc): kMaxBatch slots.
UniformRing NewRing(Workspace& ws, const Kernel& kernel) {
  WGPUBufferDescriptor d{};
  d.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
  d.size = static_cast<uint64_t>(kernel.uniform_stride) * Workspace::kMaxBatch;
  UniformRing ring(ws.api().wgpuDeviceCreateBuffer(ws.device(), &d));
  if (ring == nullptr)
    plugin::Fail("MemoryError", "webgpu: cannot create a uniform ring for ", kernel.info->name);
  return ring;
}

WGPUBuffer RingBuffer(const Kernel& kernel, const LaunchCache& cache) {
  return cache.ring == 0 ? kernel.uniform_buffer : cache.extra_rings[cache.ring - 1].get();
}

}  // namespace

std::pair<WGPUBuffer, uint32_t> UniformSlot(Workspace& ws, const Kernel& kernel,
                                            const LaunchArgs& args, LaunchCache& cache) {
  if (kernel.uniform_size == 0) return {nullptr, 0};
  const uint8_t* uniform = args.uniform.data();
  if (cache.batch != ws.batch()) {
    cache.batch = ws.batch();
    cache.ring = 0;
    cache.next_slot = 0;
    cache.has_last = false;
  }
  // The last slot written in this batch serves a launch with the same scalars.
  if (cache.has_last && std::memcmp(cache.last_uniform.data(), uniform, kernel.uniform_size) == 0) {
    return {RingBuffer(kernel, cache), cache.last_offset};
  }
  if (cache.next_slot == Workspace::kMaxBatch) {
    if (ws.IdleLocked()) {
      ws.FlushLocked();  // the rings' slots are free again after this
      cache.batch = ws.batch();
      cache.ring = 0;
    } else {
      // The batch goes on behind running work (webgpu_device.h): the queue
      // writes of its slots all land before it runs, so each needs its own.
      if (++cache.ring > cache.extra_rings.size()) cache.extra_rings.push_back(NewRing(ws, kernel));
    }
    cache.next_slot = 0;
  }
  const WGPUBuffer ring = RingBuffer(kernel, cache);
  const uint32_t offset = cache.next_slot++ * kernel.uniform_stride;
  ws.api().wgpuQueueWriteBuffer(ws.queue(), ring, offset, uniform, kernel.uniform_size);
  cache.has_last = true;
  cache.last_offset = offset;
  cache.last_uniform.assign(uniform, uniform + kernel.uniform_size);
  return {ring, offset};
}

void EncodeDispatch(const WgpuApi& api, WGPUComputePassEncoder pass, WGPUComputePipeline pipeline,
                    const std::vector<WGPUBindGroup>& groups,
                    const std::vector<uint32_t>& uniforms_per_group, uint32_t uniform_offset,
                    const uint32_t grid[3]) {
  api.wgpuComputePassEncoderSetPipeline(pass, pipeline);
  // Every uniform of the kernel reads the same slot.
  const size_t most = uniforms_per_group.empty()
                          ? 0
                          : *std::max_element(uniforms_per_group.begin(), uniforms_per_group.end());
  std::vector<uint32_t> dynamic_offsets(most, uniform_offset);
  for (size_t g = 0; g < groups.size(); ++g) {
    api.wgpuComputePassEncoderSetBindGroup(pass, static_cast<uint32_t>(g), groups[g],
                                           uniforms_per_group[g], dynamic_offsets.data());
  }
  api.wgpuComputePassEncoderDispatchWorkgroups(pass, grid[0], grid[1], grid[2]);
}

void RecordDispatch(Workspace& ws, const Kernel& kernel, WGPUComputePipeline pipeline,
                    const std::vector<WGPUBindGroup>& groups, uint32_t uniform_offset,
                    const uint32_t grid[3]) {
  const WgpuApi& api = ws.api();
  WGPUComputePassEncoder pass = api.wgpuCommandEncoderBeginComputePass(ws.PendingLocked(), nullptr);
  EncodeDispatch(api, pass, pipeline, groups, kernel.uniforms_per_group, uniform_offset, grid);
  api.wgpuComputePassEncoderEnd(pass);
  api.wgpuComputePassEncoderRelease(pass);
  ws.RecordedLocked();
}

}  // namespace webgpu
}  // namespace modrt
