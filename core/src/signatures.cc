// Function signatures: dtype names, parsing "name(float32*, int32; blockIdx.x)"
// into a FunctionInfo, printing one back, and saving and loading it.
#include <algorithm>
#include <set>

#include "modrt/core/payload.h"

namespace modrt {

namespace {

// The kind byte of a saved argument: bit 0 a buffer; bit 1 name, const and
// launch tag follow the dtype; bit 2 a uniform block (with bit 0).
constexpr uint8_t kBufferArg = 1;
constexpr uint8_t kExtendedArg = 2;
constexpr uint8_t kUniformBlockArg = 4;

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

bool IsIntegerScalar(DLDataType dt) {
  return (dt.code == kDLInt || dt.code == kDLUInt) && dt.lanes == 1;
}

// Whether `text` starts with `keyword` and a space; if so, drops both.
bool TakeKeyword(std::string_view keyword, std::string_view* text) {
  if (text->substr(0, keyword.size()) != keyword || text->size() <= keyword.size() ||
      !isspace(static_cast<unsigned char>((*text)[keyword.size()]))) {
    return false;
  }
  *text = Trim(text->substr(keyword.size()));
  return true;
}

// One argument: "[const] dtype[*] [name] [= launch_tag]" or "uniform dtype [name]".
ArgInfo ParseArg(std::string_view signature, std::string_view text, std::set<std::string>* names) {
  auto bad = [&](auto&&... why) {
    Fail("ValueError", "bad function signature '", signature, "': argument '", text, "' ", why...);
  };
  ArgInfo arg{};
  std::string_view rest = text;
  size_t eq = rest.find('=');
  if (eq != std::string_view::npos) {
    arg.launch_tag = std::string(Trim(rest.substr(eq + 1)));
    rest = Trim(rest.substr(0, eq));
    if (!LaunchTags().count(arg.launch_tag) || arg.launch_tag == "dyn_shared_mem") {
      bad("is filled from '", arg.launch_tag,
          "', which is not a launch dimension (blockIdx.x/y/z, threadIdx.x/y/z)");
    }
  }
  arg.read_only = TakeKeyword("const", &rest);
  arg.uniform_block = TakeKeyword("uniform", &rest);
  size_t star = rest.find('*');
  if (arg.uniform_block) {
    if (arg.read_only) bad("is a uniform block, which the kernel only reads: it takes no const");
    if (star != std::string_view::npos) {
      bad("is a uniform block: its dtype is the whole block's, written without '*'");
    }
  }
  std::string_view dtype_text, name_text;
  if (star != std::string_view::npos) {
    arg.is_buffer = true;
    dtype_text = Trim(rest.substr(0, star));
    name_text = Trim(rest.substr(star + 1));
  } else {
    size_t space = rest.find_first_of(" \t");
    dtype_text = rest.substr(0, space);
    name_text = space == std::string_view::npos ? "" : Trim(rest.substr(space));
  }
  arg.dtype = ParseDType(dtype_text);
  arg.is_buffer = arg.is_buffer || arg.uniform_block;
  if (!name_text.empty()) {
    if (!IsIdentifier(name_text)) bad("has name '", name_text, "', which is not an identifier");
    arg.name = std::string(name_text);
    if (!names->insert(arg.name).second) bad("repeats the name '", arg.name, "'");
  }
  if (arg.read_only && !arg.is_buffer) bad("is a scalar: only buffers may be const");
  if (!arg.launch_tag.empty()) {
    if (arg.is_buffer) bad("is a buffer: only integer scalars may be filled from the launch");
    if (!IsIntegerScalar(arg.dtype)) bad("is filled from the launch, so must be an integer scalar");
    if (arg.name.empty()) bad("is filled from the launch, so must be named");
  }
  return arg;
}

}  // namespace

size_t FunctionInfo::num_passed_args() const {
  size_t n = launch_tags.size();
  for (const ArgInfo& a : args) n += a.launch_tag.empty() ? 1 : 0;
  return n;
}

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
  std::string known;
  for (const auto& d : kDTypes) known = StrCat(known, known.empty() ? "" : ", ", d.name);
  Fail("ValueError", "unknown dtype '", text, "' (modrt's dtypes: ", known,
       "; a vector of them as in float32x4)");
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
  std::set<std::string> arg_names;
  split(arg_text,
        [&](std::string_view a) { info.args.push_back(ParseArg(signature, a, &arg_names)); });
  split(tag_text, [&](std::string_view t) {
    if (!LaunchTags().count(std::string(t))) {
      Fail("ValueError", "bad function signature '", signature, "': unknown launch tag '", t,
           "' (known: blockIdx.x/y/z, threadIdx.x/y/z, dyn_shared_mem)");
    }
    info.launch_tags.emplace_back(t);
  });
  for (const ArgInfo& a : info.args) {
    if (!a.launch_tag.empty() && std::find(info.launch_tags.begin(), info.launch_tags.end(),
                                           a.launch_tag) == info.launch_tags.end()) {
      Fail("ValueError", "bad function signature '", signature, "': argument '", a.name,
           "' is filled from launch parameter ", a.launch_tag,
           ", which the signature does not list after ';'");
    }
  }
  return info;
}

std::string FunctionInfo::ToString() const {
  std::string s = name + "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    const ArgInfo& a = args[i];
    s += a.uniform_block
             ? "uniform " + DTypeToString(a.dtype)
             : (a.read_only ? "const " : "") + DTypeToString(a.dtype) + (a.is_buffer ? "*" : "");
    if (!a.name.empty()) s += " " + a.name;
    if (!a.launch_tag.empty()) s += " = " + a.launch_tag;
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
    // Bit 0: buffer. Bit 1 (kExtendedArg): name, const and launch tag follow
    // the dtype. An argument without them keeps the first encoding, so such
    // bytes are the ones every earlier modrt wrote and reads.
    // Bit 2 (kUniformBlockArg) is newer still: only uniform blocks use it.
    w->U8((a.is_buffer ? kBufferArg : 0) | (a.extended() ? kExtendedArg : 0) |
          (a.uniform_block ? kUniformBlockArg : 0));
    w->U8(a.dtype.code);
    w->U8(a.dtype.bits);
    w->U16(a.dtype.lanes);
    if (a.extended()) {
      w->Str(a.name);
      w->U8(a.read_only ? 1 : 0);
      w->Str(a.launch_tag);
    }
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
    if (kind > (kBufferArg | kExtendedArg | kUniformBlockArg) ||
        (kind & (kBufferArg | kUniformBlockArg)) == kUniformBlockArg) {
      r->Corrupt(
          StrCat("argument kind ", int(kind), " is neither scalar, buffer nor uniform block"));
    }
    ArgInfo arg{};
    arg.dtype = DLDataType{r->U8(), r->U8(), r->U16()};
    arg.is_buffer = (kind & kBufferArg) != 0;
    arg.uniform_block = (kind & kUniformBlockArg) != 0;
    if (DTypeToString(arg.dtype).rfind("dtype(", 0) == 0 || arg.dtype.lanes == 0) {
      r->Corrupt("unknown argument dtype " + DTypeToString(arg.dtype));
    }
    if (kind & kExtendedArg) {
      arg.name = r->Str("argument name");
      uint8_t read_only = r->U8();
      if (read_only > 1) r->Corrupt(StrCat("argument const flag ", int(read_only)));
      arg.read_only = read_only == 1;
      arg.launch_tag = r->Str("argument launch tag");
      if (!arg.extended()) r->Corrupt("an extended argument with nothing extended");
      if (arg.uniform_block && arg.read_only) r->Corrupt("a uniform block marked const");
    }
    info.args.push_back(std::move(arg));
  }
  uint64_t ntags = r->Count("launch tag count", 8);
  for (uint64_t i = 0; i < ntags; ++i) {
    std::string tag = r->Str("launch tag");
    if (!LaunchTags().count(tag)) r->Corrupt("unknown launch tag '" + tag + "'");
    info.launch_tags.push_back(std::move(tag));
  }
  // What Parse accepts, and nothing else: the text round-trips.
  try {
    Parse(info.ToString());
  } catch (const Error& e) {
    r->Corrupt(StrCat("function '", info.name, "': ", e.what()));
  }
  return info;
}

}  // namespace modrt
