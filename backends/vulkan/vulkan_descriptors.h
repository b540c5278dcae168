// The descriptor-set cache: the buffers a dispatch binds, written into
// descriptor sets that a launch slot keeps while it binds the same buffers.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_DESCRIPTORS_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_DESCRIPTORS_H_

#include <cstdint>
#include <vector>

#include "vulkan_api.h"
#include "vulkan_device.h"
#include "vulkan_pipelines.h"
#include "vulkan_streams.h"

namespace modrt {
namespace vulkan {

// A descriptor pool of `sets` sets and `descriptors` descriptors of each
// buffer type (storage, uniform).
VkDescriptorPool CreateDescriptorPool(const VkApi& vk, VkDevice device, uint32_t descriptors,
                                      uint32_t sets);

// Descriptor sets for one dispatch of `p` (one per set number of its layout)
// binding `buffers` (one per buffer argument), allocated from `pool`.
std::vector<VkDescriptorSet> WriteDescriptorSets(
    const VkApi& vk, VkDevice device, VkDescriptorPool pool, const Pipeline& p,
    const std::vector<VkDescriptorBufferInfo>& buffers);

// The slot's descriptor sets for `p` binding `buffers`: kept when the slot's
// sets already bind these buffers for this layout, else the slot's pool is
// reset (grown if need be) and the sets written, and *rewritten is set.
const std::vector<VkDescriptorSet>& SlotDescriptorSets(
    const VkApi& vk, const Device& d, Slot& s, const Pipeline& p,
    const std::vector<VkDescriptorBufferInfo>& buffers, bool* rewritten);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_DESCRIPTORS_H_
