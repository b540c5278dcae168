// A plugin that reads its load-time configuration (plugin_api.h:
// load_option) while it registers, the way the CUDA runtime learns where
// Python packages live, and reports what it read.
#include <optional>
#include <string>

#include "modrt/plugin/plugin.h"

namespace {

using modrt::plugin::Args;
using modrt::plugin::Ret;

void Init() {
  const std::optional<std::string> greeting = modrt::plugin::LoadOption("greeting");
  // What the loader gave for "greeting", or None when it gave nothing.
  modrt::plugin::RegisterGlobal("testing.load_options.greeting", [greeting](const Args&, Ret* r) {
    if (greeting) r->SetStr(*greeting);
  });
  // Asks again after registration, when the core no longer answers.
  modrt::plugin::RegisterGlobal("testing.load_options.read_late", [](const Args&, Ret* r) {
    if (std::optional<std::string> late = modrt::plugin::LoadOption("greeting")) r->SetStr(*late);
  });
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
