// TEST DOUBLE of the CUDA driver (libcuda.so.1) for machines without a GPU.
//
// It exports the driver entry points libmodrt_runtime_cuda.so resolves, gives
// one fake device with fixed attributes, keeps "device" memory in host memory
// (so copies round-trip, async ones done at once), runs no kernel, and records
// every module load and launch -- the grid, block, dynamic shared memory, the
// stream and the bytes of each kernel parameter, sized from the PTX's .entry
// declaration -- and every stream, event and graph call as JSON lines that a
// test reads back through modrt_cuda_test_double_log().
//
// Streams are numbered from 1 as made (null: the legacy default stream).
// Device time is a fake clock that each launch advances by 1 ms, so
// cuEventElapsedTime between two events is 1 ms per launch between them.
// Stream capture records launches into a graph instead of "running" them;
// cuGraphLaunch advances the clock once per captured launch.
// modrt_cuda_test_double_fail_next(call, code, times) makes the next `times`
// calls of `call` fail with `code` (an asynchronous kernel fault reported by a
// synchronize, say).
//
// The runtime uses it only when MODRT_CUDA_DRIVER_LIBRARY names it.
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

struct Kernel {
  std::string name;
  bool sizes_known = false;  // PTX declares them; a cubin is not parsed
  std::vector<size_t> param_sizes;
  int max_dynamic_shared = kDefaultSharedLimit;
};

struct Module {
  std::string format;  // "ptx" or "elf"
  std::string image;   // PTX text, or the ELF bytes up to the end of its section table
  std::map<std::string, std::unique_ptr<Kernel>> kernels;
};

// Byte sizes of the .param declarations of `.entry name(...)` in PTX text.
bool PtxParamSizes(const std::string& ptx, const std::string& name, std::vector<size_t>* sizes) {
  size_t at = ptx.find(".entry " + name + "(");
  if (at == std::string::npos) return false;
  size_t end = ptx.find(')', at);
  std::string decl = ptx.substr(at, end - at);
  for (size_t p = decl.find(".param"); p != std::string::npos; p = decl.find(".param", p + 1)) {
    char type[32] = {}, align_or_name[128] = {}, rest[128] = {};
    // ".param .u64 vadd_param_0" or ".param .align 8 .b8 s_param_1[16]"
    if (std::sscanf(decl.c_str() + p, ".param %31s %127s %127s", type, align_or_name, rest) < 2) {
      return false;
    }
    std::string t = type, declared = align_or_name;
    if (t == ".align") {
      std::sscanf(decl.c_str() + p, ".param .align %*d %31s %127s", type, align_or_name);
      t = type;
      declared = align_or_name;
    }
    size_t bits = std::strtoul(t.c_str() + 2, nullptr, 10);
    size_t count = 1;
    size_t bracket = declared.find('[');
    if (bracket != std::string::npos)
      count = std::strtoul(declared.c_str() + bracket + 1, nullptr, 10);
    sizes->push_back(bits / 8 * count);
  }
  return true;
}

}  // namespace

extern "C" {

// Everything recorded so far, one JSON object per line.
__attribute__((visibility("default"))) const char* modrt_cuda_test_double_log() {
  return LogCopy();
}

__attribute__((visibility("default"))) void modrt_cuda_test_double_reset() { Reset(); }

// The next `times` calls of the entry point `call` return `code`.
__attribute__((visibility("default"))) void modrt_cuda_test_double_fail_next(const char* call,
                                                                             int code, int times) {
  FailNext(call, code, times);
}

EXPORT int cuInit(unsigned int) { return kSuccess; }

EXPORT int cuDriverGetVersion(int* version) {
  *version = 12040;
  return kSuccess;
}

EXPORT int cuDeviceGetCount(int* count) {
  *count = 1;
  return kSuccess;
}

EXPORT int cuDeviceGet(int* device, int ordinal) {
  if (ordinal != 0) return kInvalidDevice;
  *device = 0;
  return kSuccess;
}

EXPORT int cuDeviceGetName(char* name, int len, int device) {
  if (device != 0) return kInvalidDevice;
  std::snprintf(name, len, "modrt CUDA test double");
  return kSuccess;
}

EXPORT int cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (device != 0) return kInvalidDevice;
  static const std::map<int, int> attributes = {
      {1, 1024},                // max threads per block
      {8, 49152},               // max shared memory per block
      {10, 32},                 // warp size
      {16, 40},                 // multiprocessor count
      {75, 7},                  // compute capability 7.5
      {76, 5},    {97, 65536},  // max shared memory per block, opt-in
  };
  auto it = attributes.find(attribute);
  if (it == attributes.end()) return kInvalidValue;
  *value = it->second;
  // MODRT_CUDA_TEST_DOUBLE_COMPUTE_CAPABILITY="8.8" stands in for another GPU.
  const char* cc = std::getenv("MODRT_CUDA_TEST_DOUBLE_COMPUTE_CAPABILITY");
  int major = 0, minor = 0;
  if (cc != nullptr && std::sscanf(cc, "%d.%d", &major, &minor) == 2 &&
      (attribute == 75 || attribute == 76)) {
    *value = attribute == 75 ? major : minor;
  }
  return kSuccess;
}

EXPORT int cuDeviceTotalMem_v2(size_t* bytes, int device) {
  if (device != 0) return kInvalidDevice;
  *bytes = size_t{1} << 30;
  return kSuccess;
}

EXPORT int cuDevicePrimaryCtxRetain(void** context, int device) {
  static int the_context;
  if (device != 0) return kInvalidDevice;
  *context = &the_context;
  return kSuccess;
}

EXPORT int cuCtxSetCurrent(void*) { return kSuccess; }
EXPORT int cuCtxSynchronize() {
  std::lock_guard lock(mu);
  return InjectedLocked("cuCtxSynchronize");
}

EXPORT int cuMemAlloc_v2(unsigned long long* ptr, size_t bytes) {
  {
    std::lock_guard lock(mu);
    if (int code = InjectedLocked("cuMemAlloc")) return code;
  }
  void* p = std::calloc(1, bytes);
  if (p == nullptr) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  *ptr = reinterpret_cast<unsigned long long>(p);
  return kSuccess;
}

EXPORT int cuMemFree_v2(unsigned long long ptr) {
  std::free(reinterpret_cast<void*>(ptr));
  return kSuccess;
}

EXPORT int cuMemcpyHtoD_v2(unsigned long long dst, const void* src, size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return kSuccess;
}

EXPORT int cuMemcpyDtoH_v2(void* dst, unsigned long long src, size_t bytes) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return kSuccess;
}

EXPORT int cuModuleLoadDataEx(void** module, const void* image, unsigned int num_options,
                              int* options, void** values) {
  auto m = std::make_unique<Module>();
  const char* bytes = static_cast<const char*>(image);
  if (std::memcmp(bytes,
                  "\x7f"
                  "ELF",
                  4) == 0) {
    // An ELF64 image ends with its section header table.
    uint64_t shoff = 0;
    uint16_t shentsize = 0, shnum = 0;
    std::memcpy(&shoff, bytes + 0x28, 8);
    std::memcpy(&shentsize, bytes + 0x3a, 2);
    std::memcpy(&shnum, bytes + 0x3c, 2);
    m->format = "elf";
    m->image.assign(bytes, shoff + uint64_t{shentsize} * shnum);
  } else if (std::strstr(bytes, ".version") != nullptr && std::strstr(bytes, ".entry") != nullptr) {
    m->format = "ptx";
    m->image = bytes;
  } else {
    for (unsigned int i = 0; i < num_options; ++i) {
      if (options[i] == 5)
        std::snprintf(static_cast<char*>(values[i]), 64, "test double: not PTX or ELF");
    }
    return kInvalidImage;
  }
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"cuModuleLoadDataEx\", \"format\": " + Quote(m->format) +
              ", \"bytes\": " + std::to_string(m->image.size()) + "}\n";
  *module = m.release();
  return kSuccess;
}

EXPORT int cuModuleUnload(void* module) {
  delete static_cast<Module*>(module);
  return kSuccess;
}

EXPORT int cuModuleGetFunction(void** function, void* module, const char* name) {
  auto* m = static_cast<Module*>(module);
  if (m == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  std::unique_ptr<Kernel>& k = m->kernels[name];
  if (!k) {
    auto kernel = std::make_unique<Kernel>();
    kernel->name = name;
    if (m->format == "ptx") {
      kernel->sizes_known = PtxParamSizes(m->image, name, &kernel->param_sizes);
      if (!kernel->sizes_known) {
        m->kernels.erase(name);
        return kNotFound;
      }
    } else if (m->image.find(std::string(name) + '\0') == std::string::npos) {
      m->kernels.erase(name);
      return kNotFound;  // not in the ELF's string tables
    }
    k = std::move(kernel);
  }
  *function = k.get();
  return kSuccess;
}

EXPORT int cuFuncSetAttribute(void* function, int attribute, int value) {
  auto* k = static_cast<Kernel*>(function);
  if (attribute != 8) return kInvalidValue;  // only MAX_DYNAMIC_SHARED_SIZE_BYTES
  if (value > 65536) return kInvalidValue;
  std::lock_guard lock(mu);
  k->max_dynamic_shared = value;
  log_text += "{\"call\": \"cuFuncSetAttribute\", \"kernel\": " + Quote(k->name) +
              ", \"max_dynamic_shared\": " + std::to_string(value) + "}\n";
  return kSuccess;
}

EXPORT int cuLaunchKernel(void* function, unsigned int gx, unsigned int gy, unsigned int gz,
                          unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                          void* stream, void** params, void** extra) {
  auto* k = static_cast<Kernel*>(function);
  if (k == nullptr) return kInvalidHandle;
  if (bx * by * bz > 1024 || static_cast<int>(shared) > k->max_dynamic_shared) return kInvalidValue;
  std::lock_guard lock(mu);
  if (int code = InjectedLocked("cuLaunchKernel")) return code;
  std::string hex;
  for (size_t i = 0; k->sizes_known && i < k->param_sizes.size(); ++i) {
    hex += (i ? "," : "") + Hex(params[i], k->param_sizes[i]);
  }
  const bool captured = NoteLaunchLocked(stream, k->name, hex);
  std::string entry =
      "{\"call\": \"cuLaunchKernel\", \"kernel\": " + Quote(k->name) + ", \"grid\": [" +
      std::to_string(gx) + ", " + std::to_string(gy) + ", " + std::to_string(gz) +
      "], \"block\": [" + std::to_string(bx) + ", " + std::to_string(by) + ", " +
      std::to_string(bz) + "], \"shared\": " + std::to_string(shared) +
      ", \"stream\": " + StreamId(stream) + ", \"captured\": " + (captured ? "true" : "false") +
      ", \"extra\": " + (extra ? "true" : "null") + ", \"params\": ";
  if (!k->sizes_known) {
    entry += "null";
  } else {
    entry += "[";
    for (size_t i = 0; i < k->param_sizes.size(); ++i) {
      entry += (i ? ", " : "") + Quote(Hex(params[i], k->param_sizes[i]));
    }
    entry += "]";
  }
  log_text += entry + "}\n";
  return kSuccess;
}

EXPORT int cuGetErrorName(int code, const char** name) {
  switch (code) {
    case kSuccess: *name = "CUDA_SUCCESS"; break;
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case kInvalidDevice: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
    case kInvalidImage: *name = "CUDA_ERROR_INVALID_IMAGE"; break;
    case kInvalidHandle: *name = "CUDA_ERROR_INVALID_HANDLE"; break;
    case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; break;
    case kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case kNotReady: *name = "CUDA_ERROR_NOT_READY"; break;
    case kIllegalAddress: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    case kCaptureUnsupported: *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; break;
    case kCaptureInvalidated: *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; break;
    case kGraphExecUpdateFailure: *name = "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"; break;
    default: *name = nullptr; return kInvalidValue;
  }
  return kSuccess;
}

EXPORT int cuGetErrorString(int code, const char** text) {
  *text = code == kNotFound         ? "named symbol not found"
          : code == kIllegalAddress ? "an illegal memory access was encountered"
                                    : nullptr;
  return *text ? kSuccess : kInvalidValue;
}

}  // extern "C"
