// The host worker mode (stream_mode.h): cpu launches run, in order, on the
// stream's worker thread.
#include <memory>
#include <string>

#include "stream_mode.h"

namespace modrt {

namespace {

class HostWorker final : public StreamMode {
 public:
  explicit HostWorker(DLDevice device) : StreamMode(Kind::kHostWorker, device) {}

  std::string Describe(bool) const override {
    return "core: launches run in order on the stream's worker thread";
  }
  // The worker ran everything queued before this item itself.
  void Synchronize(uint64_t) override {}
};

}  // namespace

std::unique_ptr<StreamMode> HostWorkerMode(DLDevice device) {
  return std::make_unique<HostWorker>(device);
}

}  // namespace modrt
