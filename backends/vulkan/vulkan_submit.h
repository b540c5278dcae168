// Submission: launches, copies and timestamps go to a stream in recycled
// slots; a launch is re-submitted as it is when its slot last ran the very
// same dispatch, and is recorded into the graph instead while its stream
// captures.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_SUBMIT_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_SUBMIT_H_

#include <functional>
#include <string>

#include "vulkan_commands.h"
#include "vulkan_device.h"
#include "vulkan_streams.h"

namespace modrt {
namespace vulkan {

// Submits `dispatch` (of kernel `name`, for messages) to `stream`, or records
// it into the graph that `stream` captures.
void SubmitLaunch(Stream& stream, const Dispatch& dispatch, const std::string& name);

// Records `record`'s commands into a slot and submits it to `stream` (whose
// lock the caller holds) with what `submission` keeps; returns its timeline value.
uint64_t SubmitCommandsLocked(Stream& stream, const std::function<void(VkCommandBuffer)>& record,
                              Submission submission, const std::string& what);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_SUBMIT_H_
