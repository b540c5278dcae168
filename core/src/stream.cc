// Streams (stream.h): a stream's queue of launches, its worker thread, its
// waits and its latched errors, whatever its execution mode (stream_mode.h,
// one stream_mode_*.cc each). The rest of the device layer is in
// stream_launch.cc (the current stream, launches), stream_api.cc (the
// registry functions of streams, events and waits), stream_copies.cc,
// stream_graphs.cc and stream_pinned.cc.
#include "stream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "internal.h"

namespace modrt {

namespace {

// In-flight limits per stream: launching faster than the device runs blocks
// the launcher instead of growing memory (MODRT_MAX_IN_FLIGHT launches,
// MODRT_MAX_IN_FLIGHT_BYTES bytes of buffers that pending launches use).
size_t EnvSize(const char* name, size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  return end != nullptr && *end == '\0' && v > 0 ? static_cast<size_t>(v) : fallback;
}
size_t MaxInFlight() {
  static const size_t n = EnvSize("MODRT_MAX_IN_FLIGHT", 1024);
  return n;
}
size_t MaxInFlightBytes() {
  static const size_t n = EnvSize("MODRT_MAX_IN_FLIGHT_BYTES", size_t{4} << 30);
  return n;
}

constexpr int kEpochTypes = 64, kEpochIds = 16;
DeviceEpochs epochs[kEpochTypes][kEpochIds];

}  // namespace

DeviceEpochs* EpochsOf(DLDevice d) {
  if (d.device_type < 0 || d.device_type >= kEpochTypes || d.device_id < 0 ||
      d.device_id >= kEpochIds) {
    return nullptr;
  }
  return &epochs[d.device_type][d.device_id];
}

bool StreamMode::WaitInDriver(double) {
  Fail("RuntimeError", DeviceName(device_), ": this kind of stream has no timed wait of its own");
}

std::string DeviceName(DLDevice d) {
  const char* kind = DeviceKindName(d.device_type);
  return StrCat(kind ? kind : "device", "(", d.device_id, ")");
}

void CheckNative(int status) {
  if (status != 0) ThrowLastError();
}

uint64_t DeviceLaunched(DLDevice device) {
  DeviceEpochs* e = EpochsOf(device);
  return e ? e->launched.load() : UINT64_MAX;
}

uint64_t DeviceCompleted(DLDevice device) {
  DeviceEpochs* e = EpochsOf(device);
  if (e == nullptr) return 0;
  if (!e->native.load()) return e->completed.load();
  // Read first: a launch counted after this is not claimed complete.
  uint64_t done = e->launched.load();
  for (const auto& s : StreamsOf(device)) {
    const uint64_t first = s->FirstPendingEpoch();
    if (first != UINT64_MAX) done = std::min(done, first - 1);
  }
  return done;
}

// ---------------------------------------------------------------------------

namespace {

// The device's execution mode: cpu runs on the host, a backend with the
// stream extension on its own queues, any other on its one queue.
std::unique_ptr<StreamMode> ModeFor(DLDevice device, DeviceAPI* api, bool is_default,
                                    const uint64_t* external) {
  const DeviceLayerTables& layer = api->layer();
  if (device.device_type != kDLCPU && layer.queues != nullptr) {
    return std::make_unique<NativeQueue>(device, &layer, is_default, external);
  }
  if (external != nullptr) {
    Fail("ValueError", DeviceName(device),
         " cannot adopt another library's stream: its backend has no native streams");
  }
  if (device.device_type == kDLCPU) return HostWorkerMode(device);
  return EmulatedQueueMode(device, api);
}

}  // namespace

StreamState::StreamState(DLDevice device, DeviceAPI* api, bool is_default, const uint64_t* external)
    : device_(device), is_default_(is_default), mode_(ModeFor(device, api, is_default, external)) {}

// Streams whose timed_out_ is set: while none is, DeviceMayBeStuck answers
// without a lock (it runs at every first launch of a fetched function).
static std::atomic<int> timed_out_streams{0};

bool AnyStreamTimedOut() { return timed_out_streams.load(std::memory_order_relaxed) != 0; }

// Reached once the worker drained the queue (Close asked it to); the mode
// then releases its queue.
StreamState::~StreamState() {
  if (timed_out_) timed_out_streams.fetch_sub(1);
}

StreamObj::StreamObj(std::shared_ptr<StreamState> state) : state_(std::move(state)) {
  state_->Open();
}

StreamObj::~StreamObj() { state_->Close(); }

void StreamState::Open() {
  std::lock_guard lock(mu_);
  ++handles_;
}

void StreamState::Close() {
  if (is_default_) return;
  std::unique_lock lock(mu_);
  if (--handles_ > 0) return;
  // The worker (which holds this state) waits for the queue's work first.
  if (mode_->syncs_before_close() && error_kind_.empty()) RequestSync(lock);
  closing_ = true;
  changed_.notify_all();
}

uint64_t StreamState::submitted() const {
  std::lock_guard lock(mu_);
  return submitted_;
}

void StreamState::Push(Item item, std::unique_lock<std::mutex>&) {
  queue_.push_back(std::move(item));
  if (!worker_started_) {
    worker_started_ = true;
    // The thread keeps the state alive; it ends once the stream object is
    // gone and its queue is empty. Detached: a worker stuck in a kernel that
    // never ends must not keep the process from exiting.
    std::thread([self = shared_from_this()] { self->RunWorker(); }).detach();
  }
  changed_.notify_all();
}

void StreamState::WaitForRoom(size_t bytes, std::unique_lock<std::mutex>& lock) {
  auto full = [&] {
    return !pending_.empty() &&
           (pending_.size() >= MaxInFlight() || pending_bytes_ + bytes > MaxInFlightBytes()) &&
           error_kind_.empty();  // a latched error is raised at the next wait
  };
  // A launch with room returns at once; one that has to wait lets the
  // caller's lock (the GIL) go while it waits, and never holds mu_ while
  // taking it back. It waits in slices: between them Ctrl-C ends the wait
  // (KeyboardInterrupt, nothing launched), and MODRT_WAIT_TIMEOUT bounds it.
  if (!full()) return;  // room: no clock read, no wait
  const double limit = DefaultWaitTimeout();
  const auto start = std::chrono::steady_clock::now();
  while (full()) {
    lock.unlock();
    {
      WaitRegion region;
      lock.lock();
      if (full()) {
        RequestSync(lock);
        changed_.wait_until(lock, StreamClock::now() + std::chrono::milliseconds(50),
                            [&] { return !full(); });
      }
      lock.unlock();
    }
    const bool interrupted = InterruptRequested();
    lock.lock();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (full() && (interrupted || (limit >= 0 && waited >= limit))) {
      const std::string what =
          StrCat("room for a launch on ", DeviceName(device_),
                 " (MODRT_MAX_IN_FLIGHT, MODRT_MAX_IN_FLIGHT_BYTES): ", pending_.size(),
                 " launches pending: ", PendingLocked(submitted_));
      if (interrupted) Fail("KeyboardInterrupt", "interrupted while waiting for ", what);
      Fail("TimeoutError", "timed out after ", limit, " s (MODRT_WAIT_TIMEOUT) waiting for ", what);
    }
  }
}

void StreamState::Throttle(size_t bytes) {
  std::unique_lock lock(mu_);
  WaitForRoom(bytes, lock);
}

void StreamState::NoteLaunch(LaunchRecord record, size_t bytes, std::shared_ptr<void> hold) {
  std::unique_lock lock(mu_);
  ++submitted_;
  uint64_t epoch = 0;
  if (DeviceEpochs* e = EpochsOf(device_)) epoch = e->launched.fetch_add(1) + 1;
  pending_.push_back(Pending{submitted_, std::move(record), bytes, epoch, std::move(hold)});
  pending_bytes_ += bytes;
}

uint64_t StreamState::FirstPendingEpoch() const {
  std::lock_guard lock(mu_);
  return pending_.empty() ? UINT64_MAX : pending_.front().epoch;
}

std::shared_ptr<NativeEvent> StreamState::RecordNativeEvent(uint64_t* seq) {
  std::unique_lock lock(mu_);
  std::shared_ptr<NativeEvent> event = mode_->native()->RecordEvent();
  *seq = submitted_;
  return event;
}

void StreamState::Enqueue(LaunchRecord record, size_t bytes, std::function<void()> work) {
  std::unique_lock lock(mu_);
  WaitForRoom(bytes, lock);
  const uint64_t seq = ++submitted_;
  pending_.push_back(Pending{seq, std::move(record), bytes});
  pending_bytes_ += bytes;
  Push(Item{ItemKind::kKernel, seq, std::move(work), nullptr, 0}, lock);
}

uint64_t StreamState::RecordMarker(std::shared_ptr<std::atomic<double>>* time) {
  std::unique_lock lock(mu_);
  if (!host_executes()) return submitted_;  // complete when the launches before it are
  const uint64_t seq = ++submitted_;
  Item marker{ItemKind::kMarker, seq, nullptr, nullptr, 0};
  if (time != nullptr) {
    // The event holds the cell: its time is kept as long as the event is.
    marker.time = std::make_shared<std::atomic<double>>(std::nan(""));
    *time = marker.time;
  }
  Push(std::move(marker), lock);
  return seq;
}

bool StreamState::set_capture(GraphObj* graph) {
  std::lock_guard lock(capture_mu_);
  if (graph == nullptr) {
    capture_.store(nullptr, std::memory_order_release);
    capture_thread_.store(std::thread::id(), std::memory_order_release);
    return true;
  }
  if (capture_.load() != nullptr) return false;
  capture_thread_.store(std::this_thread::get_id(), std::memory_order_release);
  capture_.store(graph, std::memory_order_release);
  return true;
}

void StreamState::RefuseCaptureElsewhere(const std::string& what) const {
  Fail("RuntimeError", what, ": ", is_default_ ? "the default stream" : "the stream", " of ",
       DeviceName(device_),
       " is capturing a graph in another thread (Stream.capture()), which records only its own "
       "launches; from this thread it would never run. Launch on another stream, or capture on a "
       "stream of its own (modrt.Stream(device))");
}

void StreamState::EnqueueWaitFor(std::shared_ptr<StreamState> other, uint64_t seq) {
  std::unique_lock lock(mu_);
  const uint64_t own = ++submitted_;
  Push(Item{ItemKind::kWaitFor, own, nullptr, std::move(other), seq}, lock);
}

void StreamState::RequestSync(std::unique_lock<std::mutex>& lock,
                              const std::shared_ptr<NativeEvent>& event, uint64_t seq) {
  if (mode_->runs_launches()) return;  // the worker completes each launch as it runs it
  if (event != nullptr) {
    if (sync_requested_ >= seq || completed_ >= seq) return;
    sync_requested_ = seq;
    Push(Item{ItemKind::kEventSync, seq, nullptr, nullptr, 0, 0, event}, lock);
    return;
  }
  if (sync_requested_ >= submitted_ || completed_ >= submitted_) return;
  sync_requested_ = submitted_;
  Push(Item{ItemKind::kSync, submitted_, nullptr, nullptr, 0, DeviceLaunched(device_)}, lock);
}

void StreamState::Complete(uint64_t seq, std::unique_lock<std::mutex>&) {
  completed_ = std::max(completed_, seq);
  while (!pending_.empty() && pending_.front().seq <= completed_) {
    pending_bytes_ -= pending_.front().bytes;
    pending_.pop_front();
  }
  changed_.notify_all();
}

void StreamState::RunWorker() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return !queue_.empty() || closing_; });
    if (queue_.empty()) {
      worker_started_ = false;
      return;
    }
    Item item = std::move(queue_.front());
    queue_.pop_front();
    const bool skip = item.kind == ItemKind::kKernel && !error_kind_.empty();
    if (skip) {  // an earlier launch failed: later ones do not run
      Complete(item.seq, lock);
      continue;
    }
    lock.unlock();
    std::string kind, message;
    try {
      switch (item.kind) {
        case ItemKind::kKernel: item.work(); break;
        case ItemKind::kSync: mode_->Synchronize(item.device_epoch); break;
        case ItemKind::kEventSync: item.event->Synchronize(); break;
        case ItemKind::kMarker: break;
        case ItemKind::kWaitFor:
          while (!item.other->Wait(item.other_seq, 3600.0, -1.0)) {
          }
          break;
      }
    } catch (const Error& e) {
      kind = e.kind();
      message = e.what();
    } catch (const std::exception& e) {
      kind = "RuntimeError";
      message = e.what();
    }
    const double now =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    item.work = nullptr;  // releases what a host launch held, outside the lock
    lock.lock();
    if (item.time != nullptr) item.time->store(now);
    if (!kind.empty()) {
      // Described now, on failure only: the pending launches up to item.seq
      // stay listed until Complete below.
      if (item.kind == ItemKind::kKernel) {
        Latch(kind, StrCat("kernel ", PendingLocked(item.seq, item.seq), " on ",
                           DeviceName(device_), " failed: ", message));
      } else {
        LatchSyncFailure(item.seq, kind, message);
      }
    }
    Complete(item.seq, lock);
  }
}

void StreamState::Latch(const std::string& kind, std::string message) {
  if (!error_kind_.empty()) return;  // the first error is the one raised
  error_kind_ = kind;
  error_message_ = std::move(message);
}

void StreamState::LatchSyncFailure(uint64_t upto, const std::string& kind,
                                   const std::string& message) {
  Latch(kind, StrCat("a launch on ", DeviceName(device_), " failed (pending: ", PendingLocked(upto),
                     "): ", message));
}

std::string StreamState::PendingLocked(uint64_t upto, uint64_t from) const {
  std::string s;
  size_t n = 0, shown = 0;
  for (const Pending& p : pending_) {
    if (p.seq < from) continue;
    if (p.seq > upto) break;
    ++n;
    if (shown < 5) {
      s += (shown++ ? ", " : "") + p.record.Describe();
    }
  }
  if (n > shown) s += StrCat(" and ", n - shown, " more");
  return s;
}

std::string StreamState::PendingSummary() {
  std::lock_guard lock(mu_);
  if (pending_.empty()) return "";
  return StrCat(pending_.size(), " launch", pending_.size() == 1 ? "" : "es", " pending on ",
                DeviceName(device_), ": ", PendingLocked(submitted_));
}

bool StreamState::TimedOutWithWorkPending() {
  std::lock_guard lock(mu_);
  if (timed_out_ && completed_ >= submitted_) {
    timed_out_ = false;
    timed_out_streams.fetch_sub(1);
  }
  return timed_out_;
}

void StreamState::RaiseLatched(std::unique_lock<std::mutex>&) {
  if (error_kind_.empty()) return;
  std::string kind = std::exchange(error_kind_, "");
  std::string message = std::exchange(error_message_, "");
  throw Error(kind, message);
}

bool StreamState::Query(uint64_t seq, const std::shared_ptr<NativeEvent>& event) {
  std::unique_lock lock(mu_);
  RaiseLatched(lock);
  if (completed_ >= seq) return true;
  if (event != nullptr) {
    if (!event->Done()) return false;
    Complete(seq, lock);
    return true;
  }
  RequestSync(lock);
  return false;
}

bool StreamState::Wait(uint64_t seq, double slice_s, double raise_after_s,
                       const std::shared_ptr<NativeEvent>& event) {
  std::unique_lock lock(mu_);
  auto done = [&] { return completed_ >= seq || !error_kind_.empty(); };
  if (!done() && event == nullptr && mode_->waits_in_driver()) {
    WaitInDriver(std::max(0.0, slice_s), lock);
  } else if (!done()) {
    RequestSync(lock, event, seq);
    const auto deadline =
        StreamClock::now() + std::chrono::duration_cast<StreamClock::duration>(
                                 std::chrono::duration<double>(std::max(0.0, slice_s)));
    // The wait lets the caller's lock (the GIL) go; mu_ is not held while
    // it is taken back.
    lock.unlock();
    {
      WaitRegion region;
      lock.lock();
      changed_.wait_until(lock, deadline, done);
      lock.unlock();
    }
    lock.lock();
  }
  RaiseLatched(lock);
  if (completed_ >= seq) return true;
  if (raise_after_s >= 0) {
    if (!std::exchange(timed_out_, true)) timed_out_streams.fetch_add(1);
    Fail("TimeoutError", "timed out after ", raise_after_s, " s waiting for ", DeviceName(device_),
         ": ", pending_.size(), " launch", pending_.size() == 1 ? "" : "es",
         " pending: ", PendingLocked(seq));
  }
  return false;
}

void StreamState::WaitUntilComplete(uint64_t seq, const std::shared_ptr<NativeEvent>& event) {
  constexpr double kSlice = 0.05;
  const double limit = DefaultWaitTimeout();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool last = limit >= 0 && waited + kSlice >= limit;
    if (Wait(seq, last ? std::max(0.0, limit - waited) : kSlice, last ? limit : -1.0, event)) {
      return;
    }
    if (InterruptRequested()) {
      const std::string pending = PendingSummary();
      Fail("KeyboardInterrupt", "interrupted while waiting for ",
           pending.empty() ? DeviceName(device_) : pending);
    }
  }
}

void StreamState::WaitInDriver(double timeout_s, std::unique_lock<std::mutex>& lock) {
  const uint64_t upto = submitted_;
  lock.unlock();
  bool finished = false;
  std::string kind, message;
  {
    WaitRegion region;  // the GIL goes while the driver waits
    try {
      finished = mode_->WaitInDriver(timeout_s);
    } catch (const Error& e) {
      kind = e.kind();
      message = e.what();
    }
  }
  lock.lock();
  if (!kind.empty()) {
    LatchSyncFailure(upto, kind, message);
    finished = true;
  }
  if (finished) Complete(upto, lock);
}

}  // namespace modrt
