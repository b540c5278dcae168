// The global registry and plugin loading under 16 threads: registration of
// distinct and of the same names, lookups and listings while others register,
// and the same plugin DSO loaded by every thread at once (argv[1]).
#include <atomic>
#include <string>

#include "modrt/abi/c_api.h"
#include "modrt/core/function.h"
#include "tests/concurrency/threads.h"

namespace modrt {
namespace testing {
namespace {

constexpr int kNamesPerThread = 200;

std::string NameOf(int thread, int i) {
  return "testing.concurrent." + std::to_string(thread) + "." + std::to_string(i);
}

int64_t CallInt(const Ref<FunctionObj>& f) {
  OwnedValue ret;
  f->Call(nullptr, 0, ret.out());
  return ret.value().v_int64;
}

void RegistrationAndLookup() {
  std::atomic<int> duplicate_refusals{0};
  RunTogether(kThreads, [&](int t) {
    for (int i = 0; i < kNamesPerThread; ++i) {
      const int64_t id = int64_t{t} * kNamesPerThread + i;
      RegisterGlobal(NameOf(t, i), [id](const Args&, Ret* r) { r->SetInt(id); });
      // Everyone races for one shared name: exactly one wins.
      try {
        RegisterGlobal("testing.concurrent.shared." + std::to_string(i), [](const Args&, Ret*) {});
      } catch (const Error& e) {
        Expect(e.kind() == "KeyError", std::string("unexpected error: ") + e.what());
        duplicate_refusals.fetch_add(1);
      }
      // Overriding is allowed and never tears a concurrent lookup.
      RegisterGlobal(
          "testing.concurrent.override", [t](const Args&, Ret* r) { r->SetInt(t); },
          /*allow_override=*/true);
      // Others' names, while they are being registered: absent or complete.
      if (Ref<FunctionObj> f = GetGlobal(NameOf((t + 1) % kThreads, i))) {
        Expect(CallInt(f) == int64_t{(t + 1) % kThreads} * kNamesPerThread + i,
               "torn registry entry");
      }
      Ref<FunctionObj> any = GetGlobal("testing.concurrent.override");
      Expect(any && CallInt(any) >= 0 && CallInt(any) < kThreads, "torn override");
      if (i % 50 == 0) Expect(!ListGlobals().empty(), "empty listing");
    }
  });
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kNamesPerThread; ++i) {
      Ref<FunctionObj> f = GetGlobal(NameOf(t, i));
      Expect(f && CallInt(f) == int64_t{t} * kNamesPerThread + i, "lost " + NameOf(t, i));
    }
  }
  Expect(duplicate_refusals.load() == (kThreads - 1) * kNamesPerThread,
         "a shared name was registered more or less than once: " +
             std::to_string(duplicate_refusals.load()) + " refusals");
}

// Through the C ABI, as the Python side does it.
void ConcurrentPluginLoad(const char* path) {
  RunTogether(kThreads, [&](int) {
    if (ModrtLoadPlugin(path) != 0) FailTest(std::string("load failed: ") + ModrtGetLastError());
    ModrtObjectHandle f = nullptr;
    Expect(ModrtGetGlobal("testing.faulty_plugin_loaded", &f) == 0 && f != nullptr,
           "the plugin's function is not registered after its load returned");
    ModrtObjectRelease(f);
  });
}

}  // namespace
}  // namespace testing
}  // namespace modrt

int main(int argc, char** argv) {
  if (argc != 2) modrt::testing::FailTest("usage: registry_concurrency_test PLUGIN.so");
  modrt::testing::RegistrationAndLookup();
  modrt::testing::ConcurrentPluginLoad(argv[1]);
  std::fprintf(stderr, "PASSED\n");
  return 0;
}
