#include "vulkan_graphs.h"

#include <algorithm>
#include <cstring>

#include "vulkan_descriptors.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

// Descriptor pools of a graph hold this many sets (more when one launch needs more).
constexpr uint32_t kGraphPoolSets = 256;
// The scalar-uniform memory of a graph comes in chunks of this many bytes (or one launch's).
constexpr size_t kGraphUniformChunk = 64 * 1024;

}  // namespace

Graph::Graph(Device& d) : d_(d) {
  const VkApi& vk = Workspace::Get().vk();
  auto pool = Make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.queueFamilyIndex = d.queue_family;
  MODRT_VK_CHECK(vk.vkCreateCommandPool(d.device, &pool, nullptr, &pool_),
                 "creating a command pool");
  auto alloc = Make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  // No ONE_TIME_SUBMIT: replays submit it again; SIMULTANEOUS_USE: a replay
  // may be submitted while the one before is still running.
  auto begin = Make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  VkResult r = vk.vkAllocateCommandBuffers(d.device, &alloc, &cmd_);
  if (r == VK_SUCCESS) r = vk.vkBeginCommandBuffer(cmd_, &begin);
  if (r != VK_SUCCESS) {
    vk.vkDestroyCommandPool(d.device, pool_, nullptr);
    MODRT_VK_CHECK(r, "beginning a graph's recording");
  }
}

Graph::~Graph() {
  const VkApi& vk = Workspace::Get().vk();
  for (VkDescriptorPool p : descriptor_pools_) vk.vkDestroyDescriptorPool(d_.device, p, nullptr);
  for (const auto& chunk : uniform_chunks_) ReleaseBuffer(d_, *chunk);
  vk.vkDestroyCommandPool(d_.device, pool_, nullptr);  // frees cmd_
}

VkDescriptorPool Graph::PoolFor(uint32_t sets, uint32_t descriptors) {
  if (descriptor_pools_.empty() || sets_left_ < sets || descriptors_left_ < descriptors) {
    const uint32_t pool_sets = std::max(kGraphPoolSets, sets);
    const uint32_t pool_descriptors = std::max(kGraphPoolSets * 4, descriptors);
    descriptor_pools_.push_back(
        CreateDescriptorPool(Workspace::Get().vk(), d_.device, pool_descriptors, pool_sets));
    sets_left_ = pool_sets;
    descriptors_left_ = pool_descriptors;
  }
  sets_left_ -= sets;
  descriptors_left_ -= descriptors;
  return descriptor_pools_.back();
}

std::vector<VkDescriptorBufferInfo> Graph::UniformsOf(const Dispatch& dispatch) {
  const VkDeviceSize align =
      std::max<VkDeviceSize>(16, d_.caps.props.limits.minUniformBufferOffsetAlignment);
  const size_t bytes = dispatch.uniforms.size();
  uniform_used_ = (uniform_used_ + align - 1) / align * align;
  if (uniform_chunks_.empty() || uniform_used_ + bytes > uniform_chunk_size_) {
    uniform_chunk_size_ = std::max<size_t>(kGraphUniformChunk, bytes);
    uniform_chunks_.push_back(NewBuffer(dispatch.device_id, d_, uniform_chunk_size_));
    uniform_used_ = 0;
  }
  const Buffer& chunk = *uniform_chunks_.back();
  std::memcpy(static_cast<char*>(chunk.host) + uniform_used_, dispatch.uniforms.data(), bytes);
  std::vector<VkDescriptorBufferInfo> buffers = WithUniforms(dispatch, chunk.buffer, uniform_used_);
  uniform_used_ += bytes;
  return buffers;
}

void Graph::RecordDispatch(const Dispatch& dispatch) {
  const VkApi& vk = Workspace::Get().vk();
  const ArgLayout& args = dispatch.pipeline->args;
  std::vector<VkDescriptorSet> sets;
  const std::vector<VkDescriptorBufferInfo> buffers =
      dispatch.uniforms.empty() ? dispatch.buffers : UniformsOf(dispatch);
  if (!buffers.empty()) {
    std::vector<VkDeviceSize> key;
    key.reserve(buffers.size() * 3);
    for (const VkDescriptorBufferInfo& b : buffers) {
      key.insert(key.end(), {reinterpret_cast<VkDeviceSize>(b.buffer), b.offset, b.range});
    }
    auto [found, added] = sets_by_binding_.try_emplace({dispatch.pipeline, std::move(key)});
    if (added) {
      // Descriptors of each type are counted together: a pool holds as many of each.
      VkDescriptorPool pool =
          PoolFor(args.set_count, std::max(args.storage_count, args.uniform_count));
      found->second = WriteDescriptorSets(vk, d_.device, pool, *dispatch.pipeline, buffers);
    }
    sets = found->second;
  }
  vulkan::RecordDispatch(vk, cmd_, dispatch, sets, &bound_);
}

void Graph::RecordCopy(VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset,
                       size_t nbytes) {
  vulkan::RecordCopy(Workspace::Get().vk(), cmd_, src, src_offset, dst, dst_offset, nbytes);
}

void Graph::End() {
  const VkApi& vk = Workspace::Get().vk();
  RecordHostReadBarrier(vk, cmd_);  // the host sees the graph's writes once it completed
  MODRT_VK_CHECK(vk.vkEndCommandBuffer(cmd_), "ending a graph's recording");
  ended_ = true;
  d_.shared->graph_recordings.fetch_add(1);
}

}  // namespace vulkan
}  // namespace modrt
