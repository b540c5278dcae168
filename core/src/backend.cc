// The in-tree backend table, the payload module base, runtime module
// registration, and payload construction from Python.
#include "modrt/backend.h"

#include "internal.h"
#include "modrt/payload.h"

namespace modrt {

const std::vector<BackendInfo>& InTreeBackends() {
  using S = PayloadShape;
  static const std::vector<BackendInfo> backends = {
      {"cuda", "CUDA", kDLCUDA, S::kSingleBinary, {"ptx", "cubin", "fatbin", "cuda"}},
      {"rocm", "ROCm", kDLROCM, S::kSingleBinary, {"hsaco"}},
      {"metal", "Metal", kDLMetal, S::kMultiShader, {"metal", "metallib"}},
      {"vulkan", "Vulkan", kDLVulkan, S::kMultiShader, {"spirv"}},
      {"opencl", "OpenCL", kDLOpenCL, S::kSingleBinary, {"cl", "xclbin", "awsxclbin", "aocx"}},
      {"hexagon", "Hexagon", kDLHexagon, S::kSingleBinary, {"so"}},
      {"webgpu", "WebGPU", kDLWebGPU, S::kMultiShader, {"wgsl"}},
  };
  return backends;
}

const BackendInfo* FindInTreeBackend(const std::string& name) {
  for (const BackendInfo& b : InTreeBackends()) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

const BackendInfo& InTreeBackend(const std::string& name) {
  if (const BackendInfo* b = FindInTreeBackend(name)) return *b;
  Fail("ValueError", "unknown backend '", name, "'");
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
  return MakeObject<FunctionObj>(
      [keep_alive, launch = std::move(launch), info, index](const Args& args, Ret*) {
        launch(*info, index, args);
      });
}

void RegisterRuntimeModule(const BackendInfo& backend, ModuleFactory factory) {
  RegisterGlobal("module.create." + backend.name, [&backend, factory](const Args& a, Ret* r) {
    a.ExpectCount(1, "module.create");
    Ref<PayloadObj> p(static_cast<PayloadObj*>(a.Obj(0, kModrtObjPayload, "payload")));
    backend.CheckPayload(*p);
    r->SetObject(factory(std::move(p)));
  });
  RegisterGlobal("module.load_from_bytes." + backend.name, [&backend, factory](const Args& a, Ret* r) {
    a.ExpectCount(1, "module.load_from_bytes");
    Ref<PayloadObj> p = PayloadObj::Load(backend.shape, a.Bytes(0), backend.name + " module bytes");
    backend.CheckPayload(*p);
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
  RegisterGlobal("backend.in_tree", [](const Args& a, Ret* r) {
    a.ExpectCount(0, "backend.in_tree");
    // One line per backend: name, display name, device type, shape, formats.
    std::string table;
    for (const BackendInfo& b : InTreeBackends()) {
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
