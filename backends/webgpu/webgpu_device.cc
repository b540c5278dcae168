// The WebGPU runtime's device (webgpu_device.h): opening wgpu-native's
// adapter and device, and the device of webgpu(0): attributes, storage
// buffers, copies to and from the host, sync.
#include "webgpu_device.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"
#include "webgpu_queue.h"
#include "wgpu_native.h"

namespace modrt {
namespace webgpu {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

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

// The paths SetDriverCandidates() was given.
struct PythonCandidates {
  std::mutex mu;
  std::vector<std::string> paths;
};
PythonCandidates& Candidates() {
  static PythonCandidates* c = std::make_unique<PythonCandidates>().release();
  return *c;
}

}  // namespace

const char* ErrorTypeName(WGPUErrorType type) {
  switch (type) {
    case WGPUErrorType_Validation: return "validation error";
    case WGPUErrorType_OutOfMemory: return "out of memory";
    case WGPUErrorType_Internal: return "internal error";
    default: return "error";
  }
}

std::mutex& CallbackMutex() {
  static std::mutex* mu = std::make_unique<std::mutex>().release();
  return *mu;
}

void SetDriverCandidates(std::vector<std::string> paths) {
  std::lock_guard lock(Candidates().mu);
  Candidates().paths = std::move(paths);
}

std::string Workspace::Init() {
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

  // wgpu's primary backends only (Vulkan on Linux): its GL backend would bring
  // up EGL, whose Mesa state outlives the process (LeakSanitizer reports it),
  // for an adapter that compute never picks over a Vulkan one.
  WGPUInstanceExtras extras{};
  extras.chain.sType = static_cast<WGPUSType>(WGPUSType_InstanceExtras);
  extras.backends = WGPUInstanceBackend_Primary;
  WGPUInstanceDescriptor instance_desc{};
  instance_desc.nextInChain = &extras.chain;
  instance_ = api_.wgpuCreateInstance(&instance_desc);
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
  // WebGPU's defaults, f16 and timestamp queries (events' device time) where
  // there are such. MODRT_WEBGPU_TIMESTAMPS=0 leaves timestamps out, as on an
  // adapter without them.
  std::vector<WGPUFeatureName> features;
  if (api_.wgpuAdapterHasFeature(adapter_, WGPUFeatureName_ShaderF16))
    features.push_back(WGPUFeatureName_ShaderF16);
  const char* timestamps = std::getenv("MODRT_WEBGPU_TIMESTAMPS");
  if (api_.wgpuAdapterHasFeature(adapter_, WGPUFeatureName_TimestampQuery) &&
      (timestamps == nullptr || std::string(timestamps) != "0")) {
    features.push_back(WGPUFeatureName_TimestampQuery);
  }
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
  info_.timestamp_query = api_.wgpuDeviceHasFeature(device_, WGPUFeatureName_TimestampQuery);
  return "";
}

void Workspace::Record(std::string message) {
  std::lock_guard lock(error_mu_);
  if (uncaptured_.empty()) uncaptured_ = std::move(message);
  has_uncaptured_.store(true, std::memory_order_release);
}

namespace {

uint64_t NextBufferId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

uint64_t RoundUp4(uint64_t n) { return (n + 3) / 4 * 4; }

class WebGpuDeviceAPI final : public DeviceAPI, public RangedCopies {
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
    if (name == "max_buffer_size" || name == "max_alloc_size") {
      return ret->SetInt(static_cast<int64_t>(l.maxBufferSize));
    }
    // WebGPU reports no memory size; a CPU adapter (lavapipe) holds its
    // buffers in the host's memory.
    if (name == "global_memory" && a.type == WGPUAdapterType_CPU) {
      return ret->SetInt(static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE));
    }
    if (name == "max_compute_workgroups_per_dimension")
      return ret->SetInt(l.maxComputeWorkgroupsPerDimension);
    if (name == "supports_float16") return ret->SetInt(a.float16 ? 1 : 0);
    if (name == "supports_timestamp_query") return ret->SetInt(a.timestamp_query ? 1 : 0);
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
      Fail("MemoryError", "webgpu(", id, "): cannot allocate ", nbytes,
           " bytes: one buffer may hold at most ", l.maxBufferSize, " bytes (maxBufferSize)");
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
      Fail("MemoryError", "webgpu(", id, "): cannot allocate ", nbytes, " bytes: ", error);
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
    const auto& buf = *static_cast<const Buffer*>(t->data);
    const uint64_t offset = t->byte_offset;
    if (offset % 4 != 0 || nbytes % 4 == 0) return WriteBytes(ws, buf, offset, src, nbytes);
    // A whole tensor's last word is padded with zeros (the allocation is
    // rounded up, so the padding lies past the tensor): no read back.
    CheckRange(buf, offset, RoundUp4(nbytes), "copy into");
    std::vector<uint8_t> padded(static_cast<const uint8_t*>(src),
                                static_cast<const uint8_t*>(src) + nbytes);
    padded.resize(RoundUp4(nbytes), 0);
    WriteBytes(ws, buf, offset, padded.data(), padded.size());
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    Workspace& ws = Workspace::Get();
    ws.Require(t->device.device_id);
    ReadBytes(ws, *static_cast<const Buffer*>(t->data), t->byte_offset, dst, nbytes);
  }
  void CopyRangeFromHost(const void* src, DLTensor* t, size_t offset, size_t nbytes) override {
    Workspace& ws = Workspace::Get();
    ws.Require(t->device.device_id);
    WriteBytes(ws, *static_cast<const Buffer*>(t->data), t->byte_offset + offset, src, nbytes);
  }
  void CopyRangeToHost(const DLTensor* t, size_t offset, void* dst, size_t nbytes) override {
    Workspace& ws = Workspace::Get();
    ws.Require(t->device.device_id);
    ReadBytes(ws, *static_cast<const Buffer*>(t->data), t->byte_offset + offset, dst, nbytes);
  }
  void Sync(int id) override {
    // Every stream is the device's one queue (webgpu_queue.h).
    Queue::Get().StreamSynchronize(id, nullptr);
  }
};

}  // namespace

void AddDevice(DeviceLayer* layer) {
  static WebGpuDeviceAPI api;
  layer->device = &api;
  layer->ranged_copies = &api;
}

}  // namespace webgpu
}  // namespace modrt
