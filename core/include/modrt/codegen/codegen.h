// What a backend's codegen parts include: the parts linked into
// libmodrt_compiler.so (not into the backend's runtime plugin), which register
// the global functions Python's codegen side calls (reflectors, compilers) and
// the backend's create-with-fallback. They use the plugin kit's values
// (modrt/plugin/values.h: Args, Ret, Fail, RegisterGlobal), bound to the core
// when libmodrt_compiler.so loads, and none of the core's own C++ classes
// (//core:internal is not visible to //backends).
#ifndef MODRT_CODEGEN_CODEGEN_H_
#define MODRT_CODEGEN_CODEGEN_H_

#include "modrt/abi/c_api.h"
#include "modrt/abi/plugin_api.h"
#include "modrt/plugin/values.h"

namespace modrt {

// Registers `codegen.<kind>.create_module(payload)`: the real module through
// `module.create.<kind>` when registered and MODRT_COMPILE_FORCE_FALLBACK is
// not 1, a FallbackModule otherwise. Registers the backend `identity` first.
// Called from each backend's generated :fallback; defined in
// //core:compiler_objects.
MODRT_API void RegisterCodegenWithFallback(const ModrtBackendIdentity& identity);

namespace codegen {

// The core's table (libmodrt_runtime.so): the one every plugin is given.
MODRT_API const ModrtCoreApi& CoreTable();

// Points the plugin kit (plugin::Core()) of the library this is compiled into
// at the core's table. Idempotent; MODRT_CODEGEN_INIT calls it first.
inline void BindPluginKit() { plugin::internal::CoreSlot() = &CoreTable(); }

struct Registration {
  explicit Registration(void (*body)()) {
    BindPluginKit();
    body();
  }
};

}  // namespace codegen
}  // namespace modrt

#define MODRT_CODEGEN_CAT2(a, b) a##b
#define MODRT_CODEGEN_CAT(a, b) MODRT_CODEGEN_CAT2(a, b)
// Runs `body` (registrations through the plugin kit) when the library that
// holds it is loaded, with the plugin kit bound to the core.
#define MODRT_CODEGEN_INIT(body)                                                     \
  static const ::modrt::codegen::Registration MODRT_CODEGEN_CAT(modrt_codegen_init_, \
                                                                __COUNTER__)(body)

#endif  // MODRT_CODEGEN_CODEGEN_H_
