// The Vulkan entry points the runtime uses, resolved from a lazily loaded
// libvulkan (never linked), and small helpers over them.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_API_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_API_H_

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

#include "modrt/plugin/plugin.h"

namespace modrt {
namespace vulkan {

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
  X(vkGetDeviceQueue)                        \
  X(vkCreateBuffer)                           \
  X(vkDestroyBuffer)                          \
  X(vkGetBufferMemoryRequirements)            \
  X(vkAllocateMemory)                         \
  X(vkFreeMemory)                             \
  X(vkBindBufferMemory)                      \
  X(vkMapMemory)                              \
  X(vkCreateShaderModule)                     \
  X(vkDestroyShaderModule)                    \
  X(vkCreateDescriptorSetLayout)              \
  X(vkDestroyDescriptorSetLayout)            \
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
  X(vkResetDescriptorPool)                    \
  X(vkDestroyCommandPool)                     \
  X(vkCreateSemaphore)                        \
  X(vkDestroySemaphore)                       \
  X(vkCmdCopyBuffer)                          \
  X(vkCreateQueryPool)                        \
  X(vkDestroyQueryPool)                       \
  X(vkCmdResetQueryPool)                      \
  X(vkCmdWriteTimestamp)                      \
  X(vkGetQueryPoolResults)
// clang-format on

struct VkApi {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;  // null on 1.0 loaders
#define MODRT_VK_DECLARE(name) PFN_##name name = nullptr;
  MODRT_VK_INSTANCE_FUNCTIONS(MODRT_VK_DECLARE)
#undef MODRT_VK_DECLARE
  // Timeline semaphores (Vulkan 1.2, or VK_KHR_timeline_semaphore): null
  // when the loader has neither; a device without them is not used.
  PFN_vkWaitSemaphores vkWaitSemaphores = nullptr;
  PFN_vkGetSemaphoreCounterValue vkGetSemaphoreCounterValue = nullptr;
};

inline std::string VkResultName(VkResult r) {
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

// Throws RuntimeError "Vulkan <what> failed: <VkResult>" unless `call` returns VK_SUCCESS.
#define MODRT_VK_CHECK(call, what)                                                        \
  do {                                                                                    \
    VkResult modrt_vk_status = (call);                                                    \
    if (modrt_vk_status != VK_SUCCESS) {                                                  \
      ::modrt::plugin::Fail("RuntimeError", "Vulkan ", what,                              \
                            " failed: ", ::modrt::vulkan::VkResultName(modrt_vk_status)); \
    }                                                                                     \
  } while (0)

// A Vulkan struct with its sType set and every other member zero.
template <typename T>
T Make(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_API_H_
