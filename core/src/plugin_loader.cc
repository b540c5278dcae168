// Loading a backend plugin: the file checks before dlopen, its entry point,
// the table and version checks, then its registration through the core's
// table (plugin.cc). Every failure is an error naming the file and the
// reason; nothing here may crash on a bad file or table.
#include <dlfcn.h>
#include <sys/stat.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "elf_check.h"
#include "internal.h"
#include "modrt/abi/c_api.h"
#include "modrt/abi/plugin_api.h"
#include "modrt/core/function.h"

namespace modrt {

namespace {

std::string Version(int32_t major, int32_t minor) { return StrCat(major, ".", minor); }

// Checks a plugin's table; the reason it is refused, or "".
std::string RefusalOf(const ModrtPluginApi* api) {
  if (api == nullptr) return "its modrt_plugin_init returned no plugin table";
  if (api->struct_size < MODRT_PLUGIN_API_MIN_SIZE) {
    return StrCat("its plugin table is ", api->struct_size, " bytes, smaller than plugin ABI ",
                  MODRT_PLUGIN_ABI_MAJOR, ".0's ", MODRT_PLUGIN_API_MIN_SIZE);
  }
  if (api->abi_major != MODRT_PLUGIN_ABI_MAJOR) {
    return StrCat("it was built for modrt plugin ABI ", Version(api->abi_major, api->abi_minor),
                  ", but this libmodrt_runtime.so implements plugin ABI ",
                  Version(MODRT_PLUGIN_ABI_MAJOR, MODRT_PLUGIN_ABI_MINOR),
                  " (the major versions must match); rebuild the backend against this core");
  }
  if (api->register_plugin == nullptr) return "its plugin table has no register_plugin function";
  return "";
}

}  // namespace

// "<file name> <problem> (backend library in <directory>)": the name first,
// the one thing to act on, kept when a table shortens the line.
std::string PluginProblem(const std::string& path, const std::string& problem) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return StrCat(path, " ", problem, " (backend library)");
  return StrCat(path.substr(slash + 1), " ", problem, " (backend library in ",
                slash == 0 ? "/" : path.substr(0, slash), ")");
}

void LoadPlugin(const std::string& path, const std::map<std::string, std::string>& options) {
  static std::mutex mu;
  // Files already loaded, by (device, inode): the same plugin reached through
  // another path (a symlink, a hard link) is not initialised twice.
  static std::set<std::pair<dev_t, ino_t>> loaded;
  std::lock_guard lock(mu);

  struct stat st{};
  if (path.empty() || stat(path.c_str(), &st) != 0) {
    Fail("FileNotFoundError", PluginProblem(path, "does not exist"));
  }
  if (loaded.count({st.st_dev, st.st_ino})) return;
  if (!S_ISREG(st.st_mode)) Fail("ValueError", PluginProblem(path, "is not a regular file"));
  if (st.st_size == 0) Fail("ValueError", PluginProblem(path, "is empty"));
  std::string damage = ElfFileProblem(path);
  if (!damage.empty()) Fail("ImportError", PluginProblem(path, "refused before dlopen: " + damage));

  // RTLD_LOCAL: plugins reach the core through its table, not symbols.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    Fail("ImportError",
         PluginProblem(path, StrCat("cannot be loaded: ", why ? why : "unknown dlopen error")));
  }
  // From here on the library stays mapped: if it registered anything, those
  // functions point into it.
  auto init = reinterpret_cast<ModrtPluginInitFunc>(dlsym(handle, MODRT_PLUGIN_INIT_SYMBOL));
  if (init == nullptr) {
    Fail("ImportError", PluginProblem(path, StrCat("is not a modrt plugin: it does not export ",
                                                   MODRT_PLUGIN_INIT_SYMBOL)));
  }
  const ModrtPluginApi* api = init(&PluginCoreApi());
  std::string refusal = RefusalOf(api);
  if (!refusal.empty()) Fail("ImportError", PluginProblem(path, "refused: " + refusal));
  ModrtPluginApi table = CopyTable(api, MODRT_PLUGIN_API_MIN_SIZE, "plugin table");
  int status = 0;
  {
    RegisteringOptionsScope scope(&options);
    status = table.register_plugin();
  }
  if (status != 0) {
    Fail("ImportError", PluginProblem(path, StrCat("failed to initialize: ", ModrtGetLastError())));
  }
  loaded.insert({st.st_dev, st.st_ino});
}

namespace {

// The same check for the loads Python makes itself (libmodrt_compiler.so through ctypes).
MODRT_STATIC_INIT([] {
  RegisterGlobal("elf.file_problem", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "elf.file_problem");
    r->SetStr(ElfFileProblem(std::string(a.Str(0))));
  });
  // elf.shared_object_problem(image, display_name, elf_class, machine, machine_name): the
  // one check of a device shared object, for runtimes (Hexagon) and their codegen.
  RegisterGlobal("elf.shared_object_problem", [](const Args& a, Ret* r) {
    a.ExpectCount(5, "elf.shared_object_problem");
    r->SetStr(ElfSharedObjectProblem(a.Bytes(0), std::string(a.Str(1)), static_cast<int>(a.Int(2)),
                                     static_cast<int>(a.Int(3)), std::string(a.Str(4))));
  });
});

}  // namespace
}  // namespace modrt
