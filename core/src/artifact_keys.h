// The helpers that artifact_keys.cc (key files) and artifact_trust.cc
// (signatures, verification) share: libsodium's setup, the hex and preview
// forms both parsers use, and the key id length.
#ifndef MODRT_CORE_SRC_ARTIFACT_KEYS_H_
#define MODRT_CORE_SRC_ARTIFACT_KEYS_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace modrt {
namespace artifact_keys {

// Hex digits of a key id: a prefix of the SHA-256 of the public key.
constexpr size_t kKeyIdDigits = 16;

// libsodium, initialized once; RuntimeError when it cannot be.
void InitSodium();

// Lowercase hex of exactly `bytes` bytes; false on anything else.
bool Unhex(std::string_view text, size_t bytes, std::string* out);

// The first characters of untrusted text, printable, for an error message.
std::string Preview(std::string_view text);

}  // namespace artifact_keys
}  // namespace modrt

#endif  // MODRT_CORE_SRC_ARTIFACT_KEYS_H_
