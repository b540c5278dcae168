// Test hooks (libmodrt_testing.so, never in the production core): registry
// functions that let tests drive the native side of the registry:
// calling a function object, or a global by name, from C++; and a no-op for
// measuring call overhead.
#include "modrt/core/function.h"

namespace modrt {
namespace {

void Forward(const FunctionObj& f, const Args& a, int32_t first, Ret* r) {
  // The callee writes into our caller's return slot through a fresh value.
  OwnedValue out;
  f.Call(&a[first], a.size() - first, out.out());
  const ModrtValue& v = out.value();
  switch (v.type_code) {
    case kModrtInt: return r->SetInt(v.v_int64);
    case kModrtFloat: return r->SetFloat(v.v_float64);
    case kModrtObject: return r->SetObject(out.TakeObject());
    case kModrtNone: return;
    default: Fail("TypeError", "testing: cannot forward a ", TypeCodeName(v.type_code));
  }
}

MODRT_STATIC_INIT([] {
  // The cheapest call there is: measures the cost of calling into the registry.
  RegisterGlobal("testing.nop", [](const Args&, Ret*) {});
  RegisterGlobal("testing.apply", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "testing.apply", /*at_least=*/true);
    Forward(*static_cast<FunctionObj*>(a.Obj(0, kModrtObjFunction, "function")), a, 1, r);
  });
  RegisterGlobal("testing.call_global", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "testing.call_global", /*at_least=*/true);
    std::string name(a.Str(0));
    Ref<FunctionObj> f = GetGlobal(name);
    if (!f) Fail("KeyError", "no global function '", name, "' is registered");
    Forward(*f, a, 1, r);
  });
  RegisterGlobal("testing.raise", [](const Args& a, Ret*) {
    a.ExpectCount(2, "testing.raise");
    throw Error(std::string(a.Str(0)), std::string(a.Str(1)));
  });
});

}  // namespace
}  // namespace modrt
