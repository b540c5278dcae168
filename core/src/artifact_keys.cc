// modrt's Ed25519 key files (modrt/core/artifact_trust.h): one line each, as
// `modrt keygen` writes them; their parsing, formatting and generation, and
// the artifact.keygen / artifact.key_info functions the CLI calls. Signing
// and verifying with them is artifact_trust.cc's.
#include "artifact_keys.h"

#include <sodium.h>

#include <string>
#include <string_view>

#include "internal.h"
#include "modrt/core/artifact_trust.h"
#include "modrt/core/function.h"

namespace modrt {
namespace artifact_keys {

void InitSodium() {
  static const int status = sodium_init();
  if (status < 0)
    Fail("RuntimeError", "libsodium failed to initialize; cannot sign or verify artifacts");
}

bool Unhex(std::string_view text, size_t bytes, std::string* out) {
  if (text.size() != 2 * bytes) return false;
  out->clear();
  for (size_t i = 0; i < text.size(); i += 2) {
    int v = 0;
    for (size_t j = i; j < i + 2; ++j) {
      char c = text[j];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + d;
    }
    *out += static_cast<char>(v);
  }
  return true;
}

std::string Preview(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > 40 ? out + "..." : out;
}

}  // namespace artifact_keys

namespace {

using artifact_keys::InitSodium;
using artifact_keys::Preview;
using artifact_keys::Unhex;

constexpr char kPublicPrefix[] = "modrt ed25519 public key ";
constexpr char kSecretPrefix[] = "modrt ed25519 secret key ";

static_assert(crypto_sign_PUBLICKEYBYTES == 32 && crypto_sign_SECRETKEYBYTES == 64 &&
              crypto_sign_SEEDBYTES == 32);

std::string KeyId(std::string_view public_key) {
  return Hex(Sha256(public_key)).substr(0, artifact_keys::kKeyIdDigits);
}

// A key file's one line, without its line end.
std::string_view KeyLine(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

}  // namespace

PublicKey ParsePublicKey(std::string_view text, const std::string& origin) {
  std::string_view line = KeyLine(text);
  const std::string_view prefix(kPublicPrefix);
  if (line.substr(0, prefix.size()) != prefix) {
    if (line.substr(0, sizeof(kSecretPrefix) - 1) == kSecretPrefix) {
      Fail("ValueError", origin,
           ": this is a secret key; trust is given by the public key (the .pub file `modrt keygen` "
           "wrote)");
    }
    Fail("ValueError", origin, ": not a modrt public key (expected one line '", kPublicPrefix,
         "<64 hex digits>', as `modrt keygen` writes; it starts '", Preview(line), "')");
  }
  PublicKey key;
  if (!Unhex(line.substr(prefix.size()), crypto_sign_PUBLICKEYBYTES, &key.key)) {
    Fail("ValueError", origin,
         ": damaged modrt public key: it needs 64 lowercase hex digits after '", kPublicPrefix,
         "'");
  }
  key.id = KeyId(key.key);
  return key;
}

SecretKey ParseSecretKey(std::string_view text, const std::string& origin) {
  std::string_view line = KeyLine(text);
  const std::string_view prefix(kSecretPrefix);
  if (line.substr(0, prefix.size()) != prefix) {
    if (line.substr(0, sizeof(kPublicPrefix) - 1) == kPublicPrefix) {
      Fail("ValueError", origin,
           ": this is a public key; signing needs the secret key (the file `modrt keygen` wrote "
           "without .pub)");
    }
    Fail("ValueError", origin, ": not a modrt secret key (expected one line '", kSecretPrefix,
         "<128 hex digits>', as `modrt keygen` writes)");
  }
  SecretKey key;
  if (!Unhex(line.substr(prefix.size()), crypto_sign_SECRETKEYBYTES, &key.key)) {
    Fail("ValueError", origin,
         ": damaged modrt secret key: it needs 128 lowercase hex digits after '", kSecretPrefix,
         "'");
  }
  InitSodium();
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_seed_keypair(pk, sk, reinterpret_cast<const unsigned char*>(key.key.data()));
  const bool consistent = std::string_view(reinterpret_cast<char*>(sk), sizeof(sk)) == key.key;
  sodium_memzero(sk, sizeof(sk));
  if (!consistent)
    Fail("ValueError", origin,
         ": damaged modrt secret key: its public half does not belong to its seed");
  key.public_key.key.assign(reinterpret_cast<char*>(pk), sizeof(pk));
  key.public_key.id = KeyId(key.public_key.key);
  return key;
}

std::string FormatPublicKey(const PublicKey& key) { return kPublicPrefix + Hex(key.key) + "\n"; }

std::string FormatSecretKey(const SecretKey& key) { return kSecretPrefix + Hex(key.key) + "\n"; }

SecretKey GenerateKey() {
  InitSodium();
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_keypair(pk, sk);
  SecretKey key;
  key.key.assign(reinterpret_cast<char*>(sk), sizeof(sk));
  sodium_memzero(sk, sizeof(sk));
  key.public_key.key.assign(reinterpret_cast<char*>(pk), sizeof(pk));
  key.public_key.id = KeyId(key.public_key.key);
  return key;
}

namespace {

MODRT_STATIC_INIT([] {
  // artifact.keygen() -> a new secret key's text.
  RegisterGlobal("artifact.keygen", [](const Args& a, Ret* r) {
    a.ExpectCount(0, "artifact.keygen");
    r->SetStr(FormatSecretKey(GenerateKey()));
  });
  // artifact.key_info(origin, text) -> "public|secret <key id> <public key line>".
  RegisterGlobal("artifact.key_info", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "artifact.key_info");
    std::string origin(a.Str(0));
    std::string_view text = a.Bytes(1);
    if (KeyLine(text).substr(0, sizeof(kSecretPrefix) - 1) == kSecretPrefix) {
      SecretKey key = ParseSecretKey(text, origin);
      r->SetStr("secret " + key.public_key.id + " " + FormatPublicKey(key.public_key));
    } else {
      PublicKey key = ParsePublicKey(text, origin);
      r->SetStr("public " + key.id + " " + FormatPublicKey(key));
    }
  });
});

}  // namespace
}  // namespace modrt
