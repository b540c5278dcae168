#include "wgsl_scan.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>
#include <tuple>

namespace modrt {
namespace webgpu {
namespace {

template <typename... Parts>
std::string StrCat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

struct Token {
  enum Kind { kIdent, kNumber, kPunct } kind;
  std::string text;
};

bool IdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<Token> Tokenize(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      int depth = 0;  // WGSL block comments nest
      do {
        if (s.compare(i, 2, "/*") == 0) {
          ++depth;
          i += 2;
        } else if (s.compare(i, 2, "*/") == 0) {
          --depth;
          i += 2;
        } else {
          ++i;
        }
      } while (i < n && depth > 0);
    } else if (IdentStart(c)) {
      size_t j = i;
      while (j < n && IdentChar(s[j])) ++j;
      out.push_back({Token::kIdent, s.substr(i, j - i)});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < n && (IdentChar(s[j]) || s[j] == '.')) ++j;
      out.push_back({Token::kNumber, s.substr(i, j - i)});
      i = j;
    } else {
      out.push_back({Token::kPunct, std::string(1, c)});
      ++i;
    }
  }
  return out;
}

// An integer literal (42, 42u, 42i, 0x2A), else nothing.
std::optional<int64_t> IntLiteral(const std::string& text) {
  std::string digits = text;
  while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'i')) digits.pop_back();
  if (digits.empty() || digits.find('.') != std::string::npos) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, 0);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return v;
}

// The type after t[*at] (a ':' or '='), up to the ',', ';', '=', ')' or '}'
// that ends it outside its template brackets, without spaces; *at ends there.
std::string TypeText(const std::vector<Token>& t, size_t* at) {
  std::string type;
  int depth = 0;
  size_t j = *at + 1;
  for (; j < t.size(); ++j) {
    const std::string& x = t[j].text;
    if (depth == 0 && (x == "," || x == ";" || x == "=" || x == ")" || x == "}")) break;
    if (x == "<") ++depth;
    if (x == ">") --depth;
    type += x;
  }
  *at = j;
  return type;
}

struct Attribute {
  std::string name;
  std::vector<std::vector<Token>> args;  // comma-separated
};

}  // namespace

WgslInfo ScanWgsl(const std::string& source) {
  const std::vector<Token> t = Tokenize(source);
  WgslInfo info;
  std::map<std::string, int64_t> consts;  // module-scope `const NAME = <int literal>`
  std::vector<Attribute> pending;
  auto find = [&](const char* name) -> const Attribute* {
    for (const Attribute& a : pending) {
      if (a.name == name) return &a;
    }
    return nullptr;
  };
  auto single_int = [](const Attribute* a) -> std::optional<int64_t> {
    if (a == nullptr || a->args.size() != 1 || a->args[0].size() != 1) return std::nullopt;
    return IntLiteral(a->args[0][0].text);
  };
  size_t i = 0;
  while (i < t.size()) {
    const Token& tok = t[i];
    if (tok.kind == Token::kPunct && tok.text == "@" && i + 1 < t.size() &&
        t[i + 1].kind == Token::kIdent) {
      Attribute a{t[i + 1].text, {}};
      i += 2;
      if (i < t.size() && t[i].text == "(") {
        int depth = 1;
        ++i;
        a.args.emplace_back();
        while (i < t.size() && depth > 0) {
          const std::string& x = t[i].text;
          if (x == "(") ++depth;
          if (x == ")" && --depth == 0) break;
          if (x == "," && depth == 1) {
            a.args.emplace_back();
          } else {
            a.args.back().push_back(t[i]);
          }
          ++i;
        }
        ++i;                                                              // the closing parenthesis
        if (!a.args.empty() && a.args.back().empty()) a.args.pop_back();  // a trailing comma
      }
      pending.push_back(std::move(a));
      continue;
    }
    if (tok.kind == Token::kIdent && tok.text == "var") {
      Resource r;
      size_t j = i + 1;
      if (j < t.size() && t[j].text == "<") {
        ++j;
        if (j < t.size()) r.address_space = t[j++].text;
        if (j < t.size() && t[j].text == ",") {
          ++j;
          if (j < t.size()) r.access = t[j++].text;
        }
      }
      const std::optional<int64_t> group = single_int(find("group"));
      const std::optional<int64_t> binding = single_int(find("binding"));
      if (group && binding && *group >= 0 && *binding >= 0) {
        while (j < t.size() && t[j].text != ">" && t[j].text != ";") ++j;  // the template's end
        if (j < t.size() && t[j].text == ">") ++j;
        if (j < t.size() && t[j].kind == Token::kIdent) r.name = t[j++].text;
        if (j < t.size() && t[j].text == ":") r.type = TypeText(t, &j);
        r.group = static_cast<uint32_t>(*group);
        r.binding = static_cast<uint32_t>(*binding);
        info.resources.push_back(std::move(r));
      }
      pending.clear();
      i = j;
      continue;
    }
    if (tok.kind == Token::kIdent && tok.text == "alias" && i + 3 < t.size() &&
        t[i + 1].kind == Token::kIdent && t[i + 2].text == "=") {
      size_t j = i + 2;  // TypeText starts after the '='
      info.aliases[t[i + 1].text] = TypeText(t, &j);
      pending.clear();
      i = j;
      continue;
    }
    if (tok.kind == Token::kIdent && tok.text == "struct" && i + 2 < t.size() &&
        t[i + 1].kind == Token::kIdent && t[i + 2].text == "{") {
      std::vector<StructMember>& members = info.structs[t[i + 1].text];
      size_t j = i + 3;
      StructMember m;
      while (j < t.size() && t[j].text != "}") {
        if (t[j].text == "@" && j + 4 < t.size() && t[j + 2].text == "(") {
          // @align(N) / @size(N) before a member; other attributes are skipped
          const std::string& attr = t[j + 1].text;
          std::optional<int64_t> v = IntLiteral(t[j + 3].text);
          if (attr == "align") m.align = v;
          if (attr == "size") m.size = v;
          j += 2;
          while (j < t.size() && t[j].text != ")") ++j;
          ++j;
        } else if (t[j].kind == Token::kIdent && j + 1 < t.size() && t[j + 1].text == ":") {
          m.name = t[j].text;
          ++j;
          m.type = TypeText(t, &j);
          members.push_back(std::move(m));
          m = StructMember{};
          if (j < t.size() && t[j].text == ",") ++j;
        } else {
          ++j;
        }
      }
      pending.clear();
      i = j;
      continue;
    }
    if (tok.kind == Token::kIdent && tok.text == "override" && i + 1 < t.size() &&
        t[i + 1].kind == Token::kIdent) {
      info.overrides.push_back(t[i + 1].text);
      pending.clear();
      i += 2;
      continue;
    }
    if (tok.kind == Token::kIdent && tok.text == "const" && i + 1 < t.size() &&
        t[i + 1].kind == Token::kIdent) {
      // const NAME [: type] = LITERAL ;
      size_t j = i + 2;
      while (j < t.size() && t[j].text != "=" && t[j].text != ";") ++j;
      if (j + 2 < t.size() && t[j].text == "=" && t[j + 2].text == ";") {
        if (auto v = IntLiteral(t[j + 1].text)) consts[t[i + 1].text] = *v;
      }
      pending.clear();
      i += 2;
      continue;
    }
    if (tok.kind == Token::kIdent && tok.text == "fn" && i + 1 < t.size() &&
        t[i + 1].kind == Token::kIdent) {
      if (find("compute") != nullptr) {
        EntryPoint e;
        e.name = t[i + 1].text;
        for (WorkgroupDim& d : e.size) d.value = 1;
        if (const Attribute* size = find("workgroup_size")) {
          e.has_workgroup_size = true;
          for (size_t a = 0; a < 3 && a < size->args.size(); ++a) {
            WorkgroupDim& d = e.size[a];
            d.value.reset();
            const std::vector<Token>& expr = size->args[a];
            if (expr.size() != 1) continue;  // an expression: wgpu decides
            if (expr[0].kind == Token::kNumber) {
              d.value = IntLiteral(expr[0].text);
            } else if (auto c = consts.find(expr[0].text); c != consts.end()) {
              d.value = c->second;
            } else {
              d.override_name = expr[0].text;
            }
          }
        }
        info.entries.push_back(std::move(e));
      }
      pending.clear();
      i += 2;
      continue;
    }
    pending.clear();
    ++i;
  }
  std::stable_sort(info.resources.begin(), info.resources.end(),
                   [](const Resource& a, const Resource& b) {
                     return std::tie(a.group, a.binding) < std::tie(b.group, b.binding);
                   });
  // A workgroup_size name that is not an override constant is left to wgpu.
  for (EntryPoint& e : info.entries) {
    for (WorkgroupDim& d : e.size) {
      if (d.override_name.empty()) continue;
      bool known = false;
      for (const std::string& o : info.overrides) known |= o == d.override_name;
      if (!known) d.override_name.clear();
    }
  }
  return info;
}

namespace {

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

size_t InvalidUtf8At(const std::string& source) {
  const auto* s = reinterpret_cast<const unsigned char*>(source.data());
  const size_t n = source.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are invalid too.
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += len;
  }
  return std::string::npos;
}

}  // namespace webgpu
}  // namespace modrt
