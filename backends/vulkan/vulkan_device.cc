#include "vulkan_device.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "backend_identity.h"
#include "vulkan_streams.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

constexpr const char* kLibrary = "libvulkan.so.1";

std::string VersionString(uint32_t v) {
  return StrCat(VK_API_VERSION_MAJOR(v), ".", VK_API_VERSION_MINOR(v), ".",
                VK_API_VERSION_PATCH(v));
}

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

// Sets d->queue_family to a family with compute queues, compute-only first
// (the one meant for compute work), and d->timestamp_bits to its
// timestamps' valid bits; false when there is none.
bool PickComputeFamily(const VkApi& vk, VkPhysicalDevice p, Device* d) {
  uint32_t n = 0;
  vk.vkGetPhysicalDeviceQueueFamilyProperties(p, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vk.vkGetPhysicalDeviceQueueFamilyProperties(p, &n, families.data());
  int family = -1;
  for (uint32_t i = 0; i < n; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (family < 0 || !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
      family = static_cast<int>(i);
    }
  }
  if (family < 0) return false;
  d->queue_family = static_cast<uint32_t>(family);
  d->timestamp_bits = families[family].timestampValidBits;
  return true;
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
    return NewBuffer(id, Workspace::Get().device(id), nbytes).release();
  }
  void Free(int id, void* ptr) override {
    Workspace& ws = Workspace::Get();
    Device& d = ws.device(id);
    std::unique_ptr<Buffer> buf(static_cast<Buffer*>(ptr));
    ws.DrainAndInvalidate(d);  // a kernel in flight may still use it; slots may name it
    ReleaseBuffer(d, *buf);
  }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    ws.Drain(ws.device(t->device.device_id));  // kernels before the copy see the old data
    std::memcpy(static_cast<char*>(static_cast<Buffer*>(t->data)->host) + t->byte_offset, src,
                nbytes);
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    ws.Drain(ws.device(t->device.device_id));
    std::memcpy(
        dst, static_cast<const char*>(static_cast<const Buffer*>(t->data)->host) + t->byte_offset,
        nbytes);
  }
  void Sync(int id) override {
    Workspace& ws = Workspace::Get();
    ws.Drain(ws.device(id));
  }
};

}  // namespace

std::unique_ptr<Buffer> NewBuffer(int id, const Device& d, size_t nbytes) {
  const VkApi& vk = Workspace::Get().vk();
  auto buf = std::make_unique<Buffer>();
  auto info = Make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = std::max<size_t>(nbytes, 4);  // zero-sized buffers are invalid
  // A uniform buffer too: a shader's uniform block binds a tensor.
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  MODRT_VK_CHECK(vk.vkCreateBuffer(d.device, &info, nullptr, &buf->buffer),
                 StrCat("creating a buffer of ", nbytes, " bytes"));
  VkMemoryRequirements req{};
  vk.vkGetBufferMemoryRequirements(d.device, buf->buffer, &req);
  auto alloc = Make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.allocationSize = req.size;
  try {
    alloc.memoryTypeIndex = PickMemoryType(d, req.memoryTypeBits);
    const VkResult r = vk.vkAllocateMemory(d.device, &alloc, nullptr, &buf->memory);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
      Fail("MemoryError", "vulkan(", id, "): cannot allocate ", nbytes,
           " bytes: the driver refused (", VkResultName(r), ")");
    }
    MODRT_VK_CHECK(r, StrCat("allocation of ", nbytes, " bytes"));
    MODRT_VK_CHECK(vk.vkBindBufferMemory(d.device, buf->buffer, buf->memory, 0),
                   "binding buffer memory");
    MODRT_VK_CHECK(vk.vkMapMemory(d.device, buf->memory, 0, VK_WHOLE_SIZE, 0, &buf->host),
                   "mapping a buffer");
    if (buf->host == nullptr || buf->host == MAP_FAILED) {
      // lavapipe maps device memory into the address space here (mmap) and
      // answers VK_SUCCESS with mmap's MAP_FAILED when the address space is
      // full: kernels and copies would then write through it.
      Fail("MemoryError", "vulkan(", id, "): cannot allocate ", nbytes,
           " bytes: the driver could not map them (vkMapMemory gave no address)");
    }
  } catch (...) {
    ReleaseBuffer(d, *buf);
    throw;
  }
  return buf;
}

void ReleaseBuffer(const Device& d, const Buffer& buf) {
  const VkApi& vk = Workspace::Get().vk();
  if (buf.buffer) vk.vkDestroyBuffer(d.device, buf.buffer, nullptr);
  if (buf.memory) vk.vkFreeMemory(d.device, buf.memory, nullptr);  // unmaps too
}

Device& Workspace::device(int id) {
  CheckDevice(kBackendIdentity, id);
  return devices_[id];
}

void Workspace::Drain(Device& d) {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard lock(d.shared->streams);
    streams = d.streams;
  }
  for (const auto& s : streams) s->Synchronize();
}

void Workspace::DrainAndInvalidate(Device& d) {
  Drain(d);
  d.shared->generation.fetch_add(1);
}

std::string Workspace::Init() {
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
  if (vk_.vkCreateInstance == nullptr) return StrCat(library, " does not provide vkCreateInstance");
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
  ResolveTimelineFunctions();

  uint32_t n = 0;
  r = vk_.vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> physical(n);
  if (r == VK_SUCCESS && n > 0) r = vk_.vkEnumeratePhysicalDevices(instance_, &n, physical.data());
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
    std::string why =
        StrCat(library, " reports no usable Vulkan device (", physical.size(), " physical devices");
    for (const auto& s : skipped) why += "; " + s;
    return why + ")";
  }
  return "";
}

void Workspace::ResolveTimelineFunctions() {
  auto resolve = [&](const char* core, const char* khr) {
    PFN_vkVoidFunction f = vk_.vkGetInstanceProcAddr(instance_, core);
    return f ? f : vk_.vkGetInstanceProcAddr(instance_, khr);
  };
  vk_.vkWaitSemaphores =
      reinterpret_cast<PFN_vkWaitSemaphores>(resolve("vkWaitSemaphores", "vkWaitSemaphoresKHR"));
  vk_.vkGetSemaphoreCounterValue = reinterpret_cast<PFN_vkGetSemaphoreCounterValue>(
      resolve("vkGetSemaphoreCounterValue", "vkGetSemaphoreCounterValueKHR"));
}

std::string Workspace::OpenDevice(VkPhysicalDevice p, Device* d) {
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
  auto timeline = Make<VkPhysicalDeviceTimelineSemaphoreFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES);
  auto features = Make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  features.pNext = &storage16;
  if (v12) {
    storage16.pNext = &storage8;
    storage8.pNext = &f16i8;
    f16i8.pNext = &timeline;
  }
  vk_.vkGetPhysicalDeviceFeatures2(p, &features);
  // Streams are timelines: their submissions signal a timeline semaphore.
  if (!timeline.timelineSemaphore || vk_.vkWaitSemaphores == nullptr ||
      vk_.vkGetSemaphoreCounterValue == nullptr) {
    return name + ": no timeline semaphores (Vulkan 1.2); modrt's streams need them";
  }
  caps.int16 = features.features.shaderInt16;
  caps.int64 = features.features.shaderInt64;
  caps.float64 = features.features.shaderFloat64;
  caps.storage_buffer_16bit = storage16.storageBuffer16BitAccess;
  caps.push_constant_16bit = storage16.storagePushConstant16;
  caps.storage_buffer_8bit = storage8.storageBuffer8BitAccess;
  caps.push_constant_8bit = storage8.storagePushConstant8;
  caps.float16 = f16i8.shaderFloat16;
  caps.int8 = f16i8.shaderInt8;

  if (!PickComputeFamily(vk_, p, d)) return name + ": no compute queue";

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
  return "";
}

plugin::DeviceAPI& VulkanDeviceAPIInstance() {
  static VulkanDeviceAPI api;
  return api;
}

void LaunchSlotsCreated(const Args& args, Ret* ret) {
  args.ExpectCount(1, "vulkan.launch_slots_created");
  Device& d = Workspace::Get().device(static_cast<int>(args.Int(0)));
  ret->SetInt(d.shared->slots_created.load());
}

void SubmissionCount(const Args& args, Ret* ret) {
  args.ExpectCount(2, "vulkan.submission_count");
  Device& d = Workspace::Get().device(static_cast<int>(args.Int(0)));
  const std::string_view name = args.Str(1);
  const DeviceShared& shared = *d.shared;
  if (name == "launches") return ret->SetInt(shared.launches_submitted.load());
  if (name == "graph_recordings") return ret->SetInt(shared.graph_recordings.load());
  if (name == "graph_replays") return ret->SetInt(shared.graph_replays.load());
  Fail("ValueError", "vulkan.submission_count: no count named '", name,
       "' (launches, graph_recordings, graph_replays)");
}

}  // namespace vulkan
}  // namespace modrt
