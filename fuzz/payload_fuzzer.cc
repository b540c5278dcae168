// The shared serializer: PayloadObj::Load of both payload shapes, with
// FunctionInfo::Load inside it. The first byte picks the shape, the rest are
// the saved bytes. What loads must save and reload to the same payload.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "modrt/core/payload.h"

namespace modrt {
namespace fuzz {
namespace {

bool SameFunction(const FunctionInfo& a, const FunctionInfo& b) {
  if (a.name != b.name || a.args.size() != b.args.size() || a.launch_tags != b.launch_tags) {
    return false;
  }
  for (size_t i = 0; i < a.args.size(); ++i) {
    if (!(a.args[i].dtype == b.args[i].dtype) || a.args[i].is_buffer != b.args[i].is_buffer) {
      return false;
    }
  }
  return true;
}

void CheckSamePayload(const PayloadObj& a, const PayloadObj& b) {
  Check(a.fmt == b.fmt && a.code == b.code && a.smap == b.smap, "payload changed on reload");
  Check(a.fmap.size() == b.fmap.size(), "function count changed on reload");
  for (auto ia = a.fmap.begin(), ib = b.fmap.begin(); ia != a.fmap.end(); ++ia, ++ib) {
    Check(SameFunction(ia->second, ib->second), "function '" + ia->first + "' changed on reload");
  }
}

}  // namespace

void FuzzPayload(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const PayloadShape shape = data[0] & 1 ? PayloadShape::kMultiShader : PayloadShape::kSingleBinary;
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  Ref<PayloadObj> payload;
  if (Rejects([&] { payload = PayloadObj::Load(shape, bytes, "fuzzed payload"); })) return;
  const std::string saved = payload->Save();
  Ref<PayloadObj> again;
  if (Rejects([&] { again = PayloadObj::Load(shape, saved, "re-saved payload"); })) {
    Finding("a loaded payload saved bytes that do not load");
  }
  CheckSamePayload(*payload, *again);
  Check(again->Save() == saved, "saving is not deterministic");
  // Every stored signature prints as text that parses back to itself.
  for (const auto& kv : payload->fmap) {
    const std::string text = kv.second.ToString();
    FunctionInfo parsed;
    if (Rejects([&] { parsed = FunctionInfo::Parse(text); })) {
      Finding("signature '" + text + "' of a loaded payload does not parse");
    }
    Check(SameFunction(parsed, kv.second), "signature '" + text + "' does not round-trip");
  }
  Rejects([&] { payload->InspectSource(""); });
  Rejects([&] { payload->InspectSource(payload->fmt); });
}

}  // namespace fuzz
}  // namespace modrt

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  modrt::fuzz::FuzzPayload(data, size);
  return 0;
}
