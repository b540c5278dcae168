// Signed artifacts (modrt/artifact_trust.h): the signature block parser, and
// a whole file through ReadArtifactSignature and ParseTrustedArtifact with a
// trusted key. What parses must print back to the same bytes; what verifies
// must be exactly what signing its unsigned form gives (Ed25519 is
// deterministic); what is a valid artifact must sign, and the result verify.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "modrt/core/artifact_trust.h"

namespace modrt {
namespace fuzz {
namespace {

// A key made for this harness, not a secret: the seeds in
// fuzz/seeds/artifact_signature_fuzzer are signed with it (tools/fuzz/make_seeds.py).
constexpr char kFuzzKey[] =
    "modrt ed25519 secret key c5a1cfc34fc1ea7623300f8ae25d9e52790d71fd4d22ce9d73ad923d6a5335c9"
    "67edeb031bdb5e49bf803f0dfb219e08cd662a14e3385be74c31b6e8bbc59bb6\n";

const SecretKey& Key() {
  static const SecretKey key = ParseSecretKey(kFuzzKey, "fuzz key");
  return key;
}

void FuzzBlock(std::string_view text) {
  SignatureBlock block;
  if (Rejects([&] { block = ParseSignatureBlock(text); })) return;
  Check(FormatSignatureBlock(block) == text,
        "a signature block that parses does not print back to its bytes");
}

void FuzzFile(const uint8_t* data, size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  ArtifactSignatureInfo info;
  if (Rejects([&] { info = ReadArtifactSignature(data, size); })) return;
  TrustPolicy policy;
  policy.trusted_keys = {Key().public_key};
  policy.allow_host_code = false;
  Artifact trusted;
  if (!Rejects([&] { trusted = ParseTrustedArtifact(data, size, policy); })) {
    Check(info.is_signed, "an unsigned file was accepted with a trusted key");
    Check(SignArtifact(info.unsigned_file, Key()) == file,
          "a file verified that signing would not have produced");
    for (const ArtifactModule& m : trusted.modules)
      Check(m.kind != "so", "host code passed allow_host_code=false");
    Check(!trusted.modules[0].sources.count(kSignatureSourceFormat),
          "the signature stayed a source");
  }
  std::string signed_file;
  if (Rejects([&] { signed_file = SignArtifact(file, Key()); })) return;
  const auto* signed_data = reinterpret_cast<const uint8_t*>(signed_file.data());
  ArtifactSignatureInfo again;
  if (Rejects([&] { again = ReadArtifactSignature(signed_data, signed_file.size()); })) {
    Finding("a signed file's signature does not read back");
  }
  Check(again.unsigned_file == info.unsigned_file, "signing changed what was signed");
  policy.allow_host_code = true;
  if (Rejects([&] { ParseTrustedArtifact(signed_data, signed_file.size(), policy); })) {
    Finding("a file just signed does not verify");
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace modrt

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  modrt::fuzz::FuzzBlock(std::string_view(reinterpret_cast<const char*>(data), size));
  modrt::fuzz::FuzzFile(data, size);
  return 0;
}
