// FunctionInfo::Parse and ParseDType: the signature text users write.
// What parses prints back to text that parses to the same signature.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "modrt/core/payload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using modrt::fuzz::Check;
  using modrt::fuzz::Finding;
  using modrt::fuzz::Rejects;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  modrt::FunctionInfo info;
  if (!Rejects([&] { info = modrt::FunctionInfo::Parse(text); })) {
    const std::string printed = info.ToString();
    modrt::FunctionInfo again;
    if (Rejects([&] { again = modrt::FunctionInfo::Parse(printed); })) {
      Finding("printed signature '" + printed + "' does not parse");
    }
    Check(again.ToString() == printed, "signature '" + printed + "' does not round-trip");
    // Its binary form loads back too (the serializer and the parser agree).
    modrt::ByteWriter w;
    info.Save(&w);
    const std::string bytes = w.Finish();
    modrt::ByteReader r(bytes, "saved signature");
    if (Rejects([&] { again = modrt::FunctionInfo::Load(&r); })) {
      Finding("signature '" + printed + "' saves bytes that do not load");
    }
    Check(again.ToString() == printed, "saved signature '" + printed + "' changed on load");
  }
  DLDataType dtype;
  if (!Rejects([&] { dtype = modrt::ParseDType(text); })) {
    const std::string name = modrt::DTypeToString(dtype);
    Check(modrt::operator==(modrt::ParseDType(name), dtype),
          "dtype '" + name + "' does not round-trip");
  }
  return 0;
}
