#include "vulkan_descriptors.h"

#include <algorithm>
#include <utility>

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

VkDescriptorPool CreateDescriptorPool(const VkApi& vk, VkDevice device, uint32_t descriptors,
                                      uint32_t sets) {
  VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors},
                                  {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, descriptors}};
  auto info = Make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  info.maxSets = sets;
  info.poolSizeCount = 2;
  info.pPoolSizes = sizes;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  MODRT_VK_CHECK(vk.vkCreateDescriptorPool(device, &info, nullptr, &pool),
                 "creating a descriptor pool");
  return pool;
}

std::vector<VkDescriptorSet> WriteDescriptorSets(
    const VkApi& vk, VkDevice device, VkDescriptorPool pool, const Pipeline& p,
    const std::vector<VkDescriptorBufferInfo>& buffers) {
  const ArgLayout& layout = p.args;
  auto alloc = Make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  alloc.descriptorPool = pool;
  alloc.descriptorSetCount = layout.set_count;
  alloc.pSetLayouts = p.set_layouts.data();
  std::vector<VkDescriptorSet> sets(layout.set_count, VK_NULL_HANDLE);
  MODRT_VK_CHECK(vk.vkAllocateDescriptorSets(device, &alloc, sets.data()),
                 "allocating descriptor sets");
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  for (size_t b = 0; b < buffers.size(); ++b) {
    writes[b] = Make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[b].dstSet = sets[layout.buffers[b].set];
    writes[b].dstBinding = layout.buffers[b].binding;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = layout.buffers[b].type;
    writes[b].pBufferInfo = &buffers[b];
  }
  vk.vkUpdateDescriptorSets(device, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                            nullptr);
  return sets;
}

const std::vector<VkDescriptorSet>& SlotDescriptorSets(
    const VkApi& vk, const Device& d, Slot& s, const Pipeline& p,
    const std::vector<VkDescriptorBufferInfo>& buffers, bool* rewritten) {
  const bool same =
      !s.sets.empty() && s.sets_layout == p.layout && s.bound.size() == buffers.size() &&
      std::equal(buffers.begin(), buffers.end(), s.bound.begin(),
                 [](const VkDescriptorBufferInfo& b, VkBuffer v) { return b.buffer == v; });
  *rewritten = !same;
  if (same) return s.sets;
  s.sets.clear();
  s.recorded = false;
  const ArgLayout& layout = p.args;
  const uint32_t wanted = std::max(layout.storage_count, layout.uniform_count);
  if (s.descriptor_capacity < wanted || s.set_capacity < layout.set_count) {
    if (s.descriptors) vk.vkDestroyDescriptorPool(d.device, s.descriptors, nullptr);
    s.descriptors = VK_NULL_HANDLE;
    s.descriptor_capacity = s.set_capacity = 0;
    const uint32_t capacity = std::max<uint32_t>(wanted, 8);
    const uint32_t set_capacity = std::max<uint32_t>(layout.set_count, 4);
    s.descriptors = CreateDescriptorPool(vk, d.device, capacity, set_capacity);
    s.descriptor_capacity = capacity;
    s.set_capacity = set_capacity;
  } else {
    MODRT_VK_CHECK(vk.vkResetDescriptorPool(d.device, s.descriptors, 0),
                   "resetting a descriptor pool");
  }
  s.sets = WriteDescriptorSets(vk, d.device, s.descriptors, p, buffers);
  s.sets_layout = p.layout;
  s.bound.clear();
  for (const auto& b : buffers) s.bound.push_back(b.buffer);
  return s.sets;
}

}  // namespace vulkan
}  // namespace modrt
