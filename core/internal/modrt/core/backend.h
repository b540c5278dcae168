// The core's side of backends: the backend registry (identities declared by
// each backend, never listed here), the module base that real and fallback
// modules share, and the fallback module. Plugins do not include this: they
// build on plugin.h (docs/C_ABI.md).
#ifndef MODRT_BACKEND_H_
#define MODRT_BACKEND_H_

#include <functional>
#include <string>
#include <vector>

#include "modrt/core/device.h"
#include "modrt/core/module.h"
#include "modrt/core/payload.h"

namespace modrt {

struct MODRT_API BackendInfo {
  std::string name;          // "opencl": flag //backends:opencl, hook modrt.backend.opencl
  std::string display_name;  // "OpenCL"
  DLDeviceType device_type;
  PayloadShape shape;
  std::vector<std::string> fmts;  // accepted payload formats
  // Buffers are device addresses a kernel may take at a byte offset
  // (plugin_api.h: ModrtBackendIdentity.addressable_buffers).
  bool addressable_buffers = false;

  // "libmodrt_runtime_<name>.so"
  std::string RuntimeLibrary() const { return "libmodrt_runtime_" + name + ".so"; }
  // ValueError unless the payload has this backend's shape and a known fmt.
  void CheckPayload(const PayloadObj& payload) const;
};

// The backend registry. Identities come from the backends: in-tree ones from
// their BUILD files (the compiler's fallbacks and each runtime DSO register
// them), out-of-tree ones from their plugin or Python package. Registering
// an identical identity again returns the registered one; a different one
// under a taken name is a ValueError. Entries live for the process.
MODRT_API const BackendInfo& RegisterBackend(const BackendInfo& info);
// The identity a plugin, a BUILD file or Python declares (plugin_api.h), as a
// BackendInfo; ValueError when it is malformed.
MODRT_API BackendInfo BackendInfoFromIdentity(const ModrtBackendIdentity& identity);
// Null when no backend `name` is registered.
MODRT_API const BackendInfo* FindBackend(const std::string& name);
// ValueError when no backend `name` is registered.
MODRT_API const BackendInfo& GetBackend(const std::string& name);
MODRT_API std::vector<const BackendInfo*> Backends();
// The backend whose name is the device kind of `type` (the first registered
// with that type), or null.
MODRT_API const BackendInfo* FindBackendOfDeviceType(DLDeviceType type);

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

 protected:
  // What runtime modules return from GetFunction: a function that calls
  // `launch(info, index in fmap, args)` and keeps this module alive; null when
  // the payload has no function `name`.
  using Launcher = std::function<void(const FunctionInfo& info, size_t index, const Args& args)>;
  Ref<FunctionObj> LaunchingFunction(const std::string& name, Launcher launch);

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

// Registers `module.create.<kind>` and `module.load_from_bytes.<kind>`, both
// checking the payload against `backend` first, then calling `factory`.
using ModuleFactory = std::function<Ref<ModuleObj>(Ref<PayloadObj> payload)>;
MODRT_API void RegisterRuntimeModule(const BackendInfo& backend, ModuleFactory factory);

}  // namespace modrt

#endif  // MODRT_BACKEND_H_
