// The `.modrt` artifact container: ParseArtifact, then, for what parses,
// the manifest as JSON, LoadArtifact (through every loader this build has:
// the runtime DSOs it selects are loaded as plugins first), and a re-export
// of the loaded tree that must parse again with the same modules. Each input
// is tried as it is and with its manifest hash made to match.
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "modrt/abi/c_api.h"
#include "modrt/core/artifact.h"

namespace modrt {
namespace fuzz {
namespace {

// Runfiles paths of the runtime DSOs this build may have, ':'-separated.
void LoadSelectedRuntimes() {
  static const bool done = [] {
    std::stringstream paths(MODRT_FUZZ_PLUGINS);
    std::string path;
    while (std::getline(paths, path, ':')) {
      struct stat st{};
      if (path.empty() || stat(path.c_str(), &st) != 0) continue;
      if (ModrtLoadPlugin(path.c_str()) != 0)
        Finding("cannot load " + path + ": " + ModrtGetLastError());
      std::fprintf(stderr, "modrt fuzz: loaded %s\n", path.c_str());
    }
    return true;
  }();
  (void)done;
}

// Host-module images are trusted native code (see load_from_bytes_fuzzer.cc):
// libFuzzer learns the SHA-256 a mutated image needs from the comparison and
// writes it into the manifest, and glibc's loader then crashes on the image.
// Artifacts whose host images are not the seeds' are parsed, not loaded.
const std::set<std::string>& TrustedImages() {
  static const std::set<std::string> images = [] {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(MODRT_FUZZ_SEEDS, ec)) {
      std::ifstream in(e.path(), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      try {
        for (const ArtifactModule& m :
             ParseArtifact(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()).modules) {
          if (m.kind == "so")
            out.insert(PayloadObj::Load(PayloadShape::kSingleBinary, m.bytes, "seed")->code);
        }
      } catch (const Error&) {
      }
    }
    Check(!out.empty(), std::string("no host images in the seeds at ") + MODRT_FUZZ_SEEDS);
    return out;
  }();
  return images;
}

bool HostImagesTrusted(const Artifact& artifact) {
  for (const ArtifactModule& m : artifact.modules) {
    if (m.kind != "so") continue;
    if (!TrustedImages().count(
            PayloadObj::Load(PayloadShape::kSingleBinary, m.bytes, "host")->code)) {
      return false;
    }
  }
  return true;
}

size_t CountModules(ModuleObj* module) {
  size_t n = 1;
  for (const Ref<ModuleObj>& child : module->imports()) n += CountModules(child.get());
  return n;
}

}  // namespace

void ParseLoadAndReexport(std::string_view bytes) {
  Artifact artifact;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (Rejects([&] { artifact = ParseArtifact(data, bytes.size()); })) return;
  Check(!artifact.modules.empty(), "an artifact without modules parsed");
  ArtifactManifestJson(artifact);
  if (!HostImagesTrusted(artifact)) return;
  Ref<ModuleObj> root;
  if (Rejects([&] { root = LoadArtifact(artifact); })) return;
  Check(CountModules(root.get()) == artifact.modules.size(), "LoadArtifact lost or added modules");
  const std::string again = SaveArtifact(root.get());
  Artifact reparsed;
  if (Rejects([&] {
        reparsed = ParseArtifact(reinterpret_cast<const uint8_t*>(again.data()), again.size());
      })) {
    Finding("a loaded artifact re-exports to bytes that do not parse");
  }
  Check(reparsed.modules.size() == artifact.modules.size(), "re-export changed the module count");
  for (size_t i = 0; i < artifact.modules.size(); ++i) {
    Check(reparsed.modules[i].kind == artifact.modules[i].kind &&
              reparsed.modules[i].parent == artifact.modules[i].parent,
          StrCat("re-export changed module ", i, " (", artifact.modules[i].kind, ")"));
  }
}

// The input with its manifest's SHA-256 recomputed, when its header is
// intact: without it nearly every mutation of the manifest stops at the hash,
// and the manifest parser behind it would go unfuzzed. Empty if not possible.
std::string WithManifestHashFixed(std::string_view bytes) {
  constexpr size_t kManifestAt = 8 + 2 + 8;  // magic, version, manifest length
  if (bytes.size() < kManifestAt) return "";
  ByteReader r(bytes.substr(10), "header");
  uint64_t length = 0;
  if (Rejects([&] { length = r.U64(); }) || length > bytes.size() - kManifestAt) return "";
  const size_t digest_at = kManifestAt + length;
  if (bytes.size() - digest_at < 8 + 32) return "";
  std::string fixed(bytes);
  ByteWriter digest;
  digest.Str(Sha256(bytes.substr(kManifestAt, length)));
  fixed.replace(digest_at, 8 + 32, digest.Finish());
  return fixed == bytes ? "" : fixed;
}

void FuzzArtifact(const uint8_t* data, size_t size) {
  LoadSelectedRuntimes();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ParseLoadAndReexport(bytes);
  const std::string fixed = WithManifestHashFixed(bytes);
  if (!fixed.empty()) ParseLoadAndReexport(fixed);
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
