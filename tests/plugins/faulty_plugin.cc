// A backend plugin that is wrong in one way, chosen at compile time, for the
// autoload fault tests: claiming another plugin ABI version, or needing a
// symbol nothing defines.
#include "modrt/plugin/plugin.h"

#ifdef MODRT_TEST_UNRESOLVED_SYMBOL
extern "C" int modrt_test_symbol_that_nothing_defines(void);
#endif

namespace {

void Init() {
#ifdef MODRT_TEST_UNRESOLVED_SYMBOL
  modrt_test_symbol_that_nothing_defines();
#endif
  modrt::plugin::RegisterGlobal("testing.faulty_plugin_loaded",
                                [](const modrt::plugin::Args&, modrt::plugin::Ret*) {});
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
