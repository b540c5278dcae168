// The WebGPU runtime's submission (webgpu_device.h): launches are recorded
// into one command encoder, the batch, and submitted together to the
// device's one queue: by the next sync or host copy, or a full batch once the
// work submitted before it is done.
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

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
  // Past kMaxBatch, one poll per launch until the work before is done: only
  // while the device is behind.
  if (++pending_count_ >= kMaxBatch && IdleLocked()) FlushLocked();
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

std::shared_ptr<CallbackResult<bool>> Workspace::WatchSubmittedLocked() {
  if (submitted_done_ == nullptr || submitted_done_batch_ != batch_) {
    submitted_done_ = std::make_shared<CallbackResult<bool>>();
    submitted_done_batch_ = batch_;
    WGPUQueueWorkDoneCallbackInfo cb{};
    cb.mode = WGPUCallbackMode_AllowSpontaneous;
    cb.callback = [](WGPUQueueWorkDoneStatus, WGPUStringView, void* done, void*) {
      TakeInCallback<CallbackResult<bool>>(done)->Set(true);
    };
    cb.userdata1 = ShareWithCallback(submitted_done_);
    api_.wgpuQueueOnSubmittedWorkDone(queue_, cb);
  }
  return submitted_done_;
}

void Workspace::AwaitSubmitted() {
  std::shared_ptr<CallbackResult<bool>> done;
  {
    std::lock_guard lock(submit_mu_);
    done = WatchSubmittedLocked();
  }
  PollUntil([&] { return done->Done(); });
}

bool Workspace::IdleLocked() {
  const std::shared_ptr<CallbackResult<bool>> done = WatchSubmittedLocked();
  if (!done->Done()) api_.wgpuDevicePoll(device_, 0, nullptr);
  return done->Done();
}

void Workspace::SubmitWhenIdle() {
  for (;;) {
    AwaitSubmitted();
    // A launch may have submitted meanwhile (it found the queue idle): then
    // wait for that too, never submitting behind running work.
    std::lock_guard lock(submit_mu_);
    if (IdleLocked()) return FlushLocked();
  }
}

void Workspace::Drain() {
  SubmitWhenIdle();
  AwaitSubmitted();
}

void Workspace::PollPacer::Pause() {
  constexpr int kYields = 64;
  if (++polls_ <= kYields) {
    std::this_thread::yield();
    return;
  }
  const int doublings = std::min(polls_ - kYields, 7);  // 16 us .. 1 ms
  std::this_thread::sleep_for(std::chrono::microseconds(8 << doublings));
}

}  // namespace webgpu
}  // namespace modrt
