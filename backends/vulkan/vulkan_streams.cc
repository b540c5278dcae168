#include "vulkan_streams.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "vulkan_commands.h"
#include "vulkan_graphs.h"
#include "vulkan_submit.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

// At most this many completed slots are kept per stream; more are destroyed.
constexpr size_t kMaxFreeSlots = 64;

}  // namespace

Stream::Stream(Device& d) : d_(d) {
  const VkApi& vk = Workspace::Get().vk();
  auto pool = Make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;  // slots re-record their buffers
  pool.queueFamilyIndex = d.queue_family;
  MODRT_VK_CHECK(vk.vkCreateCommandPool(d.device, &pool, nullptr, &pool_),
                 "creating a command pool");
  auto type = Make<VkSemaphoreTypeCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  auto info = Make<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
  info.pNext = &type;
  VkResult r = vk.vkCreateSemaphore(d.device, &info, nullptr, &timeline_);
  if (r != VK_SUCCESS) {
    vk.vkDestroyCommandPool(d.device, pool_, nullptr);
    MODRT_VK_CHECK(r, "creating a timeline semaphore");
  }
}

Stream::~Stream() {
  // Whoever dropped the last reference waited for the stream's work (the
  // core before stream_destroy; a submission keeps the streams it waits on).
  const VkApi& vk = Workspace::Get().vk();
  for (auto& s : free_) DestroySlot(*s);
  for (auto& sub : in_flight_) {
    if (sub.slot) DestroySlot(*sub.slot);
  }
  vk.vkDestroySemaphore(d_.device, timeline_, nullptr);
  vk.vkDestroyCommandPool(d_.device, pool_, nullptr);
}

std::unique_ptr<Slot> Stream::AcquireSlotLocked() {
  if (!free_.empty()) {
    std::unique_ptr<Slot> s = std::move(free_.back());
    free_.pop_back();
    return s;
  }
  auto s = std::make_unique<Slot>();
  d_.shared->slots_created.fetch_add(1);
  auto alloc = Make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  MODRT_VK_CHECK(Workspace::Get().vk().vkAllocateCommandBuffers(d_.device, &alloc, &s->cmd),
                 "allocating a command buffer");
  return s;
}

void Stream::ReleaseSlotLocked(std::unique_ptr<Slot> s) {
  s->recorded = false;
  s->sets.clear();  // may be half written
  if (free_.size() < kMaxFreeSlots) {
    free_.push_back(std::move(s));
  } else {
    DestroySlot(*s);
  }
}

uint64_t Stream::SubmitLocked(VkCommandBuffer cmd, Submission submission, const std::string& what) {
  const uint64_t value = submitted_ + 1;
  std::vector<VkSemaphore> wait_semaphores;
  std::vector<uint64_t> wait_values;
  for (const auto& [other, other_value] : waits_) {
    wait_semaphores.push_back(other->timeline());
    wait_values.push_back(other_value);
  }
  const std::vector<VkPipelineStageFlags> stages(waits_.size(), VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  auto values =
      Make<VkTimelineSemaphoreSubmitInfo>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
  values.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  values.pWaitSemaphoreValues = wait_values.data();
  values.signalSemaphoreValueCount = 1;
  values.pSignalSemaphoreValues = &value;
  auto submit = Make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.pNext = &values;
  submit.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
  submit.pWaitSemaphores = wait_semaphores.data();
  submit.pWaitDstStageMask = stages.data();
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &timeline_;
  VkResult r;
  {
    std::lock_guard queue(d_.shared->queue);
    r = Workspace::Get().vk().vkQueueSubmit(d_.queue, 1, &submit, VK_NULL_HANDLE);
  }
  if (r != VK_SUCCESS) {
    if (submission.slot) ReleaseSlotLocked(std::move(submission.slot));
    MODRT_VK_CHECK(r, what);
  }
  submitted_ = value;
  // The streams waited on stay alive while this submission may wait on them.
  for (auto& [other, other_value] : waits_) submission.keep.push_back(std::move(other));
  waits_.clear();
  submission.value = value;
  in_flight_.push_back(std::move(submission));
  return value;
}

void Stream::WaitLocked(std::shared_ptr<Stream> other, uint64_t value) {
  if (other.get() == this || value == 0) return;  // in order already, or nothing to wait for
  waits_.emplace_back(std::move(other), value);
}

void Stream::RetireLocked() {
  if (in_flight_.empty()) return;
  const VkApi& vk = Workspace::Get().vk();
  if (completed_ < in_flight_.front().value) {
    MODRT_VK_CHECK(vk.vkGetSemaphoreCounterValue(d_.device, timeline_, &completed_),
                   "reading a stream's progress");
  }
  while (!in_flight_.empty() && in_flight_.front().value <= completed_) {
    Submission done = std::move(in_flight_.front());
    in_flight_.pop_front();
    if (done.on_complete) done.on_complete();
    if (done.slot) {
      if (free_.size() < kMaxFreeSlots) {
        free_.push_back(std::move(done.slot));
      } else {
        DestroySlot(*done.slot);
      }
    }
  }
}

bool Stream::Reached(uint64_t value) {
  std::lock_guard lock(mu_);
  if (completed_ < value) {
    MODRT_VK_CHECK(
        Workspace::Get().vk().vkGetSemaphoreCounterValue(d_.device, timeline_, &completed_),
        "reading a stream's progress");
  }
  RetireLocked();
  return completed_ >= value;
}

bool Stream::WaitFor(uint64_t value, uint64_t timeout_ns) {
  // Without the lock: launches on the stream go on while this waits.
  auto wait = Make<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
  wait.semaphoreCount = 1;
  wait.pSemaphores = &timeline_;
  wait.pValues = &value;
  const VkResult r = Workspace::Get().vk().vkWaitSemaphores(d_.device, &wait, timeout_ns);
  if (r == VK_TIMEOUT) return false;
  MODRT_VK_CHECK(r, "waiting for a stream");
  std::lock_guard lock(mu_);
  RetireLocked();
  return true;
}

bool Stream::Synchronize(uint64_t timeout_ns) {
  uint64_t value;
  {
    std::lock_guard lock(mu_);
    value = submitted_;
  }
  return WaitFor(value, timeout_ns);
}

void Stream::DestroySlot(Slot& s) {
  const VkApi& vk = Workspace::Get().vk();
  if (s.cmd) vk.vkFreeCommandBuffers(d_.device, pool_, 1, &s.cmd);
  if (s.descriptors) vk.vkDestroyDescriptorPool(d_.device, s.descriptors, nullptr);
  if (s.uniforms) ReleaseBuffer(d_, *s.uniforms);
  s = Slot{};
}

Stream& StreamOf(void* native, Device& d) {
  return native != nullptr ? *static_cast<Stream*>(native) : DefaultStream(d);
}

Stream& DefaultStream(Device& d) {
  std::lock_guard lock(d.shared->streams);
  if (d.streams.empty()) d.streams.push_back(std::make_shared<Stream>(d));
  return *d.streams.front();
}

void RefuseWhileCapturingLocked(Stream& s, const char* what) {
  if (s.capture_locked()) {
    Fail("NotImplementedError", "Vulkan cannot record ", what,
         " into a graph: a captured graph holds launches and device-to-device copies");
  }
}

namespace {

// Timestamp queries are made in pools of this many.
constexpr uint32_t kQueriesPerPool = 64;

// A point in a stream: complete when the stream's timeline reaches `value`.
struct Event {
  std::shared_ptr<Stream> stream;
  uint64_t value = 0;
  bool timed = false;  // `query` holds the device's clock at the point
  QuerySlot query;
};

// A host-visible buffer that a copy goes through.
struct Staging {
  Staging(int id, const Device& dev, size_t nbytes) : d(dev), buf(NewBuffer(id, dev, nbytes)) {}
  ~Staging() { ReleaseBuffer(d, *buf); }
  const Device& d;
  std::unique_ptr<Buffer> buf;
};

Stream& StreamOf(int32_t device_id, void* stream) {
  return StreamOf(stream, Workspace::Get().device(device_id));
}

// Recycles what completed on every stream of `d`: a copy to host memory
// lands there when its submission is retired, and an event of one stream
// may complete work that another stream waited for.
void RetireAll(Device& d) {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard lock(d.shared->streams);
    streams = d.streams;
  }
  for (const auto& s : streams) {
    std::lock_guard lock(s->mu());
    s->RetireLocked();
  }
}

QuerySlot AcquireQuery(Device& d) {
  DeviceShared& shared = *d.shared;
  std::lock_guard lock(shared.queries_mu);
  if (shared.free_queries.empty()) {
    auto info = Make<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = kQueriesPerPool;
    VkQueryPool pool = VK_NULL_HANDLE;
    MODRT_VK_CHECK(Workspace::Get().vk().vkCreateQueryPool(d.device, &info, nullptr, &pool),
                   "creating a timestamp query pool");
    shared.query_pools.push_back(pool);
    for (uint32_t i = 0; i < kQueriesPerPool; ++i) shared.free_queries.push_back({pool, i});
  }
  QuerySlot q = shared.free_queries.back();
  shared.free_queries.pop_back();
  return q;
}

// The device's clock at a complete, timed event, in ticks.
uint64_t Timestamp(const Device& d, const Event& e) {
  uint64_t ticks = 0;
  MODRT_VK_CHECK(Workspace::Get().vk().vkGetQueryPoolResults(d.device, e.query.pool, e.query.index,
                                                             1, sizeof(ticks), &ticks,
                                                             sizeof(ticks), VK_QUERY_RESULT_64_BIT),
                 "reading a timestamp");
  return ticks;
}

double ElapsedMs(int32_t device_id, const Event& start, const Event& end) {
  Device& d = Workspace::Get().device(device_id);
  if (d.timestamp_bits == 0) {
    Fail("NotImplementedError", "Vulkan device ", d.caps.props.deviceName,
         " has no timestamps on its compute queue (timestampValidBits = 0); modrt does not "
         "stand host time in for device time");
  }
  if (!start.timed || !end.timed) {
    Fail("ValueError", "elapsed time needs two events recorded with timing");
  }
  if (!start.stream->Reached(start.value) || !end.stream->Reached(end.value)) {
    Fail("RuntimeError", "elapsed time of events not yet complete; synchronize them first");
  }
  // The difference in the counter's valid bits, signed: `end` may be the earlier event.
  const unsigned shift = 64 - std::min<uint32_t>(d.timestamp_bits, 64);
  const int64_t ticks =
      static_cast<int64_t>((Timestamp(d, end) - Timestamp(d, start)) << shift) >> shift;
  return static_cast<double>(ticks) * d.caps.props.limits.timestampPeriod / 1e6;
}

// The native queues (plugin::Queues): streams are Stream*, NULL for the
// default stream; events are timeline points with a timestamp query when
// timed.
class VulkanQueues final : public Queues, public TimedWaits {
 public:
  void* StreamCreate(int device_id) override {
    Device& d = Workspace::Get().device(device_id);
    DefaultStream(d);  // first in d.streams
    auto s = std::make_shared<Stream>(d);
    std::lock_guard lock(d.shared->streams);
    d.streams.push_back(s);
    return s.get();
  }

  void StreamDestroy(int device_id, void* stream) override {
    Device& d = Workspace::Get().device(device_id);
    std::lock_guard lock(d.shared->streams);
    for (auto it = d.streams.begin() + 1; it != d.streams.end(); ++it) {
      if (it->get() != stream) continue;
      {
        std::lock_guard stream_lock((*it)->mu());
        (*it)->RetireLocked();  // copies to host memory land
      }
      d.streams.erase(it);  // events and waits may keep it a while
      return;
    }
  }

  void StreamSynchronize(int device_id, void* stream) override {
    StreamWaitFor(device_id, stream, -1.0);
  }

  // vkWaitSemaphores takes a timeout: the core waits on the caller's thread.
  bool StreamWaitFor(int device_id, void* stream, double timeout_s) override {
    Stream& s = StreamOf(device_id, stream);
    // Negative: no bound. Beyond ~584 years the nanoseconds would not fit.
    const uint64_t timeout_ns =
        timeout_s < 0 || timeout_s > 1.8e10 ? UINT64_MAX : static_cast<uint64_t>(timeout_s * 1e9);
    if (!s.Synchronize(timeout_ns)) return false;
    RetireAll(s.device());
    return true;
  }

  void StreamWaitEvent(int device_id, void* stream, void* event) override {
    Stream& s = StreamOf(device_id, stream);
    const auto& e = *static_cast<const Event*>(event);
    std::lock_guard lock(s.mu());
    RefuseWhileCapturingLocked(s, "a wait for an event");
    s.WaitLocked(e.stream, e.value);
  }

  // With `timing` (and a device whose queue has timestamps), a timestamp query
  // written when the work before it completed.
  void* EventRecord(int device_id, void* stream, bool timing) override {
    Stream& s = StreamOf(device_id, stream);
    Device& d = s.device();
    auto event = std::make_unique<Event>();
    event->stream = s.shared_from_this();
    event->timed = timing && d.timestamp_bits > 0;
    std::lock_guard lock(s.mu());
    RefuseWhileCapturingLocked(s, "an event");
    if (event->timed) event->query = AcquireQuery(d);
    if (event->timed) {
      const QuerySlot q = event->query;
      event->value = SubmitCommandsLocked(
          s,
          [&](VkCommandBuffer cmd) {
            RecordTimestamp(Workspace::Get().vk(), cmd, q.pool, q.index);
          },
          Submission{}, "recording an event");
    } else if (s.waits_pending_locked()) {
      // The event comes after the waits queued so far: a submission carries them.
      event->value =
          SubmitCommandsLocked(s, [](VkCommandBuffer) {}, Submission{}, "recording an event");
    } else {
      event->value = s.submitted_locked();
    }
    return event.release();
  }

  bool EventQuery(int, void* event) override {
    const auto& e = *static_cast<const Event*>(event);
    if (!e.stream->Reached(e.value)) return false;
    RetireAll(e.stream->device());
    return true;
  }

  void EventSynchronize(int, void* event) override {
    const auto& e = *static_cast<const Event*>(event);
    e.stream->WaitFor(e.value);
    RetireAll(e.stream->device());
  }

  double EventElapsedMs(int device_id, void* start, void* end) override {
    return ElapsedMs(device_id, *static_cast<const Event*>(start), *static_cast<const Event*>(end));
  }

  void EventDestroy(int, void* ptr) override {
    std::unique_ptr<Event> event(static_cast<Event*>(ptr));
    if (!event->timed) return;
    DeviceShared& shared = *event->stream->device().shared;
    std::lock_guard lock(shared.queries_mu);
    shared.free_queries.push_back(event->query);
  }

  // Ranged copies on a stream, through a host-visible staging buffer.
  void CopyFromHostAsync(const void* host, DLTensor* dst, size_t offset, size_t nbytes,
                         void* stream) override {
    if (nbytes == 0) return;
    const int id = dst->device.device_id;
    Stream& s = StreamOf(id, stream);
    // Staged now: the user's memory may change once this returns.
    auto staging = std::make_shared<Staging>(id, s.device(), nbytes);
    std::memcpy(staging->buf->host, host, nbytes);
    const VkBuffer target = static_cast<const Buffer*>(dst->data)->buffer;
    const size_t at = dst->byte_offset + offset;
    std::lock_guard lock(s.mu());
    RefuseWhileCapturingLocked(s, "a copy from host memory");
    Submission submission;
    submission.keep.push_back(staging);
    SubmitCommandsLocked(
        s,
        [&](VkCommandBuffer cmd) {
          RecordCopy(Workspace::Get().vk(), cmd, staging->buf->buffer, 0, target, at, nbytes);
        },
        std::move(submission), "a copy from host memory");
  }

  void CopyToHostAsync(const DLTensor* src, size_t offset, void* host, size_t nbytes,
                       void* stream) override {
    if (nbytes == 0) return;
    const int id = src->device.device_id;
    Stream& s = StreamOf(id, stream);
    auto staging = std::make_shared<Staging>(id, s.device(), nbytes);
    const VkBuffer source = static_cast<const Buffer*>(src->data)->buffer;
    const size_t at = src->byte_offset + offset;
    std::lock_guard lock(s.mu());
    RefuseWhileCapturingLocked(s, "a copy to host memory");
    Submission submission;
    submission.keep.push_back(staging);
    // Lands in the user's memory when the submission is retired, which any
    // wait or query that sees it complete does first.
    const void* staged = staging->buf->host;
    submission.on_complete = [host, staged, nbytes] { std::memcpy(host, staged, nbytes); };
    SubmitCommandsLocked(
        s,
        [&](VkCommandBuffer cmd) {
          RecordCopy(Workspace::Get().vk(), cmd, source, at, staging->buf->buffer, 0, nbytes);
        },
        std::move(submission), "a copy to host memory");
  }

  // vkCmdCopyBuffer on a stream, or into the graph it captures.
  void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
                          size_t nbytes, void* stream) override {
    if (nbytes == 0) return;
    Stream& s = StreamOf(dst->device.device_id, stream);
    const VkBuffer from = static_cast<const Buffer*>(src->data)->buffer;
    const VkBuffer to = static_cast<const Buffer*>(dst->data)->buffer;
    const size_t from_at = src->byte_offset + src_offset, to_at = dst->byte_offset + dst_offset;
    std::lock_guard lock(s.mu());
    if (const std::shared_ptr<Graph>& graph = s.capture_locked()) {
      return graph->RecordCopy(from, from_at, to, to_at, nbytes);
    }
    SubmitCommandsLocked(
        s,
        [&](VkCommandBuffer cmd) {
          RecordCopy(Workspace::Get().vk(), cmd, from, from_at, to, to_at, nbytes);
        },
        Submission{}, "a device-to-device copy");
  }

  const char* QueueDescription(int, bool is_default) override {
    return is_default ? "the Vulkan device's compute queue, its submissions in order on a timeline "
                        "semaphore; a graph is one reusable command buffer, recorded anew when a "
                        "replay rebinds buffers"
                      : "submissions of its own to the Vulkan device's compute queue, in order on "
                        "a timeline semaphore; a graph is one reusable command buffer, recorded "
                        "anew when a replay rebinds buffers";
  }
};

}  // namespace

void AddQueues(DeviceLayer* layer) {
  static VulkanQueues queues;
  layer->queues = &queues;
  layer->timed_waits = &queues;
}

}  // namespace vulkan
}  // namespace modrt
