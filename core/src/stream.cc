// Streams, events and graphs (stream.h), and their registry functions.
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

// Deadlines of condition-variable waits are on the system clock: libstdc++
// waits on it with pthread_cond_timedwait, which glibc 2.28 has (the
// steady clock's pthread_cond_clockwait came in 2.30; the wheels are
// manylinux_2_28). Short slices keep a clock step from mattering.
using Clock = std::chrono::system_clock;

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

std::string DeviceName(DLDevice d) {
  const char* kind = DeviceKindName(d.device_type);
  return StrCat(kind ? kind : "device", "(", d.device_id, ")");
}

bool SameDevice(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

std::string Dims(const int64_t* v) { return StrCat("[", v[0], ", ", v[1], ", ", v[2], "]"); }

struct DeviceEpochs {
  std::atomic<uint64_t> launched{0};
  std::atomic<uint64_t> completed{0};
  // Native streams complete out of order across streams: Completed() is
  // then the least over the device's streams (FirstPendingEpoch).
  std::atomic<bool> native{false};
};
constexpr int kEpochTypes = 64, kEpochIds = 16;
DeviceEpochs epochs[kEpochTypes][kEpochIds];

DeviceEpochs* EpochsOf(DLDevice d) {
  if (d.device_type < 0 || d.device_type >= kEpochTypes || d.device_id < 0 ||
      d.device_id >= kEpochIds) {
    return nullptr;
  }
  return &epochs[d.device_type][d.device_id];
}

// A plugin call of the stream or graph extension failed: rethrow its error.
void CheckNative(int status) {
  if (status != 0) ThrowLastError();
}

}  // namespace

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

std::string LaunchRecord::Describe() const {
  if (!is_launch) return kernel;
  return StrCat(kernel, " (grid ", Dims(grid), ", block ", Dims(block), ")");
}

NativeEvent::~NativeEvent() {
  // In a forked child the driver's objects are the parent's: left alone.
  if (!InForkedChild()) queues->streams->event_destroy(queues->self, device_id, handle);
}

NativeGraph::~NativeGraph() {
  if (!InForkedChild()) queues->graphs->graph_destroy(queues->self, device_id, handle);
}

LaunchRecord RecordOf(const FunctionInfo& info, const Args& args) {
  LaunchRecord r;
  r.kernel = info.name;
  const size_t first = info.args.size();
  for (size_t j = 0; j < info.launch_tags.size(); ++j) {
    const int32_t i = static_cast<int32_t>(first + j);
    if (i >= args.size() || args[i].type_code != kModrtInt) continue;
    const std::string& tag = info.launch_tags[j];
    if (tag.size() < 3) continue;
    const int axis = tag.back() - 'x';
    if (axis < 0 || axis > 2) continue;
    if (tag.rfind("blockIdx.", 0) == 0) r.grid[axis] = args[i].v_int64;
    if (tag.rfind("threadIdx.", 0) == 0) r.block[axis] = args[i].v_int64;
  }
  return r;
}

size_t TensorArgBytes(const Args& args) {
  size_t bytes = 0;
  for (int32_t i = 0; i < args.size(); ++i) {
    const ModrtValue& v = args[i];
    if (v.type_code == kModrtObject && v.v_obj != nullptr &&
        static_cast<Object*>(v.v_obj)->type_index() == kModrtObjTensor) {
      bytes += static_cast<TensorObj*>(v.v_obj)->nbytes();
    }
  }
  return bytes;
}

// ---------------------------------------------------------------------------

StreamState::StreamState(DLDevice device, DeviceAPI* api, bool is_default)
    : device_(device),
      api_(api),
      is_default_(is_default),
      native_(device.device_type == kDLCPU ? nullptr : NativeQueuesOf(api)) {
  if (native_ == nullptr) return;
  if (DeviceEpochs* e = EpochsOf(device_)) e->native.store(true);
  if (!is_default_) {
    CheckNative(native_->streams->stream_create(native_->self, device_.device_id, &native_stream_));
  }
}

StreamState::~StreamState() {
  // Reached once the worker drained the queue (Close asked it to): nothing
  // of this stream is pending on the device, unless a failure latched.
  if (native_stream_ != nullptr && !InForkedChild()) {
    native_->streams->stream_destroy(native_->self, device_.device_id, native_stream_);
  }
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
  // A native queue goes once its work is done: the worker (which holds this
  // state) waits for it first.
  if (native_ != nullptr && error_kind_.empty()) RequestSync(lock);
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
  // taking it back.
  while (full()) {
    lock.unlock();
    {
      WaitRegion region;
      lock.lock();
      while (full()) {
        if (!host_executes()) RequestSync(lock);
        if (full()) changed_.wait(lock);
      }
      lock.unlock();
    }
    lock.lock();
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
  void* handle = nullptr;
  CheckNative(native_->streams->event_record(native_->self, device_.device_id, native_stream_,
                                             /*timing=*/1, &handle));
  *seq = submitted_;
  return std::make_shared<NativeEvent>(native_, device_.device_id, handle);
}

void StreamState::Enqueue(LaunchRecord record, size_t bytes, std::function<void()> work) {
  std::unique_lock lock(mu_);
  WaitForRoom(bytes, lock);
  const uint64_t seq = ++submitted_;
  pending_.push_back(Pending{seq, std::move(record), bytes});
  pending_bytes_ += bytes;
  Push(Item{ItemKind::kKernel, seq, std::move(work), nullptr, 0}, lock);
}

uint64_t StreamState::RecordMarker() {
  std::unique_lock lock(mu_);
  if (!host_executes()) return submitted_;  // complete when the launches before it are
  const uint64_t seq = ++submitted_;
  Push(Item{ItemKind::kMarker, seq, nullptr, nullptr, 0}, lock);
  return seq;
}

void StreamState::EnqueueWaitFor(std::shared_ptr<StreamState> other, uint64_t seq) {
  std::unique_lock lock(mu_);
  const uint64_t own = ++submitted_;
  Push(Item{ItemKind::kWaitFor, own, nullptr, std::move(other), seq}, lock);
}

void StreamState::RequestSync(std::unique_lock<std::mutex>& lock,
                              const std::shared_ptr<NativeEvent>& event, uint64_t seq) {
  if (event != nullptr && native_ != nullptr) {
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
    std::string what;
    if (item.kind == ItemKind::kSync || item.kind == ItemKind::kEventSync) {
      what = PendingLocked(item.seq);
    }
    if (item.kind == ItemKind::kKernel && !pending_.empty()) {
      what = pending_.front().record.Describe();
    }
    lock.unlock();
    std::string kind, message;
    try {
      switch (item.kind) {
        case ItemKind::kKernel: item.work(); break;
        case ItemKind::kSync:
          if (native_ != nullptr) {
            CheckNative(native_->streams->stream_synchronize(native_->self, device_.device_id,
                                                             native_stream_));
          } else {
            api_->Sync(device_.device_id);
          }
          break;
        case ItemKind::kEventSync:
          CheckNative(native_->streams->event_synchronize(native_->self, device_.device_id,
                                                          item.event->handle));
          break;
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
    if (item.kind == ItemKind::kMarker) {
      marker_times_.emplace_back(item.seq, now);
      if (marker_times_.size() > 4096) marker_times_.pop_front();
    }
    if (item.kind == ItemKind::kSync && kind.empty() && native_ == nullptr) {
      if (DeviceEpochs* e = EpochsOf(device_)) {
        uint64_t seen = e->completed.load();
        while (seen < item.device_epoch &&
               !e->completed.compare_exchange_weak(seen, item.device_epoch)) {
        }
      }
    }
    if (!kind.empty() && error_kind_.empty()) {
      error_kind_ = kind;
      error_message_ =
          item.kind == ItemKind::kSync || item.kind == ItemKind::kEventSync
              ? StrCat("a launch on ", DeviceName(device_), " failed (pending: ", what,
                       "): ", message)
              : StrCat("kernel ", what, " on ", DeviceName(device_), " failed: ", message);
    }
    Complete(item.seq, lock);
  }
}

std::string StreamState::PendingLocked(uint64_t upto) const {
  std::string s;
  size_t n = 0, shown = 0;
  for (const Pending& p : pending_) {
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
  if (event != nullptr && native_ != nullptr) {
    int32_t done = 0;
    CheckNative(
        native_->streams->event_query(native_->self, device_.device_id, event->handle, &done));
    if (done == 0) return false;
    Complete(seq, lock);
    return true;
  }
  if (!host_executes()) RequestSync(lock);
  return false;
}

bool StreamState::Wait(uint64_t seq, double slice_s, double raise_after_s,
                       const std::shared_ptr<NativeEvent>& event) {
  std::unique_lock lock(mu_);
  auto done = [&] { return completed_ >= seq || !error_kind_.empty(); };
  if (!done()) {
    if (!host_executes()) RequestSync(lock, event, seq);
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
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
    Fail("TimeoutError", "timed out after ", raise_after_s, " s waiting for ", DeviceName(device_),
         ": ", pending_.size(), " launch", pending_.size() == 1 ? "" : "es",
         " pending: ", PendingLocked(seq));
  }
  return false;
}

double StreamState::MarkerTime(uint64_t seq) {
  std::lock_guard lock(mu_);
  for (const auto& [s, t] : marker_times_) {
    if (s == seq) return t;
  }
  return std::nan("");
}

// ---------------------------------------------------------------------------

GraphObj::~GraphObj() {
  for (Launch& l : launches_) {
    for (ModrtValue& v : l.args) {
      if (v.type_code == kModrtObject && v.v_obj != nullptr)
        static_cast<Object*>(v.v_obj)->DecRef();
    }
  }
}

void GraphObj::Record(const FunctionObj* function, const FunctionInfo* info, const Args& args) {
  Launch l;
  l.function = Ref<FunctionObj>(const_cast<FunctionObj*>(function));
  l.info = info;
  for (int32_t i = 0; i < args.size(); ++i) {
    ModrtValue v = args[i];
    if (v.type_code == kModrtRawStr || v.type_code == kModrtDLTensorPtr) {
      Fail("TypeError", "argument ", i, ": a recorded launch takes tensors and numbers, not a ",
           TypeCodeName(v.type_code));
    }
    if (v.type_code == kModrtObject && v.v_obj != nullptr) static_cast<Object*>(v.v_obj)->IncRef();
    l.args.push_back(v);
  }
  launches_.push_back(std::move(l));
}

void GraphObj::BeginNative(StreamState& stream) {
  const NativeQueues* q = stream.native();
  if (q == nullptr || q->graphs == nullptr) return;
  // A backend that cannot capture on this stream leaves the recording to the
  // core's list (Graph.native says which).
  if (q->graphs->graph_begin(q->self, device_.device_id, stream.native_stream()) != 0) return;
  native_capture_ = &stream;
}

void GraphObj::EndNative() {
  StreamState* stream = std::exchange(native_capture_, nullptr);
  if (stream == nullptr) return;
  const NativeQueues* q = stream->native();
  void* handle = nullptr;
  const int status =
      q->graphs->graph_end(q->self, device_.device_id, stream->native_stream(), &handle);
  if (status != 0 || handle == nullptr) return;  // abandoned: the list replays
  native_graph_ = std::make_shared<NativeGraph>(q, device_.device_id, handle);
  if (native_failed_) native_graph_.reset();
}

namespace {
thread_local std::shared_ptr<StreamState> current_stream;
}  // namespace

void* CurrentNativeStream(DLDevice device) {
  if (current_stream && SameDevice(current_stream->device(), device)) {
    return current_stream->native_stream();
  }
  return nullptr;
}

void GraphObj::Replay(const std::shared_ptr<StreamState>& stream,
                      const std::vector<std::pair<Object*, Object*>>& bindings) {
  for (const auto& [from, to] : bindings) {
    auto* a = static_cast<TensorObj*>(from);
    auto* b = static_cast<TensorObj*>(to);
    const DLTensor &x = *a->dl(), &y = *b->dl();
    if (!(x.dtype == y.dtype) || x.ndim != y.ndim ||
        !std::equal(x.shape, x.shape + x.ndim, y.shape) || !SameDevice(x.device, y.device)) {
      Fail("ValueError",
           "a rebound tensor must have the captured tensor's shape, dtype and device");
    }
  }
  if (bindings.empty() && native_graph_ != nullptr && stream->native() == native_graph_->queues &&
      !launches_.empty()) {
    const NativeQueues* q = native_graph_->queues;
    stream->Throttle(0);
    CheckNative(q->graphs->graph_launch(q->self, device_.device_id, native_graph_->handle,
                                        stream->native_stream()));
    LaunchRecord record;
    const Launch& first = launches_.front();
    record =
        RecordOf(*first.info, Args(first.args.data(), static_cast<int32_t>(first.args.size())));
    record.kernel = StrCat("graph of ", launches_.size(), " launches from ", record.kernel);
    stream->NoteLaunch(std::move(record), 0, native_graph_);
    return;
  }
  // Launches go to `stream`: it is made current for the replay.
  std::shared_ptr<StreamState> saved = current_stream;
  struct Restore {
    std::shared_ptr<StreamState>* slot;
    std::shared_ptr<StreamState> value;
    ~Restore() { *slot = std::move(value); }
  } restore{&current_stream, std::move(saved)};
  current_stream = stream;
  std::vector<ModrtValue> args;
  for (const Launch& l : launches_) {
    args = l.args;
    for (ModrtValue& v : args) {
      if (v.type_code != kModrtObject) continue;
      for (const auto& [from, to] : bindings) {
        if (v.v_obj == from) v.v_obj = to;
      }
    }
    OwnedValue ret;
    l.function->Call(args.data(), static_cast<int32_t>(args.size()), ret.out());
  }
}

// ---------------------------------------------------------------------------

namespace {

struct StreamRegistry {
  std::mutex mu;
  std::map<std::pair<int32_t, int32_t>, std::shared_ptr<StreamState>> defaults;
  std::map<std::pair<int32_t, int32_t>, std::vector<std::weak_ptr<StreamState>>> all;
};

StreamRegistry& Streams() {
  // Leaked: worker threads may still run during process teardown.
  static StreamRegistry* r = std::make_unique<StreamRegistry>().release();
  return *r;
}

// Default streams of small device numbers, cached for the launch path.
constexpr int kCachedTypes = 64, kCachedIds = 8;
std::atomic<const std::shared_ptr<StreamState>*> default_cache[kCachedTypes][kCachedIds];

std::shared_ptr<StreamState> NewStream(DLDevice device, bool is_default) {
  DeviceAPI* api = GetExistingDeviceAPI(device);
  auto state = std::make_shared<StreamState>(device, api, is_default);
  StreamRegistry& r = Streams();
  std::lock_guard lock(r.mu);
  auto& list = r.all[{device.device_type, device.device_id}];
  list.erase(std::remove_if(list.begin(), list.end(), [](auto& w) { return w.expired(); }),
             list.end());
  list.push_back(state);
  return state;
}

}  // namespace

const std::shared_ptr<StreamState>& DefaultStream(DLDevice device) {
  const bool cached = device.device_type >= 0 && device.device_type < kCachedTypes &&
                      device.device_id >= 0 && device.device_id < kCachedIds;
  if (cached) {
    if (auto* s =
            default_cache[device.device_type][device.device_id].load(std::memory_order_acquire)) {
      return *s;
    }
  }
  StreamRegistry& r = Streams();
  {
    std::lock_guard lock(r.mu);
    auto it = r.defaults.find({device.device_type, device.device_id});
    if (it != r.defaults.end()) return it->second;
  }
  std::shared_ptr<StreamState> made = NewStream(device, /*is_default=*/true);
  std::lock_guard lock(r.mu);
  auto [it, inserted] = r.defaults.try_emplace({device.device_type, device.device_id}, made);
  if (cached) {
    default_cache[device.device_type][device.device_id].store(&it->second,
                                                              std::memory_order_release);
  }
  return it->second;
}

std::vector<std::shared_ptr<StreamState>> StreamsOf(DLDevice device) {
  StreamRegistry& r = Streams();
  std::lock_guard lock(r.mu);
  std::vector<std::shared_ptr<StreamState>> out;
  for (auto& w : r.all[{device.device_type, device.device_id}]) {
    if (auto s = w.lock()) out.push_back(std::move(s));
  }
  return out;
}

StreamState& StreamFor(DLDevice device) {
  if (current_stream && SameDevice(current_stream->device(), device)) return *current_stream;
  return *DefaultStream(device);
}

namespace {

// The device of a launch: its first buffer's, else device 0 of its type.
DLDevice LaunchDevice(const Args& args, DLDeviceType device_type) {
  for (int32_t i = 0; i < args.size(); ++i) {
    const ModrtValue& v = args[i];
    if (v.type_code == kModrtObject && v.v_obj != nullptr &&
        static_cast<Object*>(v.v_obj)->type_index() == kModrtObjTensor) {
      return static_cast<TensorObj*>(v.v_obj)->dl()->device;
    }
    if (v.type_code == kModrtDLTensorPtr && v.v_tensor != nullptr) return v.v_tensor->device;
  }
  return DLDevice{device_type, 0};
}

// A function object whose body can name the object itself (to record it).
template <typename Body>
Ref<FunctionObj> SelfAwareFunction(Body body) {
  auto self = std::make_shared<const FunctionObj*>(nullptr);
  auto f = MakeObject<FunctionObj>(
      RawBody([self, body = std::move(body)](const ModrtValue* values, int32_t n, ModrtValue* ret) {
        body(*self, Args(values, n), ret);
      }));
  *self = f.get();
  return f;
}

}  // namespace

Ref<FunctionObj> StreamedLaunch(Ref<FunctionObj> inner, const FunctionInfo* info,
                                DLDeviceType device_type, Ref<Object> keep_alive) {
  auto launched = std::make_shared<std::atomic<bool>>(false);
  return SelfAwareFunction([inner = std::move(inner), info, device_type,
                            keep_alive = std::move(keep_alive),
                            launched](const FunctionObj* self, const Args& args, ModrtValue* ret) {
    // A backend may build the kernel's program or pipeline on its first
    // launch: that one lets the caller's lock (the GIL) go, later ones
    // keep it unless they wait for room (Throttle).
    std::optional<WaitRegion> building;
    if (!launched->exchange(true, std::memory_order_relaxed)) building.emplace();
    StreamState& stream = StreamFor(LaunchDevice(args, device_type));
    if (GraphObj* g = stream.capture()) {
      if (g->capturing_natively()) {
        // The plugin records this launch into its graph (it does not run).
        try {
          inner->Call(args.values(), args.size(), ret);
        } catch (...) {
          g->AbandonNative();
          throw;
        }
      }
      return g->Record(self, info, args);
    }
    if (stream.host_executes()) {
      // A plugin that launches on host memory runs its launch itself, now:
      // after the work queued before it on the stream.
      const uint64_t seq = stream.RecordMarker();
      while (!stream.Wait(seq, 3600.0, -1.0)) {
      }
      return inner->Call(args.values(), args.size(), ret);
    }
    const size_t bytes = TensorArgBytes(args);
    stream.Throttle(bytes);
    inner->Call(args.values(), args.size(), ret);
    stream.NoteLaunch(RecordOf(*info, args), bytes);
  });
}

Ref<FunctionObj> HostStreamedLaunch(HostLaunchPrepare prepare, const FunctionInfo* info) {
  return SelfAwareFunction(
      [prepare = std::move(prepare), info](const FunctionObj* self, const Args& args, ModrtValue*) {
        StreamState& stream = StreamFor(LaunchDevice(args, kDLCPU));
        if (GraphObj* g = stream.capture()) return g->Record(self, info, args);
        std::function<void()> work = prepare(args);
        bool borrowed = false;
        for (int32_t i = 0; i < args.size(); ++i)
          borrowed |= args[i].type_code == kModrtDLTensorPtr;
        if (borrowed) {
          // Borrowed DLTensors cannot be kept for later: run now, after the stream's work.
          uint64_t seq = stream.RecordMarker();
          while (!stream.Wait(seq, 3600.0, -1.0)) {
          }
          work();
          return;
        }
        // The queued work holds the tensor objects until it has run.
        std::vector<Ref<Object>> held;
        for (int32_t i = 0; i < args.size(); ++i) {
          if (args[i].type_code == kModrtObject && args[i].v_obj != nullptr) {
            held.emplace_back(static_cast<Object*>(args[i].v_obj));
          }
        }
        stream.Enqueue(RecordOf(*info, args), TensorArgBytes(args),
                       [work = std::move(work), held = std::move(held)] { work(); });
      });
}

// ---------------------------------------------------------------------------
// Registry functions (Python: modrt.Stream, modrt.Event, modrt.Graph).

namespace {

StreamObj* StreamArg(const Args& a, int32_t i) {
  return static_cast<StreamObj*>(a.Obj(i, kModrtObjStream, "stream"));
}
EventObj* EventArg(const Args& a, int32_t i) {
  return static_cast<EventObj*>(a.Obj(i, kModrtObjEvent, "event"));
}

Ref<Object> Handle(std::shared_ptr<StreamState> state) {
  return MakeObject<StreamObj>(std::move(state));
}

// Waits for every stream of `device` within one slice; true when all are done.
bool WaitDevice(DLDevice device, double slice_s, double raise_after_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(slice_s));
  for (const auto& s : StreamsOf(device)) {
    const double left =
        std::max(0.0, std::chrono::duration<double>(deadline - Clock::now()).count());
    if (!s->Wait(s->submitted(), left, raise_after_s)) return false;
  }
  return true;
}

std::vector<std::shared_ptr<StreamState>> AllStreams() {
  StreamRegistry& reg = Streams();
  std::lock_guard lock(reg.mu);
  std::vector<std::shared_ptr<StreamState>> streams;
  for (auto& [key, list] : reg.all) {
    for (auto& w : list) {
      if (auto s = w.lock()) streams.push_back(std::move(s));
    }
  }
  return streams;
}

std::string Implementation(const StreamState& s) {
  if (s.native() != nullptr) {
    return StrCat(
        "native: ", s.is_default() ? "the backend's default queue" : "a queue of the backend's own",
        " (events with device timestamps; graphs ",
        s.native()->graphs ? "recorded by the backend" : "replayed from the core's list",
        "); the stream's worker thread waits for it");
  }
  return s.host_executes()
             ? "core: launches run in order on the stream's worker thread"
             : "core emulation: launches go in order to the backend's one queue; the stream's "
               "worker thread waits for them with a device sync";
}

TensorObj* TensorAt(const Args& a, int32_t i) {
  return static_cast<TensorObj*>(a.Obj(i, kModrtObjTensor, "tensor"));
}

// A native stream on the tensor's device, for an async copy.
StreamState& CopyStream(const Args& a, int32_t i, TensorObj* t, const char* what) {
  StreamState& s = StreamArg(a, i)->state();
  if (!SameDevice(s.device(), t->dl()->device)) {
    Fail("ValueError", what, ": a tensor on ", DeviceName(t->dl()->device),
         " cannot be copied on a stream of ", DeviceName(s.device()));
  }
  if (s.native() == nullptr) {
    Fail("ValueError", what, ": ", DeviceName(s.device()), " has no native streams");
  }
  if (s.capture() != nullptr) Fail("RuntimeError", what, ": the stream is capturing a graph");
  return s;
}

// Byte `offset` of `nbytes` within tensor `t`; ValueError when outside it.
void CheckRange(TensorObj* t, int64_t offset, int64_t nbytes, const char* what) {
  const int64_t size = static_cast<int64_t>(t->nbytes());
  if (nbytes < 0 || offset < 0 || offset > size || nbytes > size - offset) {
    Fail("ValueError", what, ": bytes [", offset, ", ", offset + nbytes,
         ") are outside the tensor's ", size, " bytes");
  }
}

LaunchRecord CopyRecord(const char* what, size_t nbytes) {
  LaunchRecord r;
  r.kernel = StrCat(what, " of ", nbytes, " bytes");
  r.is_launch = false;
  return r;
}

MODRT_STATIC_INIT([] {
  RegisterGlobal("stream.create", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.create");
    r->SetObject(Handle(NewStream(a.Device(0), /*is_default=*/false)));
  });
  RegisterGlobal("stream.default", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.default");
    DLDevice device = a.Device(0);
    GetExistingDeviceAPI(device);
    r->SetObject(Handle(DefaultStream(device)));
  });
  // The stream a launch on `device` goes to from this thread now.
  RegisterGlobal("stream.current", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.current");
    DLDevice device = a.Device(0);
    GetExistingDeviceAPI(device);
    StreamFor(device);
    if (current_stream && SameDevice(current_stream->device(), device)) {
      r->SetObject(Handle(current_stream));
    } else {
      r->SetObject(Handle(DefaultStream(device)));
    }
  });
  // Makes `stream` (or none) this thread's current stream; returns the previous one.
  RegisterGlobal("stream.swap_current", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.swap_current");
    std::shared_ptr<StreamState> next;
    if (a[0].type_code != kModrtNone) next = StreamArg(a, 0)->shared();
    std::shared_ptr<StreamState> previous = std::exchange(current_stream, std::move(next));
    if (previous) r->SetObject(Handle(std::move(previous)));
  });
  RegisterGlobal("stream.same", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "stream.same");
    r->SetInt(StreamArg(a, 0)->shared() == StreamArg(a, 1)->shared() ? 1 : 0);
  });
  RegisterGlobal("stream.device", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.device");
    r->SetDevice(StreamArg(a, 0)->state().device());
  });
  RegisterGlobal("stream.is_default", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.is_default");
    r->SetInt(StreamArg(a, 0)->state().is_default() ? 1 : 0);
  });
  RegisterGlobal("stream.native", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.native");
    r->SetInt(StreamArg(a, 0)->state().native() != nullptr ? 1 : 0);
  });
  RegisterGlobal("stream.implementation", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.implementation");
    r->SetStr(Implementation(StreamArg(a, 0)->state()));
  });
  RegisterGlobal("stream.submitted", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.submitted");
    r->SetInt(static_cast<int64_t>(StreamArg(a, 0)->state().submitted()));
  });
  // stream.wait(stream, slice_s, raise_after_s): 1 when everything submitted is complete.
  RegisterGlobal("stream.wait", [](const Args& a, Ret* r) {
    a.ExpectCount(3, "stream.wait");
    StreamState& s = StreamArg(a, 0)->state();
    r->SetInt(s.Wait(s.submitted(), a.Float(1), a.Float(2)) ? 1 : 0);
  });
  RegisterGlobal("stream.pending", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.pending");
    r->SetStr(StreamArg(a, 0)->state().PendingSummary());
  });
  RegisterGlobal("stream.record", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.record");
    const auto& s = StreamArg(a, 0)->shared();
    if (s->native() != nullptr && s->capture() == nullptr) {
      uint64_t seq = 0;
      std::shared_ptr<NativeEvent> event = s->RecordNativeEvent(&seq);
      return r->SetObject(MakeObject<EventObj>(s, seq, std::move(event)));
    }
    r->SetObject(MakeObject<EventObj>(s, s->RecordMarker()));
  });
  // Later launches on the stream start after the event's launches completed.
  RegisterGlobal("stream.wait_event", [](const Args& a, Ret*) {
    a.ExpectCount(2, "stream.wait_event");
    StreamState& s = StreamArg(a, 0)->state();
    EventObj* e = EventArg(a, 1);
    if (&e->stream() == &s) return;
    if (s.host_executes()) return s.EnqueueWaitFor(e->shared_stream(), e->seq());
    if (s.native() != nullptr && e->native() != nullptr &&
        SameDevice(e->stream().device(), s.device())) {
      // On the device: the backend's queue waits for the backend's event.
      const NativeQueues* q = s.native();
      return CheckNative(q->streams->stream_wait_event(q->self, s.device().device_id,
                                                       s.native_stream(), e->native()->handle));
    }
    // A backend's launches on one device share its in-order queue (emulated streams).
    if (s.native() == nullptr && !e->stream().host_executes() &&
        SameDevice(e->stream().device(), s.device())) {
      return;
    }
    while (!e->stream().Wait(e->seq(), 3600.0, -1.0)) {
    }
  });
  RegisterGlobal("stream.begin_capture", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.begin_capture");
    StreamState& s = StreamArg(a, 0)->state();
    if (s.capture() != nullptr) Fail("RuntimeError", "this stream is already capturing a graph");
    auto g = MakeObject<GraphObj>(s.device());
    g->BeginNative(s);
    s.set_capture(g.get());
    r->SetObject(g);
  });
  RegisterGlobal("stream.end_capture", [](const Args& a, Ret*) {
    a.ExpectCount(1, "stream.end_capture");
    StreamState& s = StreamArg(a, 0)->state();
    GraphObj* g = s.capture();
    s.set_capture(nullptr);
    if (g != nullptr) g->EndNative();
  });
  RegisterGlobal("event.stream", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "event.stream");
    r->SetObject(Handle(EventArg(a, 0)->shared_stream()));
  });
  RegisterGlobal("event.query", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "event.query");
    EventObj* e = EventArg(a, 0);
    r->SetInt(e->stream().Query(e->seq(), e->native()) ? 1 : 0);
  });
  RegisterGlobal("event.wait", [](const Args& a, Ret* r) {
    a.ExpectCount(3, "event.wait");
    EventObj* e = EventArg(a, 0);
    r->SetInt(e->stream().Wait(e->seq(), a.Float(1), a.Float(2), e->native()) ? 1 : 0);
  });
  // event.elapsed_ms(end, start): milliseconds between two completed events on the device clock.
  RegisterGlobal("event.elapsed_ms", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "event.elapsed_ms");
    EventObj* end = EventArg(a, 0);
    EventObj* start = EventArg(a, 1);
    for (EventObj* e : {end, start}) {
      if (!e->stream().has_device_time()) {
        Fail("RuntimeError", "no device timestamps on ", DeviceName(e->stream().device()), ": ",
             Implementation(e->stream()),
             ", so its events carry no device time (modrt does not substitute host time)");
      }
      if (!e->stream().Query(e->seq(), e->native())) {
        Fail("RuntimeError", "an event is not complete yet: synchronize it before elapsed_ms");
      }
    }
    if (end->native() != nullptr || start->native() != nullptr) {
      if (end->native() == nullptr || start->native() == nullptr ||
          !SameDevice(end->stream().device(), start->stream().device())) {
        Fail("ValueError", "elapsed_ms compares two events recorded on one device");
      }
      const NativeQueues* q = end->stream().native();
      double ms = 0;
      CheckNative(q->streams->event_elapsed_ms(q->self, end->stream().device().device_id,
                                               start->native()->handle, end->native()->handle,
                                               &ms));
      return r->SetFloat(ms);
    }
    r->SetFloat((end->stream().MarkerTime(end->seq()) - start->stream().MarkerTime(start->seq())) *
                1e3);
  });
  RegisterGlobal("graph.size", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "graph.size");
    r->SetInt(
        static_cast<int64_t>(static_cast<GraphObj*>(a.Obj(0, kModrtObjGraph, "graph"))->size()));
  });
  // 1 when the backend recorded the graph (a replay without rebound buffers launches it).
  RegisterGlobal("graph.native", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "graph.native");
    r->SetInt(static_cast<GraphObj*>(a.Obj(0, kModrtObjGraph, "graph"))->native() ? 1 : 0);
  });
  // tensor.copy_from_host_async(tensor, stream, src, nbytes, offset): the
  // bytes are staged in the core until the copy completed, so the caller's
  // memory is free at once.
  RegisterGlobal("tensor.copy_from_host_async", [](const Args& a, Ret*) {
    a.ExpectCount(5, "tensor.copy_from_host_async");
    const char* what = "tensor.copy_from_host_async";
    TensorObj* t = TensorAt(a, 0);
    if (t->read_only()) Fail("ValueError", "cannot copy into a read-only tensor");
    StreamState& s = CopyStream(a, 1, t, what);
    CheckRange(t, a.Int(4), a.Int(3), what);
    const size_t n = static_cast<size_t>(a.Int(3));
    auto staging = std::make_shared<std::vector<char>>(n);
    if (n != 0) std::memcpy(staging->data(), a.Ptr(2), n);
    const NativeQueues* q = s.native();
    s.Throttle(0);
    CheckNative(q->streams->copy_from_host_async(
        q->self, staging->data(), t->dl(), static_cast<size_t>(a.Int(4)), n, s.native_stream()));
    s.NoteLaunch(CopyRecord("copy to the device", n), 0, std::move(staging));
  });
  // tensor.copy_to_host_async(tensor, stream, host tensor, nbytes, offset):
  // into the host (cpu) tensor, which the stream holds until the copy completed.
  RegisterGlobal("tensor.copy_to_host_async", [](const Args& a, Ret*) {
    a.ExpectCount(5, "tensor.copy_to_host_async");
    const char* what = "tensor.copy_to_host_async";
    TensorObj* t = TensorAt(a, 0);
    StreamState& s = CopyStream(a, 1, t, what);
    TensorObj* host = TensorAt(a, 2);
    CheckRange(t, a.Int(4), a.Int(3), what);
    const size_t n = static_cast<size_t>(a.Int(3));
    if (host->dl()->device.device_type != kDLCPU || host->nbytes() < n) {
      Fail("ValueError", what, ": the destination must be a cpu tensor of at least ", n, " bytes");
    }
    Ref<Object> held(host);
    std::shared_ptr<void> hold(held.release(), [](void* p) { static_cast<Object*>(p)->DecRef(); });
    const NativeQueues* q = s.native();
    s.Throttle(0);
    CheckNative(q->streams->copy_to_host_async(
        q->self, t->dl(), static_cast<size_t>(a.Int(4)),
        static_cast<char*>(host->dl()->data) + host->dl()->byte_offset, n, s.native_stream()));
    s.NoteLaunch(CopyRecord("copy to the host", n), 0, std::move(hold));
  });
  // tensor.copy_device_async(dst, src, stream): both on the stream's device.
  RegisterGlobal("tensor.copy_device_async", [](const Args& a, Ret*) {
    a.ExpectCount(3, "tensor.copy_device_async");
    const char* what = "tensor.copy_device_async";
    TensorObj* dst = TensorAt(a, 0);
    TensorObj* src = TensorAt(a, 1);
    if (dst->read_only()) Fail("ValueError", "cannot copy into a read-only tensor");
    StreamState& s = CopyStream(a, 2, dst, what);
    if (!SameDevice(src->dl()->device, dst->dl()->device)) {
      Fail("ValueError", what, ": both tensors must be on ", DeviceName(s.device()));
    }
    if (dst->nbytes() != src->nbytes()) {
      Fail("ValueError", "copy of a tensor of ", src->nbytes(), " bytes into one of ",
           dst->nbytes());
    }
    const NativeQueues* q = s.native();
    const size_t n = dst->nbytes();
    s.Throttle(n);
    CheckNative(q->streams->copy_device_to_device(q->self, src->dl(), 0, dst->dl(), 0, n,
                                                  s.native_stream()));
    s.NoteLaunch(CopyRecord("device-to-device copy", n), n);
  });
  // graph.replay(graph, stream, captured tensor, replacement, ...)
  RegisterGlobal("graph.replay", [](const Args& a, Ret*) {
    a.ExpectCount(2, "graph.replay", /*at_least=*/true);
    auto* g = static_cast<GraphObj*>(a.Obj(0, kModrtObjGraph, "graph"));
    const auto& s = StreamArg(a, 1)->shared();
    if (!SameDevice(s->device(), g->device())) {
      Fail("ValueError", "a graph captured on ", DeviceName(g->device()), " replays there, not on ",
           DeviceName(s->device()));
    }
    if (s->capture() != nullptr) Fail("RuntimeError", "cannot replay into a capturing stream");
    if ((a.size() - 2) % 2 != 0)
      Fail("ValueError", "graph.replay takes (captured, replacement) pairs");
    std::vector<std::pair<Object*, Object*>> bindings;
    for (int32_t i = 2; i < a.size(); i += 2) {
      bindings.emplace_back(a.Obj(i, kModrtObjTensor, "tensor"),
                            a.Obj(i + 1, kModrtObjTensor, "tensor"));
    }
    g->Replay(s, bindings);
  });
  // device.wait(device, slice_s, raise_after_s): every stream of the device.
  RegisterGlobal("device.wait", [](const Args& a, Ret* r) {
    a.ExpectCount(3, "device.wait");
    NoteDeviceOpened(a.Device(0));  // a forked child: RuntimeError, not a wait on the parent's work
    r->SetInt(WaitDevice(a.Device(0), a.Float(1), a.Float(2)) ? 1 : 0);
  });
  // What is pending in the whole process ("" when nothing), for the exit wait.
  RegisterGlobal("stream.pending_everywhere", [](const Args& a, Ret* r) {
    a.ExpectCount(0, "stream.pending_everywhere");
    std::string out;
    for (const auto& s : AllStreams()) {
      std::string p = s->PendingSummary();
      if (!p.empty()) out += (out.empty() ? "" : "; ") + p;
    }
    r->SetStr(out);
  });
  // stream.wait_everywhere(slice_s): 1 when every stream in the process is complete.
  RegisterGlobal("stream.wait_everywhere", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.wait_everywhere");
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(a.Float(0)));
    for (const auto& s : AllStreams()) {
      const double left =
          std::max(0.0, std::chrono::duration<double>(deadline - Clock::now()).count());
      try {
        if (!s->Wait(s->submitted(), left, -1.0)) return r->SetInt(0);
      } catch (const Error&) {
        // A failure nobody waited for: nothing more will complete there.
      }
    }
    r->SetInt(1);
  });
});

}  // namespace
}  // namespace modrt
