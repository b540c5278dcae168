// Submission: a launch goes to the queue in a recycled slot, re-submitted
// as it is when the slot last ran the very same dispatch.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_SUBMIT_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_SUBMIT_H_

#include <string>

#include "vulkan_commands.h"
#include "vulkan_device.h"

namespace modrt {
namespace vulkan {

// Submits `dispatch` (of kernel `name`, for messages) to the device's queue.
void SubmitLaunch(Device& d, const Dispatch& dispatch, const std::string& name);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_SUBMIT_H_
