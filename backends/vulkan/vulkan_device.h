// Vulkan devices: the process-wide Workspace (the loader, one instance, a
// logical device with one compute queue per usable physical device), what a
// device's streams share, and the buffers behind tensors.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_DEVICE_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"
#include "vulkan_api.h"

namespace modrt {
namespace vulkan {

// What a device can do, read from its properties and features.
struct Capabilities {
  VkPhysicalDeviceProperties props{};
  uint32_t subgroup_size = 1;
  bool float16 = false, float64 = false, int8 = false, int16 = false, int64 = false;
  bool storage_buffer_8bit = false, storage_buffer_16bit = false;
  bool push_constant_8bit = false, push_constant_16bit = false;
  uint64_t device_local_bytes = 0;
};

class Stream;

// Timestamp queries for events recorded with timing: pools of queries, each
// query taken by one event and given back when it goes.
struct QuerySlot {
  VkQueryPool pool = VK_NULL_HANDLE;
  uint32_t index = 0;
};

// What the streams of a device share; not movable, so behind a pointer.
struct DeviceShared {
  std::mutex queue;    // guards vkQueueSubmit
  std::mutex streams;  // guards Device::streams
  // Bumped whenever a buffer or a pipeline of this device is destroyed: what
  // slots remember from before may name a handle now reused for another object.
  std::atomic<uint64_t> generation{0};
  std::atomic<int64_t> slots_created{0};  // ever; launches recycle them
  // Ever, for vulkan.submission_counts: dispatches submitted one by one,
  // graph recordings completed (a capture, or a rebound replay's re-recording),
  // graph replays submitted.
  std::atomic<int64_t> launches_submitted{0};
  std::atomic<int64_t> graph_recordings{0};
  std::atomic<int64_t> graph_replays{0};
  std::mutex queries_mu;  // guards the two below
  std::vector<VkQueryPool> query_pools;
  std::vector<QuerySlot> free_queries;
};

struct Device {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory{};
  Capabilities caps;
  uint32_t timestamp_bits = 0;  // of the queue family; 0: no timestamps
  std::unique_ptr<DeviceShared> shared = std::make_unique<DeviceShared>();
  // Every live stream, the default stream first (made on first use).
  std::vector<std::shared_ptr<Stream>> streams;
};

// Device memory behind a tensor: a storage buffer, persistently mapped.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* host = nullptr;
};

// A host-visible buffer of `nbytes` on `d` (MemoryError when the driver has
// no memory for it), and its release.
std::unique_ptr<Buffer> NewBuffer(int id, const Device& d, size_t nbytes);
void ReleaseBuffer(const Device& d, const Buffer& buf);

// Process-wide Vulkan state: the loader, one instance, and a logical device
// with one compute queue per usable physical device (best kind first).
class Workspace : public plugin::LazyDriverState<Workspace> {
 public:
  int count() const { return static_cast<int>(devices_.size()); }
  const VkApi& vk() const { return vk_; }
  // Device `id`; ValueError when there is none.
  Device& device(int id);

  // Waits for everything submitted to the device's streams; recycles what they held.
  void Drain(Device& d);

  // Drain, and forget what slots remember: a buffer or pipeline is about to be
  // destroyed, and its handle may be reused for another object.
  void DrainAndInvalidate(Device& d);

 private:
  friend class plugin::LazyDriverState<Workspace>;

  std::string Init();

  // Creates the logical device with every feature the shaders may need that
  // the device supports. Empty on success, else why the device is skipped.
  std::string OpenDevice(VkPhysicalDevice p, Device* d);

  // vkWaitSemaphores and vkGetSemaphoreCounterValue, core or KHR, where the loader has them.
  void ResolveTimelineFunctions();

  plugin::DriverLibrary lib_;
  VkApi vk_;
  uint32_t instance_version_ = VK_API_VERSION_1_0;
  VkInstance instance_ = VK_NULL_HANDLE;
  std::vector<Device> devices_;
};

// The device API of kind "vulkan" (tensors, copies, attributes), for RegisterDeviceAPI.
plugin::DeviceAPI& VulkanDeviceAPIInstance();

// The global "vulkan.launch_slots_created": how many launch slots a device has created.
void LaunchSlotsCreated(const plugin::Args& args, plugin::Ret* ret);
// The global "vulkan.submission_count": one of a device's counts of what it
// submitted, by name ("launches", "graph_recordings", "graph_replays").
void SubmissionCount(const plugin::Args& args, plugin::Ret* ret);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_DEVICE_H_
