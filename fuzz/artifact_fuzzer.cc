// The `.modrt` artifact container: ParseArtifact, then, for what parses,
// the manifest as JSON, LoadArtifact (through every loader this build has:
// the runtime DSOs it selects are loaded as plugins first), and a re-export
// of the loaded tree that must parse again with the same modules.
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz/fuzz_support.h"
#include "modrt/artifact.h"
#include "modrt/c_api.h"

namespace modrt {
namespace fuzz {
namespace {

// Runfiles paths of the runtime DSOs this build may have, ':'-separated.
void LoadSelectedRuntimes() {
  static const bool done = [] {
    std::stringstream paths(MODRT_FUZZ_PLUGINS);
    std::string path;
    while (std::getline(paths, path, ':')) {
      struct stat st {};
      if (path.empty() || stat(path.c_str(), &st) != 0) continue;
      if (ModrtLoadPlugin(path.c_str()) != 0) Finding("cannot load " + path + ": " + ModrtGetLastError());
      std::fprintf(stderr, "modrt fuzz: loaded %s\n", path.c_str());
    }
    return true;
  }();
  (void)done;
}

size_t CountModules(ModuleObj* module) {
  size_t n = 1;
  for (const Ref<ModuleObj>& child : module->imports()) n += CountModules(child.get());
  return n;
}

}  // namespace

void FuzzArtifact(const uint8_t* data, size_t size) {
  LoadSelectedRuntimes();
  Artifact artifact;
  if (Rejects([&] { artifact = ParseArtifact(data, size); })) return;
  Check(!artifact.modules.empty(), "an artifact without modules parsed");
  ArtifactManifestJson(artifact);
  Ref<ModuleObj> root;
  if (Rejects([&] { root = LoadArtifact(artifact); })) return;
  Check(CountModules(root.get()) == artifact.modules.size(), "LoadArtifact lost or added modules");
  const std::string again = SaveArtifact(root.get());
  Artifact reparsed;
  if (Rejects([&] { reparsed = ParseArtifact(reinterpret_cast<const uint8_t*>(again.data()), again.size()); })) {
    Finding("a loaded artifact re-exports to bytes that do not parse");
  }
  Check(reparsed.modules.size() == artifact.modules.size(), "re-export changed the module count");
  for (size_t i = 0; i < artifact.modules.size(); ++i) {
    Check(reparsed.modules[i].kind == artifact.modules[i].kind &&
              reparsed.modules[i].parent == artifact.modules[i].parent,
          StrCat("re-export changed module ", i, " (", artifact.modules[i].kind, ")"));
  }
}

}  // namespace fuzz
}  // namespace modrt

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  modrt::fuzz::LoadSelectedRuntimes();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  modrt::fuzz::FuzzArtifact(data, size);
  return 0;
}
