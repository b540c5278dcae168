#include "vulkan_graphs.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>

#include "vulkan_descriptors.h"
#include "vulkan_streams.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

// Descriptor pools of a graph hold this many sets (more when one launch needs more).
constexpr uint32_t kGraphPoolSets = 256;
// The scalar-uniform memory of a graph comes in chunks of this many bytes (or one launch's).
constexpr size_t kGraphUniformChunk = 64 * 1024;

}  // namespace

Graph::Graph(Device& d) : d_(d) {
  const VkApi& vk = Workspace::Get().vk();
  auto pool = Make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.queueFamilyIndex = d.queue_family;
  MODRT_VK_CHECK(vk.vkCreateCommandPool(d.device, &pool, nullptr, &pool_),
                 "creating a command pool");
  auto alloc = Make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  // No ONE_TIME_SUBMIT: replays submit it again; SIMULTANEOUS_USE: a replay
  // may be submitted while the one before is still running.
  auto begin = Make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  VkResult r = vk.vkAllocateCommandBuffers(d.device, &alloc, &cmd_);
  if (r == VK_SUCCESS) r = vk.vkBeginCommandBuffer(cmd_, &begin);
  if (r != VK_SUCCESS) {
    vk.vkDestroyCommandPool(d.device, pool_, nullptr);
    MODRT_VK_CHECK(r, "beginning a graph's recording");
  }
}

Graph::~Graph() {
  const VkApi& vk = Workspace::Get().vk();
  for (VkDescriptorPool p : descriptor_pools_) vk.vkDestroyDescriptorPool(d_.device, p, nullptr);
  for (const auto& chunk : uniform_chunks_) ReleaseBuffer(d_, *chunk);
  vk.vkDestroyCommandPool(d_.device, pool_, nullptr);  // frees cmd_
}

VkDescriptorPool Graph::PoolFor(uint32_t sets, uint32_t descriptors) {
  if (descriptor_pools_.empty() || sets_left_ < sets || descriptors_left_ < descriptors) {
    const uint32_t pool_sets = std::max(kGraphPoolSets, sets);
    const uint32_t pool_descriptors = std::max(kGraphPoolSets * 4, descriptors);
    descriptor_pools_.push_back(
        CreateDescriptorPool(Workspace::Get().vk(), d_.device, pool_descriptors, pool_sets));
    sets_left_ = pool_sets;
    descriptors_left_ = pool_descriptors;
  }
  sets_left_ -= sets;
  descriptors_left_ -= descriptors;
  return descriptor_pools_.back();
}

std::vector<VkDescriptorBufferInfo> Graph::UniformsOf(const Dispatch& dispatch) {
  const VkDeviceSize align =
      std::max<VkDeviceSize>(16, d_.caps.props.limits.minUniformBufferOffsetAlignment);
  const size_t bytes = dispatch.uniforms.size();
  uniform_used_ = (uniform_used_ + align - 1) / align * align;
  if (uniform_chunks_.empty() || uniform_used_ + bytes > uniform_chunk_size_) {
    uniform_chunk_size_ = std::max<size_t>(kGraphUniformChunk, bytes);
    uniform_chunks_.push_back(NewBuffer(dispatch.device_id, d_, uniform_chunk_size_));
    uniform_used_ = 0;
  }
  const Buffer& chunk = *uniform_chunks_.back();
  std::memcpy(static_cast<char*>(chunk.host) + uniform_used_, dispatch.uniforms.data(), bytes);
  std::vector<VkDescriptorBufferInfo> buffers = WithUniforms(dispatch, chunk.buffer, uniform_used_);
  uniform_used_ += bytes;
  return buffers;
}

void Graph::RecordDispatch(const Dispatch& dispatch) {
  const VkApi& vk = Workspace::Get().vk();
  const ArgLayout& args = dispatch.pipeline->args;
  std::vector<VkDescriptorSet> sets;
  const std::vector<VkDescriptorBufferInfo> buffers =
      dispatch.uniforms.empty() ? dispatch.buffers : UniformsOf(dispatch);
  if (!buffers.empty()) {
    std::vector<VkDeviceSize> key;
    key.reserve(buffers.size() * 3);
    for (const VkDescriptorBufferInfo& b : buffers) {
      key.insert(key.end(), {reinterpret_cast<VkDeviceSize>(b.buffer), b.offset, b.range});
    }
    auto [found, added] = sets_by_binding_.try_emplace({dispatch.pipeline, std::move(key)});
    if (added) {
      // Descriptors of each type are counted together: a pool holds as many of each.
      VkDescriptorPool pool =
          PoolFor(args.set_count, std::max(args.storage_count, args.uniform_count));
      found->second = WriteDescriptorSets(vk, d_.device, pool, *dispatch.pipeline, buffers);
    }
    sets = found->second;
  }
  vulkan::RecordDispatch(vk, cmd_, dispatch, sets, &bound_);
}

void Graph::RecordCopy(VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset,
                       size_t nbytes) {
  vulkan::RecordCopy(Workspace::Get().vk(), cmd_, src, src_offset, dst, dst_offset, nbytes);
}

void Graph::End() {
  const VkApi& vk = Workspace::Get().vk();
  RecordHostReadBarrier(vk, cmd_);  // the host sees the graph's writes once it completed
  MODRT_VK_CHECK(vk.vkEndCommandBuffer(cmd_), "ending a graph's recording");
  ended_ = true;
  d_.shared->graph_recordings.fetch_add(1);
}

namespace {

// The graph the core holds: a reference, since replays in flight keep the graph too.
using GraphRef = std::shared_ptr<Graph>;

// Native graphs (plugin::Graphs): captured from a stream into one reusable
// command buffer, re-recorded for a replay that rebinds buffers.
class VulkanGraphs final : public Graphs, public GraphUpdates {
 public:
  void GraphBegin(int device_id, void* stream) override {
    Stream& s = StreamOf(stream, Workspace::Get().device(device_id));
    std::lock_guard lock(s.mu());
    if (s.capture_locked()) Fail("ValueError", "this stream is capturing a graph already");
    s.set_capture_locked(std::make_shared<Graph>(s.device()));
  }

  void* GraphEnd(int device_id, void* stream) override {
    Stream& s = StreamOf(stream, Workspace::Get().device(device_id));
    std::lock_guard lock(s.mu());
    GraphRef graph = s.capture_locked();
    s.set_capture_locked(nullptr);
    if (!graph) Fail("ValueError", "this stream is not capturing a graph");
    graph->End();
    return std::make_unique<GraphRef>(std::move(graph)).release();
  }

  void GraphLaunch(int device_id, void* graph, void* stream) override {
    const GraphRef& g = *static_cast<const GraphRef*>(graph);
    Stream& s = StreamOf(stream, Workspace::Get().device(device_id));
    std::lock_guard lock(s.mu());
    RefuseWhileCapturingLocked(s, "a graph's replay");
    s.RetireLocked();
    Submission submission;
    submission.keep.push_back(g);
    s.SubmitLocked(g->cmd(), std::move(submission), "a graph's replay");
    s.device().shared->graph_replays.fetch_add(1);
  }

  // Ends the capture on `stream` (a rebound replay's launches, recorded anew)
  // and makes `graph` submit that recording from now on.
  void GraphUpdate(int device_id, void* stream, void* graph) override {
    Stream& s = StreamOf(stream, Workspace::Get().device(device_id));
    GraphRef recorded;
    {
      std::lock_guard lock(s.mu());
      recorded = s.capture_locked();
      s.set_capture_locked(nullptr);
    }
    if (!recorded) Fail("ValueError", "this stream is not capturing a graph");
    recorded->End();
    // The core's handle takes the new recording. The one it replaces goes when
    // the last submission keeping it (Submission::keep) retires: a replay still
    // in flight runs its own command buffer and descriptor sets to the end.
    *static_cast<GraphRef*>(graph) = std::move(recorded);
  }

  void GraphDestroy(int, void* graph) override {
    std::unique_ptr<GraphRef> owned(static_cast<GraphRef*>(graph));
  }
};

}  // namespace

void AddGraphs(DeviceLayer* layer) {
  static VulkanGraphs graphs;
  layer->graphs = &graphs;
  layer->graph_updates = &graphs;
}

}  // namespace vulkan
}  // namespace modrt
