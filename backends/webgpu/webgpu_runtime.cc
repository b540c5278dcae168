// libmodrt_runtime_webgpu.so: WGSL compute on wgpu-native (the `wgpu`
// package's libwgpu_native, dlopen'ed; on Mesa's lavapipe on a plain CPU
// machine, any Vulkan, Metal or D3D12 adapter elsewhere).
//
// Kernel conventions (docs/formats/wgsl.md, docs/WEBGPU.md): the shader's
// own declarations are the binding layout. Its arguments are its
// `@group(G) @binding(B)` resources in (group, binding) order, any groups and
// binding numbers: a storage buffer is a buffer argument, a `var<uniform>`
// scalar one scalar argument, a uniform struct one scalar per member; a
// signature that does not fit them is refused naming both sides;
// - threadIdx.{x,y,z} is the workgroup size: a @workgroup_size dimension that
//   names an override constant is set to it at launch, a literal one must equal
//   it; dyn_shared_mem sets the override constant `dyn_shared_mem` (bytes);
// - blockIdx.{x,y,z} is the number of workgroups dispatched.
//
// Launches are recorded into one command encoder and submitted in batches (by
// sync, a host copy, or kMaxBatch launches once the work before is done); each
// launch's scalars have a slot of their own in the kernel's uniform rings,
// every uniform of the shader a block of that slot.
//
// The parts: webgpu_device.{h,cc} (wgpu-native's adapter, device and queue,
// buffers, the device), webgpu_submit.cc (the launch batch and its
// submission), webgpu_module.{h,cc} (the module and its launches, through
// webgpu_pipelines.cc, webgpu_bind_groups.cc and webgpu_commands.cc),
// webgpu_queue.h (streams, events, copies and graphs: webgpu_events.cc,
// webgpu_copies.cc, webgpu_graphs.cc), wgsl_scan.{h,cc} (what a shader declares) and
// wgpu_native.{h,cc} (the library, dlopen'ed); this file is the plugin's entry point.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend_identity.h"
#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "webgpu_module.h"
#include "webgpu_queue.h"

namespace modrt {
namespace webgpu {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<WebGpuModule>(std::move(p));
  });
  DeviceLayer layer;
  AddDevice(&layer);
  Queue& queue = Queue::Get();
  layer.queues = &queue;
  layer.graphs = &queue;
  layer.graph_updates = &queue;
  RegisterDeviceLayer(kBackendIdentity.name, layer);
  // The Python hook's candidates for the `wgpu` package's library (a
  // ':'-separated list), before the first device use reads them.
  RegisterGlobal("webgpu.driver_candidates", [](const Args& args, Ret*) {
    args.ExpectCount(1, "webgpu.driver_candidates");
    const std::string joined(args.Str(0));
    std::vector<std::string> paths;
    size_t start = 0;
    while (start <= joined.size()) {
      const size_t end = std::min(joined.find(':', start), joined.size());
      if (end > start) paths.push_back(joined.substr(start, end - start));
      start = end + 1;
    }
    SetDriverCandidates(std::move(paths));
  });
  // How many compute pipelines a module has created: launches of one kernel
  // with one launch shape reuse one pipeline.
  RegisterGlobal("webgpu.pipelines_created", [](const Args& args, Ret* ret) {
    args.ExpectCount(1, "webgpu.pipelines_created");
    auto* module = ModuleAs<WebGpuModule>(args.Obj(0, kModrtObjModule, "module"));
    if (module == nullptr) Fail("TypeError", "webgpu.pipelines_created takes a real webgpu module");
    ret->SetInt(module->pipelines_created());
  });
  // What webgpu(0) submitted, counted since the process began, by name:
  // launches encoded one by one, graph recordings (captures and rebound
  // replays' re-recordings), graph replays (one command buffer each).
  RegisterGlobal("webgpu.submission_count", [](const Args& args, Ret* ret) {
    args.ExpectCount(2, "webgpu.submission_count");
    Workspace::Get().Require(static_cast<int>(args.Int(0)));
    ret->SetInt(Queue::Get().SubmissionCount(args.Str(1)));
  });
}

}  // namespace
}  // namespace webgpu
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::webgpu::InitPlugin)
