// The one symbol a plugin exports: MODRT_DEFINE_PLUGIN(init) defines
// modrt_plugin_init, which hands the core the plugin's table and runs `init`
// once the core has accepted it.
#ifndef MODRT_PLUGIN_EXPORT_H_
#define MODRT_PLUGIN_EXPORT_H_

#include "modrt/plugin/errors.h"

namespace modrt {
namespace plugin MODRT_PLUGIN_HIDDEN {

namespace internal {
inline void (*&InitSlot())() {
  static void (*init)() = nullptr;
  return init;
}
inline int RegisterPlugin() {
  return GuardCall([] { InitSlot()(); });
}
}  // namespace internal

}  // namespace plugin
}  // namespace modrt

// The ABI version a plugin states; overridable only to test the refusal.
#ifndef MODRT_PLUGIN_CLAIMED_ABI_MAJOR
#define MODRT_PLUGIN_CLAIMED_ABI_MAJOR MODRT_PLUGIN_ABI_MAJOR
#endif
#ifndef MODRT_PLUGIN_CLAIMED_ABI_MINOR
#define MODRT_PLUGIN_CLAIMED_ABI_MINOR MODRT_PLUGIN_ABI_MINOR
#endif

// Defines modrt_plugin_init, the one symbol a plugin exports. `init`
// (void()) registers the plugin's backend and functions; it runs once, after
// the core accepted the plugin's table.
#define MODRT_DEFINE_PLUGIN(init)                                                              \
  extern "C" __attribute__((visibility("default"))) const ModrtPluginApi* modrt_plugin_init(   \
      const ModrtCoreApi* core) {                                                              \
    static const ModrtPluginApi api = {sizeof(ModrtPluginApi), MODRT_PLUGIN_CLAIMED_ABI_MAJOR, \
                                       MODRT_PLUGIN_CLAIMED_ABI_MINOR, #init,                  \
                                       &::modrt::plugin::internal::RegisterPlugin};            \
    if (core != nullptr && core->abi_major == MODRT_PLUGIN_ABI_MAJOR) {                        \
      ::modrt::plugin::internal::CoreSlot() = core;                                            \
      ::modrt::plugin::internal::InitSlot() = [] { init(); };                                  \
    }                                                                                          \
    return &api;                                                                               \
  }

#endif  // MODRT_PLUGIN_EXPORT_H_
