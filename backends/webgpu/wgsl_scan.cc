#include "wgsl_scan.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <tuple>

namespace modrt {
namespace webgpu {

std::optional<int64_t> IntLiteral(const std::string& text) {
  std::string digits = text;
  while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'i')) digits.pop_back();
  if (digits.empty() || digits.find('.') != std::string::npos) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, 0);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return v;
}

namespace {

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
