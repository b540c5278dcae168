// Backend identities as a plugin or Python declares them (plugin_api.h's
// ModrtBackendIdentity, BackendInfoFromIdentity): the one part of a plugin's
// tables the core parses. Input: struct_size (u16), device type (i8), payload
// shape (i8), then name, display name and formats separated by NUL bytes
// (a missing one is NULL). Bad identities are errors; good ones keep every
// non-empty format, in order.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "modrt/core/backend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using modrt::fuzz::Check;
  using modrt::fuzz::Rejects;
  if (size < 4) return 0;
  ModrtBackendIdentity identity{};
  identity.struct_size = static_cast<size_t>(data[0] | data[1] << 8);
  identity.device_type = static_cast<int8_t>(data[2]);
  identity.payload_shape = static_cast<int8_t>(data[3]);
  std::vector<std::string> texts;
  std::string current;
  for (size_t i = 4; i < size; ++i) {
    if (data[i] == 0) {
      texts.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  texts.push_back(current);
  const char** fields[] = {&identity.name, &identity.display_name, &identity.formats};
  for (size_t i = 0; i < 3; ++i) *fields[i] = i < texts.size() ? texts[i].c_str() : nullptr;

  modrt::BackendInfo info;
  if (Rejects([&] { info = modrt::BackendInfoFromIdentity(identity); })) return 0;
  Check(identity.struct_size >= MODRT_BACKEND_IDENTITY_MIN_SIZE, "accepted a too small identity");
  Check(info.shape == modrt::PayloadShape::kSingleBinary ||
            info.shape == modrt::PayloadShape::kMultiShader,
        "accepted an unknown payload shape");
  std::string joined;
  for (const std::string& f : info.fmts) {
    Check(!f.empty() && f.find(',') == std::string::npos,
          "a format '" + f + "' that is empty or has a comma");
    joined += (joined.empty() ? "" : ",") + f;
  }
  std::string expected;
  for (char c : std::string(identity.formats)) {
    if (c == ',' && (expected.empty() || expected.back() == ',')) continue;
    expected += c;
  }
  if (!expected.empty() && expected.back() == ',') expected.pop_back();
  Check(joined == expected,
        "formats '" + std::string(identity.formats) + "' came back as '" + joined + "'");
  return 0;
}
