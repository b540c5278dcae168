/* A plugin in plain C against plugin_api.h, built in several ways for the
 * loader's tests: with one defect in its entry point or table (each must be
 * refused with a message naming the file and the defect, never a crash), or
 * (MODRT_TEST_GROWN_TABLE) with the larger table of a later minor version,
 * which loads: the core reads only the fields it knows. */
#include <stddef.h>

#include "modrt/abi/plugin_api.h"

#define EXPORT __attribute__((visibility("default")))

static const ModrtCoreApi* core_api;

static int Noop(void* resource, const ModrtValue* args, int32_t num_args, ModrtValue* ret) {
  (void)resource;
  (void)args;
  (void)num_args;
  (void)ret;
  return 0;
}

/* Registers testing.c_plugin_loaded, through the table only. */
static int Register(void) {
  ModrtObjectHandle f = NULL;
  if (core_api->function_create(Noop, NULL, NULL, &f) != 0) return -1;
  int status = core_api->register_global("testing.c_plugin_loaded", f, 0);
  core_api->object_release(f);
  return status;
}

/* A later minor's table: 1.0's fields, then one this core does not know. */
typedef struct {
  ModrtPluginApi v1_0;
  int (*added_in_a_later_minor)(void);
} GrownPluginApi;

#ifdef MODRT_TEST_NO_ENTRY_POINT
/* Exports a function, but not modrt_plugin_init. */
EXPORT int modrt_plugin_init_misspelled(void) { return Register(); }
#else
EXPORT const ModrtPluginApi* modrt_plugin_init(const ModrtCoreApi* core) {
  core_api = core;
#if defined(MODRT_TEST_NULL_TABLE)
  (void)Register;
  return NULL;
#else
  static GrownPluginApi api = {{sizeof(ModrtPluginApi), MODRT_PLUGIN_ABI_MAJOR,
                                MODRT_PLUGIN_ABI_MINOR, "c plugin", Register},
                               NULL};
#if defined(MODRT_TEST_SMALL_TABLE)
  api.v1_0.struct_size = offsetof(ModrtPluginApi, register_plugin);
#elif defined(MODRT_TEST_NULL_REGISTER)
  api.v1_0.register_plugin = NULL;
#elif defined(MODRT_TEST_GROWN_TABLE)
  api.v1_0.struct_size = sizeof(GrownPluginApi);
  api.v1_0.abi_minor = MODRT_PLUGIN_ABI_MINOR + 1;
  api.added_in_a_later_minor = Register;
#endif
  return &api.v1_0;
#endif
}
#endif
