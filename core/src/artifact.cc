// The `.modrt` artifact: writing, parsing with every integrity check, loading,
// and the manifest as JSON. Layout in modrt/core/artifact.h.
#include "modrt/core/artifact.h"

#include <set>

#include "internal.h"
#include "modrt/core/backend.h"

namespace modrt {
namespace {

constexpr size_t kMagicSize = sizeof(kArtifactMagic) - 1;
constexpr size_t kDigestSize = 32;
// Smallest manifest entry: kind, parent, shape, fmt, three counts/sizes, digest.
constexpr uint64_t kMinEntryBytes = 8 + 8 + 1 + 8 + 8 + 8 + 8 + 8 + kDigestSize;

const char* ShapeName(ArtifactShape shape) {
  switch (shape) {
    case ArtifactShape::kSingleBinary: return "single-binary";
    case ArtifactShape::kMultiShader: return "multi-shader";
    case ArtifactShape::kOpaque: return "opaque";
  }
  return "unknown";
}

// The payload shape modules of `kind` always have; false for kinds modrt does
// not know (out-of-tree), whose modules may have either shape or none.
bool KnownShape(const std::string& kind, ArtifactShape* shape) {
  if (kind == "so") {
    *shape = ArtifactShape::kSingleBinary;
    return true;
  }
  if (const BackendInfo* b = FindBackend(kind)) {
    *shape = b->shape == PayloadShape::kSingleBinary ? ArtifactShape::kSingleBinary
                                                     : ArtifactShape::kMultiShader;
    return true;
  }
  return false;
}

PayloadShape ToPayloadShape(ArtifactShape shape) {
  return shape == ArtifactShape::kSingleBinary ? PayloadShape::kSingleBinary
                                               : PayloadShape::kMultiShader;
}

// Kinds become parts of registry names ("module.load_from_bytes.<kind>").
bool IsValidKind(std::string_view kind) {
  if (kind.empty() || kind.size() > 64) return false;
  for (char c : kind) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Fills fmt, shape and signatures from the module's own bytes, so the
// manifest says exactly what the bytes hold.
void Describe(ModuleObj* module, ArtifactModule* entry) {
  ArtifactShape known;
  std::vector<ArtifactShape> candidates;
  if (KnownShape(entry->kind, &known)) {
    candidates = {known};
  } else {
    candidates = {ArtifactShape::kSingleBinary, ArtifactShape::kMultiShader};
  }
  for (ArtifactShape shape : candidates) {
    try {
      Ref<PayloadObj> p =
          PayloadObj::Load(ToPayloadShape(shape), entry->bytes, entry->kind + " module bytes");
      entry->shape = shape;
      entry->fmt = p->fmt;
      for (const auto& kv : p->fmap) entry->functions.push_back(kv.second);
      return;
    } catch (const Error&) {
      if (candidates.size() == 1) throw;  // a known kind must hold its payload
    }
  }
  entry->shape = ArtifactShape::kOpaque;
  for (const std::string& name : module->FunctionNames()) {
    // Names only (the signature is unknown); Parse refuses a non-identifier.
    entry->functions.push_back(FunctionInfo{FunctionInfo::Parse(name + "()").name, {}, {}});
  }
}

void Collect(ModuleObj* module, uint64_t parent, std::set<ModuleObj*>* path,
             std::vector<ArtifactModule>* out) {
  if (!path->insert(module).second) {
    Fail("ValueError", "cannot export: module of kind '", module->kind(),
         "' imports itself through its imports");
  }
  ArtifactModule entry;
  entry.kind = module->kind();
  if (!IsValidKind(entry.kind))
    Fail("ValueError", "cannot export a module of kind '", entry.kind, "'");
  entry.parent = parent;
  entry.bytes = module->SaveToBytes();
  entry.sha256 = Sha256(entry.bytes);
  entry.sources = module->Sources();
  if (entry.sources.count(kArtifactReservedSource)) {
    Fail("ValueError", "cannot export: a module of kind '", entry.kind,
         "' has a source of format '", kArtifactReservedSource,
         "', which artifacts reserve for their signature");
  }
  Describe(module, &entry);
  const uint64_t index = out->size();
  out->push_back(std::move(entry));
  for (const Ref<ModuleObj>& child : module->imports()) Collect(child.get(), index, path, out);
  path->erase(module);
}

// Checks that the manifest's description of a payload module is what its
// (already hash-checked) bytes hold: an edited manifest is refused here.
void CheckAgainstBytes(const ArtifactModule& m, const std::string& label) {
  ArtifactShape known;
  if (KnownShape(m.kind, &known) && known != m.shape) {
    Fail("ValueError", label, ": the manifest says shape ", ShapeName(m.shape), ", but ", m.kind,
         " modules are ", ShapeName(known), " (manifest tampered with)");
  }
  if (m.shape == ArtifactShape::kOpaque) {
    if (!m.fmt.empty())
      Fail("ValueError", label, ": an opaque module has no fmt, the manifest says '", m.fmt, "'");
    return;
  }
  Ref<PayloadObj> p;
  try {
    p = PayloadObj::Load(ToPayloadShape(m.shape), m.bytes, m.kind + " module bytes");
  } catch (const Error& e) {
    Fail("ValueError", label, ": its bytes are not a ", ShapeName(m.shape), " payload: ", e.what());
  }
  if (p->fmt != m.fmt) {
    Fail("ValueError", label, ": the manifest says fmt '", m.fmt, "', its bytes hold '", p->fmt,
         "' (manifest tampered with)");
  }
  // A fmt its kind does not know is refused here, not only where the kind's
  // runtime is loaded, so reading the manifest already tells.
  if (const BackendInfo* backend = FindBackend(m.kind)) {
    try {
      backend->CheckPayload(*p);
    } catch (const Error& e) {
      Fail("ValueError", label, ": ", e.what());
    }
  } else if (m.kind == "so" && p->fmt != "so") {
    Fail("ValueError", label, ": unknown host module format '", p->fmt, "' (known: so)");
  }
  std::string listed, held;
  for (const FunctionInfo& f : m.functions) listed += (listed.empty() ? "" : "; ") + f.ToString();
  for (const auto& kv : p->fmap) held += (held.empty() ? "" : "; ") + kv.second.ToString();
  if (listed != held) {
    Fail("ValueError", label, ": the manifest lists functions [", listed, "], its bytes hold [",
         held, "] (manifest tampered with)");
  }
}

// One manifest entry; `declared_size` is the byte size it states, compared
// with the module section by the caller.
ArtifactModule ParseEntry(ByteReader* r, uint64_t index, uint64_t* declared_size) {
  ArtifactModule m;
  m.kind = r->Str("module kind");
  if (!IsValidKind(m.kind)) r->Corrupt(StrCat("module ", index, " has an invalid kind"));
  m.parent = r->U64();
  if (index == 0 ? m.parent != kArtifactRoot : m.parent >= index) {
    r->Corrupt(StrCat(m.Label(index), " names module ", m.parent,
                      " as its parent; parents come before their imports and module 0 has none"));
  }
  uint8_t shape = r->U8();
  if (shape > static_cast<uint8_t>(ArtifactShape::kOpaque)) {
    r->Corrupt(StrCat(m.Label(index), " has unknown shape ", int(shape)));
  }
  m.shape = static_cast<ArtifactShape>(shape);
  m.fmt = r->Str("fmt");
  std::set<std::string> names;
  uint64_t nfuncs = r->Count("function count", 24);
  for (uint64_t i = 0; i < nfuncs; ++i) {
    m.functions.push_back(FunctionInfo::Load(r));
    if (!names.insert(m.functions.back().name).second) {
      r->Corrupt(m.Label(index) + " lists function '" + m.functions.back().name + "' twice");
    }
  }
  uint64_t nsources = r->Count("source count", 16);
  for (uint64_t i = 0; i < nsources; ++i) {
    std::string format = r->Str("source format");
    std::string text = r->Str("source text");
    if (!m.sources.emplace(std::move(format), std::move(text)).second) {
      r->Corrupt(m.Label(index) + " lists a source format twice");
    }
  }
  *declared_size = r->U64();
  m.sha256 = r->Str("module SHA-256");
  if (m.sha256.size() != kDigestSize) r->Corrupt(m.Label(index) + ": a SHA-256 digest is 32 bytes");
  return m;
}

void AppendJsonString(std::string* out, std::string_view s) {
  static const char digits[] = "0123456789abcdef";
  *out += '"';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (c == '\n') {
      *out += "\\n";
    } else if (u < 0x20 || u == 0x7f) {
      *out += "\\u00";
      *out += digits[u >> 4];
      *out += digits[u & 0xf];
    } else {
      *out += c;  // UTF-8 passes through
    }
  }
  *out += '"';
}

}  // namespace

std::string ArtifactModule::Label(size_t index) const {
  return StrCat("module ", index, " (", kind.empty() ? "?" : kind, ")");
}

uint16_t ArtifactVersionFor(const std::vector<FunctionInfo>& functions) {
  uint16_t version = kArtifactOldestVersion;
  for (const FunctionInfo& f : functions) {
    for (const ArgInfo& a : f.args) {
      if (a.uniform_block) return 3;
      if (a.extended()) version = 2;
    }
  }
  return version;
}

void CheckArtifactVersion(uint16_t version) {
  if (version < kArtifactOldestVersion || version > kArtifactVersion) {
    Fail("ValueError", "modrt artifact format version ", version,
         " is not supported (this modrt reads versions ", kArtifactOldestVersion, " to ",
         kArtifactVersion, ")");
  }
}

std::string SaveArtifact(ModuleObj* root) {
  if (root == nullptr) Fail("ValueError", "cannot export a null module");
  std::vector<ArtifactModule> modules;
  std::set<ModuleObj*> path;
  Collect(root, kArtifactRoot, &path, &modules);

  ByteWriter manifest;
  manifest.U64(modules.size());
  for (const ArtifactModule& m : modules) {
    manifest.Str(m.kind);
    manifest.U64(m.parent);
    manifest.U8(static_cast<uint8_t>(m.shape));
    manifest.Str(m.fmt);
    manifest.U64(m.functions.size());
    for (const FunctionInfo& f : m.functions) f.Save(&manifest);
    manifest.U64(m.sources.size());
    for (const auto& kv : m.sources) {
      manifest.Str(kv.first);
      manifest.Str(kv.second);
    }
    manifest.U64(m.bytes.size());
    manifest.Str(m.sha256);
  }
  std::string manifest_bytes = manifest.Finish();

  ByteWriter out;
  for (size_t i = 0; i < kMagicSize; ++i) out.U8(static_cast<uint8_t>(kArtifactMagic[i]));
  std::vector<FunctionInfo> functions;
  for (const ArtifactModule& m : modules) {
    functions.insert(functions.end(), m.functions.begin(), m.functions.end());
  }
  out.U16(ArtifactVersionFor(functions));
  out.Str(manifest_bytes);
  out.Str(Sha256(manifest_bytes));
  for (const ArtifactModule& m : modules) out.Str(m.bytes);
  return out.Finish();
}

Artifact ParseArtifact(const uint8_t* data, size_t size) {
  if (data == nullptr && size != 0) Fail("ValueError", "no artifact data");
  std::string_view file(reinterpret_cast<const char*>(data), size);
  if (file.size() < kMagicSize ||
      file.substr(0, kMagicSize) != std::string_view(kArtifactMagic, kMagicSize)) {
    Fail("ValueError", "not a modrt artifact: it does not start with '", kArtifactMagic, "'",
         file.size() < kMagicSize ? StrCat(" (only ", file.size(), " bytes)") : "");
  }
  ByteReader r(file, "modrt artifact");  // offsets in errors count from the file's start
  for (size_t i = 0; i < kMagicSize; ++i) r.U8();
  Artifact artifact;
  artifact.version = r.U16();
  CheckArtifactVersion(artifact.version);
  std::string manifest = r.Str("manifest");
  std::string digest = r.Str("manifest SHA-256");
  if (digest != Sha256(manifest)) {
    Fail("ValueError",
         "corrupted modrt artifact: the manifest's SHA-256 does not match its bytes "
         "(the manifest was damaged or edited)");
  }
  ByteReader m(manifest, "modrt artifact manifest");
  uint64_t count = m.Count("module count", kMinEntryBytes);
  if (count == 0) m.Corrupt("the manifest lists no module");
  std::vector<uint64_t> sizes(count);
  for (uint64_t i = 0; i < count; ++i) artifact.modules.push_back(ParseEntry(&m, i, &sizes[i]));
  m.ExpectEnd();
  std::vector<FunctionInfo> functions;
  for (const ArtifactModule& mod : artifact.modules) {
    functions.insert(functions.end(), mod.functions.begin(), mod.functions.end());
  }
  // A file is written with the lowest version that holds it: another is damaged.
  const uint16_t needed = ArtifactVersionFor(functions);
  if (needed > artifact.version) {
    m.Corrupt(
        StrCat("a version ", artifact.version, " file whose signatures need version ", needed));
  }
  if (needed < artifact.version) {
    m.Corrupt(StrCat("format version ", artifact.version, " for signatures of version ", needed,
                     " (a file is written with the lowest version that holds it)"));
  }

  for (uint64_t i = 0; i < count; ++i) {
    ArtifactModule& mod = artifact.modules[i];
    const std::string label = mod.Label(i);
    try {
      mod.bytes = r.Str("module bytes");
    } catch (const Error& e) {
      Fail("ValueError", label, ": ", e.what());
    }
    if (mod.bytes.size() != sizes[i]) {
      Fail("ValueError", label, ": holds ", mod.bytes.size(), " bytes, the manifest says ",
           sizes[i]);
    }
    std::string actual = Sha256(mod.bytes);
    if (actual != mod.sha256) {
      Fail("ValueError", label,
           ": SHA-256 mismatch, its bytes were corrupted or tampered with "
           "(manifest ",
           Hex(mod.sha256), ", bytes ", Hex(actual), ")");
    }
    CheckAgainstBytes(mod, label);
  }
  r.ExpectEnd();
  return artifact;
}

Ref<ModuleObj> LoadArtifact(const Artifact& artifact) {
  if (artifact.modules.empty()) Fail("ValueError", "the artifact holds no module");
  std::vector<Ref<ModuleObj>> loaded;
  for (size_t i = 0; i < artifact.modules.size(); ++i) {
    const ArtifactModule& m = artifact.modules[i];
    try {
      loaded.push_back(LoadModuleFromBytes(m.kind, m.bytes));
    } catch (const Error& e) {
      Fail(e.kind().c_str(), m.Label(i), ": ", e.what());
    }
  }
  for (size_t i = 1; i < loaded.size(); ++i) loaded[artifact.modules[i].parent]->Import(loaded[i]);
  return loaded[0];
}

std::string ArtifactManifestJson(const Artifact& artifact) {
  std::string out = StrCat("{\"format_version\": ", artifact.version, ", \"modules\": [");
  for (size_t i = 0; i < artifact.modules.size(); ++i) {
    const ArtifactModule& m = artifact.modules[i];
    out += i ? ", {" : "{";
    out += StrCat("\"index\": ", i, ", \"kind\": ");
    AppendJsonString(&out, m.kind);
    out += ", \"parent\": " +
           (m.parent == kArtifactRoot ? std::string("null") : std::to_string(m.parent));
    out += StrCat(", \"shape\": \"", ShapeName(m.shape), "\", \"fmt\": ");
    AppendJsonString(&out, m.fmt);
    out += ", \"functions\": [";
    for (size_t j = 0; j < m.functions.size(); ++j) {
      out += j ? ", {\"name\": " : "{\"name\": ";
      AppendJsonString(&out, m.functions[j].name);
      out += ", \"signature\": ";
      if (m.shape == ArtifactShape::kOpaque) {
        out += "null";
      } else {
        AppendJsonString(&out, m.functions[j].ToString());
      }
      out += "}";
    }
    out += StrCat("], \"size\": ", m.bytes.size(), ", \"sha256\": \"", Hex(m.sha256),
                  "\", \"sources\": {");
    bool first = true;
    for (const auto& kv : m.sources) {
      if (!first) out += ", ";
      first = false;
      AppendJsonString(&out, kv.first);
      out += ": ";
      AppendJsonString(&out, kv.second);
    }
    out += "}}";
  }
  return out + "]}";
}

namespace {

Artifact ParseArg(const Args& a, int32_t i) {
  std::string_view bytes = a.Bytes(i);
  return ParseArtifact(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

MODRT_STATIC_INIT([] {
  RegisterGlobal("artifact.save", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "artifact.save");
    r->SetBytes(SaveArtifact(static_cast<ModuleObj*>(a.Obj(0, kModrtObjModule, "module"))));
  });
  RegisterGlobal("artifact.load", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "artifact.load");
    r->SetObject(LoadArtifact(ParseArg(a, 0)));
  });
  // "artifact.manifest" (with the signature) is in artifact_trust.cc.
  RegisterGlobal("artifact.sha256", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "artifact.sha256");
    r->SetStr(Hex(Sha256(a.Bytes(0))));
  });
});

}  // namespace
}  // namespace modrt
