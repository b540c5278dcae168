// The WebGPU runtime's submission (webgpu_device.h): launches are recorded
// into one command encoder, the batch, and submitted together to the
// device's one queue: by the next sync, host copy, or a full batch.
#include <mutex>
#include <string>

#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "wgpu_native.h"

namespace modrt {
namespace webgpu {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

WGPUCommandEncoder Workspace::PendingLocked() {
  if (pending_ == nullptr) pending_ = api_.wgpuDeviceCreateCommandEncoder(device_, nullptr);
  return pending_;
}

void Workspace::RecordedLocked() {
  if (++pending_count_ >= kMaxBatch) FlushLocked();
}

// An encoder wgpu found invalid is not submitted: wgpu-native's queue
// submission treats an invalid command buffer as fatal (a panic that aborts
// the process). Its error is kept for the next wait to raise.
void Workspace::FlushLocked() {
  if (pending_ == nullptr) return;
  WGPUCommandBuffer cmd = nullptr;
  const std::string error = Scoped([&] { cmd = api_.wgpuCommandEncoderFinish(pending_, nullptr); });
  api_.wgpuCommandEncoderRelease(pending_);
  pending_ = nullptr;
  const int dropped = pending_count_;
  pending_count_ = 0;
  ++batch_;
  if (!error.empty()) {
    if (cmd != nullptr) api_.wgpuCommandBufferRelease(cmd);
    Record(StrCat("wgpu refused a batch of ", dropped, " launches, which did not run: ", error));
    return;
  }
  if (cmd != nullptr) {
    api_.wgpuQueueSubmit(queue_, 1, &cmd);
    api_.wgpuCommandBufferRelease(cmd);
  }
}

void Workspace::Flush() {
  std::lock_guard lock(submit_mu_);
  FlushLocked();
}

void Workspace::Drain() {
  Flush();
  api_.wgpuDevicePoll(device_, 1, nullptr);
}

}  // namespace webgpu
}  // namespace modrt
