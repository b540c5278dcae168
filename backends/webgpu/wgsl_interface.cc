// The kernel's interface read from a scanned WGSL module (wgsl_scan.h):
// arguments in (group, binding) order and how each is bound, the signature
// inferred from them, and what a given signature's buffer dtypes may be.
#include <algorithm>
#include <set>
#include <sstream>

#include "wgsl_scan.h"

namespace modrt {
namespace webgpu {
namespace {

template <typename... Parts>
std::string StrCat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

struct Scalar {
  const char* wgsl;
  const char* dtype;
  uint32_t bytes;  // its size and alignment
};

constexpr Scalar kScalars[] = {
    {"f32", "float32", 4}, {"i32", "int32", 4}, {"u32", "uint32", 4}, {"f16", "float16", 2}};

const Scalar* FindScalar(const std::string& type) {
  for (const Scalar& s : kScalars) {
    if (type == s.wgsl) return &s;
  }
  return nullptr;
}

std::string Resolve(const WgslInfo& info, std::string type) {
  for (int hops = 0; hops < 16; ++hops) {
    auto it = info.aliases.find(type);
    if (it == info.aliases.end()) break;
    type = it->second;
  }
  return type;
}

// "array<vec4<f32>,16>" -> "vec4<f32>"; "" when `type` is not `name<...>`.
std::string TemplateArg(const std::string& type, const std::string& name) {
  if (type.compare(0, name.size() + 1, name + "<") != 0 || type.back() != '>') return "";
  const std::string inner = type.substr(name.size() + 1, type.size() - name.size() - 2);
  int depth = 0;
  for (size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == '<') ++depth;
    if (inner[i] == '>') --depth;
    if (inner[i] == ',' && depth == 0) return inner.substr(0, i);
  }
  return inner;
}

// The scalar a storage buffer's type holds: through arrays, atomics,
// vectors and aliases; "" if none.
std::string ElementType(const WgslInfo& info, std::string type, int depth = 0) {
  type = Resolve(info, type);
  if (depth > 8) return "";
  if (FindScalar(type)) return type;
  static const char* const kShorthand[][2] = {
      {"f", "f32"}, {"i", "i32"}, {"u", "u32"}, {"h", "f16"}};
  if (type.size() == 5 && type.compare(0, 3, "vec") == 0) {
    for (const auto& sh : kShorthand) {
      if (type.substr(4) == sh[0]) return sh[1];
    }
  }
  for (const char* wrapper : {"array", "atomic", "vec2", "vec3", "vec4"}) {
    std::string inner = TemplateArg(type, wrapper);
    if (!inner.empty()) return ElementType(info, inner, depth + 1);
  }
  auto st = info.structs.find(type);
  if (st != info.structs.end() && !st->second.empty()) {
    // A struct of one element type throughout (a wrapped runtime array).
    std::string element;
    for (const StructMember& m : st->second) {
      std::string e = ElementType(info, m.type, depth + 1);
      if (e.empty() || (!element.empty() && e != element)) return "";
      element = e;
    }
    return element;
  }
  return "";
}

// The least bytes a storage buffer of `type` binds: N elements of a
// fixed-size `array<T, N>`, one of a runtime-sized `array<T>` (what wgpu
// checks at dispatch); 0 for other types.
uint64_t MinBindingBytes(const WgslInfo& info, const std::string& type) {
  const std::string resolved = Resolve(info, type);
  const std::string element = TemplateArg(resolved, "array");
  const Scalar* scalar = element.empty() ? nullptr : FindScalar(ElementType(info, element));
  if (scalar == nullptr) return 0;
  int64_t count = 1;
  const size_t rest = 6 + element.size();  // "array<" and the element
  if (resolved.size() > rest + 1 && resolved[rest] == ',') {
    const std::optional<int64_t> n =
        IntLiteral(resolved.substr(rest + 1, resolved.size() - rest - 2));
    if (!n || *n <= 0) return 0;  // a count from an override or an expression: left to wgpu
    count = *n;
  }
  const std::string e = Resolve(info, element);
  uint64_t stride = scalar->bytes;
  if (e.compare(0, 4, "vec2") == 0) stride *= 2;
  if (e.compare(0, 4, "vec3") == 0 || e.compare(0, 4, "vec4") == 0) stride *= 4;
  return stride * static_cast<uint64_t>(count);
}

std::string Declaration(const Resource& r) {
  return StrCat("@group(", r.group, ") @binding(", r.binding, ") var<", r.address_space,
                r.access.empty() ? "" : "," + r.access, "> ", r.name, ": ", r.type);
}

}  // namespace

Interface ReadInterface(const WgslInfo& info) {
  Interface iface;
  for (size_t ri = 0; ri < info.resources.size(); ++ri) {
    const Resource& r = info.resources[ri];
    iface.max_group = std::max(iface.max_group, r.group);
    if (r.address_space == "storage") {
      ShaderArg a;
      a.name = r.name;
      a.is_buffer = true;
      a.read_only = r.access.empty() || r.access == "read";
      a.wgsl_type = ElementType(info, r.type);
      a.resource = ri;
      const Scalar* sc = FindScalar(a.wgsl_type);
      if (sc == nullptr) {
        iface.error = StrCat(Declaration(r), ": modrt cannot tell the element type of '", r.type,
                             "' (it reads arrays, atomics and vectors of f32, f16, i32 and u32)");
        return iface;
      }
      a.dtype = sc->dtype;
      a.min_bytes = MinBindingBytes(info, r.type);
      iface.args.push_back(std::move(a));
    } else if (r.address_space == "uniform") {
      const std::string type = Resolve(info, r.type);
      UniformBlock block{ri, 0};
      auto scalar_arg = [&](const std::string& name, const std::string& member_type,
                            uint32_t offset) {
        ShaderArg a;
        a.name = name;
        a.wgsl_type = Resolve(info, member_type);
        a.dtype = FindScalar(a.wgsl_type)->dtype;
        a.resource = ri;
        a.offset = offset;
        iface.args.push_back(std::move(a));
      };
      if (const Scalar* sc = FindScalar(type)) {
        scalar_arg(r.name, type, 0);
        block.size = sc->bytes;
      } else if (auto st = info.structs.find(type); st != info.structs.end()) {
        uint32_t offset = 0, max_align = 1;
        for (const StructMember& m : st->second) {
          const Scalar* msc = FindScalar(Resolve(info, m.type));
          if (msc == nullptr) {
            iface.error =
                StrCat(Declaration(r), ": member '", m.name, "' of struct ", type, " is a ", m.type,
                       "; modrt fills uniforms with scalars (f32, f16, i32, u32)");
            return iface;
          }
          const uint32_t align = static_cast<uint32_t>(m.align.value_or(msc->bytes));
          const uint32_t size = static_cast<uint32_t>(m.size.value_or(msc->bytes));
          offset = (offset + align - 1) / align * align;
          scalar_arg(m.name, m.type, offset);
          offset += size;
          max_align = std::max(max_align, align);
        }
        block.size = (offset + max_align - 1) / max_align * max_align;
      } else {
        iface.error = StrCat(Declaration(r), ": a uniform of type ", r.type,
                             "; modrt fills uniforms that are a scalar or a struct of scalars");
        return iface;
      }
      iface.uniforms.push_back(block);
    } else {
      iface.error = StrCat(Declaration(r),
                           ": modrt binds storage and uniform buffers only, not this resource");
      return iface;
    }
  }
  // Names are unique in a signature: a struct member that repeats another
  // argument's name is called <variable>_<member>.
  std::set<std::string> seen;
  for (ShaderArg& a : iface.args) {
    if (!seen.insert(a.name).second) {
      a.name = info.resources[a.resource].name + "_" + a.name;
      seen.insert(a.name);
    }
  }
  return iface;
}

std::string InferredSignature(const WgslInfo& info, const Interface& iface,
                              const EntryPoint& entry) {
  std::string s = entry.name + "(";
  for (size_t i = 0; i < iface.args.size(); ++i) {
    const ShaderArg& a = iface.args[i];
    s += StrCat(i ? ", " : "", a.read_only ? "const " : "", a.dtype, a.is_buffer ? "* " : " ",
                a.name);
  }
  s += "; blockIdx.x, blockIdx.y, blockIdx.z";
  for (int d = 0; d < 3; ++d) {
    if (!entry.size[d].override_name.empty()) s += StrCat(", threadIdx.", "xyz"[d]);
  }
  for (const std::string& o : info.overrides) {
    if (o == "dyn_shared_mem") s += ", dyn_shared_mem";
  }
  return s + ")";
}

std::string DescribeInterface(const WgslInfo& info, const Interface& iface) {
  if (info.resources.empty()) return "no storage or uniform bindings";
  std::string s;
  for (size_t ri = 0; ri < info.resources.size(); ++ri) {
    s += (ri ? "; " : "") + Declaration(info.resources[ri]);
    std::string args;
    for (const ShaderArg& a : iface.args) {
      if (a.resource != ri) continue;
      args += StrCat(args.empty() ? "" : ", ", a.read_only ? "const " : "", a.dtype,
                     a.is_buffer ? "*" : "");
    }
    if (!args.empty()) s += " (" + args + ")";
  }
  return s;
}

bool BufferDtypeFits(const std::string& given, const ShaderArg& kernel) {
  if (given == kernel.dtype) return true;
  static const std::set<std::string> kPackable = {"bool",   "int8",    "uint8",   "int16",
                                                  "uint16", "float16", "bfloat16"};
  return (kernel.dtype == "uint32" || kernel.dtype == "int32") && kPackable.count(given) > 0;
}
}  // namespace webgpu
}  // namespace modrt
