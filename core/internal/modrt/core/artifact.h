// The `.modrt` artifact file: a module tree (a host module and the device
// modules it imports, of any kinds) with a manifest that can be read without
// loading any runtime.
//
// Layout, written with the shared ByteWriter (little-endian, u64 lengths):
//   "MODRTART"                      8-byte magic
//   u16 format version              1, or 2 when a signature uses names, const
//                                   or launch-filled arguments
//   Str manifest                    see below
//   Str SHA-256 of the manifest     32 bytes
//   Str module bytes, per module    in manifest order
// Manifest: u64 module count, then per module
//   Str kind, u64 parent index (kArtifactRoot for module 0), u8 shape,
//   Str fmt, u64 function count + FunctionInfo each, u64 source count +
//   (Str format, Str text) each, u64 byte size, Str SHA-256 (32 bytes).
// Modules are in depth-first order: a parent comes before its imports.
#ifndef MODRT_ARTIFACT_H_
#define MODRT_ARTIFACT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "modrt/core/module.h"
#include "modrt/core/payload.h"

namespace modrt {

inline constexpr char kArtifactMagic[] = "MODRTART";  // 8 bytes, no terminator written
// Version 1: every argument is a dtype and a kind. Version 2: arguments may
// carry names, `const` and launch tags (FunctionInfo's extended encoding).
// Version 3: uniform block arguments ("uniform uint32x4 params"). A file is
// written with the lowest version that holds it, so one without them is what
// earlier modrt wrote and still reads.
inline constexpr uint16_t kArtifactVersion = 3;  // the newest this modrt reads
inline constexpr uint16_t kArtifactOldestVersion = 1;
// The version a file holding these functions is written with.
MODRT_API uint16_t ArtifactVersionFor(const std::vector<FunctionInfo>& functions);
// ValueError naming both versions unless this modrt reads `version`.
MODRT_API void CheckArtifactVersion(uint16_t version);
inline constexpr uint64_t kArtifactRoot = UINT64_MAX;
// The source format module 0 of a signed artifact keeps its signature under
// (modrt/artifact_trust.h); no module may export a source of that format.
inline constexpr char kArtifactReservedSource[] = "modrt.signature";

// How a module's bytes are laid out. Payload shapes are checked against the
// manifest on parse; opaque bytes (an out-of-tree module that is not built on
// PayloadObj) are checked by their hash only, and have no signatures.
enum class ArtifactShape : uint8_t { kSingleBinary = 0, kMultiShader = 1, kOpaque = 2 };

struct ArtifactModule {
  std::string kind;
  uint64_t parent = kArtifactRoot;
  ArtifactShape shape = ArtifactShape::kOpaque;
  std::string fmt;                             // empty for opaque modules
  std::vector<FunctionInfo> functions;         // opaque: names only
  std::map<std::string, std::string> sources;  // format -> text, for inspection
  std::string sha256;                          // 32 raw bytes
  std::string bytes;                           // what Module::SaveToBytes gave

  // "module 1 (opencl)": how errors name this module.
  std::string Label(size_t index) const;
};

struct Artifact {
  uint16_t version = kArtifactVersion;
  std::vector<ArtifactModule> modules;
};

// Parses and verifies a whole artifact file: layout, format version, the
// manifest's hash, each module's byte size and SHA-256, and, for payload
// shapes, that the manifest's fmt and signatures are those the bytes hold.
// Throws modrt::Error (kind "ValueError") naming the module and the reason;
// never reads out of bounds or allocates more than `size` allows.
MODRT_API Artifact ParseArtifact(const uint8_t* data, size_t size);

// The artifact of `root` and, depth-first, its imports.
MODRT_API std::string SaveArtifact(ModuleObj* root);

// Real modules for every entry, imports attached. A kind with no loader here
// is refused naming the kind, its runtime DSO and the flag that builds it.
MODRT_API Ref<ModuleObj> LoadArtifact(const Artifact& artifact);

// The manifest as JSON (sources included), for tools that read it without a runtime.
MODRT_API std::string ArtifactManifestJson(const Artifact& artifact);

// SHA-256 digest of `data` (32 raw bytes).
MODRT_API std::string Sha256(std::string_view data);

}  // namespace modrt

#endif  // MODRT_ARTIFACT_H_
