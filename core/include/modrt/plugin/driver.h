// Lazy vendor-driver loading, the one pattern every runtime plugin uses
// (header-only, plugin side, like plugin.h): the
// plugin DSO never links the driver, so it loads on a machine without one and
// its device reports that it does not exist, and why.
#ifndef MODRT_DRIVER_H_
#define MODRT_DRIVER_H_

#include <dlfcn.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "modrt/plugin/launch_limits.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace plugin MODRT_PLUGIN_HIDDEN {

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

// The environment variable that names a runtime's driver library in place of
// the system's: MODRT_<BACKEND>_DRIVER_LIBRARY (MODRT_CUDA_DRIVER_LIBRARY, ...).
inline std::string DriverLibraryVariable(std::string_view backend) {
  std::string name = "MODRT_";
  for (char c : backend) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name + "_DRIVER_LIBRARY";
}

// The sonames a runtime tries, in order: only the file named by its
// DriverLibraryVariable when that is set (a test double, or a driver outside
// the loader's path), else `defaults`.
inline std::vector<std::string> DriverLibraryCandidates(std::string_view backend,
                                                        std::vector<std::string> defaults) {
  const char* chosen = std::getenv(DriverLibraryVariable(backend).c_str());
  if (chosen != nullptr && *chosen != '\0') return {chosen};
  return defaults;
}

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

  // Fails with ValueError unless device `id` of `kind` exists (Derived has
  // count(): how many devices the driver reported).
  void CheckDevice(const ModrtBackendIdentity& backend, int id) const {
    const int count = static_cast<const Derived*>(this)->count();
    if (id < 0 || id >= count) {
      Fail("ValueError", backend.name, "(", id, ") does not exist: ",
           ok() ? StrCat(count, " ", backend.display_name, " devices") : reason());
    }
  }

 private:
  LazyInit init_;
};

// The part of a DeviceAPI every driver-backed runtime shares: its devices are
// those its LazyDriverState `State` found (none when the driver is unusable,
// and then the reason why).
template <typename State>
class DriverDeviceAPI : public DeviceAPI {
 public:
  int DeviceCount() override {
    State& state = State::Get();
    return state.ok() ? state.count() : 0;
  }
  std::string UnavailableReason() override {
    State& state = State::Get();
    return state.ok() ? "" : state.reason();
  }
};

// ------------------------------------------------------------------------
// Drivers whose devices are indices 0..count-1, whose memory is addressed by
// device pointers and which keep a current device per thread: the CUDA driver
// API and HIP. Their runtimes differ only in the API they call; the
// per-device module cache and the launch are written once here, the device
// API in indexed_device.h.
//
// `Driver` is the runtime's LazyDriverState, with (each throws an Error
// naming what failed, except where noexcept):
//   static constexpr DLDeviceType kDeviceType;
//   using ModuleHandle = ...; using FunctionHandle = ...;
//   void Activate(int id);                  device `id` current on this thread
//   void ActivateQuietly(int id) noexcept;  the same, for destructors
//   void UnloadQuietly(ModuleHandle module) noexcept;
//   void Launch(FunctionHandle f, const LaunchConfig& c, void** params, const std::string& name);

// Calls a driver's launch entry point (cuLaunchKernel, hipModuleLaunchKernel:
// function, grid x y z, block x y z, dynamic shared bytes, stream, kernel
// parameters, extra) on `stream`. IndexedModule has checked that grid and
// block fit in unsigned int.
template <typename Status, typename Function, typename Stream>
Status CallLaunch(Status (*launch)(Function, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, Stream, void**, void**),
                  Function function, const LaunchConfig& c, Stream stream, void** params) {
  return launch(function, static_cast<unsigned>(c.grid[0]), static_cast<unsigned>(c.grid[1]),
                static_cast<unsigned>(c.grid[2]), static_cast<unsigned>(c.block[0]),
                static_cast<unsigned>(c.block[1]), static_cast<unsigned>(c.block[2]),
                static_cast<unsigned>(c.dyn_shared_bytes), stream, params, nullptr);
}

// The integer attribute ids of an indexed driver's attribute query for the
// attributes every such driver answers alike.
struct IndexedAttributeIds {
  int compute_major;
  int compute_minor;
  int max_threads_per_block;
  int warp_size;
  int max_shared_memory_per_block;
  int multi_processor_count;
};

// Answers `name` from `query(attribute id)` when it is one of those; false
// when it is not.
template <typename Query>
bool IndexedAttr(std::string_view name, const IndexedAttributeIds& ids, Query&& query, Ret* ret) {
  if (name == "compute_version") {
    ret->SetStr(StrCat(query(ids.compute_major), ".", query(ids.compute_minor)));
  } else if (name == "max_threads_per_block") {
    ret->SetInt(query(ids.max_threads_per_block));
  } else if (name == "warp_size") {
    ret->SetInt(query(ids.warp_size));
  } else if (name == "max_shared_memory_per_block") {
    ret->SetInt(query(ids.max_shared_memory_per_block));
  } else if (name == "multi_processor_count") {
    ret->SetInt(query(ids.multi_processor_count));
  } else {
    return false;
  }
  return true;
}

// A module on an indexed driver: loaded on each device on first use there
// (LoadOn), each function's Kernel prepared on first use (Prepare, which may
// also update it for this launch), all under one lock; unloaded from every
// device it was loaded on when it goes.
template <typename Driver, typename Kernel>
class IndexedModule : public PayloadModule {
 public:
  using ModuleHandle = typename Driver::ModuleHandle;
  using FunctionHandle = typename Driver::FunctionHandle;

  explicit IndexedModule(Payload payload) : PayloadModule(std::move(payload)) {}
  ~IndexedModule() override {
    Driver& driver = Driver::Get();
    for (size_t id = 0; id < modules_.size(); ++id) {
      // A module exists only where its device was made current.
      if (modules_[id] == nullptr) continue;
      driver.ActivateQuietly(static_cast<int>(id));
      driver.UnloadQuietly(modules_[id]);
    }
  }

  ObjectRef GetFunction(const std::string& name) override {
    return PackedLaunchingFunction(name, Driver::kDeviceType);
  }
  // A launch goes down once: the core packs the arguments, then calls here.
  bool LaunchesPacked() const override { return true; }
  void LaunchPacked(const FunctionInfo& info, size_t index, const PackedArgs& k) override {
    CheckFitsTheDriver(info, k.launch, k.device_id);
    Driver& driver = Driver::Get();
    driver.Activate(k.device_id);
    FunctionHandle function = Get(k.device_id, index, info.name, k.launch);
    // The driver reads the parameters through a non-const void** only.
    void** params = k.ptrs.size() == 0 ? nullptr : const_cast<void**>(k.ptrs.data());
    driver.Launch(function, k.launch, params, info.name, k.NativeStream(Driver::kDeviceType));
  }

 protected:
  // The module on `device` (current on this thread), loaded from payload().
  virtual ModuleHandle LoadOn(int device) = 0;
  // The function `name` in `module`, through its cached `kernel`.
  virtual FunctionHandle Prepare(int device, ModuleHandle module, const std::string& name,
                                 const LaunchConfig& launch, Kernel* kernel) = 0;

 private:
  // The driver's launch takes grid and block as unsigned int: a value over
  // that is refused here (ValueError), never truncated into another launch.
  // Within it, the driver checks the device's own limits.
  static void CheckFitsTheDriver(const FunctionInfo& info, const LaunchConfig& c, int device) {
    constexpr uint64_t kMax = std::numeric_limits<unsigned>::max();
    for (int a = 0; a < 3; ++a) {
      const auto check = [&](const char* axis, int64_t value) {
        if (static_cast<uint64_t>(value) <= kMax) return;
        Fail("ValueError",
             LaunchLimitExceeded(info.name, StrCat(axis, "xyz"[a]), value, kMax,
                                 "the driver's unsigned int",
                                 StrCat(DeviceKindName(Driver::kDeviceType), "(", device, ")")));
      };
      check("blockIdx.", c.grid[a]);
      check("threadIdx.", c.block[a]);
    }
  }

  FunctionHandle Get(int device, size_t index, const std::string& name,
                     const LaunchConfig& launch) {
    std::lock_guard lock(mu_);
    if (modules_.size() <= static_cast<size_t>(device)) {
      modules_.resize(device + 1, nullptr);
      kernels_.resize(device + 1);
    }
    ModuleHandle& module = modules_[device];
    if (module == nullptr) module = LoadOn(device);
    std::vector<Kernel>& per_device = kernels_[device];
    if (per_device.empty()) per_device.resize(payload().fmap.size());
    return Prepare(device, module, name, launch, &per_device[index]);
  }

  std::mutex mu_;
  std::vector<ModuleHandle> modules_;         // per device
  std::vector<std::vector<Kernel>> kernels_;  // per device, per function
};

}  // namespace plugin
}  // namespace modrt

#endif  // MODRT_DRIVER_H_
