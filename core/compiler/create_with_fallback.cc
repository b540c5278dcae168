// The codegen side of every backend: create the real module when its runtime
// is loaded, the fallback module otherwise. Linked into libmodrt_compiler.so.
#include <cstdlib>
#include <cstring>

#include "modrt/codegen/codegen.h"
#include "modrt/core/backend.h"

namespace modrt {

Ref<FunctionObj> FallbackModule::GetFunction(const std::string& name) {
  // Not ours: "no function", so a lookup goes on to other modules.
  if (payload().fmap.count(name) == 0) return nullptr;
  Fail("RuntimeError", backend_.display_name,
       " runtime is not linked into this build; cannot launch kernels. Build with --//backends:",
       backend_.name, "=on, or load this module where ", backend_.RuntimeLibrary(), " is present.");
}

namespace {

bool ForceFallback() {
  const char* v = std::getenv("MODRT_COMPILE_FORCE_FALLBACK");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace

void RegisterCodegenWithFallback(const ModrtBackendIdentity& identity) {
  const BackendInfo info = BackendInfoFromIdentity(identity);
  const BackendInfo& backend = RegisterBackend(info);
  RegisterGlobal("codegen." + backend.name + ".create_module", [&backend](const Args& a, Ret* r) {
    a.ExpectCount(1, "create_module");
    Ref<PayloadObj> payload(static_cast<PayloadObj*>(a.Obj(0, kModrtObjPayload, "payload")));
    backend.CheckPayload(*payload);
    Ref<FunctionObj> create =
        ForceFallback() ? nullptr : GetGlobal("module.create." + backend.name);
    if (!create) {
      r->SetObject(MakeObject<FallbackModule>(backend, std::move(payload)));
      return;
    }
    ModrtValue arg = ObjValue(payload.get());
    OwnedValue real;
    create->Call(&arg, 1, real.out());
    r->SetObject(real.TakeObject());
  });
}

}  // namespace modrt
