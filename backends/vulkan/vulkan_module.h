// Vulkan modules: a multi-shader payload of SPIR-V, one compute pipeline per
// function and launch shape, and launches recorded into recycled slots.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_MODULE_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_MODULE_H_

#include <memory>

#include "modrt/plugin/plugin.h"

namespace modrt {
namespace vulkan {

// The module of a vulkan payload, for RegisterRuntimeModule.
std::unique_ptr<plugin::PayloadModule> NewVulkanModule(plugin::Payload payload);

// The global "vulkan.pipelines_created": how many compute pipelines a module has created.
void PipelinesCreated(const plugin::Args& args, plugin::Ret* ret);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_MODULE_H_
