// A test plugin with a module kind ("opaque_test") that is not built on
// PayloadObj: its saved bytes are its text, so artifacts list it as opaque.
#include <memory>
#include <string>
#include <vector>

#include "modrt/plugin/plugin.h"

namespace {

using namespace modrt::plugin;  // NOLINT(build/namespaces)

class OpaqueModule final : public Module {
 public:
  explicit OpaqueModule(std::string text) : text_(std::move(text)) {}
  ObjectRef GetFunction(const std::string& name) override {
    if (name != "echo") return nullptr;
    return MakeFunction([text = text_](const Args&, Ret* r) { r->SetStr(text); });
  }
  std::string SaveToBytes() const override { return text_; }
  std::vector<std::string> FunctionNames() const override { return {"echo"}; }

 private:
  std::string text_;
};

void Init() {
  RegisterGlobal("testing.opaque_module", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "testing.opaque_module");
    r->SetObject(MakeModule(std::make_unique<OpaqueModule>(std::string(a.Str(0))), "opaque_test"));
  });
  RegisterGlobal("module.load_from_bytes.opaque_test", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "module.load_from_bytes.opaque_test");
    r->SetObject(
        MakeModule(std::make_unique<OpaqueModule>(std::string(a.Bytes(0))), "opaque_test"));
  });
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
