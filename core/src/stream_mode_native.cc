// The native queue mode (stream_mode.h): the stream is one of the backend's
// own queues (ModrtStreamExtension), made, synchronized and destroyed by the
// backend; with stream_wait_for a wait is the driver's own. Also the
// backend's events and graphs, destroyed with their last holder.
#include <memory>
#include <string>

#include "internal.h"
#include "stream.h"
#include "stream_mode.h"

namespace modrt {

namespace {

class NativeQueue final : public StreamMode {
 public:
  NativeQueue(DLDevice device, const NativeQueues* queues, bool is_default,
              const uint64_t* external)
      : StreamMode(Kind::kNativeQueue, device), adopted_(external != nullptr) {
    queues_ = queues;
    if (adopted_) {
      if (queues_->stream_adopt == nullptr) {
        Fail("ValueError", DeviceName(device), " cannot adopt another library's stream: its ",
             "backend does not adopt foreign queues");
      }
      if (*external == 0) {
        Fail("ValueError", "a foreign stream handle of 0 is the legacy default stream: use ",
             DeviceName(device), "'s default_stream");
      }
      CheckNative(queues_->stream_adopt(queues_->self, device_.device_id, *external, &queue_));
    }
    if (DeviceEpochs* e = EpochsOf(device_)) e->native.store(true);
    if (!is_default && !adopted_) {
      CheckNative(queues_->streams->stream_create(queues_->self, device_.device_id, &queue_));
    }
  }

  // Reached once the stream's worker drained its queue: nothing of this
  // stream is pending on the device, unless a failure latched. An adopted
  // queue is its maker's to destroy; in a forked child the driver's objects
  // are the parent's.
  ~NativeQueue() override {
    if (queue_ != nullptr && !adopted_ && !InForkedChild()) {
      queues_->streams->stream_destroy(queues_->self, device_.device_id, queue_);
    }
  }

  bool adopted() const override { return adopted_; }

  std::string Describe(bool is_default) const override {
    // The backend says what its queue is (queue_description), where it can.
    const char* own = queues_->queue_description
                          ? queues_->queue_description(queues_->self, device_.device_id, is_default)
                          : nullptr;
    std::string queue = own != nullptr && *own != '\0' ? std::string(own)
                        : is_default                   ? "the backend's default queue"
                                                       : "a queue of the backend's own";
    if (adopted_) queue = StrCat(queue, ", adopted from another library (not destroyed by modrt)");
    return StrCat("native: ", queue, " (events with device timestamps; graphs ",
                  !queues_->graphs ? "replayed from the core's list"
                  : queues_->graph_update
                      ? "recorded by the backend, rebound replays re-recorded"
                      : "recorded by the backend, rebound replays from the core's list",
                  "); ",
                  queues_->stream_wait_for != nullptr
                      ? "a wait is the driver's own, with a timeout, on the waiting thread"
                      : "the stream's worker thread waits for it");
  }

  void Synchronize(uint64_t) override {
    CheckNative(queues_->streams->stream_synchronize(queues_->self, device_.device_id, queue_));
  }

  bool waits_in_driver() const override { return queues_->stream_wait_for != nullptr; }

  bool WaitInDriver(double timeout_s) override {
    int32_t finished = 0;
    CheckNative(
        queues_->stream_wait_for(queues_->self, device_.device_id, queue_, timeout_s, &finished));
    return finished != 0;
  }

 private:
  const bool adopted_;
};

}  // namespace

std::unique_ptr<StreamMode> NativeQueueMode(DLDevice device, const NativeQueues* queues,
                                            bool is_default, const uint64_t* external) {
  return std::make_unique<NativeQueue>(device, queues, is_default, external);
}

std::shared_ptr<NativeEvent> NativeEvent::Record(const NativeQueues* queues, int32_t device_id,
                                                 void* queue) {
  void* handle = nullptr;
  CheckNative(queues->streams->event_record(queues->self, device_id, queue, /*timing=*/1, &handle));
  return std::make_shared<NativeEvent>(queues, device_id, handle);
}

bool NativeEvent::Done() const {
  int32_t done = 0;
  CheckNative(queues->streams->event_query(queues->self, device_id, handle, &done));
  return done != 0;
}

void NativeEvent::Synchronize() const {
  CheckNative(queues->streams->event_synchronize(queues->self, device_id, handle));
}

NativeEvent::~NativeEvent() {
  if (!InForkedChild()) queues->streams->event_destroy(queues->self, device_id, handle);
}

NativeGraph::~NativeGraph() {
  if (!InForkedChild()) queues->graphs->graph_destroy(queues->self, device_id, handle);
}

}  // namespace modrt
