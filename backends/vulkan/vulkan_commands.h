// Command recording: what one dispatch is, and the commands that run it in
// order with the work before it.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_COMMANDS_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_COMMANDS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "vulkan_api.h"
#include "vulkan_pipelines.h"

namespace modrt {
namespace vulkan {

// One kernel launch, ready to record: its pipeline, the buffers it binds (in
// argument order), its push constants, its scalar-uniform data and its grid.
struct Dispatch {
  const Pipeline* pipeline = nullptr;
  int device_id = 0;
  std::vector<VkDescriptorBufferInfo> buffers;  // the tensors (ArgLayout::tensor_bindings)
  std::vector<uint8_t> constants;               // the pipeline's push-constant block
  // ArgLayout::uniform_bytes: where it lies is the submission's choice
  // (WithUniforms binds the blocks there).
  std::vector<uint8_t> uniforms;
  std::array<uint32_t, 3> grid{};
};

// `dispatch`'s descriptors with its scalar-uniform blocks bound: its tensors,
// then each block as a range of `memory`, which holds `dispatch.uniforms` from
// byte `base` on (`base` a multiple of minUniformBufferOffsetAlignment).
std::vector<VkDescriptorBufferInfo> WithUniforms(const Dispatch& dispatch, VkBuffer memory,
                                                 VkDeviceSize base);

// What a command buffer has bound so far: a dispatch that binds the same
// again records only its barrier and the dispatch (lavapipe re-emits its
// compute state on every bind, a cost per dispatch of a replayed graph).
struct BoundState {
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> sets;
  std::vector<uint8_t> constants;
};

// Records `dispatch` with `sets` bound after a barrier that makes it wait
// for the writes of the commands before it. With `bound` (the state `cmd`
// has bound so far, updated here), binds only what differs from it.
void RecordDispatch(const VkApi& vk, VkCommandBuffer cmd, const Dispatch& dispatch,
                    const std::vector<VkDescriptorSet>& sets, BoundState* bound = nullptr);

// Records a barrier after which the host sees the writes of the commands before it.
void RecordHostReadBarrier(const VkApi& vk, VkCommandBuffer cmd);

// Records a copy of `nbytes` from `src` at `src_offset` to `dst` at
// `dst_offset`, after the writes of the commands before it and before the
// reads (by kernels, copies or the host) of those after it.
void RecordCopy(const VkApi& vk, VkCommandBuffer cmd, VkBuffer src, size_t src_offset, VkBuffer dst,
                size_t dst_offset, size_t nbytes);

// Records writing the device's clock into `query` of `pool` once the
// commands before it completed.
void RecordTimestamp(const VkApi& vk, VkCommandBuffer cmd, VkQueryPool pool, uint32_t query);

// Begins `cmd` (resetting it) for a single submission.
void BeginOnce(const VkApi& vk, VkCommandBuffer cmd);

// Records `cmd` (reset by beginning it) as one complete launch of `dispatch`;
// reusable: it may be submitted again as it is.
void RecordLaunch(const VkApi& vk, VkCommandBuffer cmd, const Dispatch& dispatch,
                  const std::vector<VkDescriptorSet>& sets);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_COMMANDS_H_
