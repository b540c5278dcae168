// Function signatures: dtype names, parsing "name(float32*, int32; blockIdx.x)"
// into a FunctionInfo, printing one back, and saving and loading it.
#include <set>

#include "modrt/payload.h"

namespace modrt {

namespace {

struct DTypeName {
  const char* name;
  DLDataTypeCode code;
  uint8_t bits;
};

constexpr DTypeName kDTypes[] = {
    {"bool", kDLBool, 8},        {"int8", kDLInt, 8},       {"int16", kDLInt, 16},
    {"int32", kDLInt, 32},       {"int64", kDLInt, 64},     {"uint8", kDLUInt, 8},
    {"uint16", kDLUInt, 16},     {"uint32", kDLUInt, 32},   {"uint64", kDLUInt, 64},
    {"float16", kDLFloat, 16},   {"float32", kDLFloat, 32}, {"float64", kDLFloat, 64},
    {"bfloat16", kDLBfloat, 16},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

const std::set<std::string>& LaunchTags() {
  static const std::set<std::string> tags = {"blockIdx.x",    "blockIdx.y",  "blockIdx.z",
                                             "threadIdx.x",   "threadIdx.y", "threadIdx.z",
                                             "dyn_shared_mem"};
  return tags;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

DLDataType ParseDType(std::string_view text) {
  std::string_view base = Trim(text);
  uint16_t lanes = 1;
  size_t x = base.find('x');
  if (x != std::string_view::npos) {
    std::string_view lane_text = base.substr(x + 1);
    int parsed = 0;
    for (char c : lane_text) {
      if (!isdigit(static_cast<unsigned char>(c)) || parsed > 65535) {
        Fail("ValueError", "unknown dtype '", text, "'");
      }
      parsed = parsed * 10 + (c - '0');
    }
    if (lane_text.empty() || parsed < 1 || parsed > 65535)
      Fail("ValueError", "unknown dtype '", text, "'");
    lanes = static_cast<uint16_t>(parsed);
    base = base.substr(0, x);
  }
  for (const auto& d : kDTypes) {
    if (base == d.name) return DLDataType{static_cast<uint8_t>(d.code), d.bits, lanes};
  }
  Fail("ValueError", "unknown dtype '", text, "'");
}

std::string DTypeToString(DLDataType dtype) {
  for (const auto& d : kDTypes) {
    if (dtype.code == d.code && dtype.bits == d.bits) {
      return dtype.lanes == 1 ? d.name : StrCat(d.name, "x", dtype.lanes);
    }
  }
  return StrCat("dtype(code=", int(dtype.code), ", bits=", int(dtype.bits), ", lanes=", dtype.lanes,
                ")");
}

FunctionInfo FunctionInfo::Parse(std::string_view signature) {
  std::string_view sig = Trim(signature);
  size_t open = sig.find('(');
  if (open == std::string_view::npos || sig.back() != ')') {
    Fail("ValueError", "bad function signature '", signature,
         "': expected 'name(dtype[*], ...; launch_tag, ...)'");
  }
  FunctionInfo info;
  info.name = std::string(Trim(sig.substr(0, open)));
  if (!IsIdentifier(info.name)) {
    Fail("ValueError", "bad function signature '", signature, "': '", info.name,
         "' is not an identifier");
  }
  std::string_view inner = sig.substr(open + 1, sig.size() - open - 2);
  std::string_view arg_text = inner;
  std::string_view tag_text;
  size_t semi = inner.find(';');
  if (semi != std::string_view::npos) {
    arg_text = inner.substr(0, semi);
    tag_text = inner.substr(semi + 1);
  }
  auto split = [](std::string_view list, auto&& each) {
    list = Trim(list);
    if (list.empty()) return;
    while (true) {
      size_t comma = list.find(',');
      each(Trim(list.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      list = list.substr(comma + 1);
    }
  };
  split(arg_text, [&](std::string_view a) {
    bool is_buffer = !a.empty() && a.back() == '*';
    if (is_buffer) a = Trim(a.substr(0, a.size() - 1));
    info.args.push_back(ArgInfo{ParseDType(a), is_buffer});
  });
  split(tag_text, [&](std::string_view t) {
    if (!LaunchTags().count(std::string(t))) {
      Fail("ValueError", "bad function signature '", signature, "': unknown launch tag '", t,
           "' (known: blockIdx.x/y/z, threadIdx.x/y/z, dyn_shared_mem)");
    }
    info.launch_tags.emplace_back(t);
  });
  return info;
}

std::string FunctionInfo::ToString() const {
  std::string s = name + "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    s += DTypeToString(args[i].dtype) + (args[i].is_buffer ? "*" : "");
  }
  if (!launch_tags.empty()) {
    s += "; ";
    for (size_t i = 0; i < launch_tags.size(); ++i) s += (i ? ", " : "") + launch_tags[i];
  }
  return s + ")";
}

void FunctionInfo::Save(ByteWriter* w) const {
  w->Str(name);
  w->U64(args.size());
  for (const ArgInfo& a : args) {
    w->U8(a.is_buffer ? 1 : 0);
    w->U8(a.dtype.code);
    w->U8(a.dtype.bits);
    w->U16(a.dtype.lanes);
  }
  w->U64(launch_tags.size());
  for (const auto& t : launch_tags) w->Str(t);
}

FunctionInfo FunctionInfo::Load(ByteReader* r) {
  FunctionInfo info;
  info.name = r->Str("function name");
  if (!IsIdentifier(info.name)) r->Corrupt("function name is not an identifier");
  uint64_t nargs = r->Count("argument count", 5);
  for (uint64_t i = 0; i < nargs; ++i) {
    uint8_t kind = r->U8();
    if (kind > 1) r->Corrupt(StrCat("argument kind ", int(kind), " is neither scalar nor buffer"));
    DLDataType dt{r->U8(), r->U8(), r->U16()};
    if (DTypeToString(dt).rfind("dtype(", 0) == 0 || dt.lanes == 0) {
      r->Corrupt("unknown argument dtype " + DTypeToString(dt));
    }
    info.args.push_back(ArgInfo{dt, kind == 1});
  }
  uint64_t ntags = r->Count("launch tag count", 8);
  for (uint64_t i = 0; i < ntags; ++i) {
    std::string tag = r->Str("launch tag");
    if (!LaunchTags().count(tag)) r->Corrupt("unknown launch tag '" + tag + "'");
    info.launch_tags.push_back(std::move(tag));
  }
  return info;
}

}  // namespace modrt
