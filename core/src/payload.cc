// Payloads: what a codegen driver produces and a module is made from (fmt,
// code or shader map, function map, sources), saved and loaded, and the
// shader-map check of multi-shader payloads.
#include "modrt/core/payload.h"

#include "internal.h"

namespace modrt {

std::string PayloadObj::Save() const {
  ByteWriter w;
  w.Str(fmt);
  w.U64(fmap.size());
  for (const auto& kv : fmap) kv.second.Save(&w);
  if (shape == PayloadShape::kSingleBinary) {
    w.Str(code);
  } else {
    w.U64(smap.size());
    for (const auto& kv : smap) {
      w.Str(kv.first);
      w.Str(kv.second);
    }
  }
  return w.Finish();
}

Ref<PayloadObj> PayloadObj::Load(PayloadShape shape, std::string_view bytes,
                                 const std::string& what) {
  ByteReader r(bytes, what);
  auto p = MakeObject<PayloadObj>();
  p->shape = shape;
  p->fmt = r.Str("fmt");
  uint64_t nfuncs = r.Count("function count", 24);
  for (uint64_t i = 0; i < nfuncs; ++i) {
    FunctionInfo info = FunctionInfo::Load(&r);
    std::string name = info.name;
    if (!p->fmap.emplace(name, std::move(info)).second)
      r.Corrupt("duplicate function '" + name + "'");
  }
  if (shape == PayloadShape::kSingleBinary) {
    p->code = r.Str("code");
  } else {
    uint64_t nshaders = r.Count("shader count", 16);
    for (uint64_t i = 0; i < nshaders; ++i) {
      std::string name = r.Str("shader name");
      std::string blob = r.Str("shader");
      if (!p->smap.emplace(name, std::move(blob)).second)
        r.Corrupt("duplicate shader '" + name + "'");
    }
  }
  r.ExpectEnd();
  return p;
}

std::string PayloadObj::InspectSource(const std::string& format) const {
  const std::string& want = format.empty() ? fmt : format;
  auto src = source.find(want);
  if (src != source.end()) return src->second;
  if (want == fmt) {
    if (shape == PayloadShape::kSingleBinary) return code;
    // One shader comes back as it is (binary formats stay usable); several
    // are listed under a header each.
    if (smap.size() == 1) return smap.begin()->second;
    std::string all;
    for (const auto& kv : smap) all += "// function: " + kv.first + "\n" + kv.second + "\n";
    return all;
  }
  std::string held = fmt;
  for (const auto& kv : source) held += ", " + kv.first;
  Fail("ValueError", "no source of format '", want, "' in this module; it holds: ", held);
}

void CheckShaderMap(const PayloadObj& payload, const std::string& display_name) {
  if (payload.shape != PayloadShape::kMultiShader) return;
  auto names = [](const auto& map) {
    std::string out;
    for (const auto& kv : map) out += (out.empty() ? "'" : ", '") + kv.first + "'";
    return out.empty() ? std::string("none") : out;
  };
  for (const auto& kv : payload.fmap) {
    if (payload.smap.count(kv.first) == 0) {
      Fail("ValueError", display_name, " module: function '", kv.first,
           "' has no shader in the payload (shaders: ", names(payload.smap), ")");
    }
  }
  for (const auto& kv : payload.smap) {
    if (payload.fmap.count(kv.first) == 0) {
      Fail("ValueError", display_name, " module: shader '", kv.first,
           "' has no function signature in the payload (functions: ", names(payload.fmap), ")");
    }
  }
}

const FunctionInfo& PayloadObj::Function(const std::string& name) const {
  auto it = fmap.find(name);
  if (it == fmap.end()) Fail("KeyError", "no function '", name, "' in this module");
  return it->second;
}

}  // namespace modrt
