// libmodrt_runtime_webgpu.so: WGSL compute on wgpu-native (the `wgpu`
// package's libwgpu_native, dlopen'ed; on Mesa's lavapipe on a plain CPU
// machine, any Vulkan, Metal or D3D12 adapter elsewhere).
//
// Kernel conventions, for shaders written by hand or by codegen (docs/WEBGPU.md):
// - buffer arguments are storage buffers of @group(0), @binding(0), (1), ... in
//   argument order (`var<storage, read>` or `var<storage, read_write>`);
// - scalar arguments form one uniform block at the next binding (the number of
//   buffer arguments), in argument order, each at an offset aligned to its size
//   (WGSL's uniform layout for 32-bit scalars): `var<uniform> n: i32` for one,
//   a struct for several;
// - threadIdx.{x,y,z} is the workgroup size: a @workgroup_size dimension that
//   names an override constant is set to it at launch, a literal one must equal
//   it; dyn_shared_mem sets the override constant `dyn_shared_mem` (bytes);
// - blockIdx.{x,y,z} is the number of workgroups dispatched.
//
// Launches are recorded into one command encoder and submitted in batches (by
// sync, a host copy, or kMaxBatch launches); each launch's scalars have a slot
// of their own in the kernel's uniform ring.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend_identity.h"
#include "modrt/driver.h"
#include "modrt/plugin.h"
#include "wgpu_native.h"
#include "wgsl_scan.h"

namespace modrt {
namespace webgpu {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

const char* BackendName(WGPUBackendType type) {
  switch (type) {
    case WGPUBackendType_Null: return "null";
    case WGPUBackendType_WebGPU: return "webgpu";
    case WGPUBackendType_D3D11: return "d3d11";
    case WGPUBackendType_D3D12: return "d3d12";
    case WGPUBackendType_Metal: return "metal";
    case WGPUBackendType_Vulkan: return "vulkan";
    case WGPUBackendType_OpenGL: return "opengl";
    case WGPUBackendType_OpenGLES: return "opengles";
    default: return "undefined";
  }
}

const char* AdapterTypeName(WGPUAdapterType type) {
  switch (type) {
    case WGPUAdapterType_DiscreteGPU: return "discrete_gpu";
    case WGPUAdapterType_IntegratedGPU: return "integrated_gpu";
    case WGPUAdapterType_CPU: return "cpu";
    default: return "unknown";
  }
}

// A multi-line wgpu message ("Validation Error\n\nCaused by:\n  ...") on one line.
std::string OneLine(const std::string& message) {
  std::string out;
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    std::string line = message.substr(start, end - start);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos) {
      line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
      out += (out.empty() ? "" : " ") + line;
    }
    start = end + 1;
  }
  return out;
}

const char* ErrorTypeName(WGPUErrorType type) {
  switch (type) {
    case WGPUErrorType_Validation: return "validation error";
    case WGPUErrorType_OutOfMemory: return "out of memory";
    case WGPUErrorType_Internal: return "internal error";
    default: return "error";
  }
}

// What a wgpu callback delivers to the thread waiting for it. Another
// thread's poll may run the callback, and wgpu's own locks (Rust, futex-based)
// are invisible to ThreadSanitizer, so the hand-over goes through a mutex both
// threads knew before (one for the process): the constructor publishes the
// object, Set() and Done() synchronize with it.
std::mutex& CallbackMutex() {
  static std::mutex* mu = std::make_unique<std::mutex>().release();
  return *mu;
}

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

 private:
  bool done_ = false;
  T value_{};
};

// The paths the Python hook found for the `wgpu` package's library
// (webgpu.driver_candidates), read once by the first device use.
struct PythonCandidates {
  std::mutex mu;
  std::vector<std::string> paths;
};
PythonCandidates& Candidates() {
  static PythonCandidates* c = std::make_unique<PythonCandidates>().release();
  return *c;
}

// Everything about the adapter a launch or an attribute needs.
struct AdapterInfo {
  std::string name, vendor, architecture, description;
  WGPUBackendType backend = WGPUBackendType_Undefined;
  WGPUAdapterType type = WGPUAdapterType_Unknown;
  uint32_t vendor_id = 0, device_id = 0, subgroup_min = 0, subgroup_max = 0;
  WGPULimits limits{};  // the device's: the adapter's own, all requested
  bool float16 = false;
};

// Process-wide wgpu-native state: the library, one instance, the default
// adapter and one device on it (modrt device webgpu(0)).
class Workspace : public LazyDriverState<Workspace> {
 public:
  const WgpuApi& api() const { return api_; }
  WGPUDevice device() const { return device_; }
  WGPUQueue queue() const { return queue_; }
  const AdapterInfo& info() const { return info_; }
  const std::string& library() const { return library_; }
  int count() const { return ok() ? 1 : 0; }

  // Checks that webgpu(id) exists; ValueError naming why not.
  void Require(int id) {
    if (!ok()) Fail("ValueError", "webgpu(", id, ") does not exist: ", reason());
    if (id != 0)
      Fail("ValueError", "webgpu(", id,
           ") does not exist: wgpu-native gives modrt one adapter, webgpu(0)");
  }

  // Guards the queue: the batch of launches being recorded, its submission,
  // and every queue write (which must land in order with the launches).
  std::mutex& submit_mu() { return submit_mu_; }

  // Launches are recorded into one command encoder and submitted together
  // (kMaxBatch at most): by the next sync, copy, or a full batch. A batch's
  // uniform writes land before it runs; each launch has its own slot.
  static constexpr int kMaxBatch = 64;

  // The encoder of the batch being recorded. Callers hold submit_mu().
  WGPUCommandEncoder PendingLocked() {
    if (pending_ == nullptr) pending_ = api_.wgpuDeviceCreateCommandEncoder(device_, nullptr);
    return pending_;
  }
  // A launch was recorded; submits the batch when it is full. Callers hold submit_mu().
  void RecordedLocked() {
    if (++pending_count_ >= kMaxBatch) FlushLocked();
  }
  // Submits the batch being recorded, if any. Callers hold submit_mu().
  void FlushLocked() {
    if (pending_ == nullptr) return;
    WGPUCommandBuffer cmd = api_.wgpuCommandEncoderFinish(pending_, nullptr);
    api_.wgpuCommandEncoderRelease(pending_);
    pending_ = nullptr;
    pending_count_ = 0;
    ++batch_;
    if (cmd != nullptr) {
      api_.wgpuQueueSubmit(queue_, 1, &cmd);
      api_.wgpuCommandBufferRelease(cmd);
    }
  }
  void Flush() {
    std::lock_guard lock(submit_mu_);
    FlushLocked();
  }
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
          error = StrCat(ErrorTypeName(type), ": ", ToString(message));
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

  // Submits what is recorded and waits for all of it.
  void Drain() {
    Flush();
    api_.wgpuDevicePoll(device_, 1, nullptr);
  }

 private:
  friend class LazyDriverState<Workspace>;

  std::string Init() {
    std::vector<std::string> python;
    {
      std::lock_guard lock(Candidates().mu);
      python = Candidates().paths;
    }
    std::string why = LoadWgpuNative(DriverCandidates(python), &lib_, &api_, &library_);
    if (!why.empty()) return why;
    const uint32_t v = api_.wgpuGetVersion();
    version_ = StrCat(v >> 24, ".", (v >> 16) & 0xff, ".", (v >> 8) & 0xff, ".", v & 0xff);
    const std::string lib = StrCat("wgpu-native ", version_, " (", library_, ")");

    instance_ = api_.wgpuCreateInstance(nullptr);
    if (instance_ == nullptr) return lib + " could not create an instance";

    struct AdapterResult {
      std::atomic<bool> done{false};
      WGPURequestAdapterStatus status = WGPURequestAdapterStatus_Error;
      WGPUAdapter adapter = nullptr;
      std::string message;
    } ar;
    WGPURequestAdapterOptions options{};
    options.powerPreference = WGPUPowerPreference_HighPerformance;
    WGPURequestAdapterCallbackInfo acb{};
    acb.mode = WGPUCallbackMode_AllowSpontaneous;
    acb.callback = [](WGPURequestAdapterStatus status, WGPUAdapter adapter, WGPUStringView message,
                      void* r, void*) {
      auto* out = static_cast<AdapterResult*>(r);
      out->status = status;
      out->adapter = adapter;
      out->message = ToString(message);
      out->done = true;
    };
    acb.userdata1 = &ar;
    api_.wgpuInstanceRequestAdapter(instance_, &options, acb);
    for (int spin = 0; !ar.done && spin < 1000; ++spin) api_.wgpuInstanceProcessEvents(instance_);
    if (!ar.done || ar.status != WGPURequestAdapterStatus_Success || ar.adapter == nullptr) {
      return StrCat(
          lib, " found no adapter: ", ar.message.empty() ? "no reason given" : OneLine(ar.message),
          "; is a Vulkan driver (Mesa's lavapipe: mesa-vulkan-drivers) installed?");
    }
    adapter_ = ar.adapter;

    WGPUAdapterInfo ai{};
    if (api_.wgpuAdapterGetInfo(adapter_, &ai) == WGPUStatus_Success) {
      info_.name = ToString(ai.device);
      info_.vendor = ToString(ai.vendor);
      info_.architecture = ToString(ai.architecture);
      info_.description = ToString(ai.description);
      info_.backend = ai.backendType;
      info_.type = ai.adapterType;
      info_.vendor_id = ai.vendorID;
      info_.device_id = ai.deviceID;
      info_.subgroup_min = ai.subgroupMinSize;
      info_.subgroup_max = ai.subgroupMaxSize;
      api_.wgpuAdapterInfoFreeMembers(ai);
    }
    WGPULimits adapter_limits{};
    if (api_.wgpuAdapterGetLimits(adapter_, &adapter_limits) != WGPUStatus_Success) {
      return StrCat(lib, ": cannot read the limits of adapter ", info_.name);
    }

    // The device gets everything the adapter offers: its limits, not
    // WebGPU's defaults, and f16 where there is such.
    std::vector<WGPUFeatureName> features;
    if (api_.wgpuAdapterHasFeature(adapter_, WGPUFeatureName_ShaderF16))
      features.push_back(WGPUFeatureName_ShaderF16);
    WGPUDeviceDescriptor dd{};
    dd.label = View(kLabel);
    dd.requiredFeatureCount = features.size();
    dd.requiredFeatures = features.data();
    dd.requiredLimits = &adapter_limits;
    dd.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
    dd.deviceLostCallbackInfo.callback = [](WGPUDevice const*, WGPUDeviceLostReason reason,
                                            WGPUStringView message, void* self, void*) {
      if (reason == WGPUDeviceLostReason_Destroyed ||
          reason == WGPUDeviceLostReason_CallbackCancelled)
        return;
      static_cast<Workspace*>(self)->Record(StrCat("the device was lost: ", ToString(message)));
    };
    dd.deviceLostCallbackInfo.userdata1 = this;
    dd.uncapturedErrorCallbackInfo.callback = [](WGPUDevice const*, WGPUErrorType type,
                                                 WGPUStringView message, void* self, void*) {
      static_cast<Workspace*>(self)->Record(StrCat(ErrorTypeName(type), ": ", ToString(message)));
    };
    dd.uncapturedErrorCallbackInfo.userdata1 = this;
    struct DeviceResult {
      std::atomic<bool> done{false};
      WGPURequestDeviceStatus status = WGPURequestDeviceStatus_Error;
      WGPUDevice device = nullptr;
      std::string message;
    } dr;
    WGPURequestDeviceCallbackInfo dcb{};
    dcb.mode = WGPUCallbackMode_AllowSpontaneous;
    dcb.callback = [](WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message,
                      void* r, void*) {
      auto* out = static_cast<DeviceResult*>(r);
      out->status = status;
      out->device = device;
      out->message = ToString(message);
      out->done = true;
    };
    dcb.userdata1 = &dr;
    api_.wgpuAdapterRequestDevice(adapter_, &dd, dcb);
    for (int spin = 0; !dr.done && spin < 1000; ++spin) api_.wgpuInstanceProcessEvents(instance_);
    if (!dr.done || dr.status != WGPURequestDeviceStatus_Success || dr.device == nullptr) {
      return StrCat(lib, " could not open a device on adapter ", info_.name, ": ",
                    OneLine(dr.message));
    }
    device_ = dr.device;
    queue_ = api_.wgpuDeviceGetQueue(device_);
    if (api_.wgpuDeviceGetLimits(device_, &info_.limits) != WGPUStatus_Success)
      info_.limits = adapter_limits;
    info_.limits.nextInChain = nullptr;
    info_.float16 = api_.wgpuDeviceHasFeature(device_, WGPUFeatureName_ShaderF16);
    return "";
  }

  void Record(std::string message) {
    std::lock_guard lock(error_mu_);
    if (uncaptured_.empty()) uncaptured_ = std::move(message);
    has_uncaptured_.store(true, std::memory_order_release);
  }

  static constexpr const char* kLabel = "modrt";
  std::unique_ptr<DriverLibrary> lib_;
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

 public:
  const std::string& version() const { return version_; }
};

// Device memory behind a tensor: a storage buffer.
struct Buffer {
  WGPUBuffer buffer = nullptr;
  uint64_t size = 0;  // bytes, a multiple of 4
  uint64_t id = 0;    // unique in the process: bind groups are cached by it, never by address
};

uint64_t NextBufferId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

uint64_t RoundUp4(uint64_t n) { return (n + 3) / 4 * 4; }

class WebGpuDeviceAPI final : public DeviceAPI {
 public:
  int DeviceCount() override { return Workspace::Get().count(); }
  std::string UnavailableReason() override {
    Workspace& ws = Workspace::Get();
    return ws.ok() ? "" : ws.reason();
  }
  void GetAttr(int id, std::string_view name, Ret* ret) override {
    Workspace& ws = Workspace::Get();
    ws.Require(id);
    const AdapterInfo& a = ws.info();
    const WGPULimits& l = a.limits;
    if (name == "name" || name == "device_name" || name == "adapter_name")
      return ret->SetStr(a.name);
    if (name == "vendor") return ret->SetStr(a.vendor);
    if (name == "architecture") return ret->SetStr(a.architecture);
    if (name == "description" || name == "driver_description") return ret->SetStr(a.description);
    if (name == "backend") return ret->SetStr(BackendName(a.backend));
    if (name == "device_type" || name == "adapter_type")
      return ret->SetStr(AdapterTypeName(a.type));
    if (name == "vendor_id") return ret->SetInt(a.vendor_id);
    if (name == "wgpu_native_version" || name == "compute_version")
      return ret->SetStr(ws.version());
    if (name == "driver_library") return ret->SetStr(ws.library());
    if (name == "max_threads_per_block" || name == "max_compute_invocations_per_workgroup") {
      return ret->SetInt(l.maxComputeInvocationsPerWorkgroup);
    }
    if (name == "max_shared_memory_per_block" || name == "max_compute_workgroup_storage_size") {
      return ret->SetInt(l.maxComputeWorkgroupStorageSize);
    }
    if (name == "warp_size" || name == "thread_warp_size")
      return ret->SetInt(a.subgroup_min ? a.subgroup_min : 1);
    if (name == "max_storage_buffer_binding_size")
      return ret->SetInt(static_cast<int64_t>(l.maxStorageBufferBindingSize));
    if (name == "max_storage_buffers_per_shader_stage")
      return ret->SetInt(l.maxStorageBuffersPerShaderStage);
    if (name == "max_uniform_buffer_binding_size")
      return ret->SetInt(static_cast<int64_t>(l.maxUniformBufferBindingSize));
    if (name == "max_buffer_size") return ret->SetInt(static_cast<int64_t>(l.maxBufferSize));
    if (name == "max_compute_workgroups_per_dimension")
      return ret->SetInt(l.maxComputeWorkgroupsPerDimension);
    if (name == "supports_float16") return ret->SetInt(a.float16 ? 1 : 0);
    const uint32_t sizes[3] = {l.maxComputeWorkgroupSizeX, l.maxComputeWorkgroupSizeY,
                               l.maxComputeWorkgroupSizeZ};
    static const char* const kAxes[] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d) {
      if (name == StrCat("max_block_dim_", kAxes[d]) ||
          name == StrCat("max_compute_workgroup_size_", kAxes[d])) {
        return ret->SetInt(sizes[d]);
      }
      if (name == StrCat("max_grid_dim_", kAxes[d]))
        return ret->SetInt(l.maxComputeWorkgroupsPerDimension);
    }
  }
  void* Alloc(int id, size_t nbytes) override {
    Workspace& ws = Workspace::Get();
    ws.Require(id);
    const WGPULimits& l = ws.info().limits;
    const uint64_t size = RoundUp4(std::max<uint64_t>(nbytes, 4));
    if (size > l.maxBufferSize) {
      Fail("ValueError", "webgpu(", id, "): a buffer of ", nbytes,
           " bytes exceeds the adapter's limit of ", l.maxBufferSize);
    }
    WGPUBufferDescriptor d{};
    d.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
    d.size = size;
    auto buf = std::make_unique<Buffer>();
    buf->size = size;
    buf->id = NextBufferId();
    std::string error =
        ws.Scoped([&] { buf->buffer = ws.api().wgpuDeviceCreateBuffer(ws.device(), &d); });
    if (buf->buffer == nullptr || !error.empty()) {
      if (buf->buffer) ws.api().wgpuBufferRelease(buf->buffer);
      Fail("RuntimeError", "webgpu(", id, "): allocation of ", nbytes, " bytes failed: ", error);
    }
    return buf.release();
  }
  void Free(int id, void* ptr) override {
    std::unique_ptr<Buffer> buf(static_cast<Buffer*>(ptr));
    Workspace& ws = Workspace::Get();
    ws.Require(id);
    // wgpu keeps the buffer alive for work already submitted that uses it.
    ws.api().wgpuBufferRelease(buf->buffer);
  }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    ws.Require(t->device.device_id);
    const auto* buf = static_cast<const Buffer*>(t->data);
    const uint64_t offset = t->byte_offset;
    CheckRange(*buf, offset, nbytes, "copy into");
    std::lock_guard lock(ws.submit_mu());
    // The write must land after the launches before it: submit them first.
    ws.FlushLocked();
    if (nbytes % 4 == 0) {
      ws.api().wgpuQueueWriteBuffer(ws.queue(), buf->buffer, offset, src, nbytes);
    } else {
      // Writes are whole 4-byte words: the tail is padded with zeros (the
      // allocation is rounded up, so the padding lies past the tensor).
      std::vector<uint8_t> padded(RoundUp4(nbytes), 0);
      std::memcpy(padded.data(), src, nbytes);
      ws.api().wgpuQueueWriteBuffer(ws.queue(), buf->buffer, offset, padded.data(), padded.size());
    }
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Workspace::Get();
    ws.Require(t->device.device_id);
    const WgpuApi& api = ws.api();
    const auto* buf = static_cast<const Buffer*>(t->data);
    const uint64_t offset = t->byte_offset;
    CheckRange(*buf, offset, nbytes, "copy from");
    const uint64_t size = RoundUp4(nbytes);
    WGPUBufferDescriptor d{};
    d.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    d.size = size;
    WGPUBuffer staging = api.wgpuDeviceCreateBuffer(ws.device(), &d);
    if (staging == nullptr)
      Fail("RuntimeError", "webgpu: cannot create a staging buffer of ", size, " bytes");
    struct Release {
      const WgpuApi& api;
      WGPUBuffer b;
      ~Release() { api.wgpuBufferRelease(b); }
    } release{api, staging};
    {
      std::lock_guard lock(ws.submit_mu());
      api.wgpuCommandEncoderCopyBufferToBuffer(ws.PendingLocked(), buf->buffer, offset, staging, 0,
                                               size);
      ws.FlushLocked();  // with the launches before it
    }
    // (status, message); another thread's poll may deliver it.
    CallbackResult<std::pair<WGPUMapAsyncStatus, std::string>> mapped_result;
    WGPUBufferMapCallbackInfo cb{};
    cb.mode = WGPUCallbackMode_AllowSpontaneous;
    cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* r, void*) {
      static_cast<CallbackResult<std::pair<WGPUMapAsyncStatus, std::string>>*>(r)->Set(
          {status, ToString(message)});
    };
    cb.userdata1 = &mapped_result;
    api.wgpuBufferMapAsync(staging, WGPUMapMode_Read, 0, size, cb);
    while (!mapped_result.Done()) api.wgpuDevicePoll(ws.device(), 1, nullptr);
    const auto [map_status, map_message] = mapped_result.Take();
    if (map_status != WGPUMapAsyncStatus_Success) {
      Fail("RuntimeError", "webgpu: reading ", nbytes, " bytes back failed: ", map_message);
    }
    const void* mapped = api.wgpuBufferGetConstMappedRange(staging, 0, size);
    if (mapped == nullptr) Fail("RuntimeError", "webgpu: the staging buffer did not map");
    std::memcpy(dst, mapped, nbytes);
    api.wgpuBufferUnmap(staging);
    if (std::string e = ws.TakeUncapturedError(); !e.empty()) Fail("RuntimeError", "webgpu: ", e);
  }
  void Sync(int id) override {
    Workspace& ws = Workspace::Get();
    ws.Require(id);
    ws.Drain();
    if (std::string e = ws.TakeUncapturedError(); !e.empty()) Fail("RuntimeError", "webgpu: ", e);
  }

 private:
  static void CheckRange(const Buffer& buf, uint64_t offset, size_t nbytes, const char* what) {
    if (offset % 4 != 0)
      Fail("ValueError", "webgpu: cannot ", what, " a tensor at byte offset ", offset,
           " (not a multiple of 4)");
    if (offset + RoundUp4(nbytes) > buf.size) {
      Fail("ValueError", "webgpu: ", what, " ", nbytes, " bytes at offset ", offset,
           " overruns a buffer of ", buf.size);
    }
  }
};

// The uniform block of a function's scalar arguments.
struct UniformLayout {
  std::vector<uint32_t> offsets;  // per argument (scalars only)
  uint32_t size = 0;              // a multiple of 16; 0 without scalars
};

// How one function runs: its shader module, entry point and bindings.
struct Kernel {
  const FunctionInfo* info = nullptr;
  std::string entry;
  EntryPoint scan;
  bool has_dyn_shared_override = false;
  size_t num_buffers = 0;
  UniformLayout uniform;
  WGPUShaderModule shader = nullptr;
  WGPUBindGroupLayout bind_layout = nullptr;
  WGPUPipelineLayout layout = nullptr;
  // The uniform ring: kMaxBatch slots of `uniform_stride` bytes, one per
  // launch of a batch, bound with a dynamic offset.
  WGPUBuffer uniform_buffer = nullptr;
  uint32_t uniform_stride = 0;
};

// What launches of one kernel remember between them; guarded by the
// workspace's submit_mu().
struct LaunchCache {
  // The last bind group, for these buffers (by id).
  std::vector<uint64_t> buffer_ids;
  WGPUBindGroup group = nullptr;
  // The uniform ring's use in the batch being recorded.
  uint64_t batch = UINT64_MAX;
  uint32_t next_slot = 0;
  bool has_last = false;
  uint32_t last_offset = 0;
  std::vector<uint8_t> last_uniform;
};

// One compute pipeline: a kernel with its override constants set.
struct Pipeline {
  WGPUComputePipeline pipeline = nullptr;
};

class WebGpuModule final : public PayloadModule {
 public:
  explicit WebGpuModule(Payload payload) : PayloadModule(std::move(payload)) {
    Workspace& ws = Workspace::Get();
    // Without an adapter the module still loads (and saves): it is compiled
    // by the first launch, which then says why there is no device.
    if (!ws.ok()) return;
    CompileAll(ws);
    compiled_ = true;
  }
  ~WebGpuModule() override {
    Workspace& ws = Workspace::Get();
    if (ws.ok()) ReleaseAll(ws.api());
  }

  ObjectRef GetFunction(const std::string& name) override {
    return LaunchingFunction(
        name, [this](const FunctionInfo& info, size_t, const Args& args) { Launch(info, args); });
  }

  int64_t pipelines_created() const { return pipelines_created_.load(); }

 private:
  // (function, override values of x, y, z (0 when fixed), dynamic shared bytes)
  using Key = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>;

  // Compiles every function; on an error, releases what was made (the
  // destructor of a module whose constructor throws never runs) and rethrows.
  void CompileAll(Workspace& ws) {
    try {
      for (const auto& [name, info] : payload().fmap) Compile(ws, info);
    } catch (...) {
      ReleaseAll(ws.api());
      throw;
    }
  }

  void ReleaseAll(const WgpuApi& api) {
    for (auto& [key, p] : pipelines_) api.wgpuComputePipelineRelease(p.pipeline);
    for (auto& [name, c] : caches_) {
      if (c.group) api.wgpuBindGroupRelease(c.group);
    }
    for (auto& [name, k] : kernels_) ReleaseKernel(api, k);
    pipelines_.clear();
    caches_.clear();
    kernels_.clear();
  }

  static void ReleaseKernel(const WgpuApi& api, Kernel& k) {
    if (k.uniform_buffer) api.wgpuBufferRelease(k.uniform_buffer);
    if (k.layout) api.wgpuPipelineLayoutRelease(k.layout);
    if (k.bind_layout) api.wgpuBindGroupLayoutRelease(k.bind_layout);
    if (k.shader) api.wgpuShaderModuleRelease(k.shader);
  }

  static UniformLayout LayoutUniform(const FunctionInfo& info) {
    UniformLayout u;
    u.offsets.assign(info.args.size(), 0);
    uint32_t offset = 0;
    for (size_t i = 0; i < info.args.size(); ++i) {
      const ArgInfo& a = info.args[i];
      if (a.is_buffer) continue;
      const bool wgsl_scalar =
          a.dtype.lanes == 1 &&
          ((a.dtype.code == kDLInt && a.dtype.bits == 32) ||
           (a.dtype.code == kDLUInt && a.dtype.bits == 32) ||
           (a.dtype.code == kDLFloat && (a.dtype.bits == 32 || a.dtype.bits == 16)));
      if (!wgsl_scalar) {
        Fail("TypeError", info.name, ": argument ", i, " is a ", DTypeToString(a.dtype),
             " scalar; WGSL uniforms take int32, uint32, float32 or float16 (i32, u32, f32, f16)");
      }
      const uint32_t bytes = a.dtype.bits / 8;
      offset = (offset + bytes - 1) / bytes * bytes;
      u.offsets[i] = offset;
      offset += bytes;
    }
    u.size = offset == 0 ? 0 : (offset + 15) / 16 * 16;
    return u;
  }

  // Creates the shader module (wgpu validates the WGSL here), the bind group
  // and pipeline layouts, and, when the workgroup size is fixed, the pipeline.
  void Compile(Workspace& ws, const FunctionInfo& info) {
    const WgpuApi& api = ws.api();
    const WGPULimits& limits = ws.info().limits;
    auto code = payload().smap.find(info.name);
    if (code == payload().smap.end())
      Fail("ValueError", "the module has no WGSL for '", info.name, "'");
    const std::string& wgsl = code->second;
    if (const size_t bad = InvalidUtf8At(wgsl); bad != std::string::npos) {
      Fail("ValueError", "the WGSL of '", info.name, "' is not UTF-8 text: byte ", bad, " (0x",
           "0123456789abcdef"[static_cast<unsigned char>(wgsl[bad]) >> 4],
           "0123456789abcdef"[static_cast<unsigned char>(wgsl[bad]) & 15],
           ") starts no valid character");
    }
    const WgslInfo scan = ScanWgsl(wgsl);

    Kernel k;
    k.info = &info;
    struct Guard {
      const WgpuApi& api;
      Kernel& k;
      bool armed = true;
      ~Guard() {
        if (armed) ReleaseKernel(api, k);
      }
    } guard{api, k};

    // The entry point: the @compute function named like the function, else the only one.
    const EntryPoint* entry = nullptr;
    for (const EntryPoint& e : scan.entries) {
      if (e.name == info.name) entry = &e;
    }
    if (entry == nullptr && scan.entries.size() == 1) entry = &scan.entries[0];
    if (entry == nullptr && scan.entries.size() > 1) {
      std::string names;
      for (const EntryPoint& e : scan.entries) names += (names.empty() ? "" : ", ") + e.name;
      Fail("ValueError", "the WGSL of '", info.name, "' has several @compute entry points (", names,
           ") and none is named '", info.name, "'");
    }
    std::array<bool, 3> launched{};
    for (const std::string& tag : info.launch_tags) {
      if (tag.rfind("threadIdx.", 0) == 0) launched[tag.back() - 'x'] = true;
      if (tag == "dyn_shared_mem") k.has_dyn_shared_override = true;
    }
    if (entry != nullptr) {
      k.entry = entry->name;
      k.scan = *entry;
      const uint32_t max[3] = {limits.maxComputeWorkgroupSizeX, limits.maxComputeWorkgroupSizeY,
                               limits.maxComputeWorkgroupSizeZ};
      int64_t threads = 1;
      bool all_fixed = true;
      for (int a = 0; a < 3; ++a) {
        const WorkgroupDim& d = entry->size[a];
        if (!d.value) {
          all_fixed = false;
          continue;
        }
        if (*d.value > max[a]) {
          Fail("ValueError", info.name, ": @workgroup_size ", "xyz"[a], " = ", *d.value,
               " exceeds the adapter's limit of ", max[a], " (", ws.info().name, ")");
        }
        threads *= *d.value;
      }
      if (all_fixed && threads > limits.maxComputeInvocationsPerWorkgroup) {
        Fail("ValueError", info.name, ": a workgroup of ", threads,
             " invocations exceeds the adapter's limit of ",
             limits.maxComputeInvocationsPerWorkgroup, " (", ws.info().name, ")");
      }
      if (k.has_dyn_shared_override) {
        bool declared = false;
        for (const std::string& o : scan.overrides) declared |= o == "dyn_shared_mem";
        k.has_dyn_shared_override = declared;
      }
    }

    for (const ArgInfo& a : info.args) k.num_buffers += a.is_buffer ? 1 : 0;
    if (k.num_buffers > limits.maxStorageBuffersPerShaderStage) {
      Fail("ValueError", info.name, " takes ", k.num_buffers, " buffers; the adapter allows ",
           limits.maxStorageBuffersPerShaderStage, " storage buffers per shader stage");
    }
    k.uniform = LayoutUniform(info);

    std::vector<WGPUBindGroupLayoutEntry> entries;
    for (size_t b = 0; b < k.num_buffers; ++b) {
      WGPUBindGroupLayoutEntry e{};
      e.binding = static_cast<uint32_t>(b);
      e.visibility = WGPUShaderStage_Compute;
      auto declared = scan.group0.find(e.binding);
      const bool read_only = declared != scan.group0.end() &&
                             declared->second.address_space == "storage" &&
                             (declared->second.access == "read" || declared->second.access.empty());
      e.buffer.type =
          read_only ? WGPUBufferBindingType_ReadOnlyStorage : WGPUBufferBindingType_Storage;
      entries.push_back(e);
    }
    if (k.uniform.size > 0) {
      WGPUBindGroupLayoutEntry e{};
      e.binding = static_cast<uint32_t>(k.num_buffers);
      e.visibility = WGPUShaderStage_Compute;
      e.buffer.type = WGPUBufferBindingType_Uniform;
      e.buffer.hasDynamicOffset = 1;
      e.buffer.minBindingSize = k.uniform.size;
      entries.push_back(e);
    }

    std::string error = ws.Scoped([&] {
      WGPUShaderSourceWGSL source{};
      source.chain.sType = WGPUSType_ShaderSourceWGSL;
      source.code = View(wgsl);
      WGPUShaderModuleDescriptor sd{};
      sd.nextInChain = &source.chain;
      sd.label = View(info.name);
      k.shader = api.wgpuDeviceCreateShaderModule(ws.device(), &sd);
    });
    if (!error.empty())
      Fail("ValueError", "the WGSL of '", info.name, "' does not compile: ", error);
    if (entry == nullptr) {
      Fail("ValueError", "the WGSL of '", info.name, "' has no @compute entry point");
    }
    error = ws.Scoped([&] {
      WGPUBindGroupLayoutDescriptor bd{};
      bd.entryCount = entries.size();
      bd.entries = entries.data();
      k.bind_layout = api.wgpuDeviceCreateBindGroupLayout(ws.device(), &bd);
      WGPUPipelineLayoutDescriptor pd{};
      pd.bindGroupLayoutCount = 1;
      pd.bindGroupLayouts = &k.bind_layout;
      k.layout = api.wgpuDeviceCreatePipelineLayout(ws.device(), &pd);
      if (k.uniform.size > 0) {
        const uint32_t align = std::max<uint32_t>(limits.minUniformBufferOffsetAlignment, 16);
        k.uniform_stride = (k.uniform.size + align - 1) / align * align;
        WGPUBufferDescriptor ud{};
        ud.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
        ud.size = static_cast<uint64_t>(k.uniform_stride) * Workspace::kMaxBatch;
        k.uniform_buffer = api.wgpuDeviceCreateBuffer(ws.device(), &ud);
      }
    });
    if (!error.empty()) Fail("ValueError", info.name, ": cannot lay out its bindings: ", error);

    guard.armed = false;
    Kernel& stored = kernels_.emplace(info.name, k).first->second;
    caches_[info.name];
    // A kernel whose workgroup size is fixed by the shader gets its pipeline
    // now, so that a shader that does not fit its bindings fails at load.
    bool launch_set = stored.has_dyn_shared_override;
    for (const WorkgroupDim& d : stored.scan.size) launch_set |= !d.override_name.empty();
    if (!launch_set) {
      LaunchConfig launch;
      for (int a = 0; a < 3; ++a) launch.block[a] = stored.scan.size[a].value.value_or(1);
      std::lock_guard lock(mu_);
      CreatePipeline(ws, stored, KeyOf(stored, launch), launch);
    }
    (void)launched;
  }

  static Key KeyOf(const Kernel& k, const LaunchConfig& launch) {
    int64_t v[3] = {0, 0, 0};
    for (int a = 0; a < 3; ++a) {
      if (!k.scan.size[a].override_name.empty()) v[a] = launch.block[a];
    }
    return Key{k.info->name, v[0], v[1], v[2],
               k.has_dyn_shared_override ? launch.dyn_shared_bytes : 0};
  }

  // Callers hold mu_.
  const Pipeline& CreatePipeline(Workspace& ws, const Kernel& k, const Key& key,
                                 const LaunchConfig& launch) {
    const WgpuApi& api = ws.api();
    std::vector<std::string> names;
    std::vector<WGPUConstantEntry> constants;
    for (int a = 0; a < 3; ++a) {
      const std::string& o = k.scan.size[a].override_name;
      if (o.empty()) continue;
      bool seen = false;
      for (const std::string& n : names) seen |= n == o;
      if (seen) continue;  // one constant on several axes: the first axis sets it
      names.push_back(o);
      WGPUConstantEntry c{};
      c.value = static_cast<double>(launch.block[a]);
      constants.push_back(c);
    }
    if (k.has_dyn_shared_override) {
      names.push_back("dyn_shared_mem");
      WGPUConstantEntry c{};
      c.value = static_cast<double>(launch.dyn_shared_bytes);
      constants.push_back(c);
    }
    for (size_t i = 0; i < constants.size(); ++i) constants[i].key = View(names[i]);
    WGPUComputePipeline pipeline = nullptr;
    std::string error = ws.Scoped([&] {
      WGPUComputePipelineDescriptor pd{};
      pd.label = View(k.info->name);
      pd.layout = k.layout;
      pd.compute.module = k.shader;
      pd.compute.entryPoint = View(k.entry);
      pd.compute.constantCount = constants.size();
      pd.compute.constants = constants.data();
      pipeline = api.wgpuDeviceCreateComputePipeline(ws.device(), &pd);
    });
    if (!error.empty() || pipeline == nullptr) {
      if (pipeline) api.wgpuComputePipelineRelease(pipeline);
      Fail("ValueError", "WebGPU could not create the compute pipeline of '", k.info->name, "' on ",
           ws.info().name, ": ", error.empty() ? "no reason given" : error);
    }
    pipelines_created_.fetch_add(1);
    return pipelines_.emplace(key, Pipeline{pipeline}).first->second;
  }

  void Launch(const FunctionInfo& info, const Args& args) {
    Workspace& ws = Workspace::Get();
    if (!ws.ok())
      Fail("ValueError", "cannot launch ", info.name, ": webgpu(0) does not exist: ", ws.reason());
    KernelArgs k = KernelArgs::Pack(info, args, kDLWebGPU);
    ws.Require(k.device_id);
    const WgpuApi& api = ws.api();
    const WGPULimits& limits = ws.info().limits;
    if (!compiled_.load(std::memory_order_acquire)) {
      std::lock_guard lock(compile_mu_);
      if (!compiled_.load()) {
        CompileAll(ws);
        compiled_.store(true, std::memory_order_release);
      }
    }
    const Kernel& kernel = kernels_.at(info.name);
    for (int a = 0; a < 3; ++a) {
      if (k.launch.grid[a] > limits.maxComputeWorkgroupsPerDimension) {
        Fail("ValueError", info.name, ": blockIdx.", "xyz"[a], " = ", k.launch.grid[a],
             " exceeds the adapter's limit of ", limits.maxComputeWorkgroupsPerDimension,
             " workgroups per dimension");
      }
    }
    const WGPUComputePipeline pipeline = GetPipeline(ws, kernel, info, k.launch);

    // The buffers (by id) and the uniform block of this launch.
    std::array<uint64_t, 16> ids_small{};
    std::vector<uint64_t> ids_large;
    uint64_t* ids = ids_small.data();
    if (kernel.num_buffers > ids_small.size()) {
      ids_large.resize(kernel.num_buffers);
      ids = ids_large.data();
    }
    std::array<uint8_t, 256> uniform_small{};
    std::vector<uint8_t> uniform_large;
    uint8_t* uniform = uniform_small.data();
    if (kernel.uniform.size > uniform_small.size()) {
      uniform_large.assign(kernel.uniform.size, 0);
      uniform = uniform_large.data();
    }
    size_t b = 0;
    for (size_t i = 0; i < info.args.size(); ++i) {
      if (info.args[i].is_buffer) {
        ids[b++] = static_cast<const Buffer*>(k.buffers[i]->data)->id;
      } else {
        std::memcpy(uniform + kernel.uniform.offsets[i], k.ptrs[i], k.sizes[i]);
      }
    }

    std::lock_guard lock(ws.submit_mu());
    LaunchCache& cache = caches_.at(info.name);
    // The bind group: the last one when the buffers are the same.
    const bool same_buffers = cache.group != nullptr &&
                              cache.buffer_ids.size() == kernel.num_buffers &&
                              std::equal(ids, ids + kernel.num_buffers, cache.buffer_ids.begin());
    if (!same_buffers) {
      std::array<WGPUBindGroupEntry, 17> fixed{};
      std::vector<WGPUBindGroupEntry> more;
      WGPUBindGroupEntry* entries = fixed.data();
      const size_t count = kernel.num_buffers + (kernel.uniform.size > 0 ? 1 : 0);
      if (count > fixed.size()) {
        more.resize(count);
        entries = more.data();
      }
      size_t e = 0;
      for (size_t i = 0; i < info.args.size(); ++i) {
        if (!info.args[i].is_buffer) continue;
        const auto* buf = static_cast<const Buffer*>(k.buffers[i]->data);
        entries[e] = WGPUBindGroupEntry{};
        entries[e].binding = static_cast<uint32_t>(e);
        entries[e].buffer = buf->buffer;
        entries[e].size = buf->size;
        ++e;
      }
      if (kernel.uniform.size > 0) {
        entries[e] = WGPUBindGroupEntry{};
        entries[e].binding = static_cast<uint32_t>(e);
        entries[e].buffer = kernel.uniform_buffer;
        entries[e].size = kernel.uniform.size;
      }
      WGPUBindGroupDescriptor bd{};
      bd.layout = kernel.bind_layout;
      bd.entryCount = count;
      bd.entries = entries;
      WGPUBindGroup group = api.wgpuDeviceCreateBindGroup(ws.device(), &bd);
      // The old group stays alive for the launches recorded with it.
      if (cache.group) api.wgpuBindGroupRelease(cache.group);
      cache.group = group;
      cache.buffer_ids.assign(ids, ids + kernel.num_buffers);
    }
    // The uniform block: a slot of the ring of its own in this batch, unless
    // it equals the last one written in this batch.
    uint32_t offset = 0;
    if (kernel.uniform.size > 0) {
      if (cache.batch != ws.batch()) {
        cache.batch = ws.batch();
        cache.next_slot = 0;
        cache.has_last = false;
      }
      const bool same = cache.has_last &&
                        std::memcmp(cache.last_uniform.data(), uniform, kernel.uniform.size) == 0;
      if (same) {
        offset = cache.last_offset;
      } else {
        if (cache.next_slot == Workspace::kMaxBatch) {
          ws.FlushLocked();  // the ring is full: its slots are free again after this
          cache.batch = ws.batch();
          cache.next_slot = 0;
        }
        offset = cache.next_slot++ * kernel.uniform_stride;
        api.wgpuQueueWriteBuffer(ws.queue(), kernel.uniform_buffer, offset, uniform,
                                 kernel.uniform.size);
        cache.has_last = true;
        cache.last_offset = offset;
        cache.last_uniform.assign(uniform, uniform + kernel.uniform.size);
      }
    }
    WGPUComputePassEncoder pass =
        api.wgpuCommandEncoderBeginComputePass(ws.PendingLocked(), nullptr);
    api.wgpuComputePassEncoderSetPipeline(pass, pipeline);
    api.wgpuComputePassEncoderSetBindGroup(pass, 0, cache.group, kernel.uniform.size > 0 ? 1 : 0,
                                           &offset);
    api.wgpuComputePassEncoderDispatchWorkgroups(pass, static_cast<uint32_t>(k.launch.grid[0]),
                                                 static_cast<uint32_t>(k.launch.grid[1]),
                                                 static_cast<uint32_t>(k.launch.grid[2]));
    api.wgpuComputePassEncoderEnd(pass);
    api.wgpuComputePassEncoderRelease(pass);
    ws.RecordedLocked();
    if (std::string e = ws.TakeUncapturedError(); !e.empty()) {
      Fail("RuntimeError", "launch of ", info.name, " failed: ", e);
    }
  }

  // The pipeline for this launch shape, created on first use under the
  // module's lock, so concurrent first launches create it once.
  WGPUComputePipeline GetPipeline(Workspace& ws, const Kernel& kernel, const FunctionInfo& info,
                                  const LaunchConfig& launch) {
    std::array<bool, 3> launched{};
    for (const std::string& tag : info.launch_tags) {
      if (tag.rfind("threadIdx.", 0) == 0) launched[tag.back() - 'x'] = true;
    }
    const WGPULimits& limits = ws.info().limits;
    const uint32_t max[3] = {limits.maxComputeWorkgroupSizeX, limits.maxComputeWorkgroupSizeY,
                             limits.maxComputeWorkgroupSizeZ};
    int64_t threads = 1;
    for (int a = 0; a < 3; ++a) {
      const WorkgroupDim& d = kernel.scan.size[a];
      const char axis = "xyz"[a];
      if (launched[a] && d.value && launch.block[a] != *d.value) {
        Fail("ValueError", info.name, ": its WGSL fixes @workgroup_size ", axis, " at ", *d.value,
             ", but threadIdx.", axis, " = ", launch.block[a],
             "; name an override constant in @workgroup_size to set it at launch");
      }
      const int64_t size = d.value ? *d.value : launch.block[a];
      if (size > max[a]) {
        Fail("ValueError", info.name, ": threadIdx.", axis, " = ", size,
             " exceeds the adapter's limit of ", max[a], " (", ws.info().name, ")");
      }
      threads *= size;
    }
    if (threads > limits.maxComputeInvocationsPerWorkgroup) {
      Fail("ValueError", info.name, ": a workgroup of ", threads,
           " invocations exceeds the adapter's limit of ", limits.maxComputeInvocationsPerWorkgroup,
           " (", ws.info().name, ")");
    }
    if (launch.dyn_shared_bytes > 0 && !kernel.has_dyn_shared_override) {
      Fail("ValueError", info.name, ": dyn_shared_mem = ", launch.dyn_shared_bytes,
           " but its WGSL declares no `override dyn_shared_mem` to size workgroup memory with");
    }
    if (launch.dyn_shared_bytes > limits.maxComputeWorkgroupStorageSize) {
      Fail("ValueError", info.name, ": ", launch.dyn_shared_bytes,
           " bytes of workgroup memory exceed the adapter's limit of ",
           limits.maxComputeWorkgroupStorageSize);
    }
    const Key key = KeyOf(kernel, launch);
    std::lock_guard lock(mu_);
    auto found = pipelines_.find(key);
    if (found != pipelines_.end()) return found->second.pipeline;
    return CreatePipeline(ws, kernel, key, launch).pipeline;
  }

  std::mutex compile_mu_;
  std::atomic<bool> compiled_{false};
  std::map<std::string, Kernel> kernels_;  // filled once, by the constructor or the first launch
  std::map<std::string, LaunchCache>
      caches_;  // one per kernel, guarded by the workspace's submit_mu()
  std::mutex mu_;
  std::map<Key, Pipeline> pipelines_;
  std::atomic<int64_t> pipelines_created_{0};
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<WebGpuModule>(std::move(p));
  });
  static WebGpuDeviceAPI api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
  // The Python hook's candidates for the `wgpu` package's library (a
  // ':'-separated list), before the first device use reads them.
  RegisterGlobal("webgpu.driver_candidates", [](const Args& args, Ret*) {
    args.ExpectCount(1, "webgpu.driver_candidates");
    const std::string joined(args.Str(0));
    std::vector<std::string> paths;
    size_t start = 0;
    while (start <= joined.size()) {
      const size_t end = std::min(joined.find(':', start), joined.size());
      if (end > start) paths.push_back(joined.substr(start, end - start));
      start = end + 1;
    }
    std::lock_guard lock(Candidates().mu);
    Candidates().paths = std::move(paths);
  });
  // How many compute pipelines a module has created: launches of one kernel
  // with one launch shape reuse one pipeline.
  RegisterGlobal("webgpu.pipelines_created", [](const Args& args, Ret* ret) {
    args.ExpectCount(1, "webgpu.pipelines_created");
    auto* module = ModuleAs<WebGpuModule>(args.Obj(0, kModrtObjModule, "module"));
    if (module == nullptr) Fail("TypeError", "webgpu.pipelines_created takes a real webgpu module");
    ret->SetInt(module->pipelines_created());
  });
}

}  // namespace
}  // namespace webgpu
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::webgpu::InitPlugin)
