// The emulated queue mode (stream_mode.h): a backend without the stream
// extension has one in-order queue per device, which all its streams share;
// a device sync on the stream's worker tells what completed.
#include <memory>
#include <string>

#include "stream_mode.h"

namespace modrt {

namespace {

class EmulatedQueue final : public StreamMode {
 public:
  EmulatedQueue(DLDevice device, DeviceAPI* api)
      : StreamMode(Kind::kEmulatedQueue, device), api_(api) {}

  std::string Describe(bool) const override {
    return "core emulation: launches go in order to the backend's one queue; the stream's "
           "worker thread waits for them with a device sync";
  }

  void Synchronize(uint64_t device_epoch) override {
    api_->Sync(device_.device_id);
    // The device's queue is drained: every launch counted before the sync
    // was requested is complete, on every stream of the device.
    if (DeviceEpochs* e = EpochsOf(device_)) {
      uint64_t seen = e->completed.load();
      while (seen < device_epoch && !e->completed.compare_exchange_weak(seen, device_epoch)) {
      }
    }
  }

 private:
  DeviceAPI* const api_;
};

}  // namespace

std::unique_ptr<StreamMode> EmulatedQueueMode(DLDevice device, DeviceAPI* api) {
  return std::make_unique<EmulatedQueue>(device, api);
}

}  // namespace modrt
