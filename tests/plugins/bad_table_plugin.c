/* A plugin in plain C whose entry point or table is wrong in one way, chosen
 * at compile time, for the loader's refusal tests. Each must be refused with
 * a message naming the file and the defect, never a crash. */
#include <stddef.h>

#include "modrt/plugin_api.h"

#define EXPORT __attribute__((visibility("default")))

static int Register(void) { return 0; }

#ifdef MODRT_TEST_NO_ENTRY_POINT
/* Exports a function, but not modrt_plugin_init. */
EXPORT int modrt_plugin_init_misspelled(void) { return 0; }
#else
EXPORT const ModrtPluginApi* modrt_plugin_init(const ModrtCoreApi* core) {
  (void)core;
#if defined(MODRT_TEST_NULL_TABLE)
  return NULL;
#else
  static ModrtPluginApi api = {sizeof(ModrtPluginApi), MODRT_PLUGIN_ABI_MAJOR, MODRT_PLUGIN_ABI_MINOR,
                               "bad table plugin", Register};
#if defined(MODRT_TEST_SMALL_TABLE)
  api.struct_size = offsetof(ModrtPluginApi, register_plugin);
#elif defined(MODRT_TEST_NULL_REGISTER)
  api.register_plugin = NULL;
#endif
  return &api;
#endif
}
#endif
