// Trust for `.modrt` artifacts: Ed25519 signatures over the manifest, trusted
// public keys, and the no-host-code policy. The cryptography is libsodium's,
// linked statically into libmodrt_runtime.so (its symbols stay inside).
//
// Where the signature lives: a signed artifact is an ordinary artifact whose
// module 0 has one extra entry in its manifest sources, format
// kSignatureSourceFormat, whose text is the signature block:
//
//   modrt-signature 1\n
//   algorithm ed25519\n
//   key-id <16 lowercase hex digits>\n
//   signature <128 lowercase hex digits>\n
//
// Readers that know nothing of signatures (ParseArtifact/LoadArtifact, every
// modrt before this file) see one more source text and load the file as
// before. The signature is over SignedMessage(): a fixed context string, the
// format version and the manifest bytes *without* that entry (the manifest the
// signer was given), which lists every module's byte size and SHA-256; the
// module sources of module 0 must be in the writer's (sorted) order, so one
// signed file has exactly one byte layout.
#ifndef MODRT_ARTIFACT_TRUST_H_
#define MODRT_ARTIFACT_TRUST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "modrt/core/artifact.h"

namespace modrt {

inline constexpr const char* kSignatureSourceFormat = kArtifactReservedSource;
inline constexpr char kSignatureAlgorithm[] = "ed25519";

// An Ed25519 public key (32 bytes) and its id: the first 8 bytes of its
// SHA-256, as 16 hex digits.
struct PublicKey {
  std::string key;
  std::string id;
};

// An Ed25519 secret key (libsodium's 64 bytes: seed, then the public key).
struct SecretKey {
  std::string key;
  PublicKey public_key;
};

// Key files are one line of text:
//   modrt ed25519 public key <64 hex digits>
//   modrt ed25519 secret key <128 hex digits>
// Parsing throws ValueError naming `origin` (a path) and what is wrong.
MODRT_API PublicKey ParsePublicKey(std::string_view text, const std::string& origin);
MODRT_API SecretKey ParseSecretKey(std::string_view text, const std::string& origin);
MODRT_API std::string FormatPublicKey(const PublicKey& key);
MODRT_API std::string FormatSecretKey(const SecretKey& key);
MODRT_API SecretKey GenerateKey();

// The signature block, as parsed; `algorithm` may be one this modrt does not
// know (then `signature` holds the block's raw hex text, unchecked).
struct SignatureBlock {
  std::string algorithm;
  std::string key_id;
  std::string signature;  // 64 raw bytes for ed25519
};

// Strict parse of the block's text; throws ValueError ("malformed signature
// block: ...") on anything but the layout above.
MODRT_API SignatureBlock ParseSignatureBlock(std::string_view text);
MODRT_API std::string FormatSignatureBlock(const SignatureBlock& block);

// What a file says about its signature, found without loading anything.
struct ArtifactSignatureInfo {
  bool is_signed = false;
  SignatureBlock block;        // when is_signed
  std::string signed_message;  // what the signature is over (see above)
  std::string unsigned_file;   // the file as it was before signing
};

// Locates the signature block in a file's manifest and rebuilds what was
// signed. Throws ValueError for a malformed block, two blocks, or a block out
// of the writer's order; layout errors of the container itself are left to
// ParseArtifact (this reads only the header and module 0's entry).
MODRT_API ArtifactSignatureInfo ReadArtifactSignature(const uint8_t* data, size_t size);

// The file signed with `key` (an existing signature is replaced). The file
// must be a valid artifact (ParseArtifact runs first).
MODRT_API std::string SignArtifact(std::string_view file, const SecretKey& key);

struct TrustPolicy {
  // Non-empty: the file must be signed by one of these, or it is refused.
  std::vector<PublicKey> trusted_keys;
  // False: an artifact holding a host module (kind `so`) is refused.
  bool allow_host_code = true;
};

// ReadArtifactSignature, the signature check the policy asks for, then
// ParseArtifact (every integrity check), then the host-code check: all before
// any module is created. The signature entry is removed from module 0's
// sources of the result. Throws ValueError naming the reason.
MODRT_API Artifact ParseTrustedArtifact(const uint8_t* data, size_t size, const TrustPolicy& policy,
                                        ArtifactSignatureInfo* signature = nullptr);

}  // namespace modrt

#endif  // MODRT_ARTIFACT_TRUST_H_
