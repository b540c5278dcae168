// Streams, events and recorded launches (graphs): the core's device layer
// (docs/C_ABI.md, "The device layer"). Core-internal.
//
// A stream is an ordered sequence of launches on one device. Launches are
// numbered (seq); a stream knows which numbers are complete. How a launch
// runs depends on the device, one execution mode each (stream_mode.h):
// - cpu: the launch is queued and runs on the stream's worker thread, so a cpu
//   launch is asynchronous like a device's;
// - a backend device: the plugin's launch runs on the caller's thread and
//   submits to the backend's own in-order queue; the core records it as
//   pending and learns that it completed from a device sync that the stream's
//   worker thread runs. The worker makes every wait boundable: a caller waits
//   on a condition variable with a deadline, never inside the driver.
// - a backend device whose device API has the stream extension (plugin_api.h,
//   ModrtStreamExtension): the stream is one of the backend's own queues
//   (stream_create; the device's default stream is the plugin's default
//   queue, NULL). Launches and async copies are submitted there on the
//   caller's thread (the launch's arguments name the queue), events are
//   the backend's (event_record, with device timestamps), and the worker
//   thread runs the blocking stream_synchronize / event_synchronize.
// A failure on the worker (a host kernel's error, a failed device sync)
// latches on the stream and is raised by its next wait, naming the launches.
//
// Files: stream.cc (StreamState), stream_mode*.cc (the modes, the backend's
// events and graphs), stream_launch.cc (current streams, the
// registry, launches), stream_api.cc (streams, events, waits: registry
// functions), stream_copies.cc, stream_graphs.cc, stream_pinned.cc.
#ifndef MODRT_CORE_SRC_STREAM_H_
#define MODRT_CORE_SRC_STREAM_H_

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "internal.h"
#include "modrt/core/device.h"
#include "modrt/core/function.h"
#include "modrt/core/payload.h"
#include "stream_mode.h"

namespace modrt {

// Object types of the device layer: core-internal, never seen by a plugin.
constexpr int32_t kModrtObjStream = 16;
constexpr int32_t kModrtObjEvent = 17;
constexpr int32_t kModrtObjGraph = 18;

// What a launch was, for messages: "vadd (grid [4, 1, 1], block [64, 1, 1])".
struct LaunchRecord {
  std::string kernel;
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  bool is_launch = true;  // false: a copy, described by `kernel` alone
  std::string Describe() const;
};

// A launch's record from its function's description and call arguments
// (the launch parameters trail the kernel arguments, in tag order).
LaunchRecord RecordOf(const FunctionInfo& info, const Args& args);

class StreamState;
class GraphObj;

class StreamObj final : public Object {
 public:
  explicit StreamObj(std::shared_ptr<StreamState> state);
  ~StreamObj() override;
  int32_t type_index() const final { return kModrtObjStream; }
  StreamState& state() const { return *state_; }
  const std::shared_ptr<StreamState>& shared() const { return state_; }

 private:
  std::shared_ptr<StreamState> state_;
};

class StreamState : public std::enable_shared_from_this<StreamState> {
 public:
  // With `external`, the native queue is adopted (stream_adopt): another
  // library's queue, which modrt never destroys.
  StreamState(DLDevice device, DeviceAPI* api, bool is_default, const uint64_t* external = nullptr);
  ~StreamState();
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  DLDevice device() const { return device_; }
  bool is_default() const { return is_default_; }
  // How the stream's launches execute.
  const StreamMode& mode() const { return *mode_; }
  // cpu: launches run on the worker. Elsewhere they run on the caller's thread.
  bool host_executes() const { return mode_->runs_launches(); }
  // The backend's own queue this stream is (native queue mode), or null:
  // every call of the backend's queue and graph tables goes through it.
  const NativeQueue* native() const { return mode_->native(); }
  // This stream's native queue (NULL: the plugin's default queue).
  void* native_stream() const { return mode_->queue(); }
  // The native queue is another library's (Stream.from_external).
  bool adopted() const { return mode_->adopted(); }

  // A backend launch about to be submitted on the caller's thread: blocks
  // while the stream is at its in-flight limit (count and bytes). Then the
  // launch runs, and NoteLaunch records it as pending.
  void Throttle(size_t bytes);
  // `hold` lives until the launch is known complete (host memory an async
  // copy reads or writes, a native graph being replayed).
  void NoteLaunch(LaunchRecord record, size_t bytes, std::shared_ptr<void> hold = nullptr);
  // A cpu launch: queued to run `work` on the worker, in order.
  void Enqueue(LaunchRecord record, size_t bytes, std::function<void()> work);
  // A marker: its seq. On cpu, `time` (when given) is set to a cell the
  // worker fills with the time it reached the marker (NaN until then).
  uint64_t RecordMarker(std::shared_ptr<std::atomic<double>>* time = nullptr);
  // Native streams: a backend event (with device timing) after everything
  // submitted so far; *seq = the launches it covers.
  std::shared_ptr<NativeEvent> RecordNativeEvent(uint64_t* seq);
  // Queues a wait for `other`'s launch `seq` (the worker blocks on it).
  void EnqueueWaitFor(std::shared_ptr<StreamState> other, uint64_t seq);

  // The seq of the latest launch or marker.
  uint64_t submitted() const;
  // True when launch `seq` is complete; asks the worker for a device sync when
  // that is what would tell. Raises a latched error.
  // With a native event: asks the backend (event_query) instead.
  bool Query(uint64_t seq, const std::shared_ptr<NativeEvent>& event = nullptr);
  // Waits up to `slice_s` for `seq`: true when complete. Raises a latched
  // error; with raise_after_s >= 0, a TimeoutError naming the pending launches
  // (and the total time waited, raise_after_s) when not complete. With a
  // native event, the worker waits for the event rather than the stream.
  bool Wait(uint64_t seq, double slice_s, double raise_after_s,
            const std::shared_ptr<NativeEvent>& event = nullptr);
  // Waits for `seq` from a call that has no timeout of its own (a copy, a
  // checked launch, a host launch, a cross-device event): in slices, ending
  // with KeyboardInterrupt when the caller asks (CheckInterrupt: Ctrl-C) and
  // with TimeoutError naming the pending launches after MODRT_WAIT_TIMEOUT
  // seconds when that is set. Not for the stream workers' own waits.
  void WaitUntilComplete(uint64_t seq, const std::shared_ptr<NativeEvent>& event = nullptr);
  // Native streams: device launches of this stream not known complete start
  // after this device launch number (DeviceLaunched); UINT64_MAX when none.
  uint64_t FirstPendingEpoch() const;
  bool has_device_time() const { return mode_->has_device_time(); }

  // Descriptions of pending launches ("" when none).
  std::string PendingSummary();
  // A wait on this stream raised TimeoutError and launches it waited for are
  // still pending: the device may be stuck in one (a kernel that never ends).
  bool TimedOutWithWorkPending();

  // Recording: while a graph captures, the capturing thread's launches are
  // recorded, not run; another thread's launch on the stream is refused
  // (RefuseCaptureElsewhere), never recorded into a graph it did not make.
  GraphObj* capture() const { return capture_.load(std::memory_order_acquire); }
  // Starts a capture into `graph` by this thread (false: one is under way),
  // or ends the capture (nullptr).
  bool set_capture(GraphObj* graph);
  // True when this thread started the capture under way.
  bool captured_here() const {
    return capture_thread_.load(std::memory_order_acquire) == std::this_thread::get_id();
  }
  // RuntimeError for `what` (a launch of a kernel, an event) on this stream
  // while another thread captures on it.
  [[noreturn]] void RefuseCaptureElsewhere(const std::string& what) const;

  // The worker thread, once started, holds a reference to the state: a stream
  // dropped with work queued finishes it. Each StreamObj handle opens it
  // once; the last Close lets the worker end.
  void Open();
  void Close();

 private:
  enum class ItemKind { kKernel, kSync, kEventSync, kMarker, kWaitFor };
  struct Item {
    ItemKind kind;
    uint64_t seq;  // kernel/marker: its own; sync: the last seq it covers
    std::function<void()> work;
    std::shared_ptr<StreamState> other;  // kWaitFor
    uint64_t other_seq = 0;
    uint64_t device_epoch = 0;                     // kSync: DeviceLaunched() when it was queued
    std::shared_ptr<NativeEvent> event = nullptr;  // kEventSync
    std::shared_ptr<std::atomic<double>> time = nullptr;  // kMarker: when the worker reached it
  };
  struct Pending {
    uint64_t seq;
    LaunchRecord record;
    size_t bytes;
    uint64_t epoch = 0;  // native: its DeviceLaunched() number
    std::shared_ptr<void> hold = nullptr;
  };

  void Push(Item item, std::unique_lock<std::mutex>& lock);
  // Queues a device sync (native: of this stream, or of `event`, which covers
  // `seq`); none where the worker runs the launches.
  void RequestSync(std::unique_lock<std::mutex>& lock,
                   const std::shared_ptr<NativeEvent>& event = nullptr, uint64_t seq = 0);
  void Complete(uint64_t seq, std::unique_lock<std::mutex>& lock);
  void RunWorker();
  // Descriptions of the pending launches with seq in [from, upto].
  std::string PendingLocked(uint64_t upto, uint64_t from = 0) const;
  // Latches an asynchronous failure (the first one) for the next wait to raise.
  void Latch(const std::string& kind, std::string message);
  // A failed wait for the launches up to `upto`, naming them.
  void LatchSyncFailure(uint64_t upto, const std::string& kind, const std::string& message);
  // The backend's timed wait (stream_wait_for) for everything submitted,
  // made on this thread: no hand-off to the worker and back.
  void WaitInDriver(double timeout_s, std::unique_lock<std::mutex>& lock);
  void RaiseLatched(std::unique_lock<std::mutex>& lock);
  void WaitForRoom(size_t bytes, std::unique_lock<std::mutex>& lock);

  const DLDevice device_;
  const bool is_default_;
  const std::unique_ptr<StreamMode> mode_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Item> queue_;
  std::deque<Pending> pending_;
  size_t pending_bytes_ = 0;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  uint64_t sync_requested_ = 0;  // the highest seq a queued device sync covers
  bool worker_started_ = false;
  bool closing_ = false;
  int handles_ = 0;         // live StreamObj handles
  bool timed_out_ = false;  // a wait raised TimeoutError (TimedOutWithWorkPending)
  std::string error_kind_;  // latched; empty when none
  std::string error_message_;
  std::mutex capture_mu_;  // serializes starting and ending captures
  std::atomic<GraphObj*> capture_{nullptr};
  std::atomic<std::thread::id> capture_thread_{};
};

class EventObj final : public Object {
 public:
  EventObj(std::shared_ptr<StreamState> stream, uint64_t seq,
           std::shared_ptr<NativeEvent> native = nullptr,
           std::shared_ptr<std::atomic<double>> time = nullptr)
      : stream_(std::move(stream)), seq_(seq), native_(std::move(native)), time_(std::move(time)) {}
  int32_t type_index() const final { return kModrtObjEvent; }
  StreamState& stream() const { return *stream_; }
  const std::shared_ptr<StreamState>& shared_stream() const { return stream_; }
  uint64_t seq() const { return seq_; }
  // The backend's event, on a native stream.
  const std::shared_ptr<NativeEvent>& native() const { return native_; }
  // A cpu event: seconds on the worker's clock when it was reached (NaN
  // before, and for an event of another kind of stream).
  double host_time() const { return time_ ? time_->load() : std::nan(""); }

 private:
  std::shared_ptr<StreamState> stream_;
  uint64_t seq_;
  std::shared_ptr<NativeEvent> native_;
  std::shared_ptr<std::atomic<double>> time_;
};

// A recorded sequence of launches: each the launching function and its
// arguments (objects retained), replayed in order on a stream. Captured on a
// native stream of a backend with the graph extension, the launches are also
// recorded by the backend (graph_begin/graph_end): a replay launches that
// graph (graph_launch), re-recorded first (graph_update) when it rebinds
// buffers differently from the last; a backend without graph_update replays
// the list for rebound buffers.
class GraphObj final : public Object {
 public:
  explicit GraphObj(DLDevice device) : device_(device) {}
  ~GraphObj() override;
  int32_t type_index() const final { return kModrtObjGraph; }
  DLDevice device() const { return device_; }
  size_t size() const { return launches_.size(); }
  void Record(const FunctionObj* function, const FunctionInfo* info, const Args& args);
  // Native capture: started by BeginNative on `stream`; while it runs, the
  // launches recorded here also reach the plugin, which records them.
  void BeginNative(StreamState& stream);
  bool capturing_natively() const { return native_capture_ != nullptr; }
  // A launch failed while capturing natively (`why`): the native graph is dropped.
  void AbandonNative(std::string why) {
    native_failed_ = true;
    why_not_native_ = std::move(why);
  }
  void EndNative();
  bool native() const { return native_graph_ != nullptr; }
  // Why the backend did not record this graph ("" when it did).
  const std::string& why_not_native() const { return why_not_native_; }
  // Replays every launch on `stream`; `bindings` (captured tensor, its
  // replacement) pairs rebind buffers for this replay, all at once (one
  // simultaneous substitution: a swap {x: z, z: x} swaps).
  using Bindings = std::vector<std::pair<Object*, Object*>>;
  // A new value for one scalar a captured launch took: the value the caller
  // passed at index `position` of launch `launch` (0-based, in capture
  // order), a scalar argument or a launch parameter. A number, never an object.
  struct ScalarBinding {
    size_t launch;
    int32_t position;
    ModrtValue value;
  };
  using Scalars = std::vector<ScalarBinding>;
  // The index of the value named `key` among those launch `launch` was called
  // with: an index (an int) or the name of a scalar argument in the
  // function's signature or of a launch parameter ("blockIdx.x"). IndexError
  // or KeyError naming the launch and the key; TypeError for a tensor argument.
  int32_t ScalarPosition(size_t launch, const ModrtValue& key) const;
  // `scalars` give new values to scalars of the captured launches for this
  // replay (each checked as its launch checks it, before anything runs; the
  // captured launches keep theirs).
  void Replay(const std::shared_ptr<StreamState>& stream, const Bindings& bindings,
              Scalars scalars = {});

 private:
  // Whether a launch of the graph takes `tensor` as an argument.
  bool Captured(const Object* tensor) const;
  // Refuses bindings for a tensor no launch took, a tensor bound twice, and
  // a replacement of another shape, dtype or device (ValueError naming them).
  void CheckBindings(const Bindings& bindings) const;
  // Refuses a scalar bound twice and a value its launch would refuse; drops
  // values equal to the captured ones and sorts the rest by launch and position.
  void CheckScalars(Scalars* scalars) const;
  // Whether the native graph was last recorded with `bindings` and `scalars`
  // (as CheckScalars left them).
  bool SameBindings(const Bindings& bindings, const Scalars& scalars) const;
  // Records the list with `bindings` and `scalars` into the native graph
  // (graph_update); false when the backend cannot (nothing ran then).
  bool Rerecord(const std::shared_ptr<StreamState>& stream, const Bindings& bindings,
                const Scalars& scalars);
  // Runs the list, launch by launch, on `stream`; with `check`, the guards
  // of a checked launch's tensors after it (checked mode).
  void RunList(const std::shared_ptr<StreamState>& stream, const Bindings& bindings,
               const Scalars& scalars, bool check = false);

  struct Launch {
    Ref<FunctionObj> function;
    const FunctionInfo* info;      // kept alive by `function`
    std::vector<ModrtValue> args;  // objects retained
    bool checked = false;          // made by a function fetched in checked mode
  };
  DLDevice device_;
  std::vector<Launch> launches_;
  StreamState* native_capture_ = nullptr;  // the stream capturing natively
  bool native_failed_ = false;
  bool rerecording_ = false;  // Rerecord runs: launches are not added to the list
  std::shared_ptr<NativeGraph> native_graph_;
  std::string why_not_native_;
  // The bindings the native graph was last recorded with (none: as captured).
  std::vector<std::pair<Ref<Object>, Ref<Object>>> native_bindings_;
  Scalars native_scalars_;  // and scalars (none: as captured)
};

// The stream a launch on `device` goes to: this thread's current stream when
// it is on `device`, else the device's default stream.
StreamState& StreamFor(DLDevice device);
// The device's default stream (made on first use).
const std::shared_ptr<StreamState>& DefaultStream(DLDevice device);
// The native queue a launch on `device` from this thread goes to now
// (core->current_stream): this thread's current stream's, when it is on
// `device`, else NULL (the default stream is the plugin's default queue).
void* CurrentNativeStream(DLDevice device);
// Every live stream of `device`.
std::vector<std::shared_ptr<StreamState>> StreamsOf(DLDevice device);
// A wait on a stream of `device` (of any device, for AnyDeviceMayBeStuck)
// timed out and its launches are still pending. Drivers wait inside some
// calls for the device's queued work (a pipeline built at a first launch, a
// module destroyed), where nothing ends the wait: after a timeout the core
// waits first (interruptibly) or hands the call to another thread.
bool DeviceMayBeStuck(DLDevice device);
bool AnyDeviceMayBeStuck();
// False while no stream has a timed-out wait (no lock taken).
bool AnyStreamTimedOut();

// Wraps a backend's launching function: each call goes to the stream the
// launch belongs to (recorded there while a graph captures), then runs
// `inner` on the caller's thread and records the launch as pending. The
// device is the buffers' (or device `device_type`'s first when none).
Ref<FunctionObj> StreamedLaunch(Ref<FunctionObj> inner, const FunctionInfo* info,
                                DLDeviceType device_type, Ref<Object> keep_alive);

// A cpu launch through the stream: `prepare` checks and packs the arguments
// on the caller's thread and returns the work the worker runs.
using HostLaunchPrepare = std::function<std::function<void()>(const Args& args)>;
Ref<FunctionObj> HostStreamedLaunch(HostLaunchPrepare prepare, const FunctionInfo* info);

// Launches submitted to a backend device, and those known complete (a
// device sync ran after them), across its streams: the pool reuses a freed
// block once the launches that may use it are complete. For device ids past
// the counters' range, Launched() is never reached by Completed().
uint64_t DeviceLaunched(DLDevice device);
uint64_t DeviceCompleted(DLDevice device);

// The bytes of the tensors among a call's arguments.
size_t TensorArgBytes(const Args& args);

// --- shared by the stream*.cc files ---

// Deadlines of condition-variable waits are on the system clock: libstdc++
// waits on it with pthread_cond_timedwait, which glibc 2.28 has (the
// steady clock's pthread_cond_clockwait came in 2.30; the wheels are
// manylinux_2_28). Short slices keep a clock step from mattering.
using StreamClock = std::chrono::system_clock;

std::string DeviceName(DLDevice d);
inline bool SameDevice(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}
// A plugin call of the stream or graph extension failed: rethrow its error.
void CheckNative(int status);
// This thread's current stream (`with modrt.stream(s)`), or null.
std::shared_ptr<StreamState>& CurrentStreamSlot();
// A new stream of `device`, registered (StreamsOf); `external`: adopted.
std::shared_ptr<StreamState> NewStream(DLDevice device, bool is_default,
                                       const uint64_t* external = nullptr);
// Every live stream in the process.
std::vector<std::shared_ptr<StreamState>> AllStreams();
// How the stream runs its launches, in words (Stream.implementation).
std::string Implementation(const StreamState& s);
// Registry-function arguments and results.
StreamObj* StreamArg(const Args& a, int32_t i);
Ref<Object> StreamHandle(std::shared_ptr<StreamState> state);
// stream_pinned.cc: what keeps the pinned host memory holding bytes
// [ptr, ptr + nbytes) alive for a copy on `device` that reads or writes it in
// place, or null when that memory is not pinned memory of `device`'s backend.
std::shared_ptr<void> PinnedBlockFor(DLDevice device, const void* ptr, size_t nbytes);

}  // namespace modrt

#endif  // MODRT_CORE_SRC_STREAM_H_
