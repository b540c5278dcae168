// TEST DOUBLE of the HIP runtime (libamdhip64.so.6) for machines without an
// AMD GPU.
//
// It exports the entry points libmodrt_runtime_rocm.so resolves, gives one
// fake gfx90a device, keeps "device" memory in host memory (copies
// round-trip, async ones done at once), runs no kernel, and logs every module
// load, launch (grid, block, shared memory, stream, and the parameters' bytes
// where a test declared their sizes), stream, event, async copy, page-locked
// allocation and graph call as JSON lines that a test reads back through
// modrt_hip_test_double_log(). Streams, events, copies, page-locked memory
// and graphs by stream capture are the CUDA double's
// (tests/driver_doubles/driver_test_double.h): the same fake clock (1 ms per
// launch) and the same injected failures (modrt_hip_test_double_fail_next(
// call, code, times)). HIP's status codes are CUDA's numbers for every one
// used here. Built with MODRT_HIP_DOUBLE_WITHOUT_GRAPHS, it is a HIP runtime
// that lacks the graph entry points.
//
// The runtime uses it only when MODRT_ROCM_DRIVER_LIBRARY names it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/driver_doubles/driver_test_double.h"

namespace {

using namespace driver_double;  // NOLINT(build/namespaces)

// hipDeviceAttribute_t (HIP 6) values the runtime asks for.
constexpr int kAttrComputeCapabilityMajor = 23;
constexpr int kAttrMaxThreadsPerBlock = 56;
constexpr int kAttrComputeCapabilityMinor = 61;
constexpr int kAttrMultiprocessorCount = 63;
constexpr int kAttrMaxSharedMemoryPerBlock = 74;
constexpr int kAttrWarpSize = 87;
// hipDeviceProp_t (R0600): where gcnArchName lies.
constexpr size_t kPropsGcnArchNameOffset = 1160;

struct Function {
  std::string name;
};

// Each kernel's parameter sizes, as a test declares them
// (modrt_hip_test_double_param_sizes): a launch then logs its parameters'
// bytes as the CUDA double does. Guarded by mu.
std::map<std::string, std::vector<size_t>> param_sizes;

struct Module {
  std::string image;  // the code object (or offload bundle) as loaded
  std::map<std::string, std::unique_ptr<Function>> functions;
};

// The bytes of a code object given only its address: a clang offload bundle
// ("__CLANG_OFFLOAD_BUNDLE__", entry count, then (offset, size, id size, id)
// per entry) up to its last entry's end, or an ELF up to its section headers'
// end. Empty when it is neither.
std::string ImageAt(const void* data) {
  const auto* p = static_cast<const char*>(data);
  auto u64 = [](const char* at) {
    uint64_t v = 0;
    std::memcpy(&v, at, sizeof(v));
    return v;
  };
  static const char kBundle[] = "__CLANG_OFFLOAD_BUNDLE__";
  if (std::memcmp(p, kBundle, sizeof(kBundle) - 1) == 0) {
    const char* at = p + sizeof(kBundle) - 1;
    const uint64_t entries = u64(at);
    at += 8;
    uint64_t end = static_cast<uint64_t>(at - p);
    for (uint64_t i = 0; i < entries && i < 64; ++i) {
      const uint64_t offset = u64(at), size = u64(at + 8), id_size = u64(at + 16);
      end = std::max(end, offset + size);
      at += 24 + id_size;
    }
    return std::string(p, std::max<uint64_t>(end, at - p));
  }
  if (std::memcmp(p,
                  "\x7f"
                  "ELF",
                  4) == 0 &&
      p[4] == 2) {  // ELF64
    uint64_t shoff = u64(p + 0x28);
    uint16_t shentsize = 0, shnum = 0;
    std::memcpy(&shentsize, p + 0x3a, 2);
    std::memcpy(&shnum, p + 0x3c, 2);
    return std::string(p, shoff + uint64_t{shentsize} * shnum);
  }
  return "";
}

}  // namespace

extern "C" {

// Everything logged so far, one JSON object per line.
EXPORT const char* modrt_hip_test_double_log() { return LogCopy(); }
EXPORT void modrt_hip_test_double_reset() { Reset(); }
// The next `times` calls of the entry point `call` return `code`.
EXPORT void modrt_hip_test_double_fail_next(const char* call, int code, int times) {
  FailNext(call, code, times);
}
// Kernel `name` takes `count` parameters of these sizes in bytes.
EXPORT void modrt_hip_test_double_param_sizes(const char* name, const size_t* sizes, int count) {
  std::lock_guard lock(mu);
  param_sizes[name].assign(sizes, sizes + count);
}

EXPORT int hipInit(unsigned int) { return kSuccess; }
EXPORT int hipDriverGetVersion(int* version) {
  *version = 60200000;
  return kSuccess;
}
EXPORT int hipGetDeviceCount(int* count) {
  *count = 1;
  return kSuccess;
}
EXPORT int hipSetDevice(int device) { return device == 0 ? kSuccess : kInvalidDevice; }
EXPORT int hipDeviceGetName(char* name, int len, int device) {
  if (device != 0) return kInvalidDevice;
  std::snprintf(name, static_cast<size_t>(len), "%s", "modrt HIP test double (gfx90a)");
  return kSuccess;
}
EXPORT int hipDeviceGetAttribute(int* value, int attribute, int device) {
  if (device != 0) return kInvalidDevice;
  switch (attribute) {
    case kAttrComputeCapabilityMajor: *value = 9; break;
    case kAttrComputeCapabilityMinor: *value = 0; break;
    case kAttrMaxThreadsPerBlock: *value = 1024; break;
    case kAttrMultiprocessorCount: *value = 104; break;
    case kAttrMaxSharedMemoryPerBlock: *value = 65536; break;
    case kAttrWarpSize: *value = 64; break;
    default: return kInvalidValue;
  }
  return kSuccess;
}
EXPORT int hipDeviceTotalMem(size_t* bytes, int device) {
  if (device != 0) return kInvalidDevice;
  *bytes = size_t{64} << 30;
  return kSuccess;
}
EXPORT int hipGetDevicePropertiesR0600(void* props, int device) {
  if (device != 0) return kInvalidDevice;
  std::strcpy(static_cast<char*>(props) + kPropsGcnArchNameOffset, "gfx90a:sramecc+:xnack-");
  return kSuccess;
}
EXPORT int hipDeviceSynchronize() {
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"hipDeviceSynchronize\"}\n";
  return InjectedLocked("hipDeviceSynchronize");
}

EXPORT int hipMalloc(void** ptr, size_t bytes) {
  std::lock_guard lock(mu);
  if (int code = InjectedLocked("hipMalloc")) return code;
  *ptr = std::calloc(1, bytes == 0 ? 1 : bytes);
  return *ptr ? kSuccess : kOutOfMemory;
}
EXPORT int hipFree(void* ptr) {
  std::free(ptr);
  return kSuccess;
}
EXPORT int hipMemcpyHtoD(void* dst, void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
  return kSuccess;
}
EXPORT int hipMemcpyDtoH(void* dst, void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
  return kSuccess;
}

EXPORT int hipModuleLoadData(void** module, const void* image) {
  std::string bytes = ImageAt(image);
  if (bytes.empty()) return kInvalidImage;
  std::lock_guard lock(mu);
  log_text +=
      "{\"call\": \"hipModuleLoadData\", \"bytes\": " + std::to_string(bytes.size()) + "}\n";
  auto m = std::make_unique<Module>();
  m->image = std::move(bytes);
  *module = m.release();
  return kSuccess;
}
EXPORT int hipModuleUnload(void* module) {
  delete static_cast<Module*>(module);
  return kSuccess;
}
// A kernel of the module: a name its code object holds (its symbol table).
EXPORT int hipModuleGetFunction(void** function, void* module, const char* name) {
  auto* m = static_cast<Module*>(module);
  if (m == nullptr) return kInvalidHandle;
  if (m->image.find(std::string(name) + '\0') == std::string::npos) return kNotFound;
  std::unique_ptr<Function>& f = m->functions[name];
  if (!f) f = std::make_unique<Function>(Function{name});
  *function = f.get();
  return kSuccess;
}
EXPORT int hipModuleLaunchKernel(void* function, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz,
                                 unsigned int shared, void* stream, void** params, void** extra) {
  auto* f = static_cast<Function*>(function);
  if (f == nullptr) return kInvalidHandle;
  if (bx * by * bz > 1024) return kInvalidValue;
  std::lock_guard lock(mu);
  if (int code = InjectedLocked("hipModuleLaunchKernel")) return code;
  std::string hex;
  auto sizes = param_sizes.find(f->name);
  for (size_t i = 0; sizes != param_sizes.end() && i < sizes->second.size(); ++i) {
    hex += (i ? "," : "") + Hex(params[i], sizes->second[i]);
  }
  const bool captured = NoteLaunchLocked(stream, f->name, hex);
  log_text += "{\"call\": \"hipModuleLaunchKernel\", \"kernel\": " + Quote(f->name) +
              ", \"grid\": [" + std::to_string(gx) + ", " + std::to_string(gy) + ", " +
              std::to_string(gz) + "], \"block\": [" + std::to_string(bx) + ", " +
              std::to_string(by) + ", " + std::to_string(bz) +
              "], \"shared\": " + std::to_string(shared) + ", \"stream\": " + StreamId(stream) +
              ", \"captured\": " + (captured ? "true" : "false") +
              ", \"extra\": " + (extra ? "true" : "null") + ", \"params\": " + Quote(hex) + "}\n";
  return kSuccess;
}

EXPORT const char* hipGetErrorName(int code) {
  switch (code) {
    case kSuccess: return "hipSuccess";
    case kInvalidValue: return "hipErrorInvalidValue";
    case kOutOfMemory: return "hipErrorOutOfMemory";
    case kInvalidDevice: return "hipErrorInvalidDevice";
    case kInvalidImage: return "hipErrorInvalidImage";
    case kInvalidHandle: return "hipErrorInvalidHandle";
    case kNotFound: return "hipErrorNotFound";
    case kNotReady: return "hipErrorNotReady";
    case kIllegalAddress: return "hipErrorIllegalAddress";
    case kCaptureUnsupported: return "hipErrorStreamCaptureUnsupported";
    case kCaptureInvalidated: return "hipErrorStreamCaptureInvalidated";
    case kGraphExecUpdateFailure: return "hipErrorGraphExecUpdateFailure";
    default: return "hipErrorUnknown";
  }
}
EXPORT const char* hipGetErrorString(int code) {
  return code == kIllegalAddress ? "an illegal memory access was encountered" : "";
}

// --- streams, events, async copies, page-locked memory (driver_test_double.h) ---

EXPORT int hipStreamCreateWithFlags(void** stream, unsigned int flags) {
  return StreamCreate("hipStreamCreateWithFlags", stream, flags);
}
EXPORT int hipStreamDestroy(void* stream) { return StreamDestroy("hipStreamDestroy", stream); }
EXPORT int hipStreamSynchronize(void* stream) {
  return StreamSynchronize("hipStreamSynchronize", stream);
}
EXPORT int hipStreamWaitEvent(void* stream, void* event, unsigned int) {
  return StreamWaitEvent("hipStreamWaitEvent", stream, event);
}
EXPORT int hipEventCreateWithFlags(void** event, unsigned int flags) {
  return EventCreate("hipEventCreateWithFlags", event, flags, (flags & 2) == 0);
}
EXPORT int hipEventRecord(void* event, void* stream) {
  return EventRecord("hipEventRecord", event, stream);
}
EXPORT int hipEventQuery(void* event) { return EventQuery("hipEventQuery", event); }
EXPORT int hipEventSynchronize(void* event) {
  return EventSynchronize("hipEventSynchronize", event);
}
EXPORT int hipEventElapsedTime(float* ms, void* start, void* end) {
  return EventElapsedTime("hipEventElapsedTime", ms, start, end);
}
EXPORT int hipEventDestroy(void* event) { return EventDestroy("hipEventDestroy", event); }
EXPORT int hipMemcpyHtoDAsync(void* dst, void* src, size_t bytes, void* stream) {
  return AsyncCopy("hipMemcpyHtoDAsync", dst, src, bytes, stream, src);
}
EXPORT int hipMemcpyDtoHAsync(void* dst, void* src, size_t bytes, void* stream) {
  return AsyncCopy("hipMemcpyDtoHAsync", dst, src, bytes, stream, dst);
}
EXPORT int hipMemcpyDtoDAsync(void* dst, void* src, size_t bytes, void* stream) {
  return AsyncCopy("hipMemcpyDtoDAsync", dst, src, bytes, stream, nullptr);
}
EXPORT int hipHostMalloc(void** ptr, size_t bytes, unsigned int flags) {
  return HostAlloc("hipHostMalloc", ptr, bytes, flags);
}
EXPORT int hipHostFree(void* ptr) { return HostFree("hipHostFree", ptr); }

#ifndef MODRT_HIP_DOUBLE_WITHOUT_GRAPHS
// --- graphs by stream capture (driver_test_double.h) ---

EXPORT int hipStreamBeginCapture(void* stream, int mode) {
  return BeginCapture("hipStreamBeginCapture", stream, mode);
}
EXPORT int hipStreamEndCapture(void* stream, void** graph) {
  return EndCapture("hipStreamEndCapture", stream, graph);
}
// hipGraphInstantiate(exec, graph, error node, log buffer, log size)
EXPORT int hipGraphInstantiate(void** exec, void* graph, void**, char*, size_t) {
  return GraphInstantiate("hipGraphInstantiate", exec, graph);
}
EXPORT int hipGraphLaunch(void* exec, void* stream) {
  return GraphLaunch("hipGraphLaunch", exec, stream);
}
EXPORT int hipGraphExecDestroy(void* exec) { return GraphExecDestroy("hipGraphExecDestroy", exec); }
EXPORT int hipGraphDestroy(void* graph) { return GraphDestroy("hipGraphDestroy", graph); }
// hipGraphExecUpdate(exec, graph, error node out, update result out)
EXPORT int hipGraphExecUpdate(void* exec, void* graph, void** error_node, int* result) {
  if (error_node == nullptr || result == nullptr) return kInvalidValue;
  const int status = GraphExecUpdate("hipGraphExecUpdate", exec, graph);
  *result = status == kSuccess ? 0 : 1;  // hipGraphExecUpdateSuccess / ...Error
  return status;
}
#endif  // MODRT_HIP_DOUBLE_WITHOUT_GRAPHS

}  // extern "C"
