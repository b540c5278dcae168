// Loading backend plugin DSOs: dlopen, ABI check, init. Every failure is an
// error naming the file and the reason; nothing here may crash on a bad file.
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "elf_check.h"
#include "internal.h"
#include "modrt/c_api.h"
#include "modrt/function.h"
#include "modrt/object.h"

namespace modrt {

void ThrowLastError() {
  std::string message = ModrtGetLastError();
  // "Kind: message", where Kind is one identifier.
  size_t colon = message.find(": ");
  if (colon != std::string::npos && colon > 0 &&
      message.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == colon) {
    throw Error(message.substr(0, colon), message.substr(colon + 2));
  }
  throw Error("RuntimeError", message.empty() ? "unknown error" : message);
}

void LoadPlugin(const std::string& path) {
  static std::mutex mu;
  static std::set<std::string> loaded;
  std::lock_guard lock(mu);
  if (loaded.count(path)) return;

  struct stat st {};
  if (path.empty() || stat(path.c_str(), &st) != 0) {
    Fail("FileNotFoundError", "backend library ", path, " does not exist");
  }
  if (!S_ISREG(st.st_mode)) Fail("ValueError", "backend library ", path, " is not a regular file");
  if (st.st_size == 0) Fail("ValueError", "backend library ", path, " is empty");
  std::string damage = ElfFileProblem(path);
  if (!damage.empty()) Fail("ImportError", "backend library ", path, " refused before dlopen: ", damage);

  // RTLD_LOCAL: plugins share the core through its symbols, not each other's.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    Fail("ImportError", "cannot load backend library ", path, ": ", why ? why : "unknown dlopen error");
  }
  // From here on the library stays mapped: if its init registered anything,
  // those functions point into it.
  auto abi = reinterpret_cast<ModrtPluginAbiVersionFunc>(
      dlsym(handle, MODRT_PLUGIN_ABI_VERSION_SYMBOL));
  auto init = reinterpret_cast<ModrtPluginInitFunc>(dlsym(handle, MODRT_PLUGIN_INIT_SYMBOL));
  if (abi == nullptr || init == nullptr) {
    Fail("ImportError", "backend library ", path, " is not a modrt plugin: it does not export ",
         MODRT_PLUGIN_ABI_VERSION_SYMBOL, " and ", MODRT_PLUGIN_INIT_SYMBOL);
  }
  int32_t version = abi();
  if (version != MODRT_ABI_VERSION) {
    Fail("ImportError", "backend library ", path, " was built against modrt ABI version ", version,
         ", but this libmodrt_runtime.so has ABI version ", MODRT_ABI_VERSION,
         "; rebuild the backend against this core");
  }
  if (init() != 0) {
    Fail("ImportError", "backend library ", path, " failed to initialize: ", ModrtGetLastError());
  }
  loaded.insert(path);
}

namespace {

// The same check for the loads Python makes itself (libmodrt_compiler.so through ctypes).
MODRT_STATIC_INIT([] {
  RegisterGlobal("elf.file_problem", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "elf.file_problem");
    r->SetStr(ElfFileProblem(std::string(a.Str(0))));
  });
});

}  // namespace
}  // namespace modrt
