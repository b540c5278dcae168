// Vulkan devices: the process-wide Workspace (the loader, one instance, a
// logical device with one compute queue per usable physical device), the
// launch slots each device recycles, and the buffers behind tensors.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_DEVICE_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_DEVICE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "modrt/driver.h"
#include "modrt/plugin.h"
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

// What one launch records and submits: a command buffer, the fence that says
// it finished, and a descriptor pool for its buffer bindings. Slots are made
// once and recycled: a finished slot goes back to its device's free list and
// the next launch resets and reuses it. A slot remembers what it last held
// (descriptor set contents, recorded commands) so that a launch identical to
// the slot's last one re-submits it without updating or recording anything.
struct Slot {
  VkCommandBuffer cmd = VK_NULL_HANDLE;  // from Device::commands
  VkFence fence = VK_NULL_HANDLE;        // unsignaled while the slot is free
  VkDescriptorPool descriptors = VK_NULL_HANDLE;
  uint32_t descriptor_capacity = 0;  // descriptors of each buffer type the pool holds
  uint32_t set_capacity = 0;         // sets the pool holds
  // The sets allocated from `descriptors` (one per set number of the
  // pipeline layout) and what they were written with; valid while
  // `generation` equals the device's (bumped when buffers or pipelines are
  // destroyed, whose handles may then be reused).
  std::vector<VkDescriptorSet> sets;
  VkPipelineLayout sets_layout = VK_NULL_HANDLE;
  std::vector<VkBuffer> bound;
  // What `cmd` holds when `recorded`: a complete recording of this dispatch.
  bool recorded = false;
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> recorded_sets;
  std::array<uint32_t, 3> grid{};
  std::vector<uint8_t> constants;
  uint64_t generation = 0;
};

struct Device {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory{};
  Capabilities caps;
  // Guards the queue, the command pool, the slots and `generation`.
  std::unique_ptr<std::mutex> mu = std::make_unique<std::mutex>();
  VkCommandPool commands = VK_NULL_HANDLE;  // with RESET_COMMAND_BUFFER
  std::vector<Slot> in_flight;              // in submission order
  std::vector<Slot> free;                   // finished, fences reset; reused last-in first-out
  // Bumped whenever a buffer or a pipeline of this device is destroyed: what
  // slots remember from before may name a handle now reused for another object.
  uint64_t generation = 0;
  int64_t slots_created = 0;  // ever; launches recycle them
};

// Device memory behind a tensor: a storage buffer, persistently mapped.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* host = nullptr;
};

// Process-wide Vulkan state: the loader, one instance, and a logical device
// with one compute queue per usable physical device (best kind first).
class Workspace : public plugin::LazyDriverState<Workspace> {
 public:
  int count() const { return static_cast<int>(devices_.size()); }
  const VkApi& vk() const { return vk_; }
  // Device `id`; ValueError when there is none.
  Device& device(int id);

  // Waits for everything submitted to the device; recycles what it held.
  void Drain(Device& d);

  // Drain, and forget what slots remember: a buffer or pipeline is about to be
  // destroyed, and its handle may be reused for another object.
  void DrainAndInvalidate(Device& d);

  // Moves finished submissions to the free list; with `wait`, waits for all of
  // them first. Callers hold d.mu.
  void Retire(Device& d, bool wait);

  // A free slot (recycled when there is one), its fence unsignaled. Callers hold d.mu.
  Slot AcquireSlot(Device& d);

  // Returns a slot that was not submitted (its fence unsignaled) to the free
  // list, forgetting its recording. Callers hold d.mu.
  void ReleaseUnsubmitted(Device& d, Slot& s);

  void DestroySlot(const Device& d, Slot& s);

 private:
  friend class plugin::LazyDriverState<Workspace>;

  std::string Init();

  // Creates the logical device with every feature the shaders may need that
  // the device supports. Empty on success, else why the device is skipped.
  std::string OpenDevice(VkPhysicalDevice p, Device* d);

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

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_DEVICE_H_
