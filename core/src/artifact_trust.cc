// Signed artifacts and the trust policy (modrt/core/artifact_trust.h). Ed25519 is
// libsodium's; this file only frames what is signed and where it is kept (the
// key files are artifact_keys.cc's).
#include "modrt/core/artifact_trust.h"

#include <sodium.h>

#include <mutex>
#include <utility>

#include "artifact_keys.h"
#include "internal.h"
#include "modrt/core/function.h"

namespace modrt {
namespace {

using artifact_keys::InitSodium;
using artifact_keys::kKeyIdDigits;
using artifact_keys::Preview;
using artifact_keys::Unhex;

constexpr size_t kMagicSize = sizeof(kArtifactMagic) - 1;
constexpr char kBlockHeader[] = "modrt-signature 1";
// Domain separation: a modrt artifact signature is never valid as anything else.
constexpr char kSignatureContext[] = "modrt artifact signature v1";

static_assert(crypto_sign_PUBLICKEYBYTES == 32 && crypto_sign_SECRETKEYBYTES == 64 &&
              crypto_sign_BYTES == 64 && crypto_sign_SEEDBYTES == 32);

// Where module 0's sources sit in a manifest.
struct RootSources {
  size_t count_at = 0;  // offset of the u64 source count
  size_t end = 0;       // offset just after the last source
  struct Entry {
    std::string format;
    std::string text;
    size_t start, end;
  };
  std::vector<Entry> entries;
};

// Reads module 0's entry up to its sources with the same reader and field
// rules as ParseArtifact, so both see the same structure.
RootSources FindRootSources(const std::string& manifest) {
  ByteReader m(manifest, "modrt artifact manifest");
  if (m.Count("module count", 1) == 0) m.Corrupt("the manifest lists no module");
  m.Str("module kind");
  m.U64();
  m.U8();
  m.Str("fmt");
  uint64_t nfuncs = m.Count("function count", 24);
  for (uint64_t i = 0; i < nfuncs; ++i) FunctionInfo::Load(&m);
  RootSources out;
  out.count_at = m.offset();
  uint64_t nsources = m.Count("source count", 16);
  for (uint64_t i = 0; i < nsources; ++i) {
    RootSources::Entry e;
    e.start = m.offset();
    e.format = m.Str("source format");
    e.text = m.Str("source text");
    e.end = m.offset();
    out.entries.push_back(std::move(e));
  }
  out.end = m.offset();
  return out;
}

std::string U64Bytes(uint64_t v) {
  ByteWriter w;
  w.U64(v);
  return w.Finish();
}

std::string SignedMessage(uint16_t version, std::string_view unsigned_manifest) {
  ByteWriter w;
  for (char c : std::string_view(kSignatureContext, sizeof(kSignatureContext)))
    w.U8(static_cast<uint8_t>(c));
  w.U16(version);
  std::string out = w.Finish();
  out.append(unsigned_manifest);
  return out;
}

// The file's parts around the manifest.
struct FileParts {
  uint16_t version = 0;
  std::string manifest;
  std::string rest;  // the module sections, after the manifest's digest
};

FileParts SplitFile(std::string_view file) {
  if (file.size() < kMagicSize ||
      file.substr(0, kMagicSize) != std::string_view(kArtifactMagic, kMagicSize)) {
    Fail("ValueError", "not a modrt artifact: it does not start with '", kArtifactMagic, "'");
  }
  ByteReader r(file, "modrt artifact");
  for (size_t i = 0; i < kMagicSize; ++i) r.U8();
  FileParts parts;
  parts.version = r.U16();
  CheckArtifactVersion(parts.version);
  parts.manifest = r.Str("manifest");
  r.Str("manifest SHA-256");
  parts.rest = std::string(file.substr(r.offset()));
  return parts;
}

std::string JoinFile(uint16_t version, const std::string& manifest, const std::string& rest) {
  ByteWriter w;
  for (size_t i = 0; i < kMagicSize; ++i) w.U8(static_cast<uint8_t>(kArtifactMagic[i]));
  w.U16(version);
  w.Str(manifest);
  w.Str(Sha256(manifest));
  return w.Finish() + rest;
}

std::string TrustedIds(const std::vector<PublicKey>& keys) {
  std::string out;
  for (const PublicKey& k : keys) out += (out.empty() ? "" : ", ") + k.id;
  return out;
}

void Verify(const ArtifactSignatureInfo& info, const std::vector<PublicKey>& keys) {
  if (!info.is_signed) {
    Fail("ValueError",
         "refused: the artifact is not signed, and a signature by a trusted key is required "
         "(trusted key ids: ",
         TrustedIds(keys), ")");
  }
  if (info.block.algorithm != kSignatureAlgorithm) {
    Fail("ValueError", "refused: the artifact is signed with unknown algorithm '",
         Preview(info.block.algorithm), "' (this modrt verifies ", kSignatureAlgorithm, ")");
  }
  const PublicKey* key = nullptr;
  for (const PublicKey& k : keys) {
    if (k.id == info.block.key_id) key = &k;
  }
  if (key == nullptr) {
    Fail("ValueError", "refused: the artifact is signed by key id ", info.block.key_id,
         ", which is not a trusted key (trusted key ids: ", TrustedIds(keys), ")");
  }
  InitSodium();
  if (crypto_sign_verify_detached(
          reinterpret_cast<const unsigned char*>(info.block.signature.data()),
          reinterpret_cast<const unsigned char*>(info.signed_message.data()),
          info.signed_message.size(),
          reinterpret_cast<const unsigned char*>(key->key.data())) != 0) {
    Fail("ValueError", "refused: the signature by key id ", key->id,
         " does not match this artifact: its manifest changed after signing, or the signature was "
         "made for another artifact");
  }
}

}  // namespace

SignatureBlock ParseSignatureBlock(std::string_view text) {
  auto bad = [](const std::string& why) -> void {
    Fail("ValueError", "malformed signature block: ", why);
  };
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) bad("its last line does not end with a newline");
    lines.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  if (lines.empty()) bad("it is empty");
  if (lines[0] != kBlockHeader) {
    if (lines[0].substr(0, 16) == "modrt-signature ") {
      bad(StrCat("version '", Preview(lines[0].substr(16)),
                 "' is not supported (this modrt reads '", kBlockHeader, "')"));
    }
    bad(StrCat("it does not start with '", kBlockHeader, "'"));
  }
  if (lines.size() != 4)
    bad(StrCat("it has ", lines.size(), " lines, not 4 (header, algorithm, key-id, signature)"));
  auto field = [&](size_t i, std::string_view name) -> std::string_view {
    std::string_view line = lines[i];
    if (line.size() <= name.size() || line.substr(0, name.size()) != name ||
        line[name.size()] != ' ') {
      bad(StrCat("line ", i + 1, " is not '", name, " <value>'"));
    }
    return line.substr(name.size() + 1);
  };
  SignatureBlock block;
  block.algorithm = std::string(field(1, "algorithm"));
  std::string_view id = field(2, "key-id");
  std::string id_bytes;
  if (!Unhex(id, kKeyIdDigits / 2, &id_bytes))
    bad(StrCat("the key id is not ", kKeyIdDigits, " lowercase hex digits"));
  block.key_id = std::string(id);
  std::string_view signature = field(3, "signature");
  if (block.algorithm == kSignatureAlgorithm) {
    if (!Unhex(signature, crypto_sign_BYTES, &block.signature)) {
      bad(StrCat("an ", kSignatureAlgorithm, " signature is ", 2 * crypto_sign_BYTES,
                 " lowercase hex digits"));
    }
  } else {
    for (char c : block.algorithm) {
      if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-')
        bad("the algorithm name is not [a-z0-9-]");
    }
    block.signature = std::string(signature);
  }
  return block;
}

std::string FormatSignatureBlock(const SignatureBlock& block) {
  const std::string signature =
      block.algorithm == kSignatureAlgorithm ? Hex(block.signature) : block.signature;
  return StrCat(kBlockHeader, "\nalgorithm ", block.algorithm, "\nkey-id ", block.key_id,
                "\nsignature ", signature, "\n");
}

ArtifactSignatureInfo ReadArtifactSignature(const uint8_t* data, size_t size) {
  if (data == nullptr && size != 0) Fail("ValueError", "no artifact data");
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  FileParts parts = SplitFile(file);
  RootSources root = FindRootSources(parts.manifest);
  ArtifactSignatureInfo info;
  const RootSources::Entry* found = nullptr;
  for (const RootSources::Entry& e : root.entries) {
    if (e.format != kSignatureSourceFormat) continue;
    if (found != nullptr) Fail("ValueError", "malformed signature block: the manifest holds two");
    found = &e;
  }
  if (found == nullptr) {
    info.signed_message = SignedMessage(parts.version, parts.manifest);
    info.unsigned_file = std::string(file);
    return info;
  }
  for (size_t i = 1; i < root.entries.size(); ++i) {
    if (!(root.entries[i - 1].format < root.entries[i].format)) {
      Fail("ValueError",
           "malformed signature block: module 0's sources are not in the order modrt writes them, "
           "so the file is not as it was signed");
    }
  }
  info.is_signed = true;
  info.block = ParseSignatureBlock(found->text);
  const std::string& m = parts.manifest;
  std::string unsigned_manifest = m.substr(0, root.count_at) + U64Bytes(root.entries.size() - 1) +
                                  m.substr(root.count_at + 8, found->start - (root.count_at + 8)) +
                                  m.substr(found->end);
  info.signed_message = SignedMessage(parts.version, unsigned_manifest);
  info.unsigned_file = JoinFile(parts.version, unsigned_manifest, parts.rest);
  return info;
}

std::string SignArtifact(std::string_view file, const SecretKey& key) {
  const auto* data = reinterpret_cast<const uint8_t*>(file.data());
  ParseArtifact(data, file.size());  // only a valid artifact is signed
  ArtifactSignatureInfo previous = ReadArtifactSignature(data, file.size());
  FileParts parts = SplitFile(previous.unsigned_file);
  RootSources root = FindRootSources(parts.manifest);
  for (size_t i = 1; i < root.entries.size(); ++i) {
    if (!(root.entries[i - 1].format < root.entries[i].format)) {
      Fail("ValueError",
           "cannot sign: module 0's sources are not in the order modrt writes them (re-export the "
           "module)");
    }
  }
  InitSodium();
  const std::string message = SignedMessage(parts.version, parts.manifest);
  unsigned char signature[crypto_sign_BYTES];
  crypto_sign_detached(signature, nullptr, reinterpret_cast<const unsigned char*>(message.data()),
                       message.size(), reinterpret_cast<const unsigned char*>(key.key.data()));
  SignatureBlock block{kSignatureAlgorithm, key.public_key.id,
                       std::string(reinterpret_cast<char*>(signature), sizeof(signature))};
  ByteWriter entry;
  entry.Str(kSignatureSourceFormat);
  entry.Str(FormatSignatureBlock(block));
  // Inserted where the writer's sorted order puts it.
  size_t at = root.end;
  for (const RootSources::Entry& e : root.entries) {
    if (e.format > kSignatureSourceFormat) {
      at = e.start;
      break;
    }
  }
  const std::string& m = parts.manifest;
  std::string manifest = m.substr(0, root.count_at) + U64Bytes(root.entries.size() + 1) +
                         m.substr(root.count_at + 8, at - (root.count_at + 8)) + entry.Finish() +
                         m.substr(at);
  std::string signed_file = JoinFile(parts.version, manifest, parts.rest);
  // What was written must read back as signed over the same message.
  ParseArtifact(reinterpret_cast<const uint8_t*>(signed_file.data()), signed_file.size());
  ArtifactSignatureInfo check = ReadArtifactSignature(
      reinterpret_cast<const uint8_t*>(signed_file.data()), signed_file.size());
  if (!check.is_signed || check.signed_message != message)
    Fail("RuntimeError", "signing produced an inconsistent file");
  return signed_file;
}

Artifact ParseTrustedArtifact(const uint8_t* data, size_t size, const TrustPolicy& policy,
                              ArtifactSignatureInfo* signature) {
  // Integrity first (the same errors as an unsigned load), then trust.
  Artifact artifact = ParseArtifact(data, size);
  ArtifactSignatureInfo info = ReadArtifactSignature(data, size);
  if (!policy.trusted_keys.empty()) Verify(info, policy.trusted_keys);
  if (info.is_signed) artifact.modules[0].sources.erase(kSignatureSourceFormat);
  if (!policy.allow_host_code) {
    for (size_t i = 0; i < artifact.modules.size(); ++i) {
      if (artifact.modules[i].kind == "so") {
        Fail("ValueError", "refused: ", artifact.modules[i].Label(i),
             " is host code (a native shared object that loading would dlopen into this process), "
             "and host code is not allowed here (allow_host_code=False, --no-host-code or "
             "MODRT_ALLOW_HOST_CODE=0)");
      }
    }
  }
  if (signature != nullptr) *signature = std::move(info);
  return artifact;
}

namespace {

// (origin, text) pairs from argument `first` on.
std::vector<PublicKey> KeysFrom(const Args& a, int32_t first) {
  if ((a.size() - first) % 2 != 0)
    Fail("TypeError", "trusted keys are passed as (origin, text) pairs");
  std::vector<PublicKey> keys;
  for (int32_t i = first; i < a.size(); i += 2)
    keys.push_back(ParsePublicKey(a.Bytes(i + 1), std::string(a.Str(i))));
  return keys;
}

std::string SignatureJson(const ArtifactSignatureInfo& info, bool verified) {
  if (!info.is_signed) return "null";
  std::string algorithm;
  for (char c : info.block.algorithm)
    algorithm += (c == '"' || c == '\\') ? '?' : c;  // [a-z0-9-] when parsed
  return StrCat("{\"algorithm\": \"", algorithm, "\", \"key_id\": \"", info.block.key_id,
                "\", \"verified\": ", verified ? "true" : "false", "}");
}

MODRT_STATIC_INIT([] {
  // artifact.load_trusted(data, allow_host_code, [origin, key text]...)
  RegisterGlobal("artifact.load_trusted", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "artifact.load_trusted", /*at_least=*/true);
    std::string_view bytes = a.Bytes(0);
    TrustPolicy policy;
    policy.allow_host_code = a.Int(1) != 0;
    policy.trusted_keys = KeysFrom(a, 2);
    Artifact artifact =
        ParseTrustedArtifact(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), policy);
    r->SetObject(LoadArtifact(artifact));
  });
  // The manifest as JSON with "signature" (null, or algorithm, key id and
  // whether it was verified against the keys given); keys given are required.
  RegisterGlobal("artifact.manifest", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "artifact.manifest", /*at_least=*/true);
    std::string_view bytes = a.Bytes(0);
    TrustPolicy policy;
    policy.trusted_keys = KeysFrom(a, 1);
    ArtifactSignatureInfo info;
    Artifact artifact = ParseTrustedArtifact(reinterpret_cast<const uint8_t*>(bytes.data()),
                                             bytes.size(), policy, &info);
    std::string json = ArtifactManifestJson(artifact);
    r->SetStr("{\"signature\": " + SignatureJson(info, !policy.trusted_keys.empty()) + ", " +
              json.substr(1));
  });
  // artifact.sign(data, origin, secret key text) -> the signed file's bytes.
  RegisterGlobal("artifact.sign", [](const Args& a, Ret* r) {
    a.ExpectCount(3, "artifact.sign");
    SecretKey key = ParseSecretKey(a.Bytes(2), std::string(a.Str(1)));
    r->SetBytes(SignArtifact(a.Bytes(0), key));
  });
  // artifact.unsigned(data) -> the file as it was before signing.
  RegisterGlobal("artifact.unsigned", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "artifact.unsigned");
    std::string_view bytes = a.Bytes(0);
    ParseArtifact(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    r->SetBytes(ReadArtifactSignature(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())
                    .unsigned_file);
  });
  // artifact.signature_block(data) -> the block's text (empty when unsigned).
  RegisterGlobal("artifact.signature_block", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "artifact.signature_block");
    std::string_view bytes = a.Bytes(0);
    ArtifactSignatureInfo info =
        ReadArtifactSignature(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    r->SetBytes(info.is_signed ? FormatSignatureBlock(info.block) : "");
  });
});

}  // namespace
}  // namespace modrt
