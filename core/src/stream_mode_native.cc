// The native queue mode (stream_mode.h): the stream is one of the backend's
// own queues (ModrtStreamExtension), made, synchronized and destroyed by the
// backend; with stream_wait_for a wait is the driver's own. Also the
// backend's events, copies on the queue and graphs (ModrtGraphExtension):
// every call the core makes to those tables is here.
#include <memory>
#include <string>

#include "internal.h"
#include "stream.h"
#include "stream_mode.h"

namespace modrt {

NativeQueue::NativeQueue(DLDevice device, const DeviceLayerTables* layer, bool is_default,
                         const uint64_t* external)
    : StreamMode(Kind::kNativeQueue, device), layer_(layer), adopted_(external != nullptr) {
  native_ = this;
  const ModrtStreamExtension& q = *layer_->queues;
  if (adopted_) {
    if (q.stream_adopt == nullptr) {
      Fail("ValueError", DeviceName(device), " cannot adopt another library's stream: its ",
           "backend does not adopt foreign queues");
    }
    if (*external == 0) {
      Fail("ValueError", "a foreign stream handle of 0 is the legacy default stream: use ",
           DeviceName(device), "'s default_stream");
    }
    CheckNative(q.stream_adopt(layer_->self, device_.device_id, *external, &queue_));
  }
  if (DeviceEpochs* e = EpochsOf(device_)) e->native.store(true);
  if (!is_default && !adopted_) {
    CheckNative(q.stream_create(layer_->self, device_.device_id, &queue_));
  }
}

// Reached once the stream's worker drained its queue: nothing of this stream
// is pending on the device, unless a failure latched. An adopted queue is its
// maker's to destroy; in a forked child the driver's objects are the parent's.
NativeQueue::~NativeQueue() {
  if (queue_ != nullptr && !adopted_ && !InForkedChild()) {
    layer_->queues->stream_destroy(layer_->self, device_.device_id, queue_);
  }
}

std::string NativeQueue::Describe(bool is_default) const {
  const ModrtStreamExtension& q = *layer_->queues;
  // The backend says what its queue is (queue_description), where it can.
  const char* own = q.queue_description
                        ? q.queue_description(layer_->self, device_.device_id, is_default)
                        : nullptr;
  std::string queue = own != nullptr && *own != '\0' ? std::string(own)
                      : is_default                   ? "the backend's default queue"
                                                     : "a queue of the backend's own";
  if (adopted_) queue = StrCat(queue, ", adopted from another library (not destroyed by modrt)");
  return StrCat(
      "native: ", queue, " (events with device timestamps; graphs ",
      !records_graphs()  ? "replayed from the core's list"
      : updates_graphs() ? "recorded by the backend, rebound replays re-recorded"
                         : "recorded by the backend, rebound replays from the core's list",
      "); ",
      waits_in_driver() ? "a wait is the driver's own, with a timeout, on the waiting thread"
                        : "the stream's worker thread waits for it");
}

void NativeQueue::Synchronize(uint64_t) {
  CheckNative(layer_->queues->stream_synchronize(layer_->self, device_.device_id, queue_));
}

bool NativeQueue::WaitInDriver(double timeout_s) {
  int32_t finished = 0;
  CheckNative(layer_->queues->stream_wait_for(layer_->self, device_.device_id, queue_, timeout_s,
                                              &finished));
  return finished != 0;
}

std::shared_ptr<NativeEvent> NativeQueue::RecordEvent() const {
  void* handle = nullptr;
  CheckNative(layer_->queues->event_record(layer_->self, device_.device_id, queue_,
                                           /*timing=*/1, &handle));
  return std::make_shared<NativeEvent>(layer_, device_.device_id, handle);
}

void NativeQueue::WaitEvent(const NativeEvent& event) const {
  CheckNative(
      layer_->queues->stream_wait_event(layer_->self, device_.device_id, queue_, event.handle));
}

double NativeQueue::ElapsedMs(const NativeEvent& start, const NativeEvent& end) const {
  double ms = 0;
  CheckNative(layer_->queues->event_elapsed_ms(layer_->self, device_.device_id, start.handle,
                                               end.handle, &ms));
  return ms;
}

void NativeQueue::CopyFromHost(const void* host, DLTensor* dst, size_t offset,
                               size_t nbytes) const {
  CheckNative(
      layer_->queues->copy_from_host_async(layer_->self, host, dst, offset, nbytes, queue_));
}

void NativeQueue::CopyToHost(const DLTensor* src, size_t offset, void* host, size_t nbytes) const {
  CheckNative(layer_->queues->copy_to_host_async(layer_->self, src, offset, host, nbytes, queue_));
}

void NativeQueue::CopyDeviceToDevice(const DLTensor* src, DLTensor* dst, size_t nbytes) const {
  CheckNative(layer_->queues->copy_device_to_device(layer_->self, src, 0, dst, 0, nbytes, queue_));
}

bool NativeQueue::BeginCapture() const {
  return layer_->graphs->graph_begin(layer_->self, device_.device_id, queue_) == 0;
}

std::shared_ptr<NativeGraph> NativeQueue::EndCapture(std::string* why) const {
  void* handle = nullptr;
  const int status = layer_->graphs->graph_end(layer_->self, device_.device_id, queue_, &handle);
  if (status != 0 || handle == nullptr) {
    *why = status != 0 ? StrCat("the backend could not end its capture: ", LastErrorMessage())
                       : "the backend recorded no graph";
    return nullptr;
  }
  return std::make_shared<NativeGraph>(layer_, device_.device_id, handle);
}

void NativeQueue::AbandonCapture() const {
  void* abandoned = nullptr;
  if (layer_->graphs->graph_end(layer_->self, device_.device_id, queue_, &abandoned) == 0 &&
      abandoned != nullptr) {
    layer_->graphs->graph_destroy(layer_->self, device_.device_id, abandoned);
  }
}

bool NativeQueue::EndCaptureInto(const NativeGraph& graph) const {
  return layer_->graphs->graph_update(layer_->self, device_.device_id, queue_, graph.handle) == 0;
}

void NativeQueue::Launch(const NativeGraph& graph) const {
  CheckNative(layer_->graphs->graph_launch(layer_->self, device_.device_id, graph.handle, queue_));
}

bool NativeEvent::Done() const {
  int32_t done = 0;
  CheckNative(layer->queues->event_query(layer->self, device_id, handle, &done));
  return done != 0;
}

void NativeEvent::Synchronize() const {
  CheckNative(layer->queues->event_synchronize(layer->self, device_id, handle));
}

NativeEvent::~NativeEvent() {
  if (!InForkedChild()) layer->queues->event_destroy(layer->self, device_id, handle);
}

NativeGraph::~NativeGraph() {
  if (!InForkedChild()) layer->graphs->graph_destroy(layer->self, device_id, handle);
}

}  // namespace modrt
