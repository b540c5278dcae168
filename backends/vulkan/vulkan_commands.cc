#include "vulkan_commands.h"

namespace modrt {
namespace vulkan {

std::vector<VkDescriptorBufferInfo> WithUniforms(const Dispatch& dispatch, VkBuffer memory,
                                                 VkDeviceSize base) {
  std::vector<VkDescriptorBufferInfo> buffers = dispatch.buffers;
  const ArgLayout& layout = dispatch.pipeline->args;
  for (size_t b = layout.tensor_bindings; b < layout.buffers.size(); ++b) {
    buffers.push_back({memory, base + layout.buffers[b].offset, layout.buffers[b].size});
  }
  return buffers;
}

void RecordDispatch(const VkApi& vk, VkCommandBuffer cmd, const Dispatch& dispatch,
                    const std::vector<VkDescriptorSet>& sets, BoundState* bound) {
  // Kernels run in submission order, like a stream: each waits for the
  // writes of the ones before it.
  auto before = Make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  before.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &before, 0, nullptr, 0,
                          nullptr);
  const Pipeline& p = *dispatch.pipeline;
  // A new pipeline rebinds everything: its layout may differ from the last one's.
  const bool same_pipeline = bound != nullptr && bound->pipeline == p.pipeline;
  if (!same_pipeline) {
    vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  }
  if (!sets.empty() && !(same_pipeline && bound->sets == sets)) {
    vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0,
                               static_cast<uint32_t>(sets.size()), sets.data(), 0, nullptr);
  }
  if (p.args.push_size > 0 && !(same_pipeline && bound->constants == dispatch.constants)) {
    vk.vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p.args.push_size,
                          dispatch.constants.data());
  }
  if (bound != nullptr) {
    bound->pipeline = p.pipeline;
    bound->sets = sets;
    bound->constants = dispatch.constants;
  }
  vk.vkCmdDispatch(cmd, dispatch.grid[0], dispatch.grid[1], dispatch.grid[2]);
}

void RecordHostReadBarrier(const VkApi& vk, VkCommandBuffer cmd) {
  auto after = Make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
                          1, &after, 0, nullptr, 0, nullptr);
}

void RecordCopy(const VkApi& vk, VkCommandBuffer cmd, VkBuffer src, size_t src_offset, VkBuffer dst,
                size_t dst_offset, size_t nbytes) {
  auto before = Make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  before.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vk.vkCmdPipelineBarrier(cmd,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr, 0, nullptr);
  const VkBufferCopy region{src_offset, dst_offset, nbytes};
  vk.vkCmdCopyBuffer(cmd, src, dst, 1, &region);
  auto after = Make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                        VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                        VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                              VK_PIPELINE_STAGE_HOST_BIT,
                          0, 1, &after, 0, nullptr, 0, nullptr);
}

void RecordTimestamp(const VkApi& vk, VkCommandBuffer cmd, VkQueryPool pool, uint32_t query) {
  vk.vkCmdResetQueryPool(cmd, pool, query, 1);
  vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, query);
}

void BeginOnce(const VkApi& vk, VkCommandBuffer cmd) {
  auto begin = Make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  MODRT_VK_CHECK(vk.vkBeginCommandBuffer(cmd, &begin), "recording a command buffer");
}

void RecordLaunch(const VkApi& vk, VkCommandBuffer cmd, const Dispatch& dispatch,
                  const std::vector<VkDescriptorSet>& sets) {
  // Begin resets the buffer (the pool allows it); no ONE_TIME_SUBMIT: it may be replayed.
  auto begin = Make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  MODRT_VK_CHECK(vk.vkBeginCommandBuffer(cmd, &begin), "recording a launch");
  RecordDispatch(vk, cmd, dispatch, sets);
  RecordHostReadBarrier(vk, cmd);  // host reads after the fence see the kernel's writes
  MODRT_VK_CHECK(vk.vkEndCommandBuffer(cmd), "recording a launch");
}

}  // namespace vulkan
}  // namespace modrt
