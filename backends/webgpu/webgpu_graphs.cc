// Recorded launches of webgpu(0) (webgpu_queue.h): a capture records each
// launch's pipeline, bind groups, uniform slot and workgroups; a replay
// encodes all of them into one compute pass of one command buffer, submitted
// once. WebGPU command buffers run once, so a replay encodes anew; what it
// binds was made at capture: the graph's own bind groups, and uniform
// buffers holding each launch's scalars, written once. A replay that rebinds
// buffers is captured anew (graph_update), its recording swapped in.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "webgpu_module.h"
#include "webgpu_queue.h"
#include "wgpu_native.h"

namespace modrt {
namespace webgpu {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

// Bytes of one of a graph's uniform buffers (more when one slot needs more).
constexpr uint64_t kUniformBufferBytes = 64 * 1024;

uint64_t RoundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

}  // namespace

Graph::~Graph() {
  Workspace& ws = Workspace::Get();
  if (!ws.ok()) return;
  const WgpuApi& api = ws.api();
  for (const Dispatch& d : dispatches_) api.wgpuComputePipelineRelease(d.pipeline);
  for (Binding& b : bindings_) ReleaseBindGroups(api, b.groups);
  for (WGPUBuffer b : uniform_buffers_) api.wgpuBufferRelease(b);
}

std::pair<WGPUBuffer, uint32_t> Graph::UniformSlot(Workspace& ws, const Kernel& kernel,
                                                   const LaunchArgs& args) {
  if (kernel.uniform_size == 0) return {nullptr, 0};
  const uint64_t align = std::max<uint64_t>(ws.info().limits.minUniformBufferOffsetAlignment, 16);
  uint64_t offset = RoundUp(uniform_used_, align);
  const uint64_t capacity = kUniformBufferBytes;
  if (uniform_buffers_.empty() || offset + kernel.uniform_stride > capacity) {
    WGPUBufferDescriptor d{};
    d.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
    d.size = std::max<uint64_t>(capacity, kernel.uniform_stride);
    WGPUBuffer b = ws.api().wgpuDeviceCreateBuffer(ws.device(), &d);
    if (b == nullptr) Fail("MemoryError", "webgpu: cannot create a graph's uniform buffer");
    uniform_buffers_.push_back(b);
    offset = 0;
  }
  uniform_used_ = offset + kernel.uniform_stride;
  // Written once, before any replay is submitted.
  std::lock_guard lock(ws.submit_mu());
  ws.api().wgpuQueueWriteBuffer(ws.queue(), uniform_buffers_.back(), offset, args.uniform.data(),
                                kernel.uniform_size);
  return {uniform_buffers_.back(), static_cast<uint32_t>(offset)};
}

void Graph::Record(Workspace& ws, const Kernel& kernel, WGPUComputePipeline pipeline,
                   const LaunchArgs& args) {
  const auto [uniform_buffer, uniform_offset] = UniformSlot(ws, kernel, args);
  std::vector<uint64_t> ids;
  for (const Buffer* b : args.buffers) {
    if (b != nullptr) ids.push_back(b->id);
  }
  auto key = std::make_pair(std::make_pair(&kernel, uniform_buffer), std::move(ids));
  auto found = binding_index_.find(key);
  if (found == binding_index_.end()) {
    bindings_.push_back(
        Binding{CreateBindGroups(ws, kernel, args, uniform_buffer), kernel.uniforms_per_group});
    found = binding_index_.emplace(std::move(key), bindings_.size() - 1).first;
  }
  Dispatch d{pipeline, found->second, uniform_offset, {}};
  std::copy(args.grid, args.grid + 3, d.grid);
  ws.api().wgpuComputePipelineAddRef(pipeline);
  dispatches_.push_back(d);
}

void Graph::Encode(Workspace& ws) const {
  const WgpuApi& api = ws.api();
  WGPUComputePassEncoder pass = api.wgpuCommandEncoderBeginComputePass(ws.PendingLocked(), nullptr);
  for (const Dispatch& d : dispatches_) {
    const Binding& b = bindings_[d.binding];
    EncodeDispatch(api, pass, d.pipeline, b.groups, b.uniforms_per_group, d.uniform_offset, d.grid);
  }
  api.wgpuComputePassEncoderEnd(pass);
  api.wgpuComputePassEncoderRelease(pass);
}

void Graph::Swap(Graph& other) {
  std::swap(dispatches_, other.dispatches_);
  std::swap(bindings_, other.bindings_);
  std::swap(binding_index_, other.binding_index_);
  std::swap(uniform_buffers_, other.uniform_buffers_);
  std::swap(uniform_used_, other.uniform_used_);
}

Graph* Stream::capture() {
  std::lock_guard lock(mu_);
  return capture_.get();
}

void Stream::BeginCapture() {
  std::lock_guard lock(mu_);
  if (capture_ != nullptr) Fail("RuntimeError", "webgpu: this stream is already capturing a graph");
  capture_ = std::make_unique<Graph>();
}

std::unique_ptr<Graph> Stream::EndCapture() {
  std::lock_guard lock(mu_);
  if (capture_ == nullptr) Fail("RuntimeError", "webgpu: this stream is not capturing");
  return std::move(capture_);
}

void Queue::GraphBegin(int device_id, void* stream) {
  Workspace::Get().Require(device_id);
  StreamOf(stream).BeginCapture();
}

std::unique_ptr<Graph> Queue::TakeCapture(void* stream) {
  std::unique_ptr<Graph> graph = StreamOf(stream).EndCapture();
  graph_recordings_.fetch_add(1, std::memory_order_relaxed);
  return graph;
}

void* Queue::GraphEnd(int device_id, void* stream) {
  Workspace::Get().Require(device_id);
  return TakeCapture(stream).release();
}

void Queue::GraphUpdate(int device_id, void* stream, void* graph) {
  std::unique_ptr<Graph> recorded = TakeCapture(stream);  // abandoned on any error below
  Workspace& ws = Workspace::Get();
  ws.Require(device_id);
  if (graph == nullptr) Fail("ValueError", "webgpu: no graph given");
  {
    std::lock_guard lock(ws.submit_mu());
    static_cast<Graph*>(graph)->Swap(*recorded);
  }
  // `recorded` now holds the replaced recording, released here: a replay
  // already submitted keeps what it uses (wgpu holds the bind groups,
  // pipelines and uniform buffers of a submission until it completed).
}

int64_t Queue::SubmissionCount(std::string_view name) const {
  if (name == "launches") return launches_.load();
  if (name == "graph_recordings") return graph_recordings_.load();
  if (name == "graph_replays") return graph_replays_.load();
  Fail("ValueError", "webgpu.submission_count: no count named '", name,
       "' (launches, graph_recordings, graph_replays)");
}

void Queue::GraphLaunch(int device_id, void* graph, void*) {
  Workspace& ws = Workspace::Get();
  ws.Require(device_id);
  if (graph == nullptr) Fail("ValueError", "webgpu: no graph given");
  const auto* g = static_cast<const Graph*>(graph);
  if (g->size() == 0) return;
  std::lock_guard lock(ws.submit_mu());
  g->Encode(ws);
  // The replay is one submission, made now unless the work before it still
  // runs (webgpu_device.h): then the next wait submits it.
  if (ws.IdleLocked()) ws.FlushLocked();
  graph_replays_.fetch_add(1, std::memory_order_relaxed);
  if (std::string e = ws.TakeUncapturedError(); !e.empty()) {
    Fail("RuntimeError", "webgpu: a graph of ", g->size(), " launches failed: ", e);
  }
}

void Queue::GraphDestroy(int, void* graph) {
  std::unique_ptr<Graph> owned(static_cast<Graph*>(graph));
}

}  // namespace webgpu
}  // namespace modrt
