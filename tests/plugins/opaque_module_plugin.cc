// A test plugin with a module kind ("opaque_test") that is not built on
// PayloadObj: its saved bytes are its text, so artifacts list it as opaque.
#include <string>
#include <vector>

#include "modrt/backend.h"

namespace {

class OpaqueModule final : public modrt::ModuleObj {
 public:
  explicit OpaqueModule(std::string text) : text_(std::move(text)) {}
  std::string kind() const override { return "opaque_test"; }
  modrt::Ref<modrt::FunctionObj> GetFunction(const std::string& name) override {
    if (name != "echo") return nullptr;
    return modrt::MakeObject<modrt::FunctionObj>(
        [text = text_](const modrt::Args&, modrt::Ret* r) { r->SetStr(text); });
  }
  std::string SaveToBytes() const override { return text_; }
  std::vector<std::string> FunctionNames() const override { return {"echo"}; }

 private:
  std::string text_;
};

void Init() {
  modrt::RegisterGlobal("testing.opaque_module", [](const modrt::Args& a, modrt::Ret* r) {
    a.ExpectCount(1, "testing.opaque_module");
    r->SetObject(modrt::MakeObject<OpaqueModule>(std::string(a.Str(0))));
  });
  modrt::RegisterGlobal("module.load_from_bytes.opaque_test", [](const modrt::Args& a, modrt::Ret* r) {
    a.ExpectCount(1, "module.load_from_bytes.opaque_test");
    r->SetObject(modrt::MakeObject<OpaqueModule>(std::string(a.Bytes(0))));
  });
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
