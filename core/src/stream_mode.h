// How a stream's launches execute (stream.h), one implementation per mode,
// each in a file of its own. Core-internal.
// - host worker (stream_mode_host.cc): cpu; the stream's worker thread runs
//   the launches, so it knows when each completes;
// - emulated queue (stream_mode_emulated.cc): a backend without the stream
//   extension; every stream of the device shares the backend's one in-order
//   queue, and a device sync on the worker tells what completed;
// - native queue (stream_mode_native.cc): a backend with the stream extension
//   (ModrtStreamExtension); the stream is one of the backend's own queues,
//   synchronized (or waited on with a timeout) by the backend.
// StreamState keeps what every mode shares: the numbering of launches, the
// pending list, the in-flight limits, the worker, waits and latched errors.
#ifndef MODRT_CORE_SRC_STREAM_MODE_H_
#define MODRT_CORE_SRC_STREAM_MODE_H_

#include <atomic>
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
  // The backend's queues, and this stream's queue among them (NULL: the
  // plugin's default queue); null queues outside the native queue mode.
  const NativeQueues* queues() const { return queues_; }
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
  const NativeQueues* queues_ = nullptr;
  void* queue_ = nullptr;
};

std::unique_ptr<StreamMode> HostWorkerMode(DLDevice device);
std::unique_ptr<StreamMode> EmulatedQueueMode(DLDevice device, DeviceAPI* api);
// Creates the stream's queue (the default stream's is the plugin's default
// queue), or adopts `external` (stream_adopt; ValueError when it cannot).
std::unique_ptr<StreamMode> NativeQueueMode(DLDevice device, const NativeQueues* queues,
                                            bool is_default, const uint64_t* external);

}  // namespace modrt

#endif  // MODRT_CORE_SRC_STREAM_MODE_H_
