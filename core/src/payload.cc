#include "modrt/payload.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "internal.h"
#include "modrt/device.h"

namespace modrt {

void ByteWriter::U16(uint16_t v) {
  U8(v & 0xff);
  U8(v >> 8);
}

void ByteWriter::U64(uint64_t v) {
  for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
}

void ByteWriter::Str(std::string_view s) {
  U64(s.size());
  out_.append(s.data(), s.size());
}

void ByteReader::Corrupt(const std::string& why) const {
  Fail("ValueError", "corrupted ", what_, " at byte ", pos_, ": ", why);
}

void ByteReader::Need(uint64_t n, const char* field) const {
  if (n > data_.size() - pos_) {
    Fail("ValueError", "truncated ", what_, ": ", field, " needs ", n, " bytes at byte ", pos_,
         ", only ", data_.size() - pos_, " left");
  }
}

uint8_t ByteReader::U8() {
  Need(1, "a byte");
  return static_cast<uint8_t>(data_[pos_++]);
}

uint16_t ByteReader::U16() {
  Need(2, "a u16");
  uint16_t lo = U8();
  return lo | static_cast<uint16_t>(U8() << 8);
}

uint64_t ByteReader::U64() {
  Need(8, "a u64");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(U8()) << (8 * i);
  return v;
}

std::string ByteReader::Str(const char* field) {
  Need(8, field);
  uint64_t n = U64();
  Need(n, field);
  std::string s(data_.substr(pos_, n));
  pos_ += n;
  return s;
}

uint64_t ByteReader::Count(const char* field, uint64_t min_item_bytes) {
  Need(8, field);
  uint64_t n = U64();
  if (min_item_bytes > 0 && n > (data_.size() - pos_) / min_item_bytes) {
    Fail("ValueError", "truncated ", what_, ": ", field, " claims ", n, " items at byte ", pos_,
         ", only ", data_.size() - pos_, " bytes left");
  }
  return n;
}

void ByteReader::ExpectEnd() const {
  if (pos_ != data_.size()) {
    Fail("ValueError", "corrupted ", what_, ": ", data_.size() - pos_,
         " unexpected trailing bytes at byte ", pos_);
  }
}

namespace {

struct DTypeName {
  const char* name;
  DLDataTypeCode code;
  uint8_t bits;
};

constexpr DTypeName kDTypes[] = {
    {"bool", kDLBool, 8},       {"int8", kDLInt, 8},        {"int16", kDLInt, 16},
    {"int32", kDLInt, 32},      {"int64", kDLInt, 64},      {"uint8", kDLUInt, 8},
    {"uint16", kDLUInt, 16},    {"uint32", kDLUInt, 32},    {"uint64", kDLUInt, 64},
    {"float16", kDLFloat, 16},  {"float32", kDLFloat, 32},  {"float64", kDLFloat, 64},
    {"bfloat16", kDLBfloat, 16},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

const std::set<std::string>& LaunchTags() {
  static const std::set<std::string> tags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                             "threadIdx.x", "threadIdx.y", "threadIdx.z",
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
    if (lane_text.empty() || parsed < 1 || parsed > 65535) Fail("ValueError", "unknown dtype '", text, "'");
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
  return StrCat("dtype(code=", int(dtype.code), ", bits=", int(dtype.bits), ", lanes=", dtype.lanes, ")");
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

Ref<PayloadObj> PayloadObj::Load(PayloadShape shape, std::string_view bytes, const std::string& what) {
  ByteReader r(bytes, what);
  auto p = MakeObject<PayloadObj>();
  p->shape = shape;
  p->fmt = r.Str("fmt");
  uint64_t nfuncs = r.Count("function count", 24);
  for (uint64_t i = 0; i < nfuncs; ++i) {
    FunctionInfo info = FunctionInfo::Load(&r);
    std::string name = info.name;
    if (!p->fmap.emplace(name, std::move(info)).second) r.Corrupt("duplicate function '" + name + "'");
  }
  if (shape == PayloadShape::kSingleBinary) {
    p->code = r.Str("code");
  } else {
    uint64_t nshaders = r.Count("shader count", 16);
    for (uint64_t i = 0; i < nshaders; ++i) {
      std::string name = r.Str("shader name");
      std::string blob = r.Str("shader");
      if (!p->smap.emplace(name, std::move(blob)).second) r.Corrupt("duplicate shader '" + name + "'");
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

void PackKernelArgs(const FunctionInfo& info, const Args& args, DLDeviceType device_type,
                    ModrtKernelArgs* k) {
  const size_t nargs = info.args.size();
  const size_t expected = nargs + info.launch_tags.size();
  if (static_cast<size_t>(args.size()) != expected) {
    Fail("TypeError", info.name, " takes ", nargs, " argument", nargs == 1 ? "" : "s", " and ",
         info.launch_tags.size(), " launch parameter", info.launch_tags.size() == 1 ? "" : "s",
         " (", info.ToString(), "), got ", args.size(), " values");
  }
  if (k->num_args != static_cast<int64_t>(nargs)) {
    Fail("ValueError", info.name, ": kernel argument arrays of ", k->num_args, " entries for ", nargs,
         " arguments");
  }
  std::fill(k->slots, k->slots + nargs, 0);
  std::fill(k->buffers, k->buffers + nargs, nullptr);
  for (int d = 0; d < 3; ++d) k->grid[d] = k->block[d] = 1;
  k->dyn_shared_bytes = 0;
  k->device_id = 0;
  bool seen_buffer = false;
  // Pointer arithmetic on device addresses is valid only where they are plain pointers.
  const bool addressable = device_type == kDLCPU || device_type == kDLCUDA || device_type == kDLROCM;
  for (size_t i = 0; i < nargs; ++i) {
    const ArgInfo& a = info.args[i];
    const int32_t idx = static_cast<int32_t>(i);
    if (a.is_buffer) {
      const ModrtValue& v = args[idx];
      if (v.type_code != kModrtDLTensorPtr &&
          !(v.type_code == kModrtObject && v.v_obj != nullptr &&
            static_cast<Object*>(v.v_obj)->type_index() == kModrtObjTensor)) {
        Fail("TypeError", info.name, ": argument ", i, " must be a tensor of ",
             DTypeToString(a.dtype), ", got ", TypeCodeName(v.type_code));
      }
      const DLTensor* t = args.Tensor(idx);
      if (!(t->dtype == a.dtype)) {
        Fail("TypeError", info.name, ": argument ", i, " must be a tensor of ",
             DTypeToString(a.dtype), ", got a tensor of ", DTypeToString(t->dtype));
      }
      if (t->device.device_type != device_type) {
        const char* kind = DeviceKindName(t->device.device_type);
        Fail("ValueError", info.name, ": argument ", i, " lives on ", kind ? kind : "an unknown device",
             ", but this kernel runs on ", DeviceKindName(device_type));
      }
      if (t->byte_offset != 0 && !addressable) {
        Fail("ValueError", info.name, ": argument ", i,
             " has a byte offset, which this device's buffers cannot express");
      }
      if (!seen_buffer) {
        seen_buffer = true;
        k->device_id = t->device.device_id;
      } else if (t->device.device_id != k->device_id) {
        Fail("ValueError", info.name, ": argument ", i, " lives on ", DeviceKindName(device_type), "(",
             t->device.device_id, "), but earlier buffers on ", DeviceKindName(device_type), "(",
             k->device_id, ")");
      }
      char* ptr = static_cast<char*>(t->data) + (addressable ? t->byte_offset : 0);
      std::memcpy(&k->slots[i], &ptr, sizeof(ptr));
      k->sizes[i] = sizeof(void*);
      k->buffers[i] = t;
      continue;
    }
    const DLDataType dt = a.dtype;
    const size_t bytes = (dt.bits / 8) * dt.lanes;
    if (dt.lanes != 1 || bytes == 0 || bytes > 8) {
      Fail("TypeError", info.name, ": scalar argument ", i, " of dtype ", DTypeToString(dt),
           " is not supported");
    }
    k->sizes[i] = bytes;
    auto store = [&](auto value) { std::memcpy(&k->slots[i], &value, sizeof(value)); };
    try {
      if (dt.code == kDLFloat && dt.bits == 32) {
        store(static_cast<float>(args.Float(idx)));
      } else if (dt.code == kDLFloat && dt.bits == 64) {
        store(args.Float(idx));
      } else if (dt.code == kDLInt || dt.code == kDLUInt || dt.code == kDLBool) {
        int64_t v = args.Int(idx);
        if (dt.bits == 8) store(static_cast<int8_t>(v));
        else if (dt.bits == 16) store(static_cast<int16_t>(v));
        else if (dt.bits == 32) store(static_cast<int32_t>(v));
        else store(v);
      } else {
        Fail("TypeError", "scalar dtype ", DTypeToString(dt), " is not supported");
      }
    } catch (const Error& e) {
      Fail("TypeError", info.name, ": argument ", i, " (", DTypeToString(dt), "): ", e.what());
    }
  }
  for (size_t i = 0; i < nargs; ++i) k->ptrs[i] = &k->slots[i];
  for (size_t j = 0; j < info.launch_tags.size(); ++j) {
    const std::string& tag = info.launch_tags[j];
    const int32_t idx = static_cast<int32_t>(nargs + j);
    int64_t v = 0;
    try {
      v = args.Int(idx);
    } catch (const Error& e) {
      Fail("TypeError", info.name, ": launch parameter ", tag, ": ", e.what());
    }
    if (v < (tag == "dyn_shared_mem" ? 0 : 1)) {
      Fail("ValueError", info.name, ": launch parameter ", tag, " must be ",
           tag == "dyn_shared_mem" ? ">= 0" : ">= 1", ", got ", v);
    }
    if (tag == "dyn_shared_mem") {
      k->dyn_shared_bytes = v;
    } else {
      int axis = tag.back() - 'x';
      (tag[0] == 'b' ? k->grid : k->block)[axis] = v;
    }
  }
}

KernelArgs KernelArgs::Pack(const FunctionInfo& info, const Args& args, DLDeviceType device_type) {
  const size_t n = info.args.size();
  KernelArgs k;
  k.slots.resize(n);
  k.ptrs.resize(n);
  k.sizes.resize(n);
  k.buffers.resize(n);
  ModrtKernelArgs c{};
  c.struct_size = sizeof(c);
  c.num_args = static_cast<int64_t>(n);
  c.slots = k.slots.data();
  c.ptrs = k.ptrs.data();
  c.sizes = k.sizes.data();
  c.buffers = k.buffers.data();
  PackKernelArgs(info, args, device_type, &c);
  for (int d = 0; d < 3; ++d) {
    k.launch.grid[d] = c.grid[d];
    k.launch.block[d] = c.block[d];
  }
  k.launch.dyn_shared_bytes = c.dyn_shared_bytes;
  k.device_id = c.device_id;
  return k;
}

}  // namespace modrt
