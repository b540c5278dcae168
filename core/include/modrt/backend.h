// What backend authors build on: the in-tree backend table, the module base
// that real and fallback modules share, the fallback module, and the plugin
// entry points.
#ifndef MODRT_BACKEND_H_
#define MODRT_BACKEND_H_

#include <string>
#include <vector>

#include "modrt/device.h"
#include "modrt/module.h"
#include "modrt/payload.h"

namespace modrt {

struct MODRT_API BackendInfo {
  std::string name;          // "opencl": flag //backends:opencl, hook modrt.backend.opencl
  std::string display_name;  // "OpenCL"
  DLDeviceType device_type;
  PayloadShape shape;
  std::vector<std::string> fmts;  // accepted payload formats

  // "libmodrt_runtime_<name>.so"
  std::string RuntimeLibrary() const { return "libmodrt_runtime_" + name + ".so"; }
  // ValueError unless the payload has this backend's shape and a known fmt.
  void CheckPayload(const PayloadObj& payload) const;
};

MODRT_API const std::vector<BackendInfo>& InTreeBackends();
// Null when `name` is not an in-tree backend.
MODRT_API const BackendInfo* FindInTreeBackend(const std::string& name);
MODRT_API const BackendInfo& InTreeBackend(const std::string& name);

// A device module defined by its payload. Saving and inspection live here, so
// the real module of a backend and its fallback save identical bytes.
class MODRT_API PayloadModule : public ModuleObj {
 public:
  PayloadModule(std::string kind, Ref<PayloadObj> payload)
      : kind_(std::move(kind)), payload_(std::move(payload)) {}
  std::string kind() const final { return kind_; }
  std::string SaveToBytes() const final { return payload_->Save(); }
  std::string InspectSource(const std::string& format) const final {
    return payload_->InspectSource(format);
  }
  std::map<std::string, std::string> Sources() const override { return payload_->source; }
  std::vector<std::string> FunctionNames() const final;
  const PayloadObj& payload() const { return *payload_; }

 private:
  std::string kind_;
  Ref<PayloadObj> payload_;
};

// Stands in for a backend whose runtime is not linked: same kind, same bytes,
// inspectable, and refuses to launch.
class MODRT_API FallbackModule final : public PayloadModule {
 public:
  FallbackModule(const BackendInfo& backend, Ref<PayloadObj> payload)
      : PayloadModule(backend.name, std::move(payload)), backend_(backend) {}
  Ref<FunctionObj> GetFunction(const std::string& name) final;
  bool is_fallback() const final { return true; }

 private:
  const BackendInfo& backend_;
};

// Registers `codegen.<kind>.create_module(payload)`: the real module through
// `module.create.<kind>` when registered and MODRT_COMPILE_FORCE_FALLBACK is
// not 1, a FallbackModule otherwise. Called from each backend's :fallback.
MODRT_API void RegisterCodegenWithFallback(const BackendInfo& backend);

// Registers `module.create.<kind>` and `module.load_from_bytes.<kind>` for a
// runtime plugin, both checking the payload against `backend` first.
using ModuleFactory = Ref<ModuleObj> (*)(Ref<PayloadObj> payload);
MODRT_API void RegisterRuntimeModule(const BackendInfo& backend, ModuleFactory factory);

}  // namespace modrt

// The ABI version a plugin states; overridable only to test the refusal.
#ifndef MODRT_PLUGIN_ABI_VERSION
#define MODRT_PLUGIN_ABI_VERSION MODRT_ABI_VERSION
#endif

// Defines the two entry points of a backend plugin DSO. `init` registers the
// plugin's functions; it runs once, after the ABI check.
#define MODRT_DEFINE_PLUGIN(init)                                         \
  extern "C" MODRT_API int32_t modrt_plugin_abi_version(void) {           \
    return MODRT_PLUGIN_ABI_VERSION;                                      \
  }                                                                       \
  extern "C" MODRT_API int modrt_plugin_init(void) { return ::modrt::GuardCall(init); }

#endif  // MODRT_BACKEND_H_
