// The WebGPU runtime's device: wgpu-native's process-wide state (the library,
// one instance, the default adapter, one device on it and its queue: modrt
// device webgpu(0)), the batch of launches being recorded, error scopes, and
// the storage buffers behind tensors. webgpu_device.cc opens the device and
// implements the device layer's device (plugin::DeviceAPI, RangedCopies);
// webgpu_submit.cc submits the batch; webgpu_module.cc launches on it.
#ifndef MODRT_BACKENDS_WEBGPU_WEBGPU_DEVICE_H_
#define MODRT_BACKENDS_WEBGPU_WEBGPU_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"
#include "wgpu_native.h"

namespace modrt {
namespace webgpu {

// "validation error", "out of memory", ... for a wgpu error.
const char* ErrorTypeName(WGPUErrorType type);

// What a wgpu callback delivers to the thread waiting for it. Another
// thread's poll may run the callback, and wgpu's own locks (Rust, futex-based)
// are invisible to ThreadSanitizer, so the hand-over goes through a mutex both
// threads knew before (one for the process): the constructor publishes the
// object, Set() and Done() synchronize with it.
std::mutex& CallbackMutex();

template <typename T>
class CallbackResult {
 public:
  CallbackResult() { std::lock_guard lock(CallbackMutex()); }
  void Set(T value) {
    std::lock_guard lock(CallbackMutex());
    value_ = std::move(value);
    done_ = true;
  }
  bool Done() {
    std::lock_guard lock(CallbackMutex());
    return done_;
  }
  T Take() {
    std::lock_guard lock(CallbackMutex());
    return std::move(value_);
  }
  // A copy, for a result read more than once.
  T Get() {
    std::lock_guard lock(CallbackMutex());
    return value_;
  }

 private:
  bool done_ = false;
  T value_{};
};

// A callback's handle on a shared result: made and read under
// CallbackMutex, because wgpu may run the callback on another thread and
// its own synchronisation is invisible to ThreadSanitizer.
template <typename R>
void* ShareWithCallback(const std::shared_ptr<R>& result) {
  std::lock_guard lock(CallbackMutex());
  return std::make_unique<std::shared_ptr<R>>(result).release();
}
template <typename R>
std::shared_ptr<R> TakeInCallback(void* handle) {
  std::unique_ptr<std::shared_ptr<R>> owned(static_cast<std::shared_ptr<R>*>(handle));
  std::lock_guard lock(CallbackMutex());
  return std::move(*owned);
}

// The paths the Python hook found for the `wgpu` package's library
// (webgpu.driver_candidates), read once by the first device use.
void SetDriverCandidates(std::vector<std::string> paths);

// Everything about the adapter a launch or an attribute needs.
struct AdapterInfo {
  std::string name, vendor, architecture, description;
  WGPUBackendType backend = WGPUBackendType_Undefined;
  WGPUAdapterType type = WGPUAdapterType_Unknown;
  uint32_t vendor_id = 0, device_id = 0, subgroup_min = 0, subgroup_max = 0;
  WGPULimits limits{};  // the device's: the adapter's own, all requested
  bool float16 = false;
  bool timestamp_query = false;  // WGPUFeatureName_TimestampQuery, on the device
};
// Process-wide wgpu-native state: the library, one instance, the default
// adapter and one device on it (modrt device webgpu(0)).
class Workspace : public plugin::LazyDriverState<Workspace> {
 public:
  const WgpuApi& api() const { return api_; }
  WGPUDevice device() const { return device_; }
  WGPUQueue queue() const { return queue_; }
  const AdapterInfo& info() const { return info_; }
  const std::string& library() const { return library_; }
  int count() const { return ok() ? 1 : 0; }

  // Checks that webgpu(id) exists; ValueError naming why not.
  void Require(int id) {
    if (!ok()) plugin::Fail("ValueError", "webgpu(", id, ") does not exist: ", reason());
    if (id != 0)
      plugin::Fail("ValueError", "webgpu(", id,
                   ") does not exist: wgpu-native gives modrt one adapter, webgpu(0)");
  }

  // Guards the queue: the batch of launches being recorded, its submission,
  // and every queue write (which must land in order with the launches).
  std::mutex& submit_mu() { return submit_mu_; }

  // Launches are recorded into one command encoder and submitted together:
  // by the next sync or copy, or once the batch holds kMaxBatch launches and
  // the work submitted before it is done (IdleLocked). While that work runs,
  // the batch grows instead (bounded by the core's in-flight limit), each
  // kernel's launches on uniform rings of their own, until a later launch
  // finds that work done or a wait on a stream worker has waited for it
  // (SubmitWhenIdle). A batch's uniform writes land before it runs; each
  // launch has its own slot.
  static constexpr int kMaxBatch = 64;

  // The encoder of the batch being recorded. Callers hold submit_mu().
  WGPUCommandEncoder PendingLocked();
  // A launch was recorded; submits the batch when it is full and the queue
  // idle. Callers hold submit_mu().
  void RecordedLocked();
  // Submits the batch being recorded, if any. Callers hold submit_mu().
  void FlushLocked();

  // Which batch is being recorded (it changes at every submission). Callers hold submit_mu().
  uint64_t batch() const { return batch_; }

  // Runs `create` inside a validation and an out-of-memory error scope; the
  // first error wgpu reports, or "".
  template <typename Create>
  std::string Scoped(Create&& create) {
    std::lock_guard lock(scope_mu_);
    api_.wgpuDevicePushErrorScope(device_, WGPUErrorFilter_OutOfMemory);
    api_.wgpuDevicePushErrorScope(device_, WGPUErrorFilter_Validation);
    create();
    std::string errors;
    for (int s = 0; s < 2; ++s) {
      CallbackResult<std::string> result;  // the error, "" for none
      WGPUPopErrorScopeCallbackInfo cb{};
      cb.mode = WGPUCallbackMode_AllowSpontaneous;
      cb.callback = [](WGPUPopErrorScopeStatus status, WGPUErrorType type, WGPUStringView message,
                       void* r, void*) {
        std::string error;
        if (status != WGPUPopErrorScopeStatus_Success) {
          error = "the error scope failed: " + ToString(message);
        } else if (type != WGPUErrorType_NoError) {
          error = plugin::StrCat(ErrorTypeName(type), ": ", ToString(message));
        }
        static_cast<CallbackResult<std::string>*>(r)->Set(std::move(error));
      };
      cb.userdata1 = &result;
      api_.wgpuDevicePopErrorScope(device_, cb);
      for (int spin = 0; !result.Done() && spin < 1000; ++spin)
        api_.wgpuInstanceProcessEvents(instance_);
      if (!result.Done()) {
        if (errors.empty()) errors = "wgpu never answered the error scope";
        continue;
      }
      std::string error = result.Take();
      if (errors.empty()) errors = std::move(error);
    }
    return errors;
  }

  // An error wgpu reported outside any scope since the last call ("" if none).
  std::string TakeUncapturedError() {
    if (!has_uncaptured_.load(std::memory_order_acquire)) return "";
    std::lock_guard lock(error_mu_);
    has_uncaptured_.store(false, std::memory_order_release);
    return std::move(uncaptured_);
  }

  // A submission made while earlier work still runs may wait in the driver
  // until that work ends (lavapipe's vkQueueSubmit does), on the caller's
  // thread and holding submit_mu(), which every launch and event recording
  // takes: behind a kernel that never ends, none of them would return, and
  // Ctrl-C could not end them. So a batch is submitted only once the work
  // submitted before it is done: by a launch that finds it so, or by a wait
  // (on a stream worker) that waited for it without holding the lock.

  // Waits for the work submitted so far (not the batch being recorded).
  void AwaitSubmitted();
  // Whether the work submitted so far is done, from one poll; never waits.
  // Callers hold submit_mu(), so nothing is submitted meanwhile.
  bool IdleLocked();
  // Whether the batch being recorded, if any, may be submitted now without
  // waiting in the driver: there is none, or the work before it is done.
  // Callers hold submit_mu().
  bool MaySubmitLocked() { return pending_ == nullptr || IdleLocked(); }
  // Submits the batch being recorded once the work before it is done,
  // waiting for that without the lock.
  void SubmitWhenIdle();
  // Submits what is recorded and waits for all of it.
  void Drain();

  // Polls the device until `done()` (a callback that a poll delivers, on this
  // thread or another). Never a blocking poll: wgpu-native holds the device's
  // fence lock through one, and a queue submission waits for that lock, so a
  // blocking poll behind a kernel that never ends stalled every other
  // thread's submission, and the launches and events queued behind it.
  template <typename Done>
  void PollUntil(Done&& done) {
    for (PollPacer pacer; !done(); pacer.Pause()) {
      api_.wgpuDevicePoll(device_, 0, nullptr);
      if (done()) return;
    }
  }

  // The pause between two polls: a yield at first (a small dispatch ends
  // within microseconds), then sleeps growing to a millisecond.
  class PollPacer {
   public:
    void Pause();

   private:
    int polls_ = 0;
  };

 private:
  friend class plugin::LazyDriverState<Workspace>;

  // Opens the library, the instance, the adapter and the device; why not, or "".
  std::string Init();
  // Keeps the first error wgpu reported outside any scope (or the device loss).
  void Record(std::string message);
  // Set when the work submitted up to the latest batch is done. Callers hold submit_mu_.
  std::shared_ptr<CallbackResult<bool>> WatchSubmittedLocked();

  static constexpr const char* kLabel = "modrt";
  std::unique_ptr<plugin::DriverLibrary> lib_;
  WgpuApi api_;
  std::string library_, version_;
  WGPUInstance instance_ = nullptr;
  WGPUAdapter adapter_ = nullptr;
  WGPUDevice device_ = nullptr;
  WGPUQueue queue_ = nullptr;
  AdapterInfo info_;
  std::mutex submit_mu_, scope_mu_, error_mu_;
  std::atomic<bool> has_uncaptured_{false};
  std::string uncaptured_;
  WGPUCommandEncoder pending_ = nullptr;
  int pending_count_ = 0;
  uint64_t batch_ = 0;
  std::shared_ptr<CallbackResult<bool>> submitted_done_;  // WatchSubmittedLocked's, for
  uint64_t submitted_done_batch_ = 0;                     // the batches before this one

 public:
  const std::string& version() const { return version_; }
};

// Device memory behind a tensor: a storage buffer.
struct Buffer {
  WGPUBuffer buffer = nullptr;
  uint64_t size = 0;  // bytes, a multiple of 4
  uint64_t id = 0;    // unique in the process: bind groups are cached by it, never by address
};

// The device of webgpu(0) (one for the process: memory, copies, ranged
// copies, attributes) into the device layer the plugin registers.
void AddDevice(plugin::DeviceLayer* layer);

}  // namespace webgpu
}  // namespace modrt

#endif  // MODRT_BACKENDS_WEBGPU_WEBGPU_DEVICE_H_
