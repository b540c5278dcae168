// The WebGPU runtime's module (webgpu_module.h): compiling every function
// (webgpu_pipelines.cc) and a launch, which goes through the pipeline cache,
// the bind-group cache (webgpu_bind_groups.cc) and the command recording
// (webgpu_commands.cc) into the device's batch (webgpu_submit.cc), or into
// the graph its stream is capturing (webgpu_graphs.cc).
#include "webgpu_module.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "modrt/plugin/launch_limits.h"
#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "webgpu_queue.h"
#include "wgpu_native.h"

namespace modrt {
namespace webgpu {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

WebGpuModule::WebGpuModule(Payload payload) : PayloadModule(std::move(payload)) {
  Workspace& ws = Workspace::Get();
  // Without an adapter the module still loads (and saves): it is compiled
  // by the first launch, which then says why there is no device.
  if (!ws.ok()) return;
  CompileAll(ws);
  compiled_ = true;
}

WebGpuModule::~WebGpuModule() {
  Workspace& ws = Workspace::Get();
  if (ws.ok()) ReleaseAll(ws.api());
}

ObjectRef WebGpuModule::GetFunction(const std::string& name) {
  return PackedLaunchingFunction(name, kDLWebGPU);
}

void WebGpuModule::CompileAll(Workspace& ws) {
  try {
    for (const auto& [name, info] : payload().fmap) Compile(ws, info);
  } catch (...) {
    ReleaseAll(ws.api());
    throw;
  }
}

void WebGpuModule::ReleaseAll(const WgpuApi& api) {
  for (auto& [key, p] : pipelines_) api.wgpuComputePipelineRelease(p.pipeline);
  for (auto& [name, c] : caches_) ReleaseBindGroups(api, c.groups);
  for (auto& [name, k] : kernels_) ReleaseKernel(api, k);
  pipelines_.clear();
  caches_.clear();
  kernels_.clear();
}

void WebGpuModule::EnsureCompiled(Workspace& ws) {
  if (compiled_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(compile_mu_);
  if (!compiled_.load()) {
    CompileAll(ws);
    compiled_.store(true, std::memory_order_release);
  }
}

namespace {

void CheckGrid(const Workspace& ws, const FunctionInfo& info, const LaunchConfig& launch) {
  const uint32_t max = ws.info().limits.maxComputeWorkgroupsPerDimension;
  for (int a = 0; a < 3; ++a) {
    if (launch.grid[a] > max) {
      Fail("ValueError",
           LaunchLimitExceeded(info.name, StrCat("blockIdx.", "xyz"[a]), launch.grid[a], max,
                               "maxComputeWorkgroupsPerDimension", ws.info().name));
    }
  }
}

}  // namespace

void WebGpuModule::LaunchPacked(const FunctionInfo& info, size_t, const PackedArgs& k) {
  Workspace& ws = Workspace::Get();
  if (!ws.ok())
    Fail("ValueError", "cannot launch ", info.name, ": webgpu(0) does not exist: ", ws.reason());
  ws.Require(k.device_id);
  EnsureCompiled(ws);
  const Kernel& kernel = kernels_.at(info.name);
  CheckGrid(ws, info, k.launch);
  const WGPUComputePipeline pipeline = GetPipeline(ws, kernel, info, k.launch);
  const LaunchArgs bound = BindArguments(kernel, k);
  // On a stream that is capturing a graph, the launch is recorded, not run.
  if (Graph* graph = k.Capturing() ? Queue::Get().CaptureOf(k.NativeStream(kDLWebGPU)) : nullptr) {
    return graph->Record(ws, kernel, pipeline, bound);
  }

  std::lock_guard lock(ws.submit_mu());
  LaunchCache& cache = caches_.at(info.name);
  const auto [uniform_buffer, uniform_offset] = UniformSlot(ws, kernel, bound, cache);
  const std::vector<WGPUBindGroup>& groups =
      CachedBindGroups(ws, kernel, bound, uniform_buffer, cache);
  RecordDispatch(ws, kernel, pipeline, groups, uniform_offset, bound.grid);
  Queue::Get().CountLaunch();
  if (std::string e = ws.TakeUncapturedError(); !e.empty()) {
    Fail("RuntimeError", "launch of ", info.name, " failed: ", e);
  }
}

}  // namespace webgpu
}  // namespace modrt
