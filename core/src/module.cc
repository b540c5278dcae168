#include "modrt/core/module.h"

#include <optional>

#include "internal.h"
#include "modrt/core/backend.h"

namespace modrt {

std::string ModuleObj::InspectSource(const std::string& format) const {
  Fail("ValueError", "module of kind '", kind(), "' holds no source",
       format.empty() ? "" : " of format '" + format + "'");
}

std::vector<Ref<ModuleObj>> ModuleObj::imports() const {
  std::lock_guard lock(imports_mu_);
  return imports_;
}

void ModuleObj::Import(Ref<ModuleObj> child) {
  if (!child) Fail("ValueError", "cannot import a null module");
  if (child.get() == this) Fail("ValueError", "a module cannot import itself");
  std::lock_guard lock(imports_mu_);
  imports_.push_back(std::move(child));
}

namespace {

// A module that has `name` but cannot run it (a fallback: its runtime is not
// linked) raises; its error is kept in `deferred` while the rest of the tree
// is searched, so a real module found later wins.
Ref<FunctionObj> FindIn(ModuleObj* module, const std::string& name,
                        std::optional<Error>* deferred) {
  try {
    if (Ref<FunctionObj> f = module->GetFunction(name)) return f;
  } catch (const Error& e) {
    if (!*deferred) deferred->emplace(e);
  }
  for (const Ref<ModuleObj>& child : module->imports()) {
    if (Ref<FunctionObj> f = FindIn(child.get(), name, deferred)) return f;
  }
  return nullptr;
}

}  // namespace

Ref<FunctionObj> FindFunction(ModuleObj* module, const std::string& name) {
  std::optional<Error> deferred;
  Ref<FunctionObj> f = FindIn(module, name, &deferred);
  if (!f && deferred) throw *deferred;
  return f;
}

std::string FunctionSignature(ModuleObj* module, const std::string& name) {
  if (const auto* p = dynamic_cast<const PayloadModule*>(module)) {
    auto it = p->payload().fmap.find(name);
    if (it != p->payload().fmap.end()) return it->second.ToString();
  }
  for (const Ref<ModuleObj>& child : module->imports()) {
    std::string found = FunctionSignature(child.get(), name);
    if (!found.empty()) return found;
  }
  return "";
}

Ref<ModuleObj> LoadModuleFromBytes(const std::string& kind, std::string_view bytes) {
  Ref<FunctionObj> loader = GetGlobal("module.load_from_bytes." + kind);
  if (!loader) {
    if (const BackendInfo* b = FindBackend(kind)) {
      Fail("ValueError", "cannot load a module of kind '", kind, "': its runtime ",
           b->RuntimeLibrary(), " is not loaded in this process. Build with --//backends:", kind,
           "=on, or run where ", b->RuntimeLibrary(), " is present.");
    }
    Fail("ValueError", "cannot load a module of kind '", kind,
         "': no loader 'module.load_from_bytes.", kind, "' is registered");
  }
  auto blob = MakeObject<BytesObj>(std::string(bytes), false);
  ModrtValue arg = ObjValue(blob.get());
  OwnedValue ret;
  loader->Call(&arg, 1, ret.out());
  Ref<Object> obj = ret.TakeObject();
  if (!obj || obj->type_index() != kModrtObjModule) {
    Fail("RuntimeError", "module.load_from_bytes.", kind, " did not return a module");
  }
  return Ref<ModuleObj>(static_cast<ModuleObj*>(obj.get()));
}

namespace {

ModuleObj* ModuleArg(const Args& args, int32_t i) {
  return static_cast<ModuleObj*>(args.Obj(i, kModrtObjModule, "module"));
}

MODRT_STATIC_INIT([] {
  RegisterGlobal("module.kind", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "module.kind");
    r->SetStr(ModuleArg(a, 0)->kind());
  });
  RegisterGlobal("module.is_fallback", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "module.is_fallback");
    r->SetInt(ModuleArg(a, 0)->is_fallback());
  });
  RegisterGlobal("module.get_function", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "module.get_function");
    const std::string name(a.Str(1));
    // In a forked child a module's plugin may wait on the parent's threads.
    if (std::string forked = ForkedModuleProblem(); !forked.empty()) {
      Fail("RuntimeError", name, ": ", forked);
    }
    // A plugin may build the function's program or pipeline here.
    WaitRegion building;
    Ref<FunctionObj> f = FindFunction(ModuleArg(a, 0), name);
    r->SetObject(BoundsChecking() && f ? CheckingBounds(std::move(f), name) : std::move(f));
  });
  RegisterGlobal("module.function_signature", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "module.function_signature");
    r->SetStr(FunctionSignature(ModuleArg(a, 0), std::string(a.Str(1))));
  });
  RegisterGlobal("module.function_names", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "module.function_names");
    std::string joined;
    for (const auto& n : ModuleArg(a, 0)->FunctionNames()) joined += n + "\n";
    r->SetStr(joined);
  });
  RegisterGlobal("module.save_to_bytes", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "module.save_to_bytes");
    r->SetBytes(ModuleArg(a, 0)->SaveToBytes());
  });
  RegisterGlobal("module.inspect_source", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "module.inspect_source");
    r->SetBytes(ModuleArg(a, 0)->InspectSource(std::string(a.Str(1))));
  });
  RegisterGlobal("module.num_imports", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "module.num_imports");
    r->SetInt(static_cast<int64_t>(ModuleArg(a, 0)->imports().size()));
  });
  RegisterGlobal("module.get_import", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "module.get_import");
    auto imports = ModuleArg(a, 0)->imports();
    int64_t i = a.Int(1);
    if (i < 0 || i >= static_cast<int64_t>(imports.size())) {
      Fail("IndexError", "import index ", i, " out of range (", imports.size(), " imports)");
    }
    r->SetObject(imports[i]);
  });
  RegisterGlobal("module.import_module", [](const Args& a, Ret*) {
    a.ExpectCount(2, "module.import_module");
    ModuleArg(a, 0)->Import(Ref<ModuleObj>(ModuleArg(a, 1)));
  });
  RegisterGlobal("module.load_from_bytes", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "module.load_from_bytes");
    r->SetObject(LoadModuleFromBytes(std::string(a.Str(0)), a.Bytes(1)));
  });
});

}  // namespace
}  // namespace modrt
