// The plugin SDK's errors and its hold on the core: the core's table as
// modrt_plugin_init received it, Error and Fail, and GuardCall, the one place
// where a plugin's C++ exceptions become C ABI return codes.
#ifndef MODRT_PLUGIN_ERRORS_H_
#define MODRT_PLUGIN_ERRORS_H_

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "modrt/abi/plugin_api.h"
#include "modrt/plugin/common.h"

// The plugin-side namespace is hidden: nothing of it leaves the plugin DSO.
#define MODRT_PLUGIN_HIDDEN __attribute__((visibility("hidden")))

namespace modrt {
namespace plugin MODRT_PLUGIN_HIDDEN {

namespace internal {
inline const ModrtCoreApi*& CoreSlot() {
  static const ModrtCoreApi* core = nullptr;
  return core;
}
}  // namespace internal

// The core's table, as given to modrt_plugin_init.
inline const ModrtCoreApi& Core() { return *internal::CoreSlot(); }

// An error with a kind that Python maps to an exception class
// ("ValueError", "TypeError", "KeyError", "RuntimeError", ...).
class Error : public std::runtime_error {
 public:
  Error(std::string kind, const std::string& message)
      : std::runtime_error(message), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

using common::StrCat;

template <typename... Parts>
[[noreturn]] void Fail(const char* kind, const Parts&... parts) {
  throw Error(kind, StrCat(parts...));
}

// Rebuilds the Error a core call reported: typed (a core of ABI 1.1), else
// from the ABI 1.0 "Kind: message".
[[noreturn]] inline void ThrowLastError() {
  const ModrtCoreApi& core = Core();
  if (MODRT_CORE_HAS(&core, get_error_message)) {
    if (const char* kind = common::ErrorKindOfCode(core.get_error_code())) {
      throw Error(kind, core.get_error_message());
    }
  }
  std::string message = core.get_last_error();
  std::string kind, text;
  if (common::SplitErrorKind(message, &kind, &text)) throw Error(kind, text);
  throw Error("RuntimeError", message.empty() ? "unknown error" : message);
}

// Throws the core's error when a core call failed.
inline void Check(int status) {
  if (status != 0) ThrowLastError();
}

// Reports an error to the core: by code where the core has typed errors
// (ABI 1.1) and the kind has one, else as "Kind: message".
inline void ReportError(const std::string& kind, const std::string& message) {
  const ModrtCoreApi& core = Core();
  const int32_t code = common::ErrorCodeOfKind(kind);
  if (code != kModrtErrorOther && MODRT_CORE_HAS(&core, set_error)) {
    core.set_error(code, message.c_str());
  } else {
    core.set_last_error((kind + ": " + message).c_str());
  }
}

// Runs `body`, turning any exception into -1 plus the core's last error: the
// one place where the plugin's C++ errors become C ABI return codes.
template <typename Body>
int GuardCall(Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const Error& e) {
    ReportError(e.kind(), e.what());
  } catch (const std::bad_alloc&) {
    ReportError("MemoryError", "out of host memory");
  } catch (const std::exception& e) {
    ReportError("RuntimeError", e.what());
  } catch (...) {
    ReportError("RuntimeError", "unknown C++ exception");
  }
  return -1;
}

}  // namespace plugin
}  // namespace modrt

#endif  // MODRT_PLUGIN_ERRORS_H_
