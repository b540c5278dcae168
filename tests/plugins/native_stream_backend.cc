// A backend with native streams and graphs (plugin ABI 1.1's stream and
// graph extensions) for the core's tests where no such driver is present:
// device kind "streamsim" on DLPack's kDLOneAPI, one device whose memory is
// host memory and whose queues are threads. Built against modrt's plugin
// headers only, through the device layer's interfaces (device.h: the device,
// queues, graphs). A launch goes down once (plugin ABI 1.2): the core packs
// the arguments with the launch's queue and whether it captures; its buffers
// are addresses, taken at a byte offset (ABI 1.3, addressable_buffers).
//
// Kernels (payload format "sim"): fill(int32* out, int32 value, int32 n)
// writes out[i] = value + i; fault(int32* out) fails on the device, as an
// illegal access would: the queue reports it at its next synchronize.
// `streamsim.counters()` -> "kernels=K graph_launches=G" (runs, not launches).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "modrt/plugin/plugin.h"

namespace {

using namespace modrt::plugin;  // NOLINT(build/namespaces)

std::atomic<int64_t> kernels_run{0};
std::atomic<int64_t> graph_launches{0};

using Task = std::function<void()>;

// An in-order queue: a thread running tasks. A task that fails (throws)
// latches its error; later tasks still run, the next Synchronize reports it.
class Queue {
 public:
  Queue() : thread_([this] { Run(); }) {}
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  ~Queue() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  // While recording (graph_begin), tasks go to `recording` instead.
  void Submit(Task task) {
    std::lock_guard lock(mu_);
    if (recording_ != nullptr) {
      recording_->push_back(std::move(task));
      return;
    }
    tasks_.push_back(std::move(task));
    changed_.notify_all();
  }
  void Synchronize() {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return tasks_.empty() && !busy_; });
    if (!error_.empty()) Fail("RuntimeError", std::exchange(error_, ""));
  }
  std::vector<Task>* recording_ = nullptr;  // guarded by the core: one capture at a time
  bool recording() const { return recording_ != nullptr; }

 private:
  void Run() {
    std::unique_lock lock(mu_);
    for (;;) {
      changed_.wait(lock, [&] { return !tasks_.empty() || stop_; });
      if (tasks_.empty()) return;
      Task task = std::move(tasks_.front());
      tasks_.pop_front();
      busy_ = true;
      lock.unlock();
      std::string error;
      try {
        task();
      } catch (const std::exception& e) {
        error = e.what();
      }
      lock.lock();
      if (!error.empty() && error_.empty()) error_ = error;
      busy_ = false;
      changed_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Task> tasks_;
  bool busy_ = false;
  bool stop_ = false;
  std::string error_;
  std::thread thread_;
};

Queue& DefaultQueue() {
  static Queue* q = std::make_unique<Queue>().release();  // lives for the process
  return *q;
}
Queue& QueueOf(void* stream) { return stream ? *static_cast<Queue*>(stream) : DefaultQueue(); }

struct Event {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  int64_t ns = 0;  // the queue thread's clock when it reached the event
};
using EventRef = std::shared_ptr<Event>;
EventRef& EventOf(void* event) { return *static_cast<EventRef*>(event); }

void WaitFor(const EventRef& e) {
  std::unique_lock lock(e->mu);
  e->done_cv.wait(lock, [&] { return e->done; });
}

char* Bytes(const DLTensor* t, size_t offset) {
  return static_cast<char*>(t->data) + t->byte_offset + offset;
}

class SimDeviceAPI final : public DeviceAPI {
 public:
  int DeviceCount() override { return 1; }
  std::string UnavailableReason() override { return ""; }
  void GetAttr(int, std::string_view name, Ret* ret) override {
    if (name == "name") ret->SetStr("streamsim0");
  }
  void* Alloc(int, size_t nbytes) override { return std::calloc(nbytes == 0 ? 1 : nbytes, 1); }
  void Free(int, void* ptr) override { std::free(ptr); }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    DefaultQueue().Synchronize();
    std::memcpy(Bytes(t, 0), src, nbytes);
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    DefaultQueue().Synchronize();
    std::memcpy(dst, Bytes(t, 0), nbytes);
  }
  void Sync(int) override { DefaultQueue().Synchronize(); }
};

// Queues without foreign streams or timed waits: the core's worker waits.
class SimQueues final : public Queues {
 public:
  void* StreamCreate(int) override { return std::make_unique<Queue>().release(); }
  void StreamDestroy(int, void* stream) override {
    std::unique_ptr<Queue> owned(static_cast<Queue*>(stream));
  }
  void StreamSynchronize(int, void* stream) override { QueueOf(stream).Synchronize(); }
  void* EventRecord(int, void* stream, bool) override {
    auto event = std::make_shared<Event>();
    QueueOf(stream).Submit([event] {
      std::lock_guard lock(event->mu);
      event->ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
      event->done = true;
      event->done_cv.notify_all();
    });
    return std::make_unique<EventRef>(std::move(event)).release();
  }
  bool EventQuery(int, void* event) override {
    std::lock_guard lock(EventOf(event)->mu);
    return EventOf(event)->done;
  }
  void EventSynchronize(int, void* event) override { WaitFor(EventOf(event)); }
  double EventElapsedMs(int, void* start, void* end) override {
    return static_cast<double>(EventOf(end)->ns - EventOf(start)->ns) * 1e-6;
  }
  void EventDestroy(int, void* event) override {
    std::unique_ptr<EventRef> owned(static_cast<EventRef*>(event));
  }
  void StreamWaitEvent(int, void* stream, void* event) override {
    QueueOf(stream).Submit([e = EventOf(event)] { WaitFor(e); });
  }
  void CopyFromHostAsync(const void* host, DLTensor* t, size_t offset, size_t nbytes,
                         void* stream) override {
    char* dst = Bytes(t, offset);
    QueueOf(stream).Submit([dst, host, nbytes] { std::memcpy(dst, host, nbytes); });
  }
  void CopyToHostAsync(const DLTensor* t, size_t offset, void* host, size_t nbytes,
                       void* stream) override {
    const char* src = Bytes(t, offset);
    QueueOf(stream).Submit([src, host, nbytes] { std::memcpy(host, src, nbytes); });
  }
  void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
                          size_t nbytes, void* stream) override {
    const char* from = Bytes(src, src_offset);
    char* to = Bytes(dst, dst_offset);
    QueueOf(stream).Submit([from, to, nbytes] { std::memmove(to, from, nbytes); });
  }
  const char* QueueDescription(int, bool) override { return nullptr; }  // the core's words
};

// Graphs without in-place updates: a replay that rebinds buffers runs the
// core's list.
class SimGraphs final : public Graphs {
 public:
  void GraphBegin(int, void* stream) override {
    Queue& q = QueueOf(stream);
    if (q.recording_ != nullptr) Fail("RuntimeError", "this queue is already recording");
    q.recording_ = std::make_unique<std::vector<Task>>().release();
  }
  void* GraphEnd(int, void* stream) override {
    Queue& q = QueueOf(stream);
    return std::exchange(q.recording_, nullptr);
  }
  void GraphLaunch(int, void* graph, void* stream) override {
    auto* tasks = static_cast<std::vector<Task>*>(graph);
    QueueOf(stream).Submit([tasks] {
      ++graph_launches;
      for (const Task& t : *tasks) t();
    });
  }
  void GraphDestroy(int, void* graph) override {
    std::unique_ptr<std::vector<Task>> owned(static_cast<std::vector<Task>*>(graph));
  }
};

class SimModule final : public PayloadModule {
 public:
  using PayloadModule::PayloadModule;
  ObjectRef GetFunction(const std::string& name) override {
    return PackedLaunchingFunction(name, kDLOneAPI);
  }
  bool LaunchesPacked() const override { return true; }
  void LaunchPacked(const FunctionInfo& info, size_t, const PackedArgs& k) override {
    // The buffer's address as the core packed it: data + byte_offset.
    int32_t* out = *static_cast<int32_t* const*>(k.ptrs[0]);
    Queue& q = QueueOf(k.NativeStream(kDLOneAPI));
    // The queue records while a graph captures on it (GraphBegin): the core
    // says so in the arguments, and the two must agree.
    if (k.Capturing() != q.recording()) {
      Fail("RuntimeError", "the core says the queue ", k.Capturing() ? "captures" : "runs",
           ", but it ", q.recording() ? "records" : "runs");
    }
    if (info.name == "fill") {
      const int32_t value = *static_cast<const int32_t*>(k.ptrs[1]);
      const int32_t n = *static_cast<const int32_t*>(k.ptrs[2]);
      q.Submit([out, value, n] {
        ++kernels_run;
        for (int32_t i = 0; i < n; ++i) out[i] = value + i;
      });
    } else {
      q.Submit([] {
        ++kernels_run;
        Fail("RuntimeError", "illegal memory access");
      });
    }
  }
};

void Init() {
  static const ModrtBackendIdentity identity = {
      sizeof(ModrtBackendIdentity), "streamsim", "StreamSim", kDLOneAPI, kModrtSingleBinary, "sim",
      /*addressable_buffers=*/1};
  RegisterRuntimeModule(identity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<SimModule>(std::move(p));
  });
  static SimDeviceAPI device;
  static SimQueues queues;
  static SimGraphs graphs;
  DeviceLayer layer;
  layer.device = &device;
  layer.queues = &queues;
  layer.graphs = &graphs;
  RegisterDeviceLayer("streamsim", layer);
  RegisterGlobal("streamsim.counters", [](const Args&, Ret* ret) {
    ret->SetStr(StrCat("kernels=", kernels_run.load(), " graph_launches=", graph_launches.load()));
  });
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
