// A backend plugin that is wrong in one way, chosen at compile time, for the
// autoload fault tests: built for another ABI version, or needing a symbol
// nothing defines.
#include "modrt/backend.h"

#ifdef MODRT_TEST_UNRESOLVED_SYMBOL
extern "C" int modrt_test_symbol_that_nothing_defines(void);
#endif

namespace {

void Init() {
#ifdef MODRT_TEST_UNRESOLVED_SYMBOL
  modrt_test_symbol_that_nothing_defines();
#endif
  modrt::RegisterGlobal("testing.faulty_plugin_loaded", [](const modrt::Args&, modrt::Ret*) {});
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
