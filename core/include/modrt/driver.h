// Lazy vendor-driver loading, the one pattern every runtime plugin uses
// (header-only, plugin side, like plugin.h): the
// plugin DSO never links the driver, so it loads on a machine without one and
// its device reports that it does not exist, and why.
#ifndef MODRT_DRIVER_H_
#define MODRT_DRIVER_H_

#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "modrt/plugin.h"

namespace modrt {
namespace plugin __attribute__((visibility("hidden"))) {

class DriverLibrary {
 public:
  DriverLibrary() = default;
  DriverLibrary(const DriverLibrary&) = delete;
  DriverLibrary& operator=(const DriverLibrary&) = delete;
  // Never dlclose'd: driver state outlives any one user.

  // Tries each soname in order. False, with error(), when none loads.
  bool Open(const std::vector<std::string>& sonames) {
    std::string tried;
    for (const std::string& name : sonames) {
      handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle_ != nullptr) return true;
      const char* why = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(why ? why : name + ": not found");
    }
    error_ = "cannot load the driver library (" + tried + ")";
    return false;
  }

  // Resolves `name` into `*fn`; false (and error()) if missing.
  template <typename Fn>
  bool Resolve(const char* name, Fn* fn) {
    *fn = reinterpret_cast<Fn>(dlsym(handle_, name));
    if (*fn == nullptr) {
      error_ = std::string("the driver library lacks the symbol ") + name;
      return false;
    }
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

// Runs `init` once; afterwards ok() and reason() say whether the driver and a
// device are usable. Thread-safe.
class LazyInit {
 public:
  template <typename Init>
  void Ensure(Init&& init) {
    std::call_once(once_, [&] {
      try {
        reason_ = init();  // empty when usable
      } catch (const std::exception& e) {
        reason_ = e.what();
      }
    });
  }
  bool ok() const { return reason_.empty(); }
  const std::string& reason() const { return reason_; }

 private:
  std::once_flag once_;
  std::string reason_;
};

// Process-wide state of one driver, set up on first use by Derived::Init()
// (which returns why the driver is unusable, or "") and kept until exit: the
// drivers' own teardown at exit is unordered with ours. Derived befriends
// LazyDriverState<Derived> so that Init() can stay private.
template <typename Derived>
class LazyDriverState {
 public:
  static Derived& Get() {
    static Derived* state = std::make_unique<Derived>().release();
    state->init_.Ensure([] { return state->Init(); });
    return *state;
  }
  bool ok() const { return init_.ok(); }
  const std::string& reason() const { return init_.reason(); }

 private:
  LazyInit init_;
};

}  // namespace plugin
}  // namespace modrt

#endif  // MODRT_DRIVER_H_
