#include "vulkan_device_layer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "vulkan_commands.h"
#include "vulkan_device.h"
#include "vulkan_graphs.h"
#include "vulkan_streams.h"
#include "vulkan_submit.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

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
  Device& d = Workspace::Get().device(device_id);
  return stream != nullptr ? *static_cast<Stream*>(stream) : DefaultStream(d);
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

void RefuseWhileCapturing(Stream& s, const char* what) {
  if (s.capture_locked()) {
    Fail("NotImplementedError", "Vulkan cannot record ", what,
         " into a graph: a captured graph holds launches and device-to-device copies");
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

}  // namespace

void* EventRecord(int device_id, void* stream, bool timing) {
  Stream& s = StreamOf(device_id, stream);
  Device& d = s.device();
  auto event = std::make_unique<Event>();
  event->stream = s.shared_from_this();
  event->timed = timing && d.timestamp_bits > 0;
  std::lock_guard lock(s.mu());
  RefuseWhileCapturing(s, "an event");
  if (event->timed) event->query = AcquireQuery(d);
  if (event->timed) {
    const QuerySlot q = event->query;
    event->value = SubmitCommandsLocked(
        s,
        [&](VkCommandBuffer cmd) { RecordTimestamp(Workspace::Get().vk(), cmd, q.pool, q.index); },
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

void EventDestroy(void* ptr) {
  std::unique_ptr<Event> event(static_cast<Event*>(ptr));
  if (!event->timed) return;
  DeviceShared& shared = *event->stream->device().shared;
  std::lock_guard lock(shared.queries_mu);
  shared.free_queries.push_back(event->query);
}

namespace {

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

}  // namespace

void CopyFromHostAsync(const void* host, DLTensor* dst, size_t offset, size_t nbytes,
                       void* stream) {
  if (nbytes == 0) return;
  const int id = dst->device.device_id;
  Stream& s = StreamOf(id, stream);
  // Staged now: the user's memory may change once this returns.
  auto staging = std::make_shared<Staging>(id, s.device(), nbytes);
  std::memcpy(staging->buf->host, host, nbytes);
  const VkBuffer target = static_cast<const Buffer*>(dst->data)->buffer;
  const size_t at = dst->byte_offset + offset;
  std::lock_guard lock(s.mu());
  RefuseWhileCapturing(s, "a copy from host memory");
  Submission submission;
  submission.keep.push_back(staging);
  SubmitCommandsLocked(
      s,
      [&](VkCommandBuffer cmd) {
        RecordCopy(Workspace::Get().vk(), cmd, staging->buf->buffer, 0, target, at, nbytes);
      },
      std::move(submission), "a copy from host memory");
}

void CopyToHostAsync(const DLTensor* src, size_t offset, void* host, size_t nbytes, void* stream) {
  if (nbytes == 0) return;
  const int id = src->device.device_id;
  Stream& s = StreamOf(id, stream);
  auto staging = std::make_shared<Staging>(id, s.device(), nbytes);
  const VkBuffer source = static_cast<const Buffer*>(src->data)->buffer;
  const size_t at = src->byte_offset + offset;
  std::lock_guard lock(s.mu());
  RefuseWhileCapturing(s, "a copy to host memory");
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

void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
                        size_t nbytes, void* stream) {
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

void* StreamCreate(int device_id) {
  Device& d = Workspace::Get().device(device_id);
  DefaultStream(d);  // first in d.streams
  auto s = std::make_shared<Stream>(d);
  std::lock_guard lock(d.shared->streams);
  d.streams.push_back(s);
  return s.get();
}

void StreamDestroy(int device_id, void* stream) {
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

void StreamSynchronize(int device_id, void* stream) { StreamWaitFor(device_id, stream, -1.0); }

bool StreamWaitFor(int device_id, void* stream, double timeout_s) {
  Stream& s = StreamOf(device_id, stream);
  // Negative: no bound. Beyond ~584 years the nanoseconds would not fit.
  const uint64_t timeout_ns =
      timeout_s < 0 || timeout_s > 1.8e10 ? UINT64_MAX : static_cast<uint64_t>(timeout_s * 1e9);
  if (!s.Synchronize(timeout_ns)) return false;
  RetireAll(s.device());
  return true;
}

bool EventQuery(void* event) {
  const auto& e = *static_cast<const Event*>(event);
  if (!e.stream->Reached(e.value)) return false;
  RetireAll(e.stream->device());
  return true;
}

void EventSynchronize(void* event) {
  const auto& e = *static_cast<const Event*>(event);
  e.stream->WaitFor(e.value);
  RetireAll(e.stream->device());
}

double EventElapsedMs(int device_id, void* start, void* end) {
  return ElapsedMs(device_id, *static_cast<const Event*>(start), *static_cast<const Event*>(end));
}

void StreamWaitEvent(int device_id, void* stream, void* event) {
  Stream& s = StreamOf(device_id, stream);
  const auto& e = *static_cast<const Event*>(event);
  std::lock_guard lock(s.mu());
  RefuseWhileCapturing(s, "a wait for an event");
  s.WaitLocked(e.stream, e.value);
}

// The graph the core holds: a reference, since replays in flight keep the graph too.
using GraphRef = std::shared_ptr<Graph>;

void GraphBegin(int device_id, void* stream) {
  Stream& s = StreamOf(device_id, stream);
  std::lock_guard lock(s.mu());
  if (s.capture_locked()) Fail("ValueError", "this stream is capturing a graph already");
  s.set_capture_locked(std::make_shared<Graph>(s.device()));
}

void* GraphEnd(int device_id, void* stream) {
  Stream& s = StreamOf(device_id, stream);
  std::lock_guard lock(s.mu());
  GraphRef graph = s.capture_locked();
  s.set_capture_locked(nullptr);
  if (!graph) Fail("ValueError", "this stream is not capturing a graph");
  graph->End();
  return std::make_unique<GraphRef>(std::move(graph)).release();
}

void GraphLaunch(int device_id, void* graph, void* stream) {
  const GraphRef& g = *static_cast<const GraphRef*>(graph);
  Stream& s = StreamOf(device_id, stream);
  std::lock_guard lock(s.mu());
  RefuseWhileCapturing(s, "a graph's replay");
  s.RetireLocked();
  Submission submission;
  submission.keep.push_back(g);
  s.SubmitLocked(g->cmd(), std::move(submission), "a graph's replay");
  s.device().shared->graph_replays.fetch_add(1);
}

void GraphUpdate(int device_id, void* stream, void* graph) {
  Stream& s = StreamOf(device_id, stream);
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

void GraphDestroy(void* graph) { std::unique_ptr<GraphRef> owned(static_cast<GraphRef*>(graph)); }

}  // namespace vulkan
}  // namespace modrt
