// Graphs: launches recorded into one reusable command buffer while a stream
// captures, submitted as a whole by each replay.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_GRAPHS_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_GRAPHS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "vulkan_api.h"
#include "vulkan_commands.h"
#include "vulkan_device.h"

namespace modrt {
namespace vulkan {

class Graph {
 public:
  // Begins the recording.
  explicit Graph(Device& d);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Appends a launch (its descriptor sets written now, owned by the graph).
  void RecordDispatch(const Dispatch& dispatch);
  // Appends a device-to-device copy.
  void RecordCopy(VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset, size_t nbytes);
  // Ends the recording; the graph may then be submitted, any number of times.
  void End();

  VkCommandBuffer cmd() const { return cmd_; }
  bool ended() const { return ended_; }

 private:
  // A descriptor pool with room for `sets` sets and `descriptors` of each type.
  VkDescriptorPool PoolFor(uint32_t sets, uint32_t descriptors);

  Device& d_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> descriptor_pools_;  // the last one has room left
  uint32_t sets_left_ = 0, descriptors_left_ = 0;
  // The descriptor sets written so far, by pipeline and bound buffers: a
  // launch binding what an earlier one bound takes its sets, so that
  // consecutive launches of one kernel on the same buffers bind nothing new.
  std::map<std::pair<const Pipeline*, std::vector<VkDeviceSize>>, std::vector<VkDescriptorSet>>
      sets_by_binding_;
  // `dispatch`'s descriptors, its scalar-uniform data written into the graph's
  // uniform memory (each launch its own range, written once).
  std::vector<VkDescriptorBufferInfo> UniformsOf(const Dispatch& dispatch);

  BoundState bound_;                                     // what cmd_ has bound so far
  std::vector<std::unique_ptr<Buffer>> uniform_chunks_;  // the last one has room left
  size_t uniform_chunk_size_ = 0, uniform_used_ = 0;
  bool ended_ = false;
};

// The device layer's graphs and their in-place updates.
void AddGraphs(plugin::DeviceLayer* layer);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_GRAPHS_H_
