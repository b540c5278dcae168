#include "vulkan_submit.h"

#include <mutex>
#include <utility>
#include <vector>

#include "vulkan_descriptors.h"

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

}  // namespace

void SubmitLaunch(Device& d, const Dispatch& dispatch, const std::string& name) {
  Workspace& ws = Workspace::Get();
  const VkApi& vk = ws.vk();
  std::lock_guard lock(*d.mu);
  ws.Retire(d, /*wait=*/false);
  Slot s = ws.AcquireSlot(d);
  // Back to the free list on any failure below; handed to in_flight on success.
  struct Cleanup {
    Workspace& ws;
    Device& d;
    Slot& s;
    bool armed = true;
    ~Cleanup() {
      if (armed) ws.ReleaseUnsubmitted(d, s);
    }
  } cleanup{ws, d, s};
  if (s.generation != d.generation) {
    s.sets.clear();
    s.recorded = false;
    s.generation = d.generation;
  }
  bool rewritten = false;
  const std::vector<VkDescriptorSet> no_sets;
  const std::vector<VkDescriptorSet>& sets =
      dispatch.buffers.empty()
          ? no_sets
          : SlotDescriptorSets(vk, d, s, *dispatch.pipeline, dispatch.buffers, &rewritten);
  if (rewritten || !RecordedAlready(s, dispatch, sets)) Record(vk, s, dispatch, sets);
  auto submit = Make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &s.cmd;
  VkResult r = vk.vkQueueSubmit(d.queue, 1, &submit, s.fence);
  if (r != VK_SUCCESS) {
    // The fence's state is unknown after a failed submit: do not recycle it.
    cleanup.armed = false;
    ws.DestroySlot(d, s);
    MODRT_VK_CHECK(r, StrCat("launch of ", name));
  }
  d.in_flight.push_back(std::move(s));
  cleanup.armed = false;
}

}  // namespace vulkan
}  // namespace modrt
