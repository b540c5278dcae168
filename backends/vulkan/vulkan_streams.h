// Streams: the native queues of the device layer (plugin::Queues, with
// TimedWaits), their events and the copies on them.
//
// A stream is its own sequence of submissions to the device's one queue: its
// own command pool and recycled slots, and a timeline semaphore whose value
// n says that the stream's n-th submission completed. Order within a stream
// comes from queue order and the barrier each recording starts with; a wait
// on another stream's event is a semaphore wait on that stream's timeline.
// An event is a point in a stream (a timeline value), with a timestamp query
// written on the device when it is recorded with timing. A graph is one
// reusable command buffer recorded while its stream captures.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_STREAMS_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_STREAMS_H_

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vulkan_api.h"
#include "vulkan_device.h"

namespace modrt {
namespace vulkan {

// A command buffer and a descriptor pool for one submission. Slots are made
// once and recycled: a completed slot goes back to its stream's free list
// and the next submission reuses it. A slot remembers what it last held
// (descriptor set contents, recorded dispatch) so that a launch identical to
// the slot's last one re-submits it without updating or recording anything.
struct Slot {
  VkCommandBuffer cmd = VK_NULL_HANDLE;  // from its stream's pool
  VkDescriptorPool descriptors = VK_NULL_HANDLE;
  uint32_t descriptor_capacity = 0;  // descriptors of each buffer type the pool holds
  uint32_t set_capacity = 0;         // sets the pool holds
  // The sets allocated from `descriptors` (one per set number of the
  // pipeline layout) and what they were written with; valid while
  // `generation` equals the device's (bumped when buffers or pipelines are
  // destroyed, whose handles may then be reused).
  std::vector<VkDescriptorSet> sets;
  VkPipelineLayout sets_layout = VK_NULL_HANDLE;
  std::vector<VkBuffer> bound;
  // What `cmd` holds when `recorded`: a complete recording of this dispatch.
  bool recorded = false;
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> recorded_sets;
  std::array<uint32_t, 3> grid{};
  std::vector<uint8_t> constants;
  uint64_t generation = 0;
  // The scalar-uniform data of its launch (ArgLayout::uniform_bytes), grown
  // on demand: written when the slot is taken, so a launch in flight keeps its values.
  std::unique_ptr<Buffer> uniforms;
  size_t uniform_capacity = 0;
};

// What a submission holds until it completes.
struct Submission {
  uint64_t value = 0;          // of its stream's timeline
  std::unique_ptr<Slot> slot;  // recycled when complete (none for a graph)
  // Alive until then: a staging buffer, a graph, the streams it waits on.
  std::vector<std::shared_ptr<const void>> keep;
  std::function<void()> on_complete;  // e.g. staging memory to the user's host memory
};

class Graph;

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  explicit Stream(Device& d);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Device& device() const { return d_; }
  VkSemaphore timeline() const { return timeline_; }

  // Guards everything below; callers of the *Locked functions hold it.
  std::mutex& mu() { return mu_; }

  // A slot to record into (recycled when there is one).
  std::unique_ptr<Slot> AcquireSlotLocked();
  // Back to the free list without having been submitted, forgetting its recording.
  void ReleaseSlotLocked(std::unique_ptr<Slot> s);
  // Submits `cmd` after the waits queued by WaitLocked; it signals the next
  // timeline value, which is returned. `what` names it in errors.
  uint64_t SubmitLocked(VkCommandBuffer cmd, Submission submission, const std::string& what);
  // The next submission waits, on the device, until `other`'s timeline reaches `value`.
  void WaitLocked(std::shared_ptr<Stream> other, uint64_t value);
  // True when waits are queued for the next submission.
  bool waits_pending_locked() const { return !waits_.empty(); }
  // The value of the latest submission (0: none yet).
  uint64_t submitted_locked() const { return submitted_; }
  // Recycles the submissions that completed (never blocks).
  void RetireLocked();

  // True when the timeline reached `value` (never blocks).
  bool Reached(uint64_t value);
  // Blocks until the timeline reaches `value` or `timeout_ns` passed, then
  // recycles what completed: true when it reached `value`.
  bool WaitFor(uint64_t value, uint64_t timeout_ns = UINT64_MAX);
  // Blocks until everything submitted so far completed, or `timeout_ns` passed.
  bool Synchronize(uint64_t timeout_ns = UINT64_MAX);

  // The graph recording this stream's launches, or null.
  const std::shared_ptr<Graph>& capture_locked() const { return capture_; }
  void set_capture_locked(std::shared_ptr<Graph> graph) { capture_ = std::move(graph); }

 private:
  void DestroySlot(Slot& s);

  Device& d_;
  std::mutex mu_;
  VkCommandPool pool_ = VK_NULL_HANDLE;  // with RESET_COMMAND_BUFFER: slots re-record
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;  // the timeline's value when last read
  std::deque<Submission> in_flight_;
  std::vector<std::unique_ptr<Slot>> free_;
  std::vector<std::pair<std::shared_ptr<Stream>, uint64_t>> waits_;  // for the next submission
  std::shared_ptr<Graph> capture_;
};

// The device's default stream (the plugin's default queue, NULL to the core).
Stream& DefaultStream(Device& d);

// The stream a launch on `d` goes to: `native` (the launch's, ModrtKernelArgs),
// else (null) the device's default stream.
Stream& StreamOf(void* native, Device& d);

// NotImplementedError naming `what` while `s` captures a graph, which holds
// only launches and device-to-device copies.
void RefuseWhileCapturingLocked(Stream& s, const char* what);

// The device layer's queues and timed waits.
void AddQueues(plugin::DeviceLayer* layer);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_STREAMS_H_
