// Header-only C++ that the core (object.h, device.h, payload.h) and the plugin
// wrapper (plugin.h) both compile: helpers and plain structs, never a type or
// a symbol that crosses between a plugin and the core. The namespace is
// hidden, like modrt::plugin: every DSO that includes this keeps its own copy,
// so a plugin imports none of it from libmodrt_runtime.so and may be built
// with another compiler or standard library (docs/C_ABI.md). Each side brings
// these names into its own namespace (modrt::, modrt::plugin::) with
// using-declarations.
//
// Each side keeps its own Error and Fail: the core's Error is exported (thrown
// and caught across libmodrt_runtime.so, libmodrt_compiler.so and the Python
// extension), a plugin's stays hidden inside the plugin.
#ifndef MODRT_COMMON_H_
#define MODRT_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "modrt/abi/plugin_api.h"

// Hidden: nothing of modrt::common leaves the DSO that compiles it.
#define MODRT_COMMON_HIDDEN __attribute__((visibility("hidden")))

namespace modrt {
namespace common MODRT_COMMON_HIDDEN {

template <typename... Parts>
std::string StrCat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

// The Python exception class name of a typed error code (plugin_api.h), or
// null for kModrtErrorNone, kModrtErrorOther and codes this build does not know.
inline const char* ErrorKindOfCode(int32_t code) {
  static const char* const kKinds[] = {nullptr,         "RuntimeError",      "ValueError",
                                       "TypeError",     "KeyError",          "IndexError",
                                       "MemoryError",   "TimeoutError",      "NotImplementedError",
                                       "OSError",       "FileNotFoundError", "ImportError",
                                       "OverflowError", "AttributeError"};
  return code >= 0 && code < static_cast<int32_t>(sizeof(kKinds) / sizeof(kKinds[0])) ? kKinds[code]
                                                                                      : nullptr;
}

// The code of an exception class name; kModrtErrorOther when it has none.
inline int32_t ErrorCodeOfKind(const std::string& kind) {
  for (int32_t code = kModrtErrorRuntime; code <= kModrtErrorAttribute; ++code) {
    if (kind == ErrorKindOfCode(code)) return code;
  }
  return kModrtErrorOther;
}

// Splits an ABI 1.0 error "Kind: message" (Kind one identifier); false when
// `text` has no such prefix.
inline bool SplitErrorKind(const std::string& text, std::string* kind, std::string* message) {
  const size_t colon = text.find(": ");
  if (colon == std::string::npos || colon == 0 ||
      text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != colon) {
    return false;
  }
  *kind = text.substr(0, colon);
  *message = text.substr(colon + 2);
  return true;
}

// Runs `body`, turning any exception into -1 plus the last error
// "Kind: message", set with `set_last_error` (a `Kind` from ErrorT::kind(),
// else RuntimeError): the one place where C++ errors become C ABI return codes.
template <typename ErrorT, typename Body, typename SetLastError>
int GuardCall(Body&& body, SetLastError&& set_last_error) noexcept {
  try {
    body();
    return 0;
  } catch (const ErrorT& e) {
    set_last_error((e.kind() + ": " + e.what()).c_str());
  } catch (const std::bad_alloc&) {
    set_last_error("MemoryError: out of host memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    set_last_error((std::string("RuntimeError: ") + e.what()).c_str());
  } catch (...) {
    set_last_error("RuntimeError: unknown C++ exception");
  }
  return -1;
}

inline bool operator==(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

inline size_t TensorBytes(const DLTensor& t) {
  size_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= static_cast<size_t>(t.shape[i]);
  return n * ((t.dtype.bits * t.dtype.lanes + 7) / 8);
}

inline bool IsContiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

// Grid, block and dynamic shared memory, from the trailing launch arguments.
struct LaunchConfig {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t dyn_shared_bytes = 0;
};

// Kernel arguments marshalled by the core, the same way for every backend: a
// slot per argument holding the value in its declared C type (buffers: the
// device pointer), pointers to the slots (CUDA kernelParams / host wrapper
// layout), and the byte size of each. Each side's KernelArgs adds Pack.
struct KernelArgsBase {
  std::vector<uint64_t> slots;
  std::vector<void*> ptrs;
  std::vector<size_t> sizes;
  std::vector<const DLTensor*> buffers;  // per argument; null for scalars
  LaunchConfig launch;
  int device_id = 0;  // the device of every buffer argument (0 when there are none)
  // Where the launch goes (ModrtKernelArgs, ABI 1.2): its stream's native
  // queue (null: the default queue) and whether that stream captures a graph
  // natively; `where_known` false when the core that packed is older.
  void* stream = nullptr;
  bool capturing = false;
  bool where_known = false;

 protected:
  // Sizes the arrays for `num_args` arguments, has `pack(ModrtKernelArgs*)`
  // check the call and fill them through their C view, then takes the launch
  // parameters from that view.
  template <typename PackFn>
  void Fill(size_t num_args, PackFn&& pack) {
    slots.resize(num_args);
    ptrs.resize(num_args);
    sizes.resize(num_args);
    buffers.resize(num_args);
    ModrtKernelArgs c{};
    c.struct_size = sizeof(c);
    c.num_args = static_cast<int64_t>(num_args);
    c.slots = slots.data();
    c.ptrs = ptrs.data();
    c.sizes = sizes.data();
    c.buffers = buffers.data();
    pack(&c);
    for (int d = 0; d < 3; ++d) {
      launch.grid[d] = c.grid[d];
      launch.block[d] = c.block[d];
    }
    launch.dyn_shared_bytes = c.dyn_shared_bytes;
    device_id = c.device_id;
    stream = c.stream;
    capturing = c.capturing != 0;
  }
};

}  // namespace common
}  // namespace modrt

#endif  // MODRT_COMMON_H_
