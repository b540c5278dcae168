// libmodrt_runtime_vulkan.so: Vulkan compute on a lazily loaded libvulkan
// (Mesa's lavapipe on a plain CPU machine, any conformant driver elsewhere).
//
// Kernel conventions, for shaders written by hand or by codegen:
// - buffer arguments bind to descriptor set 0, bindings 0, 1, ... in argument order;
// - scalar arguments form one push-constant block, in argument order, each at
//   an offset aligned to its size (std430);
// - threadIdx.{x,y,z} set specialization constants 0, 1, 2 (for
//   `layout(local_size_x_id = 0, ...)`), dyn_shared_mem sets constant 3 (bytes);
//   a shader with a fixed local_size must be launched with that size;
// - blockIdx.{x,y,z} is the dispatch size.
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "backend_identity.h"
#include "modrt/driver.h"
#include "modrt/plugin.h"

namespace modrt {
namespace vulkan {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

constexpr const char* kLibrary = "libvulkan.so.1";

// Entry points resolved through vkGetInstanceProcAddr once an instance exists.
// clang-format off
#define MODRT_VK_INSTANCE_FUNCTIONS(X)        \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkCreateDevice)                           \
  X(vkDestroyDevice)                          \
  X( vkGetDeviceQueue)                        \
  X(vkCreateBuffer)                           \
  X(vkDestroyBuffer)                          \
  X(vkGetBufferMemoryRequirements)            \
  X(vkAllocateMemory)                         \
  X(vkFreeMemory)                             \
  X( vkBindBufferMemory)                      \
  X(vkMapMemory)                              \
  X(vkCreateShaderModule)                     \
  X(vkDestroyShaderModule)                    \
  X(vkCreateDescriptorSetLayout)              \
  X( vkDestroyDescriptorSetLayout)            \
  X(vkCreatePipelineLayout)                   \
  X(vkDestroyPipelineLayout)                  \
  X(vkCreateComputePipelines)                 \
  X(vkDestroyPipeline)                        \
  X(vkCreateDescriptorPool)                   \
  X(vkDestroyDescriptorPool)                  \
  X(vkAllocateDescriptorSets)                 \
  X(vkUpdateDescriptorSets)                   \
  X(vkCreateCommandPool)                      \
  X(vkAllocateCommandBuffers)                 \
  X(vkFreeCommandBuffers)                     \
  X(vkBeginCommandBuffer)                     \
  X(vkEndCommandBuffer)                       \
  X(vkCmdBindPipeline)                        \
  X(vkCmdBindDescriptorSets)                  \
  X(vkCmdPushConstants)                       \
  X(vkCmdDispatch)                            \
  X(vkCmdPipelineBarrier)                     \
  X(vkQueueSubmit)                            \
  X(vkCreateFence)                            \
  X(vkDestroyFence)                           \
  X(vkWaitForFences)                          \
  X(vkGetFenceStatus)                         \
  X(vkResetFences)                            \
  X(vkResetDescriptorPool)
// clang-format on

struct VkApi {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;  // null on 1.0 loaders
#define MODRT_VK_DECLARE(name) PFN_##name name = nullptr;
  MODRT_VK_INSTANCE_FUNCTIONS(MODRT_VK_DECLARE)
#undef MODRT_VK_DECLARE
};

std::string VkResultName(VkResult r) {
  switch (r) {
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_UNKNOWN: return "VK_ERROR_UNKNOWN";
    default: return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

#define MODRT_VK_CHECK(call, what)                                                       \
  do {                                                                                   \
    VkResult modrt_vk_status = (call);                                                   \
    if (modrt_vk_status != VK_SUCCESS) {                                                 \
      Fail("RuntimeError", "Vulkan ", what, " failed: ", VkResultName(modrt_vk_status)); \
    }                                                                                    \
  } while (0)

// A Vulkan struct with its sType set and every other member zero.
template <typename T>
T Make(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

std::string VersionString(uint32_t v) {
  return StrCat(VK_API_VERSION_MAJOR(v), ".", VK_API_VERSION_MINOR(v), ".",
                VK_API_VERSION_PATCH(v));
}

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
  uint32_t descriptor_capacity = 0;  // storage buffers the pool holds (one set)
  // The set allocated from `descriptors` and what it was written with; valid
  // while `generation` equals the device's (bumped when buffers or pipelines
  // are destroyed, whose handles may then be reused).
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  std::vector<VkBuffer> bound;
  // What `cmd` holds when `recorded`: a complete recording of this dispatch.
  bool recorded = false;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorSet recorded_set = VK_NULL_HANDLE;
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

// At most this many finished slots are kept per device; more are destroyed.
constexpr size_t kMaxFreeSlots = 64;

// Device memory behind a tensor: a storage buffer, persistently mapped.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* host = nullptr;
};

int DeviceRank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

const char* DeviceTypeName(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

// Process-wide Vulkan state: the loader, one instance, and a logical device
// with one compute queue per usable physical device (best kind first).
class Workspace : public LazyDriverState<Workspace> {
 public:
  int count() const { return static_cast<int>(devices_.size()); }
  const VkApi& vk() const { return vk_; }
  Device& device(int id) {
    CheckDevice(kBackendIdentity, id);
    return devices_[id];
  }

  // Waits for everything submitted to the device; recycles what it held.
  void Drain(Device& d) {
    std::lock_guard lock(*d.mu);
    Retire(d, /*wait=*/true);
  }

  // Drain, and forget what slots remember: a buffer or pipeline is about to be
  // destroyed, and its handle may be reused for another object.
  void DrainAndInvalidate(Device& d) {
    std::lock_guard lock(*d.mu);
    Retire(d, /*wait=*/true);
    ++d.generation;
  }

  // Moves finished submissions to the free list; with `wait`, waits for all of
  // them first. Callers hold d.mu.
  void Retire(Device& d, bool wait) {
    if (d.in_flight.empty()) return;
    std::vector<VkFence> fences;
    fences.reserve(d.in_flight.size());
    size_t finished = 0;
    if (wait) {
      // Every fence: a fence covers only its own submission, so the last one
      // signalling says nothing of the others' fences.
      for (const Slot& s : d.in_flight) fences.push_back(s.fence);
      MODRT_VK_CHECK(vk_.vkWaitForFences(d.device, static_cast<uint32_t>(fences.size()),
                                         fences.data(), VK_TRUE, UINT64_MAX),
                     "waiting for kernels");
      finished = d.in_flight.size();
    } else {
      // Oldest first; the first one still running ends the scan (a later one
      // that finished is recycled next time).
      while (finished < d.in_flight.size() &&
             vk_.vkGetFenceStatus(d.device, d.in_flight[finished].fence) == VK_SUCCESS) {
        fences.push_back(d.in_flight[finished].fence);
        ++finished;
      }
    }
    if (finished == 0) return;
    VkResult reset =
        vk_.vkResetFences(d.device, static_cast<uint32_t>(fences.size()), fences.data());
    for (size_t i = 0; i < finished; ++i) {
      Slot& s = d.in_flight[i];
      if (reset == VK_SUCCESS && d.free.size() < kMaxFreeSlots) {
        d.free.push_back(std::move(s));
      } else {
        DestroySlot(d, s);
      }
    }
    d.in_flight.erase(d.in_flight.begin(),
                      d.in_flight.begin() + static_cast<std::ptrdiff_t>(finished));
    MODRT_VK_CHECK(reset, "resetting fences");
  }

  // A free slot (recycled when there is one), its fence unsignaled. Callers hold d.mu.
  Slot AcquireSlot(Device& d) {
    if (!d.free.empty()) {
      Slot s = std::move(d.free.back());
      d.free.pop_back();
      return s;
    }
    Slot s;
    ++d.slots_created;
    auto alloc = Make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    alloc.commandPool = d.commands;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    MODRT_VK_CHECK(vk_.vkAllocateCommandBuffers(d.device, &alloc, &s.cmd),
                   "allocating a command buffer");
    auto fence = Make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    VkResult r = vk_.vkCreateFence(d.device, &fence, nullptr, &s.fence);
    if (r != VK_SUCCESS) {
      DestroySlot(d, s);
      MODRT_VK_CHECK(r, "creating a fence");
    }
    return s;
  }

  // Returns a slot that was not submitted (its fence unsignaled) to the free
  // list, forgetting its recording. Callers hold d.mu.
  void ReleaseUnsubmitted(Device& d, Slot& s) {
    s.recorded = false;
    s.set = VK_NULL_HANDLE;  // may be half written
    if (d.free.size() < kMaxFreeSlots) {
      d.free.push_back(std::move(s));
    } else {
      DestroySlot(d, s);
    }
  }

  void DestroySlot(const Device& d, Slot& s) {
    if (s.cmd) vk_.vkFreeCommandBuffers(d.device, d.commands, 1, &s.cmd);
    if (s.fence) vk_.vkDestroyFence(d.device, s.fence, nullptr);
    if (s.descriptors) vk_.vkDestroyDescriptorPool(d.device, s.descriptors, nullptr);
    s = Slot{};
  }

 private:
  friend class LazyDriverState<Workspace>;

  std::string Init() {
    // MODRT_VULKAN_DRIVER_LIBRARY, else the system's Vulkan loader.
    const std::vector<std::string> candidates =
        DriverLibraryCandidates(kBackendIdentity.name, {kLibrary});
    const std::string& library = candidates.front();
    if (!lib_.Open(candidates)) return StrCat(library, ": ", lib_.error());
    if (!lib_.Resolve("vkGetInstanceProcAddr", &vk_.vkGetInstanceProcAddr)) {
      return StrCat(library, ": ", lib_.error());
    }
    auto global = [&](const char* name) { return vk_.vkGetInstanceProcAddr(VK_NULL_HANDLE, name); };
    vk_.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(global("vkCreateInstance"));
    vk_.vkEnumerateInstanceVersion =
        reinterpret_cast<PFN_vkEnumerateInstanceVersion>(global("vkEnumerateInstanceVersion"));
    if (vk_.vkCreateInstance == nullptr)
      return StrCat(library, " does not provide vkCreateInstance");
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (vk_.vkEnumerateInstanceVersion) vk_.vkEnumerateInstanceVersion(&loader_version);
    if (loader_version < VK_API_VERSION_1_1) {
      return StrCat(library, " is Vulkan ", VersionString(loader_version),
                    "; modrt needs Vulkan 1.1");
    }
    instance_version_ = std::min<uint32_t>(loader_version, VK_API_VERSION_1_2);

    auto app = Make<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    app.pApplicationName = "modrt";
    app.pEngineName = "modrt";
    app.apiVersion = instance_version_;
    auto info = Make<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    info.pApplicationInfo = &app;
    VkResult r = vk_.vkCreateInstance(&info, nullptr, &instance_);
    if (r != VK_SUCCESS) {
      return StrCat(library, " found no usable Vulkan driver (vkCreateInstance: ", VkResultName(r),
                    "); is an ICD such as Mesa's lavapipe (mesa-vulkan-drivers) installed?");
    }
#define MODRT_VK_RESOLVE(name)                                                          \
  vk_.name = reinterpret_cast<PFN_##name>(vk_.vkGetInstanceProcAddr(instance_, #name)); \
  if (vk_.name == nullptr) return StrCat(library, " does not provide " #name);
    MODRT_VK_INSTANCE_FUNCTIONS(MODRT_VK_RESOLVE)
#undef MODRT_VK_RESOLVE

    uint32_t n = 0;
    r = vk_.vkEnumeratePhysicalDevices(instance_, &n, nullptr);
    std::vector<VkPhysicalDevice> physical(n);
    if (r == VK_SUCCESS && n > 0)
      r = vk_.vkEnumeratePhysicalDevices(instance_, &n, physical.data());
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
      return StrCat(library, ": vkEnumeratePhysicalDevices failed: ", VkResultName(r));
    }
    std::vector<std::string> skipped;
    for (VkPhysicalDevice p : physical) {
      Device d;
      std::string why = OpenDevice(p, &d);
      if (why.empty()) {
        devices_.push_back(std::move(d));
      } else {
        skipped.push_back(why);
      }
    }
    std::stable_sort(devices_.begin(), devices_.end(), [](const Device& a, const Device& b) {
      return DeviceRank(a.caps.props.deviceType) < DeviceRank(b.caps.props.deviceType);
    });
    if (devices_.empty()) {
      std::string why = StrCat(library, " reports no usable Vulkan device (", physical.size(),
                               " physical devices");
      for (const auto& s : skipped) why += "; " + s;
      return why + ")";
    }
    return "";
  }

  // Creates the logical device with every feature the shaders may need that
  // the device supports. Empty on success, else why the device is skipped.
  std::string OpenDevice(VkPhysicalDevice p, Device* d) {
    d->physical = p;
    Capabilities& caps = d->caps;
    vk_.vkGetPhysicalDeviceProperties(p, &caps.props);
    const std::string name = caps.props.deviceName;
    if (caps.props.apiVersion < VK_API_VERSION_1_1) return name + ": Vulkan 1.0 only";
    const bool v12 =
        caps.props.apiVersion >= VK_API_VERSION_1_2 && instance_version_ >= VK_API_VERSION_1_2;

    auto subgroup = Make<VkPhysicalDeviceSubgroupProperties>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
    auto props2 = Make<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    props2.pNext = &subgroup;
    vk_.vkGetPhysicalDeviceProperties2(p, &props2);
    caps.subgroup_size = subgroup.subgroupSize;

    auto storage16 = Make<VkPhysicalDevice16BitStorageFeatures>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
    auto storage8 = Make<VkPhysicalDevice8BitStorageFeatures>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
    auto f16i8 = Make<VkPhysicalDeviceShaderFloat16Int8Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
    auto features = Make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    features.pNext = &storage16;
    if (v12) {
      storage16.pNext = &storage8;
      storage8.pNext = &f16i8;
    }
    vk_.vkGetPhysicalDeviceFeatures2(p, &features);
    caps.int16 = features.features.shaderInt16;
    caps.int64 = features.features.shaderInt64;
    caps.float64 = features.features.shaderFloat64;
    caps.storage_buffer_16bit = storage16.storageBuffer16BitAccess;
    caps.push_constant_16bit = storage16.storagePushConstant16;
    caps.storage_buffer_8bit = storage8.storageBuffer8BitAccess;
    caps.push_constant_8bit = storage8.storagePushConstant8;
    caps.float16 = f16i8.shaderFloat16;
    caps.int8 = f16i8.shaderInt8;

    uint32_t nfamilies = 0;
    vk_.vkGetPhysicalDeviceQueueFamilyProperties(p, &nfamilies, nullptr);
    std::vector<VkQueueFamilyProperties> families(nfamilies);
    vk_.vkGetPhysicalDeviceQueueFamilyProperties(p, &nfamilies, families.data());
    // A compute-only family first: it is the one meant for compute work.
    int family = -1;
    for (uint32_t i = 0; i < nfamilies; ++i) {
      if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
      if (family < 0 || !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
        family = static_cast<int>(i);
    }
    if (family < 0) return name + ": no compute queue";
    d->queue_family = static_cast<uint32_t>(family);

    vk_.vkGetPhysicalDeviceMemoryProperties(p, &d->memory);
    for (uint32_t i = 0; i < d->memory.memoryHeapCount; ++i) {
      if (d->memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
        caps.device_local_bytes += d->memory.memoryHeaps[i].size;
      }
    }

    const float priority = 1.0f;
    auto queue = Make<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    queue.queueFamilyIndex = d->queue_family;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    auto info = Make<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    info.pNext = &features;  // enables everything queried above
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    VkResult r = vk_.vkCreateDevice(p, &info, nullptr, &d->device);
    if (r != VK_SUCCESS) return StrCat(name, ": vkCreateDevice failed: ", VkResultName(r));
    vk_.vkGetDeviceQueue(d->device, d->queue_family, 0, &d->queue);
    auto pool = Make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;  // slots re-record their buffers
    pool.queueFamilyIndex = d->queue_family;
    r = vk_.vkCreateCommandPool(d->device, &pool, nullptr, &d->commands);
    if (r != VK_SUCCESS) {
      vk_.vkDestroyDevice(d->device, nullptr);
      return StrCat(name, ": vkCreateCommandPool failed: ", VkResultName(r));
    }
    return "";
  }

  DriverLibrary lib_;
  VkApi vk_;
  uint32_t instance_version_ = VK_API_VERSION_1_0;
  VkInstance instance_ = VK_NULL_HANDLE;
  std::vector<Device> devices_;
};

// Host-visible, coherent memory for `bits`; device-local as well when there is such.
uint32_t PickMemoryType(const Device& d, uint32_t bits) {
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int best = -1;
  for (uint32_t i = 0; i < d.memory.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = d.memory.memoryTypes[i].propertyFlags;
    if (!(bits & (1u << i)) || (flags & host) != host) continue;
    if (best < 0 || (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) {
      best = static_cast<int>(i);
      if (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) break;
    }
  }
  if (best < 0)
    Fail("RuntimeError", "Vulkan device ", d.caps.props.deviceName,
         " has no host-visible coherent memory for buffers");
  return static_cast<uint32_t>(best);
}

class VulkanDeviceAPI final : public DriverDeviceAPI<Workspace> {
 public:
  void GetAttr(int id, std::string_view name, Ret* ret) override {
    const Capabilities& c = Workspace::Get().device(id).caps;
    const VkPhysicalDeviceLimits& l = c.props.limits;
    if (name == "name" || name == "device_name") return ret->SetStr(c.props.deviceName);
    if (name == "device_type") return ret->SetStr(DeviceTypeName(c.props.deviceType));
    if (name == "vendor_id") return ret->SetInt(c.props.vendorID);
    if (name == "driver_version") return ret->SetInt(c.props.driverVersion);
    if (name == "vulkan_api_version" || name == "compute_version") {
      return ret->SetStr(VersionString(c.props.apiVersion));
    }
    if (name == "max_threads_per_block") return ret->SetInt(l.maxComputeWorkGroupInvocations);
    if (name == "max_shared_memory_per_block") return ret->SetInt(l.maxComputeSharedMemorySize);
    if (name == "warp_size" || name == "thread_warp_size") return ret->SetInt(c.subgroup_size);
    if (name == "max_push_constants_size") return ret->SetInt(l.maxPushConstantsSize);
    if (name == "max_storage_buffer_range") return ret->SetInt(l.maxStorageBufferRange);
    if (name == "max_uniform_buffer_range") return ret->SetInt(l.maxUniformBufferRange);
    if (name == "max_bound_descriptor_sets") return ret->SetInt(l.maxBoundDescriptorSets);
    if (name == "max_storage_buffers_per_stage")
      return ret->SetInt(l.maxPerStageDescriptorStorageBuffers);
    if (name == "global_memory") return ret->SetInt(static_cast<int64_t>(c.device_local_bytes));
    static const char* const kAxes[] = {"x", "y", "z"};
    for (int a = 0; a < 3; ++a) {
      if (name == StrCat("max_block_dim_", kAxes[a]))
        return ret->SetInt(l.maxComputeWorkGroupSize[a]);
      if (name == StrCat("max_grid_dim_", kAxes[a]))
        return ret->SetInt(l.maxComputeWorkGroupCount[a]);
    }
    const std::pair<const char*, bool> flags[] = {
        {"supports_float16", c.float16},
        {"supports_float64", c.float64},
        {"supports_int8", c.int8},
        {"supports_int16", c.int16},
        {"supports_int64", c.int64},
        {"supports_8bit_buffer", c.storage_buffer_8bit},
        {"supports_16bit_buffer", c.storage_buffer_16bit},
        {"supports_8bit_push_constant", c.push_constant_8bit},
        {"supports_16bit_push_constant", c.push_constant_16bit},
    };
    for (const auto& [flag, value] : flags) {
      if (name == flag) return ret->SetInt(value ? 1 : 0);
    }
  }
  void* Alloc(int id, size_t nbytes) override {
    Workspace& ws = Workspace::Get();
    const VkApi& vk = ws.vk();
    Device& d = ws.device(id);
    auto buf = std::make_unique<Buffer>();
    auto info = Make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    info.size = std::max<size_t>(nbytes, 4);  // zero-sized buffers are invalid
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    MODRT_VK_CHECK(vk.vkCreateBuffer(d.device, &info, nullptr, &buf->buffer),
                   StrCat("creating a buffer of ", nbytes, " bytes"));
    VkMemoryRequirements req{};
    vk.vkGetBufferMemoryRequirements(d.device, buf->buffer, &req);
    auto alloc = Make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    alloc.allocationSize = req.size;
    try {
      alloc.memoryTypeIndex = PickMemoryType(d, req.memoryTypeBits);
      MODRT_VK_CHECK(vk.vkAllocateMemory(d.device, &alloc, nullptr, &buf->memory),
                     StrCat("allocation of ", nbytes, " bytes"));
      MODRT_VK_CHECK(vk.vkBindBufferMemory(d.device, buf->buffer, buf->memory, 0),
                     "binding buffer memory");
      MODRT_VK_CHECK(vk.vkMapMemory(d.device, buf->memory, 0, VK_WHOLE_SIZE, 0, &buf->host),
                     "mapping a buffer");
    } catch (...) {
      Release(d, *buf);
      throw;
    }
    return buf.release();
  }
  void Free(int id, void* ptr) override {
    Workspace& ws = Workspace::Get();
    Device& d = ws.device(id);
    std::unique_ptr<Buffer> buf(static_cast<Buffer*>(ptr));
    ws.DrainAndInvalidate(d);  // a kernel in flight may still use it; slots may name it
    Release(d, *buf);
  }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    ws.Drain(ws.device(t->device.device_id));  // kernels before the copy see the old data
    std::memcpy(static_cast<Buffer*>(t->data)->host, src, nbytes);
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    ws.Drain(ws.device(t->device.device_id));
    std::memcpy(dst, static_cast<const Buffer*>(t->data)->host, nbytes);
  }
  void Sync(int id) override {
    Workspace& ws = Workspace::Get();
    ws.Drain(ws.device(id));
  }

 private:
  static void Release(const Device& d, const Buffer& buf) {
    const VkApi& vk = Workspace::Get().vk();
    if (buf.buffer) vk.vkDestroyBuffer(d.device, buf.buffer, nullptr);
    if (buf.memory) vk.vkFreeMemory(d.device, buf.memory, nullptr);  // unmaps too
  }
};

// What a launch needs to know about a shader, read from its SPIR-V. The
// driver never sees a module that fails these checks.
struct ShaderInfo {
  std::string entry;               // the GLCompute entry point
  bool fixed_size = false;         // LocalSize given as literals ...
  std::array<uint32_t, 3> size{};  // ... of this size
};

ShaderInfo ScanSpirv(const std::string& function, const std::string& code) {
  auto bad = [&](const std::string& why) -> ShaderInfo {
    Fail("ValueError", "the shader of '", function, "' is not valid SPIR-V: ", why);
  };
  if (code.size() < 20 || code.size() % 4 != 0) {
    return bad(StrCat(code.size(),
                      " bytes is not a whole SPIR-V module (a 20-byte header, then 4-byte words)"));
  }
  std::vector<uint32_t> w(code.size() / 4);
  std::memcpy(w.data(), code.data(), code.size());
  if (w[0] != 0x07230203u) return bad("wrong magic number");
  std::vector<std::pair<uint32_t, std::string>> entries;   // GLCompute only
  std::vector<uint32_t> functions;                         // result ids of OpFunction
  std::map<uint32_t, std::array<uint32_t, 3>> local_size;  // entry point -> LocalSize
  bool local_size_id = false;                              // LocalSizeId: set by constants
  // A WorkgroupSize built-in overrides LocalSize: fixed when it is a constant
  // composite of constants, set at launch when a specialization constant one.
  std::vector<uint32_t> workgroup_size_ids;
  std::map<uint32_t, uint32_t> constants;                // OpConstant (32-bit) values
  std::map<uint32_t, std::vector<uint32_t>> composites;  // OpConstantComposite parts
  for (size_t i = 5; i < w.size();) {
    const uint32_t count = w[i] >> 16, op = w[i] & 0xffffu;
    if (count == 0 || i + count > w.size())
      return bad(StrCat("instruction at word ", i, " overruns the module"));
    if (op == 15 && count >= 4 && w[i + 1] == 5) {  // OpEntryPoint GLCompute
      const char* text = reinterpret_cast<const char*>(&w[i + 3]);
      const size_t max = (count - 3) * 4;
      const size_t len = strnlen(text, max);
      if (len == max) return bad("unterminated entry point name");
      entries.emplace_back(w[i + 2], std::string(text, len));
    } else if (op == 54 && count >= 5) {  // OpFunction
      functions.push_back(w[i + 2]);
    } else if (op == 16 && count >= 6 && w[i + 2] == 17) {  // OpExecutionMode LocalSize
      local_size[w[i + 1]] = {w[i + 3], w[i + 4], w[i + 5]};
    } else if (op == 331 && count >= 3 && w[i + 2] == 38) {  // OpExecutionModeId LocalSizeId
      local_size_id = true;
    } else if (op == 71 && count >= 4 && w[i + 2] == 11 &&
               w[i + 3] == 25) {  // BuiltIn WorkgroupSize
      workgroup_size_ids.push_back(w[i + 1]);
    } else if (op == 43 && count == 4) {  // OpConstant, 32-bit
      constants[w[i + 2]] = w[i + 3];
    } else if (op == 44 && count >= 3) {  // OpConstantComposite
      composites[w[i + 2]].assign(w.begin() + i + 3, w.begin() + i + count);
    }
    i += count;
  }
  if (entries.empty()) return bad("it has no GLCompute entry point");
  const std::pair<uint32_t, std::string>* chosen = nullptr;
  for (const auto& e : entries) {
    if (e.second == function) chosen = &e;
  }
  if (chosen == nullptr && entries.size() == 1) chosen = &entries[0];
  if (chosen == nullptr) {
    std::string names;
    for (const auto& e : entries) names += (names.empty() ? "" : ", ") + e.second;
    Fail("ValueError", "the shader of '", function, "' has several compute entry points (", names,
         ") and none is named '", function, "'");
  }
  if (std::find(functions.begin(), functions.end(), chosen->first) == functions.end()) {
    return bad(StrCat("its entry point '", chosen->second, "' names %", chosen->first,
                      ", which is not a function"));
  }
  ShaderInfo info;
  info.entry = chosen->second;
  if (!workgroup_size_ids.empty()) {
    auto composite = composites.find(workgroup_size_ids.front());
    if (composite == composites.end() || composite->second.size() != 3) return info;  // specialised
    for (int a = 0; a < 3; ++a) {
      auto value = constants.find(composite->second[a]);
      if (value == constants.end()) return info;
      info.size[a] = value->second;
    }
    info.fixed_size = true;
    return info;
  }
  auto size = local_size.find(chosen->first);
  if (size != local_size.end() && !local_size_id) {
    info.fixed_size = true;
    info.size = size->second;
  }
  return info;
}

// The push-constant layout of a function's scalar arguments.
struct PushLayout {
  std::vector<uint32_t> offsets;  // per argument (scalars only)
  uint32_t size = 0;              // whole block, a multiple of 4
};

PushLayout LayoutPushConstants(const FunctionInfo& info) {
  PushLayout p;
  p.offsets.assign(info.args.size(), 0);
  uint32_t offset = 0;
  for (size_t i = 0; i < info.args.size(); ++i) {
    if (info.args[i].is_buffer) continue;
    const uint32_t bytes = info.args[i].dtype.bits / 8 * info.args[i].dtype.lanes;
    offset = (offset + bytes - 1) / bytes * bytes;
    p.offsets[i] = offset;
    offset += bytes;
  }
  p.size = (offset + 3) / 4 * 4;
  return p;
}

// One compute pipeline: a function specialised for one workgroup size and
// dynamic shared memory size on one device.
struct Pipeline {
  VkShaderModule shader = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class VulkanModule final : public PayloadModule {
 public:
  explicit VulkanModule(Payload payload) : PayloadModule(std::move(payload)) {}
  ~VulkanModule() override {
    std::lock_guard lock(mu_);
    if (pipelines_.empty()) return;
    Workspace& ws = Workspace::Get();
    std::vector<bool> drained(ws.count(), false);
    for (auto& [key, p] : pipelines_) {
      Device& d = ws.device(std::get<0>(key));
      if (!drained[std::get<0>(key)]) {
        drained[std::get<0>(key)] = true;
        try {
          ws.DrainAndInvalidate(d);  // launches in flight still use the pipelines
        } catch (const Error&) {
          // A lost device cannot use them either.
        }
      }
      Destroy(d, *p);
    }
  }

  ObjectRef GetFunction(const std::string& name) override {
    return LaunchingFunction(
        name, [this](const FunctionInfo& info, size_t, const Args& args) { Launch(info, args); });
  }

  int64_t pipelines_created() const { return pipelines_created_.load(); }

 private:
  // (device, function, block x, y, z, dynamic shared bytes)
  using Key = std::tuple<int, std::string, int64_t, int64_t, int64_t, int64_t>;

  void Launch(const FunctionInfo& info, const Args& args) {
    KernelArgs k = KernelArgs::Pack(info, args, kDLVulkan);
    const int device_id = k.device_id;
    Workspace& ws = Workspace::Get();
    const VkApi& vk = ws.vk();
    Device& d = ws.device(device_id);
    const VkPhysicalDeviceLimits& limits = d.caps.props.limits;
    for (int a = 0; a < 3; ++a) {
      if (k.launch.grid[a] > limits.maxComputeWorkGroupCount[a]) {
        Fail("ValueError", info.name, ": blockIdx.", "xyz"[a], " = ", k.launch.grid[a],
             " exceeds the device's limit of ", limits.maxComputeWorkGroupCount[a]);
      }
    }
    const Pipeline& p = GetPipeline(device_id, d, info, k.launch);
    const PushLayout push = LayoutPushConstants(info);
    std::vector<uint8_t> constants(push.size, 0);
    std::vector<VkDescriptorBufferInfo> buffers;
    for (size_t i = 0; i < info.args.size(); ++i) {
      if (info.args[i].is_buffer) {
        buffers.push_back(
            {static_cast<const Buffer*>(k.buffers[i]->data)->buffer, 0, VK_WHOLE_SIZE});
      } else {
        std::memcpy(constants.data() + push.offsets[i], k.ptrs[i], k.sizes[i]);
      }
    }

    std::lock_guard lock(*d.mu);
    ws.Retire(d, /*wait=*/false);
    Slot s = ws.AcquireSlot(d);
    // Back to the free list on any failure below; handed to in_flight on success.
    struct Cleanup {
      Workspace& ws;
      Device& d;
      Slot& s;
      bool armed = true;
      ~Cleanup() {
        if (armed) ws.ReleaseUnsubmitted(d, s);
      }
    } cleanup{ws, d, s};
    if (s.generation != d.generation) {
      s.set = VK_NULL_HANDLE;
      s.recorded = false;
      s.generation = d.generation;
    }

    // The descriptor set: kept when the slot's set already binds these buffers
    // for this layout, else the pool is reset (grown if need be) and a set written.
    bool rewritten = false;
    if (!buffers.empty()) {
      const bool same =
          s.set != VK_NULL_HANDLE && s.set_layout == p.set_layout &&
          s.bound.size() == buffers.size() &&
          std::equal(buffers.begin(), buffers.end(), s.bound.begin(),
                     [](const VkDescriptorBufferInfo& b, VkBuffer v) { return b.buffer == v; });
      if (!same) {
        rewritten = true;
        s.set = VK_NULL_HANDLE;
        s.recorded = false;
        if (s.descriptor_capacity < buffers.size()) {
          if (s.descriptors) vk.vkDestroyDescriptorPool(d.device, s.descriptors, nullptr);
          s.descriptors = VK_NULL_HANDLE;
          s.descriptor_capacity = 0;
          const uint32_t capacity = std::max<uint32_t>(static_cast<uint32_t>(buffers.size()), 8);
          VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, capacity};
          auto pool =
              Make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
          pool.maxSets = 1;
          pool.poolSizeCount = 1;
          pool.pPoolSizes = &size;
          MODRT_VK_CHECK(vk.vkCreateDescriptorPool(d.device, &pool, nullptr, &s.descriptors),
                         "creating a descriptor pool");
          s.descriptor_capacity = capacity;
        } else {
          MODRT_VK_CHECK(vk.vkResetDescriptorPool(d.device, s.descriptors, 0),
                         "resetting a descriptor pool");
        }
        auto alloc =
            Make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
        alloc.descriptorPool = s.descriptors;
        alloc.descriptorSetCount = 1;
        alloc.pSetLayouts = &p.set_layout;
        VkDescriptorSet set = VK_NULL_HANDLE;
        MODRT_VK_CHECK(vk.vkAllocateDescriptorSets(d.device, &alloc, &set),
                       "allocating a descriptor set");
        std::vector<VkWriteDescriptorSet> writes(buffers.size());
        for (size_t b = 0; b < buffers.size(); ++b) {
          writes[b] = Make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
          writes[b].dstSet = set;
          writes[b].dstBinding = static_cast<uint32_t>(b);
          writes[b].descriptorCount = 1;
          writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
          writes[b].pBufferInfo = &buffers[b];
        }
        vk.vkUpdateDescriptorSets(d.device, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                                  nullptr);
        s.set = set;
        s.set_layout = p.set_layout;
        s.bound.clear();
        for (const auto& b : buffers) s.bound.push_back(b.buffer);
      }
    }
    const VkDescriptorSet set = buffers.empty() ? VK_NULL_HANDLE : s.set;

    // The recording: re-submitted as it is when the slot last recorded this
    // very dispatch (pipeline, bindings, push constants, grid).
    const std::array<uint32_t, 3> grid{static_cast<uint32_t>(k.launch.grid[0]),
                                       static_cast<uint32_t>(k.launch.grid[1]),
                                       static_cast<uint32_t>(k.launch.grid[2])};
    const bool replay = s.recorded && !rewritten && s.pipeline == p.pipeline &&
                        s.recorded_set == set && s.grid == grid && s.constants == constants;
    if (!replay) {
      s.recorded = false;
      // Begin resets the buffer (the pool allows it); no ONE_TIME_SUBMIT: it may be replayed.
      auto begin = Make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
      MODRT_VK_CHECK(vk.vkBeginCommandBuffer(s.cmd, &begin), "recording a launch");
      // Kernels run in submission order, like a stream: each waits for the
      // writes of the ones before it.
      auto before = Make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
      before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      before.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vk.vkCmdPipelineBarrier(s.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &before, 0, nullptr, 0,
                              nullptr);
      vk.vkCmdBindPipeline(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
      if (set) {
        vk.vkCmdBindDescriptorSets(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0,
                                   nullptr);
      }
      if (push.size > 0) {
        vk.vkCmdPushConstants(s.cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push.size,
                              constants.data());
      }
      vk.vkCmdDispatch(s.cmd, grid[0], grid[1], grid[2]);
      // Host reads after the fence see the kernel's writes.
      auto after = Make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
      after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      after.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vk.vkCmdPipelineBarrier(s.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, nullptr, 0, nullptr);
      MODRT_VK_CHECK(vk.vkEndCommandBuffer(s.cmd), "recording a launch");
      s.recorded = true;
      s.pipeline = p.pipeline;
      s.recorded_set = set;
      s.grid = grid;
      s.constants = constants;
    }
    auto submit = Make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &s.cmd;
    VkResult r = vk.vkQueueSubmit(d.queue, 1, &submit, s.fence);
    if (r != VK_SUCCESS) {
      // The fence's state is unknown after a failed submit: do not recycle it.
      cleanup.armed = false;
      ws.DestroySlot(d, s);
      MODRT_VK_CHECK(r, StrCat("launch of ", info.name));
    }
    d.in_flight.push_back(std::move(s));
    cleanup.armed = false;
  }

  // The pipeline for this launch shape, created on first use. Creation is
  // under the module's lock, so concurrent first launches create it once.
  const Pipeline& GetPipeline(int device_id, Device& d, const FunctionInfo& info,
                              const LaunchConfig& launch) {
    bool has_dyn_shared = false;
    std::array<bool, 3> has_block{};
    for (const auto& tag : info.launch_tags) {
      has_dyn_shared |= tag == "dyn_shared_mem";
      if (tag.rfind("threadIdx.", 0) == 0) has_block[tag.back() - 'x'] = true;
    }
    Key key{device_id,       info.name,       launch.block[0],
            launch.block[1], launch.block[2], launch.dyn_shared_bytes};
    std::lock_guard lock(mu_);
    auto found = pipelines_.find(key);
    if (found != pipelines_.end()) return *found->second;

    const std::string& code = payload().smap.at(info.name);
    const ShaderInfo shader = ScanSpirv(info.name, code);
    const VkPhysicalDeviceLimits& limits = d.caps.props.limits;
    int64_t threads = 1;
    for (int a = 0; a < 3; ++a) {
      const char axis = "xyz"[a];
      if (has_block[a] && shader.fixed_size && launch.block[a] != shader.size[a]) {
        Fail("ValueError", info.name, ": its shader fixes the workgroup size at (", shader.size[0],
             ", ", shader.size[1], ", ", shader.size[2], "), but threadIdx.", axis, " = ",
             launch.block[a], "; declare layout(local_size_", axis, "_id = ", a,
             ") to set it at launch");
      }
      if (launch.block[a] > limits.maxComputeWorkGroupSize[a]) {
        Fail("ValueError", info.name, ": threadIdx.", axis, " = ", launch.block[a],
             " exceeds the device's limit of ", limits.maxComputeWorkGroupSize[a]);
      }
      threads *= has_block[a] || !shader.fixed_size ? launch.block[a] : shader.size[a];
    }
    if (threads > limits.maxComputeWorkGroupInvocations) {
      Fail("ValueError", info.name, ": a workgroup of ", threads,
           " invocations exceeds the device's limit of ", limits.maxComputeWorkGroupInvocations);
    }
    if (launch.dyn_shared_bytes > limits.maxComputeSharedMemorySize) {
      Fail("ValueError", info.name, ": ", launch.dyn_shared_bytes,
           " bytes of shared memory exceed the device's limit of ",
           limits.maxComputeSharedMemorySize);
    }
    const PushLayout push = LayoutPushConstants(info);
    if (push.size > limits.maxPushConstantsSize) {
      Fail("ValueError", info.name, ": its scalar arguments take ", push.size,
           " bytes of push constants; the device allows ", limits.maxPushConstantsSize);
    }

    const VkApi& vk = Workspace::Get().vk();
    auto p = std::make_unique<Pipeline>();
    try {
      auto module = Make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
      module.codeSize = code.size();
      module.pCode = reinterpret_cast<const uint32_t*>(code.data());
      MODRT_VK_CHECK(vk.vkCreateShaderModule(d.device, &module, nullptr, &p->shader),
                     StrCat("loading the SPIR-V of ", info.name));
      std::vector<VkDescriptorSetLayoutBinding> bindings;
      for (const ArgInfo& a : info.args) {
        if (!a.is_buffer) continue;
        VkDescriptorSetLayoutBinding b{};
        b.binding = static_cast<uint32_t>(bindings.size());
        b.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        b.descriptorCount = 1;
        b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
        bindings.push_back(b);
      }
      if (bindings.size() > limits.maxPerStageDescriptorStorageBuffers) {
        Fail("ValueError", info.name, " takes ", bindings.size(), " buffers; the device allows ",
             limits.maxPerStageDescriptorStorageBuffers);
      }
      auto set = Make<VkDescriptorSetLayoutCreateInfo>(
          VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
      set.bindingCount = static_cast<uint32_t>(bindings.size());
      set.pBindings = bindings.data();
      MODRT_VK_CHECK(vk.vkCreateDescriptorSetLayout(d.device, &set, nullptr, &p->set_layout),
                     "creating a descriptor set layout");
      VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push.size};
      auto layout = Make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
      layout.setLayoutCount = 1;
      layout.pSetLayouts = &p->set_layout;
      layout.pushConstantRangeCount = push.size > 0 ? 1 : 0;
      layout.pPushConstantRanges = &range;
      MODRT_VK_CHECK(vk.vkCreatePipelineLayout(d.device, &layout, nullptr, &p->layout),
                     "creating a pipeline layout");

      std::vector<VkSpecializationMapEntry> entries;
      std::vector<uint32_t> values;
      for (uint32_t a = 0; a < 3; ++a) {
        if (!has_block[a]) continue;
        entries.push_back({a, static_cast<uint32_t>(values.size() * 4), 4});
        values.push_back(static_cast<uint32_t>(launch.block[a]));
      }
      if (has_dyn_shared) {
        entries.push_back({3, static_cast<uint32_t>(values.size() * 4), 4});
        values.push_back(static_cast<uint32_t>(launch.dyn_shared_bytes));
      }
      VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(),
                                values.size() * 4, values.data()};
      auto create =
          Make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
      create.stage = Make<VkPipelineShaderStageCreateInfo>(
          VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
      create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
      create.stage.module = p->shader;
      create.stage.pName = shader.entry.c_str();
      create.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
      create.layout = p->layout;
      VkResult r =
          vk.vkCreateComputePipelines(d.device, VK_NULL_HANDLE, 1, &create, nullptr, &p->pipeline);
      if (r != VK_SUCCESS) {
        Fail("RuntimeError", "Vulkan could not create the compute pipeline of ", info.name, " on ",
             d.caps.props.deviceName, " (", VkResultName(r),
             "); is its SPIR-V a valid compute shader for this device?");
      }
    } catch (...) {
      Destroy(d, *p);
      throw;
    }
    pipelines_created_.fetch_add(1);
    return *pipelines_.emplace(std::move(key), std::move(p)).first->second;
  }

  static void Destroy(const Device& d, const Pipeline& p) {
    const VkApi& vk = Workspace::Get().vk();
    if (p.pipeline) vk.vkDestroyPipeline(d.device, p.pipeline, nullptr);
    if (p.layout) vk.vkDestroyPipelineLayout(d.device, p.layout, nullptr);
    if (p.set_layout) vk.vkDestroyDescriptorSetLayout(d.device, p.set_layout, nullptr);
    if (p.shader) vk.vkDestroyShaderModule(d.device, p.shader, nullptr);
  }

  std::mutex mu_;
  std::map<Key, std::unique_ptr<Pipeline>> pipelines_;
  std::atomic<int64_t> pipelines_created_{0};
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<VulkanModule>(std::move(p));
  });
  static VulkanDeviceAPI api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
  // How many compute pipelines a module has created: launches of one kernel
  // with one launch shape reuse one pipeline.
  RegisterGlobal("vulkan.pipelines_created", [](const Args& args, Ret* ret) {
    args.ExpectCount(1, "vulkan.pipelines_created");
    ModrtObjectHandle handle = args.Obj(0, kModrtObjModule, "module");
    auto* module = ModuleAs<VulkanModule>(handle);
    if (module == nullptr) {
      auto ask = [&](const char* what, OwnedValue* out) {
        ModrtValue arg{};
        arg.type_code = kModrtObject;
        arg.v_obj = handle;
        CallFunction(GetGlobal(what), &arg, 1, out);
      };
      OwnedValue kind, fallback;
      ask("module.kind", &kind);
      ask("module.is_fallback", &fallback);
      Fail("TypeError", "vulkan.pipelines_created takes a real vulkan module, got a ",
           Args(&fallback.value(), 1).Int(0) ? "fallback " : "", Args(&kind.value(), 1).Str(0),
           " module");
    }
    ret->SetInt(module->pipelines_created());
  });
  // How many launch slots (command buffer, fence, descriptor pool) a device
  // has created: launches recycle them, so this stays at the most launches
  // ever in flight at once.
  RegisterGlobal("vulkan.launch_slots_created", [](const Args& args, Ret* ret) {
    args.ExpectCount(1, "vulkan.launch_slots_created");
    Device& d = Workspace::Get().device(static_cast<int>(args.Int(0)));
    std::lock_guard lock(*d.mu);
    ret->SetInt(d.slots_created);
  });
}

}  // namespace
}  // namespace vulkan
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::vulkan::InitPlugin)
