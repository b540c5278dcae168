// Streams and events of webgpu(0) (webgpu_queue.h): every stream is the
// device's one queue; an event is a submission, complete when wgpu reports
// the work up to it done, with a device timestamp where the device has
// timestamp queries.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "webgpu_queue.h"
#include "wgpu_native.h"

namespace modrt {
namespace webgpu {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

class Event {
 public:
  using Done = CallbackResult<std::pair<WGPUQueueWorkDoneStatus, std::string>>;
  uint64_t batch = 0;             // the batch it ends (webgpu_submit.cc)
  uint64_t readbacks_before = 0;  // the device-to-host copies it follows
  bool watched = false;           // submitted, and its completion asked for
  std::shared_ptr<Done> done = std::make_shared<Done>();
  // Its timestamp: written into `query`, resolved into `resolved`, copied
  // into `readback` to map; null without timestamp queries.
  WGPUQuerySet query = nullptr;
  WGPUBuffer resolved = nullptr;
  WGPUBuffer readback = nullptr;
  bool has_ticks = false;
  uint64_t ticks = 0;

  ~Event() {
    Workspace& ws = Workspace::Get();
    if (readback) ws.api().wgpuBufferRelease(readback);
    if (resolved) ws.api().wgpuBufferRelease(resolved);
    if (query) ws.api().wgpuQuerySetRelease(query);
  }
};

namespace {

// Raises the error wgpu reported since the last wait, if any.
void RaiseAsyncError(Workspace& ws) {
  if (std::string e = ws.TakeUncapturedError(); !e.empty()) Fail("RuntimeError", "webgpu: ", e);
}

Event* AsEvent(void* event) {
  if (event == nullptr) Fail("ValueError", "webgpu: no event given");
  return static_cast<Event*>(event);
}

// A compute pass that writes the device's time into `event`'s query set, and
// the commands that bring it into `event.readback`. Callers hold submit_mu().
void EncodeTimestamp(Workspace& ws, Event& event) {
  const WgpuApi& api = ws.api();
  WGPUQuerySetDescriptor qd{};
  qd.type = WGPUQueryType_Timestamp;
  qd.count = 1;
  event.query = api.wgpuDeviceCreateQuerySet(ws.device(), &qd);
  WGPUBufferDescriptor bd{};
  bd.size = sizeof(uint64_t);
  bd.usage = WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc;
  event.resolved = api.wgpuDeviceCreateBuffer(ws.device(), &bd);
  bd.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
  event.readback = api.wgpuDeviceCreateBuffer(ws.device(), &bd);

  WGPUPassTimestampWrites writes{};
  writes.querySet = event.query;
  writes.beginningOfPassWriteIndex = 0;
  writes.endOfPassWriteIndex = WGPU_QUERY_SET_INDEX_UNDEFINED;
  WGPUComputePassDescriptor pd{};
  pd.timestampWrites = &writes;
  WGPUCommandEncoder encoder = ws.PendingLocked();
  WGPUComputePassEncoder pass = api.wgpuCommandEncoderBeginComputePass(encoder, &pd);
  api.wgpuComputePassEncoderEnd(pass);
  api.wgpuComputePassEncoderRelease(pass);
  api.wgpuCommandEncoderResolveQuerySet(encoder, event.query, 0, 1, event.resolved, 0);
  api.wgpuCommandEncoderCopyBufferToBuffer(encoder, event.resolved, 0, event.readback, 0,
                                           sizeof(uint64_t));
}

// Submits the batch that `event` ends, if it is still being recorded, and
// asks wgpu to report when the work submitted so far is done (delivered by a
// device poll). Not done by EventRecord: while a kernel that never ends runs,
// a submission blocks, and the core records events on the caller's thread
// but waits for them on a worker, where blocking is bounded. The batch is
// submitted once the work before it is done (webgpu_device.h): waited for
// with `may_wait` (a worker), else false is returned meanwhile (EventQuery).
bool Watch(Workspace& ws, Event& event, bool may_wait) {
  for (;;) {
    {
      std::lock_guard lock(ws.submit_mu());
      if (event.watched) return true;
      const bool unsubmitted = ws.batch() == event.batch;
      if (!unsubmitted || ws.IdleLocked()) {
        if (unsubmitted) ws.FlushLocked();
        WGPUQueueWorkDoneCallbackInfo cb{};
        cb.mode = WGPUCallbackMode_AllowSpontaneous;
        cb.callback = [](WGPUQueueWorkDoneStatus status, WGPUStringView message, void* done,
                         void*) {
          TakeInCallback<Event::Done>(done)->Set({status, ToString(message)});
        };
        cb.userdata1 = ShareWithCallback(event.done);
        ws.api().wgpuQueueOnSubmittedWorkDone(ws.queue(), cb);
        event.watched = true;
        return true;
      }
    }
    if (!may_wait) return false;
    ws.AwaitSubmitted();
  }
}

// The device ticks of a complete event's timestamp.
uint64_t ReadTicks(Workspace& ws, Event& event) {
  if (event.has_ticks) return event.ticks;
  auto mapped = std::make_shared<MapResult>();
  MapForReading(ws, event.readback, sizeof(uint64_t), mapped);
  ws.PollUntil([&] { return mapped->Done(); });
  CopyOutOfMapped(ws, event.readback, *mapped, 0, &event.ticks, sizeof(uint64_t),
                  "an event's timestamp");
  event.has_ticks = true;
  return event.ticks;
}

}  // namespace

Queue& Queue::Get() {
  static Queue* queue = std::make_unique<Queue>().release();
  return *queue;
}

void* Queue::StreamCreate(int device_id) {
  Workspace::Get().Require(device_id);
  return std::make_unique<Stream>().release();
}

void Queue::StreamDestroy(int device_id, void* stream) {
  std::unique_ptr<Stream> owned(static_cast<Stream*>(stream));  // with its capture, if any
  Workspace::Get().Require(device_id);
}

void Queue::StreamSynchronize(int device_id, void*) {
  // The stream is the device's queue: waiting for it is waiting for all.
  Workspace& ws = Workspace::Get();
  ws.Require(device_id);
  ws.Drain();
  FinishReadbacks(UINT64_MAX, /*wait=*/true);
  RaiseAsyncError(ws);
}

void Queue::StreamWaitEvent(int device_id, void*, void* event) {
  // In-order: the event's work was submitted before anything submitted later.
  Workspace::Get().Require(device_id);
  AsEvent(event);
}

void* Queue::EventRecord(int device_id, void*, bool timing) {
  Workspace& ws = Workspace::Get();
  ws.Require(device_id);
  auto event = std::make_unique<Event>();
  std::lock_guard lock(ws.submit_mu());
  // The event ends the batch being recorded: made now if there is none, so
  // that its submission also carries the queue writes made since the last.
  ws.PendingLocked();
  if (timing && ws.info().timestamp_query) EncodeTimestamp(ws, *event);
  event->batch = ws.batch();
  event->readbacks_before = NextReadback();
  return event.release();
}

bool Queue::EventQuery(int device_id, void* event) {
  Workspace& ws = Workspace::Get();
  ws.Require(device_id);
  Event* e = AsEvent(event);
  if (!Watch(ws, *e, /*may_wait=*/false)) return false;
  ws.api().wgpuDevicePoll(ws.device(), 0, nullptr);
  if (!e->done->Done()) return false;
  EventSynchronize(device_id, event);  // complete: finishes its readbacks
  return true;
}

void Queue::EventSynchronize(int device_id, void* event) {
  Workspace& ws = Workspace::Get();
  ws.Require(device_id);
  Event* e = AsEvent(event);
  Watch(ws, *e, /*may_wait=*/true);
  ws.PollUntil([&] { return e->done->Done(); });
  const auto [status, message] = e->done->Get();
  if (status != WGPUQueueWorkDoneStatus_Success) {
    Fail("RuntimeError", "webgpu: the queue's work did not complete: ", message);
  }
  if (e->readbacks_before > 0) FinishReadbacks(e->readbacks_before - 1, /*wait=*/true);
  RaiseAsyncError(ws);
}

double Queue::EventElapsedMs(int device_id, void* start, void* end) {
  Workspace& ws = Workspace::Get();
  ws.Require(device_id);
  Event* s = AsEvent(start);
  Event* e = AsEvent(end);
  if (!ws.info().timestamp_query) {
    Fail("NotImplementedError", "webgpu(0) (", ws.info().name,
         ") has no timestamp queries (the adapter lacks WGPUFeatureName_TimestampQuery), so its "
         "events carry no device time; modrt does not substitute host time");
  }
  if (s->readback == nullptr || e->readback == nullptr) {
    Fail("ValueError", "webgpu: elapsed_ms needs two events recorded with timing");
  }
  EventSynchronize(device_id, start);
  EventSynchronize(device_id, end);
  const double ns_per_tick = ws.api().wgpuQueueGetTimestampPeriod(ws.queue());
  const double ticks =
      static_cast<double>(ReadTicks(ws, *e)) - static_cast<double>(ReadTicks(ws, *s));
  return ticks * ns_per_tick / 1e6;
}

void Queue::EventDestroy(int, void* event) { std::unique_ptr<Event> owned(AsEvent(event)); }

}  // namespace webgpu
}  // namespace modrt
