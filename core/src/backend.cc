// The in-tree backend table, the payload module base, runtime module
// registration, and payload construction from Python.
#include "modrt/core/backend.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

#include "internal.h"
#include "modrt/core/payload.h"

namespace modrt {

namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<BackendInfo>> backends;  // never erased: entries are referenced
};

Registry& BackendRegistry() {
  static Registry* registry = std::make_unique<Registry>().release();  // plugins outlive statics
  return *registry;
}

std::string Describe(const BackendInfo& b) {
  std::string fmts;
  for (const std::string& f : b.fmts) fmts += (fmts.empty() ? "" : ",") + f;
  return StrCat(b.name, " (", b.display_name, ", device type ", int(b.device_type), ", ",
                b.shape == PayloadShape::kSingleBinary ? "single-binary" : "multi-shader",
                ", formats ", fmts.empty() ? "none" : fmts, ")");
}

bool IsValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

BackendInfo BackendInfoFromIdentity(const ModrtBackendIdentity& given) {
  if (given.struct_size < MODRT_BACKEND_IDENTITY_MIN_SIZE) {
    Fail("ValueError", "a backend identity of ", given.struct_size,
         " bytes is smaller than plugin ABI ", MODRT_PLUGIN_ABI_MAJOR, ".0's ",
         MODRT_BACKEND_IDENTITY_MIN_SIZE);
  }
  ModrtBackendIdentity id{};
  std::memcpy(&id, &given, std::min(given.struct_size, sizeof(id)));
  if (id.name == nullptr || id.display_name == nullptr || id.formats == nullptr) {
    Fail("ValueError", "a backend identity needs a name, a display name and formats");
  }
  if (id.payload_shape != kModrtSingleBinary && id.payload_shape != kModrtMultiShader) {
    Fail("ValueError", "backend ", id.name, ": unknown payload shape ", id.payload_shape);
  }
  BackendInfo info;
  info.name = id.name;
  info.display_name = id.display_name;
  info.device_type = static_cast<DLDeviceType>(id.device_type);
  info.shape = static_cast<PayloadShape>(id.payload_shape);
  info.addressable_buffers = MODRT_STRUCT_HAS(ModrtBackendIdentity, &given, addressable_buffers)
                                 ? id.addressable_buffers != 0
                                 // An identity of ABI 1.2 or older: the rule the core applied then.
                                 : info.device_type == kDLCUDA || info.device_type == kDLROCM;
  std::string_view formats = id.formats;
  while (!formats.empty()) {
    size_t comma = formats.find(',');
    std::string_view f = formats.substr(0, comma);
    if (!f.empty()) info.fmts.emplace_back(f);
    if (comma == std::string_view::npos) break;
    formats.remove_prefix(comma + 1);
  }
  return info;
}

const BackendInfo& RegisterBackend(const BackendInfo& info) {
  if (!IsValidName(info.name)) {
    Fail("ValueError", "backend name '", info.name, "' is not a name (letters, digits, _)");
  }
  if (info.name == "cpu" || info.name == "so") {
    Fail("ValueError", "backend name '", info.name, "' is the core's own");
  }
  if (info.device_type <= 0)
    Fail("ValueError", "backend ", info.name, ": bad DLPack device type ", int(info.device_type));
  Registry& r = BackendRegistry();
  std::lock_guard lock(r.mu);
  for (const auto& b : r.backends) {
    if (b->name != info.name) continue;
    if (b->display_name == info.display_name && b->device_type == info.device_type &&
        b->shape == info.shape && b->fmts == info.fmts &&
        b->addressable_buffers == info.addressable_buffers) {
      return *b;
    }
    Fail("ValueError", "backend ", Describe(info), " conflicts with the registered ", Describe(*b));
  }
  r.backends.push_back(std::make_unique<BackendInfo>(info));
  return *r.backends.back();
}

const BackendInfo* FindBackend(const std::string& name) {
  Registry& r = BackendRegistry();
  std::lock_guard lock(r.mu);
  for (const auto& b : r.backends) {
    if (b->name == name) return b.get();
  }
  return nullptr;
}

const BackendInfo& GetBackend(const std::string& name) {
  if (const BackendInfo* b = FindBackend(name)) return *b;
  Fail("ValueError", "unknown backend '", name, "'");
}

std::vector<const BackendInfo*> Backends() {
  Registry& r = BackendRegistry();
  std::lock_guard lock(r.mu);
  std::vector<const BackendInfo*> all;
  for (const auto& b : r.backends) all.push_back(b.get());
  return all;
}

const BackendInfo* FindBackendOfDeviceType(DLDeviceType type) {
  if (type == kDLCPU) return nullptr;  // the core's own device
  Registry& r = BackendRegistry();
  std::lock_guard lock(r.mu);
  for (const auto& b : r.backends) {
    if (b->device_type == type) return b.get();
  }
  return nullptr;
}

void BackendInfo::CheckPayload(const PayloadObj& payload) const {
  if (payload.shape != shape) {
    Fail("ValueError", display_name, " modules are ",
         shape == PayloadShape::kSingleBinary ? "single-binary" : "multi-shader",
         "; got a payload of the other shape");
  }
  CheckShaderMap(payload, display_name);
  for (const std::string& f : fmts) {
    if (payload.fmt == f) return;
  }
  std::string known;
  for (const std::string& f : fmts) known += (known.empty() ? "" : ", ") + f;
  Fail("ValueError", "unknown ", display_name, " format '", payload.fmt, "' (known: ", known, ")");
}

std::vector<std::string> PayloadModule::FunctionNames() const {
  std::vector<std::string> names;
  for (const auto& kv : payload_->fmap) names.push_back(kv.first);
  return names;
}

Ref<FunctionObj> PayloadModule::LaunchingFunction(const std::string& name, Launcher launch) {
  auto it = payload_->fmap.find(name);
  if (it == payload_->fmap.end()) return nullptr;
  const FunctionInfo* info = &it->second;
  const auto index = static_cast<size_t>(std::distance(payload_->fmap.begin(), it));
  Ref<ModuleObj> keep_alive(this);
  return MakeObject<FunctionObj>([keep_alive, launch = std::move(launch), info, index](
                                     const Args& args, Ret*) { launch(*info, index, args); });
}

void RegisterRuntimeModule(const BackendInfo& backend, ModuleFactory factory) {
  RegisterGlobal("module.create." + backend.name, [&backend, factory](const Args& a, Ret* r) {
    a.ExpectCount(1, "module.create");
    Ref<PayloadObj> p(static_cast<PayloadObj*>(a.Obj(0, kModrtObjPayload, "payload")));
    backend.CheckPayload(*p);
    WaitRegion building;  // a module may compile its code as it is made
    r->SetObject(factory(std::move(p)));
  });
  RegisterGlobal("module.load_from_bytes." + backend.name, [&backend, factory](const Args& a,
                                                                               Ret* r) {
    a.ExpectCount(1, "module.load_from_bytes");
    Ref<PayloadObj> p = PayloadObj::Load(backend.shape, a.Bytes(0), backend.name + " module bytes");
    backend.CheckPayload(*p);
    WaitRegion building;
    r->SetObject(factory(std::move(p)));
  });
}

namespace {

PayloadObj* PayloadArg(const Args& a) {
  return static_cast<PayloadObj*>(a.Obj(0, kModrtObjPayload, "payload"));
}

// Payloads are built from Python field by field; the C++ struct stays the
// only definition of their layout.
MODRT_STATIC_INIT([] {
  RegisterGlobal("payload.new", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "payload.new");
    auto p = MakeObject<PayloadObj>();
    std::string_view shape = a.Str(0);
    if (shape == "single-binary") {
      p->shape = PayloadShape::kSingleBinary;
    } else if (shape == "multi-shader") {
      p->shape = PayloadShape::kMultiShader;
    } else {
      Fail("ValueError", "unknown payload shape '", shape, "' (single-binary or multi-shader)");
    }
    p->fmt = std::string(a.Str(1));
    r->SetObject(p);
  });
  RegisterGlobal("payload.add_function", [](const Args& a, Ret*) {
    a.ExpectCount(2, "payload.add_function");
    FunctionInfo info = FunctionInfo::Parse(a.Str(1));
    std::string name = info.name;
    if (!PayloadArg(a)->fmap.emplace(name, std::move(info)).second) {
      Fail("ValueError", "function '", name, "' is declared twice");
    }
  });
  RegisterGlobal("payload.set_code", [](const Args& a, Ret*) {
    a.ExpectCount(2, "payload.set_code");
    PayloadArg(a)->code = std::string(a.Bytes(1));
  });
  RegisterGlobal("payload.set_shader", [](const Args& a, Ret*) {
    a.ExpectCount(3, "payload.set_shader");
    PayloadArg(a)->smap[std::string(a.Str(1))] = std::string(a.Bytes(2));
  });
  RegisterGlobal("payload.set_source", [](const Args& a, Ret*) {
    a.ExpectCount(3, "payload.set_source");
    PayloadArg(a)->source[std::string(a.Str(1))] = std::string(a.Str(2));
  });
  RegisterGlobal("payload.save", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "payload.save");
    r->SetBytes(PayloadArg(a)->Save());
  });
  RegisterGlobal("signature.normalize", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "signature.normalize");
    r->SetStr(FunctionInfo::Parse(a.Str(0)).ToString());
  });
  // One line per registered backend: name, display name, device type, shape, formats.
  RegisterGlobal("backend.list", [](const Args& a, Ret* r) {
    a.ExpectCount(0, "backend.list");
    std::string table;
    for (const BackendInfo* backend : Backends()) {
      const BackendInfo& b = *backend;
      std::string fmts;
      for (const auto& f : b.fmts) fmts += (fmts.empty() ? "" : ",") + f;
      table += StrCat(b.name, "\t", b.display_name, "\t", int(b.device_type), "\t",
                      b.shape == PayloadShape::kSingleBinary ? "single-binary" : "multi-shader",
                      "\t", fmts, "\n");
    }
    r->SetStr(table);
  });
});

}  // namespace
}  // namespace modrt
