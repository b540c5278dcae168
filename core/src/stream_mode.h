// How a stream's launches execute (stream.h), one implementation per mode,
// each in a file of its own. Core-internal.
// - host worker (stream_mode_host.cc): cpu; the stream's worker thread runs
//   the launches, so it knows when each completes;
// - emulated queue (stream_mode_emulated.cc): a backend without the stream
//   extension; every stream of the device shares the backend's one in-order
//   queue, and a device sync on the worker tells what completed;
// - native queue (stream_mode_native.cc): a backend with the stream extension
//   (ModrtStreamExtension); the stream is one of the backend's own queues,
//   synchronized (or waited on with a timeout) by the backend; NativeQueue
//   below is the one place the core calls the queue and graph tables.
// StreamState keeps what every mode shares: the numbering of launches, the
// pending list, the in-flight limits, the worker, waits and latched errors.
#ifndef MODRT_CORE_SRC_STREAM_MODE_H_
#define MODRT_CORE_SRC_STREAM_MODE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "internal.h"
#include "modrt/core/device.h"

namespace modrt {

// Launches submitted to a backend device across its streams, and those known
// complete (stream.h: DeviceLaunched, DeviceCompleted).
struct DeviceEpochs {
  std::atomic<uint64_t> launched{0};
  std::atomic<uint64_t> completed{0};
  // Native streams complete out of order across streams: Completed() is
  // then the least over the device's streams (FirstPendingEpoch).
  std::atomic<bool> native{false};
};
// The device's counters, or null for a device past their range.
DeviceEpochs* EpochsOf(DLDevice d);

class NativeQueue;

class StreamMode {
 public:
  enum class Kind { kHostWorker, kEmulatedQueue, kNativeQueue };
  virtual ~StreamMode() = default;
  StreamMode(const StreamMode&) = delete;
  StreamMode& operator=(const StreamMode&) = delete;

  Kind kind() const { return kind_; }
  // The worker runs the launches (host worker); elsewhere they run on the
  // caller's thread and the worker learns their completion by a device sync.
  bool runs_launches() const { return kind_ == Kind::kHostWorker; }
  // Events carry device time: the worker's clock, or the backend's timestamps.
  bool has_device_time() const { return kind_ != Kind::kEmulatedQueue; }
  // The native queue mode's own calls (below); null in the other modes.
  const NativeQueue* native() const { return native_; }
  // This stream's queue among the backend's (NULL: the plugin's default
  // queue, and in the other modes).
  void* queue() const { return queue_; }
  // The queue is another library's (Stream.from_external), never destroyed here.
  virtual bool adopted() const { return false; }
  // A stream being closed syncs first: its queue goes only once its work is done.
  bool syncs_before_close() const { return kind_ == Kind::kNativeQueue; }

  // How the stream runs its launches, in words (Stream.implementation).
  virtual std::string Describe(bool is_default) const = 0;
  // On the worker thread: returns once everything queued before this sync
  // is complete; `device_epoch` is DeviceLaunched() when it was requested.
  virtual void Synchronize(uint64_t device_epoch) = 0;
  // Whether a wait can be the backend's own, timed, on the waiting thread.
  virtual bool waits_in_driver() const { return false; }
  // That wait, for everything submitted: true when it all finished within
  // `timeout_s`. A mode without one refuses (RuntimeError).
  virtual bool WaitInDriver(double timeout_s);

 protected:
  StreamMode(Kind kind, DLDevice device) : kind_(kind), device_(device) {}

  const Kind kind_;
  const DLDevice device_;
  const NativeQueue* native_ = nullptr;
  void* queue_ = nullptr;
};

// A backend's event (event_record), destroyed with its last holder.
struct NativeEvent {
  NativeEvent(const DeviceLayerTables* layer, int32_t device_id, void* handle)
      : layer(layer), device_id(device_id), handle(handle) {}
  NativeEvent(const NativeEvent&) = delete;
  NativeEvent& operator=(const NativeEvent&) = delete;
  ~NativeEvent();
  bool Done() const;         // event_query
  void Synchronize() const;  // event_synchronize (blocking)
  const DeviceLayerTables* const layer;
  const int32_t device_id;
  void* const handle;
};

// A backend's recorded graph (graph_end), destroyed with its last holder: the
// graph object, and each pending replay of it.
struct NativeGraph {
  NativeGraph(const DeviceLayerTables* layer, int32_t device_id, void* handle)
      : layer(layer), device_id(device_id), handle(handle) {}
  NativeGraph(const NativeGraph&) = delete;
  NativeGraph& operator=(const NativeGraph&) = delete;
  ~NativeGraph();
  const DeviceLayerTables* const layer;
  const int32_t device_id;
  void* const handle;
};

// The native queue mode: the stream is one of the backend's own queues
// (stream_mode_native.cc). The one place the core calls the backend's queue
// and graph tables (DeviceLayerTables: queues, graphs); each call fails with
// the backend's error unless it says otherwise.
class NativeQueue final : public StreamMode {
 public:
  // Creates the stream's queue (the default stream's is the plugin's default
  // queue), or adopts `external` (stream_adopt; ValueError when it cannot).
  NativeQueue(DLDevice device, const DeviceLayerTables* layer, bool is_default,
              const uint64_t* external);
  ~NativeQueue() override;

  bool adopted() const override { return adopted_; }
  std::string Describe(bool is_default) const override;
  void Synchronize(uint64_t device_epoch) override;
  bool waits_in_driver() const override { return layer_->queues->stream_wait_for != nullptr; }
  bool WaitInDriver(double timeout_s) override;

  // Whose queue it is: two streams of one backend share these tables.
  const DeviceLayerTables* layer() const { return layer_; }

  // An event after everything submitted so far, with device timing.
  std::shared_ptr<NativeEvent> RecordEvent() const;
  // Later work on this queue waits, on the device, for `event`.
  void WaitEvent(const NativeEvent& event) const;
  // Device milliseconds from `start` to `end`, events of this backend.
  double ElapsedMs(const NativeEvent& start, const NativeEvent& end) const;

  // Copies ordered on this queue (offsets from the tensor's first byte).
  void CopyFromHost(const void* host, DLTensor* dst, size_t offset, size_t nbytes) const;
  void CopyToHost(const DLTensor* src, size_t offset, void* host, size_t nbytes) const;
  void CopyDeviceToDevice(const DLTensor* src, DLTensor* dst, size_t nbytes) const;

  // Graphs: whether the backend records them, and updates them in place.
  bool records_graphs() const { return layer_->graphs != nullptr; }
  bool updates_graphs() const { return records_graphs() && layer_->graphs->graph_update; }
  // Starts a capture of the launches on this queue; false (the last error
  // says why) when the backend cannot capture here. Needs records_graphs().
  bool BeginCapture() const;
  // Ends the capture: the graph, or null with `why` when the backend
  // abandoned it.
  std::shared_ptr<NativeGraph> EndCapture(std::string* why) const;
  // Ends the capture and drops what it recorded.
  void AbandonCapture() const;
  // Ends the capture into `graph`, updated in place; false when the backend
  // could not (the graph is unchanged). Needs updates_graphs().
  bool EndCaptureInto(const NativeGraph& graph) const;
  void Launch(const NativeGraph& graph) const;

 private:
  const DeviceLayerTables* const layer_;
  const bool adopted_;
};

std::unique_ptr<StreamMode> HostWorkerMode(DLDevice device);
std::unique_ptr<StreamMode> EmulatedQueueMode(DLDevice device, DeviceAPI* api);

}  // namespace modrt

#endif  // MODRT_CORE_SRC_STREAM_MODE_H_
