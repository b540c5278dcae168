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
//
// The runtime's parts, one concern each (backends/webgpu is split the same way):
// - vulkan_api.h: the entry points, loaded at run time;
// - vulkan_device: the Workspace, devices, launch slots, buffers, the device
//   (memory, copies, attributes);
// - spirv_scan: what a launch reads from a shader's SPIR-V;
// - vulkan_pipelines: the pipeline cache (one per function and launch shape);
// - vulkan_descriptors: the descriptor sets that bind a launch's buffers;
// - vulkan_commands: what a dispatch is, and recording it;
// - vulkan_submit: launches, copies and timestamps submitted in recycled slots;
// - vulkan_streams: the queues: streams as timelines of submissions to the one
//   queue, events, copies on a stream;
// - vulkan_graphs: the graphs: launches captured into one reusable command buffer;
// - vulkan_module: the module, whose launch goes through the four above.
// This file registers them.
#include "backend_identity.h"
#include "modrt/plugin/plugin.h"
#include "vulkan_device.h"
#include "vulkan_graphs.h"
#include "vulkan_module.h"
#include "vulkan_streams.h"

namespace modrt {
namespace vulkan {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, &NewVulkanModule);
  DeviceLayer layer;
  layer.device = &VulkanDeviceAPIInstance();
  AddQueues(&layer);
  AddGraphs(&layer);
  RegisterDeviceLayer(kBackendIdentity.name, layer);
  // How many compute pipelines a module has created: launches of one kernel
  // with one launch shape reuse one pipeline.
  RegisterGlobal("vulkan.pipelines_created",
                 [](const Args& args, Ret* ret) { PipelinesCreated(args, ret); });
  // How many launch slots (command buffer, descriptor pool) a device's
  // streams have created: launches recycle them, so this stays at the most
  // launches ever in flight at once.
  RegisterGlobal("vulkan.launch_slots_created",
                 [](const Args& args, Ret* ret) { LaunchSlotsCreated(args, ret); });
  // What a device submitted, counted since the process began: dispatches one
  // by one, graph recordings (captures and rebound replays' re-recordings),
  // and graph replays (one command buffer each).
  RegisterGlobal("vulkan.submission_count",
                 [](const Args& args, Ret* ret) { SubmissionCount(args, ret); });
}

}  // namespace
}  // namespace vulkan
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::vulkan::InitPlugin)
