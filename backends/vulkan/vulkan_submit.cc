#include "vulkan_submit.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "vulkan_descriptors.h"
#include "vulkan_graphs.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

// True when the slot's recording is this very dispatch (pipeline, bindings,
// push constants, grid) and may be re-submitted as it is.
bool RecordedAlready(const Slot& s, const Dispatch& dispatch,
                     const std::vector<VkDescriptorSet>& sets) {
  return s.recorded && s.pipeline == dispatch.pipeline->pipeline && s.recorded_sets == sets &&
         s.grid == dispatch.grid && s.constants == dispatch.constants;
}

void Record(const VkApi& vk, Slot& s, const Dispatch& dispatch,
            const std::vector<VkDescriptorSet>& sets) {
  s.recorded = false;
  RecordLaunch(vk, s.cmd, dispatch, sets);
  s.recorded = true;
  s.pipeline = dispatch.pipeline->pipeline;
  s.recorded_sets = sets;
  s.grid = dispatch.grid;
  s.constants = dispatch.constants;
}

// The descriptors `dispatch` binds from slot `s`: its tensors, and its
// scalar-uniform data written into the slot's uniform memory (grown if need
// be: then the slot's descriptor sets, which name the old memory, go).
std::vector<VkDescriptorBufferInfo> SlotBuffers(const Device& d, Slot& s,
                                                const Dispatch& dispatch) {
  if (dispatch.uniforms.empty()) return dispatch.buffers;
  if (s.uniform_capacity < dispatch.uniforms.size()) {
    if (s.uniforms) ReleaseBuffer(d, *s.uniforms);
    s.uniforms.reset();
    s.uniform_capacity = 0;
    s.sets.clear();
    s.recorded = false;
    const size_t capacity = std::max<size_t>(dispatch.uniforms.size(), 256);
    s.uniforms = NewBuffer(dispatch.device_id, d, capacity);
    s.uniform_capacity = capacity;
  }
  std::memcpy(s.uniforms->host, dispatch.uniforms.data(), dispatch.uniforms.size());
  return WithUniforms(dispatch, s.uniforms->buffer, 0);
}

// A slot that goes back to its stream's free list unless it was submitted.
class SlotLease {
 public:
  explicit SlotLease(Stream& stream) : stream_(stream), slot_(stream.AcquireSlotLocked()) {}
  ~SlotLease() {
    if (slot_) stream_.ReleaseSlotLocked(std::move(slot_));
  }
  Slot& operator*() { return *slot_; }
  std::unique_ptr<Slot> Take() { return std::move(slot_); }

 private:
  Stream& stream_;
  std::unique_ptr<Slot> slot_;
};

}  // namespace

void SubmitLaunch(Stream& stream, const Dispatch& dispatch, const std::string& name) {
  const VkApi& vk = Workspace::Get().vk();
  Device& d = stream.device();
  std::lock_guard lock(stream.mu());
  if (const std::shared_ptr<Graph>& graph = stream.capture_locked()) {
    return graph->RecordDispatch(dispatch);
  }
  stream.RetireLocked();
  SlotLease lease(stream);
  Slot& s = *lease;
  const uint64_t generation = d.shared->generation.load();
  if (s.generation != generation) {
    s.sets.clear();
    s.recorded = false;
    s.generation = generation;
  }
  const std::vector<VkDescriptorBufferInfo> buffers = SlotBuffers(d, s, dispatch);
  bool rewritten = false;
  const std::vector<VkDescriptorSet> no_sets;
  const std::vector<VkDescriptorSet>& sets =
      buffers.empty() ? no_sets
                      : SlotDescriptorSets(vk, d, s, *dispatch.pipeline, buffers, &rewritten);
  if (rewritten || !RecordedAlready(s, dispatch, sets)) Record(vk, s, dispatch, sets);
  Submission submission;
  VkCommandBuffer cmd = s.cmd;
  submission.slot = lease.Take();
  stream.SubmitLocked(cmd, std::move(submission), StrCat("launch of ", name));
  d.shared->launches_submitted.fetch_add(1);
}

uint64_t SubmitCommandsLocked(Stream& stream, const std::function<void(VkCommandBuffer)>& record,
                              Submission submission, const std::string& what) {
  const VkApi& vk = Workspace::Get().vk();
  stream.RetireLocked();
  SlotLease lease(stream);
  Slot& s = *lease;
  s.recorded = false;  // no longer a dispatch's recording
  BeginOnce(vk, s.cmd);
  record(s.cmd);
  MODRT_VK_CHECK(vk.vkEndCommandBuffer(s.cmd), what);
  VkCommandBuffer cmd = s.cmd;
  submission.slot = lease.Take();
  return stream.SubmitLocked(cmd, std::move(submission), what);
}

}  // namespace vulkan
}  // namespace modrt
