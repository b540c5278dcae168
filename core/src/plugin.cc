// The core's side of the plugin ABI (plugin_api.h, docs/C_ABI.md): the
// function table every plugin gets, and the plugin modules (a plugin's module
// vtable behind the core's module object). A plugin's device table is held
// as it is (device_api.cc). plugin_loader.cc loads the plugins.
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "internal.h"
#include "modrt/abi/c_api.h"
#include "modrt/abi/plugin_api.h"
#include "modrt/core/backend.h"
#include "modrt/core/device.h"
#include "modrt/core/function.h"
#include "modrt/core/object.h"
#include "stream.h"

namespace modrt {

void ThrowLastError() {
  // Typed (a plugin of ABI 1.1, or the core), else the ABI 1.0 "Kind: message".
  std::string message = ModrtGetLastError();
  if (const char* kind = common::ErrorKindOfCode(LastErrorCode())) {
    throw Error(kind, LastErrorMessage());
  }
  std::string kind, text;
  if (common::SplitErrorKind(message, &kind, &text)) throw Error(kind, text);
  throw Error("RuntimeError", message.empty() ? "unknown error" : message);
}

namespace {

void Require(const void* fn, const char* what, const char* field) {
  if (fn == nullptr) Fail("ValueError", what, " has no ", field, " function");
}

Object* AsObject(ModrtObjectHandle h, int32_t type_index, const char* what) {
  return ObjectAs<Object>(static_cast<Object*>(h), type_index, what);
}

PayloadObj* AsPayload(ModrtObjectHandle h) {
  return static_cast<PayloadObj*>(AsObject(h, kModrtObjPayload, "payload"));
}

Ref<FunctionObj> TakeFunction(ModrtObjectHandle out, const char* what) {
  Ref<Object> obj = Ref<Object>::Adopt(static_cast<Object*>(out));
  if (!obj) return nullptr;
  if (obj->type_index() != kModrtObjFunction) Fail("TypeError", what, " returned a non-function");
  return Ref<FunctionObj>(static_cast<FunctionObj*>(obj.get()));
}

std::string TakeString(ModrtObjectHandle out, const char* what) {
  Ref<Object> obj = Ref<Object>::Adopt(static_cast<Object*>(out));
  if (!obj || (obj->type_index() != kModrtObjString && obj->type_index() != kModrtObjBytes)) {
    Fail("TypeError", what, " returned no string");
  }
  return static_cast<BytesObj*>(obj.get())->data();
}

// The plugin side of a module: its vtable (as given, to recognise it, and
// as copied) and `self`, destroyed with the module.
class PluginPart {
 public:
  PluginPart(const ModrtModuleVTable* key, const ModrtModuleVTable& table, void* self)
      : key_(key), t_(table), self_(self) {}
  PluginPart(const PluginPart&) = delete;
  PluginPart& operator=(const PluginPart&) = delete;
  virtual ~PluginPart() {
    // In a child forked after devices were opened, the plugin's driver objects
    // are the parent's: left alone (they leak, in the child only).
    if (InForkedChild()) return;
    // A backend may wait in its driver for the device's queued work before
    // it destroys a module's pipelines (Vulkan drains the device). After a
    // wait timed out on a launch still pending, that wait may never end, and
    // a destructor cannot be interrupted: the plugin's destroy then runs on
    // a thread of its own, and dropping the module returns at once.
    if (AnyDeviceMayBeStuck()) {
      std::thread([destroy = t_.destroy, self = self_] { destroy(self); }).detach();
      return;
    }
    t_.destroy(self_);
  }

  void* SelfIf(const ModrtModuleVTable* key) const { return key == key_ ? self_ : nullptr; }

 protected:
  Ref<FunctionObj> PluginFunction(const std::string& name) {
    ModrtObjectHandle out = nullptr;
    CheckTableCall(t_.get_function(self_, name.c_str(), &out));
    return TakeFunction(out, "the plugin module's get_function");
  }
  const ModrtModuleVTable& table() const { return t_; }
  void* self() const { return self_; }

 private:
  const ModrtModuleVTable* key_;
  const ModrtModuleVTable t_;
  void* self_;
};

// A launch whose arguments were refused on a machine without the backend's
// device: the missing device, and why, is the error to report (no argument
// could have been right).
void FailWithoutDevice(const FunctionInfo& info, DLDeviceType device_type) {
  DeviceAPI* api = GetDeviceAPI(device_type);
  if (api->DeviceCount() == 0) {
    Fail("ValueError", "cannot launch ", info.name, ": ", DeviceKindName(device_type),
         "(0) does not exist: ", api->UnavailableReason());
  }
}

class PluginPayloadModule final : public PayloadModule, public PluginPart {
 public:
  PluginPayloadModule(std::string kind, Ref<PayloadObj> payload, const ModrtModuleVTable* key,
                      const ModrtModuleVTable& table, void* self)
      : PayloadModule(std::move(kind), std::move(payload)), PluginPart(key, table, self) {}
  // Launches go through the core's streams (stream.h). With the vtable's
  // launch (ABI 1.1) they go down once: the core packs the arguments and
  // calls it; otherwise through the plugin's function, which packs them
  // with a call back into the core (kernel_args_pack).
  Ref<FunctionObj> GetFunction(const std::string& name) override {
    Ref<FunctionObj> launch = PluginFunction(name);
    const BackendInfo* backend = FindBackend(kind());
    auto it = payload().fmap.find(name);
    if (!launch || backend == nullptr || it == payload().fmap.end()) return launch;
    const auto device_type = static_cast<DLDeviceType>(backend->device_type);
    if (table().launch != nullptr) {
      launch = PackedLaunch(&it->second, std::distance(payload().fmap.begin(), it), device_type);
    }
    return StreamedLaunch(std::move(launch), &it->second, device_type,
                          Ref<Object>(static_cast<ModuleObj*>(this)));
  }

 private:
  // Packs a call's arguments (on the stack for up to kInlineArgs of them)
  // and hands them to the plugin's launch. StreamedLaunch keeps this module,
  // so `info` and the plugin's `self`, alive.
  Ref<FunctionObj> PackedLaunch(const FunctionInfo* info, int64_t index, DLDeviceType device_type) {
    return MakeObject<FunctionObj>(
        RawBody([info, index, device_type, launch = table().launch, self = self()](
                    const ModrtValue* values, int32_t num_values, ModrtValue*) {
          constexpr size_t kInlineArgs = 8;
          const size_t n = info->args.size();
          uint64_t inline_slots[kInlineArgs];
          void* inline_ptrs[kInlineArgs];
          size_t inline_sizes[kInlineArgs];
          const DLTensor* inline_buffers[kInlineArgs];
          std::vector<uint64_t> slots;
          std::vector<void*> ptrs;
          std::vector<size_t> sizes;
          std::vector<const DLTensor*> buffers;
          ModrtKernelArgs k{};
          k.struct_size = sizeof(k);
          k.num_args = static_cast<int64_t>(n);
          if (n <= kInlineArgs) {
            k.slots = inline_slots;
            k.ptrs = inline_ptrs;
            k.sizes = inline_sizes;
            k.buffers = inline_buffers;
          } else {
            slots.resize(n);
            ptrs.resize(n);
            sizes.resize(n);
            buffers.resize(n);
            k.slots = slots.data();
            k.ptrs = ptrs.data();
            k.sizes = sizes.data();
            k.buffers = buffers.data();
          }
          try {
            PackKernelArgs(*info, Args(values, num_values), device_type, &k);
          } catch (const std::exception&) {
            FailWithoutDevice(*info, device_type);
            throw;
          }
          CheckTableCall(launch(self, index, &k));
        }));
  }
};

class PluginModule final : public ModuleObj, public PluginPart {
 public:
  PluginModule(std::string kind, const ModrtModuleVTable* key, const ModrtModuleVTable& table,
               void* self)
      : PluginPart(key, table, self), kind_(std::move(kind)) {}
  std::string kind() const override { return kind_; }
  Ref<FunctionObj> GetFunction(const std::string& name) override { return PluginFunction(name); }
  std::string SaveToBytes() const override {
    ModrtObjectHandle out = nullptr;
    CheckTableCall(table().save_to_bytes(self(), &out));
    return TakeString(out, "the plugin module's save_to_bytes");
  }
  std::vector<std::string> FunctionNames() const override {
    ModrtObjectHandle out = nullptr;
    CheckTableCall(table().function_names(self(), &out));
    std::string joined = TakeString(out, "the plugin module's function_names");
    std::vector<std::string> names;
    size_t start = 0;
    while (start < joined.size()) {
      size_t end = joined.find('\n', start);
      if (end == std::string::npos) end = joined.size();
      if (end > start) names.push_back(joined.substr(start, end - start));
      start = end + 1;
    }
    return names;
  }

 private:
  std::string kind_;
};

// The table's functions. Each returns 0, or -1 with the last error set.

int CoreRegisterModuleFactory(const char* name, ModrtModuleCreateFunc create, void* ctx) {
  return GuardCall([&] {
    const std::string backend_name = name ? name : "";
    const BackendInfo& backend = GetBackend(backend_name);
    if (create == nullptr) Fail("ValueError", "null module factory for backend ", backend.name);
    RegisterRuntimeModule(backend, [&backend, create, ctx](Ref<PayloadObj> payload) {
      ModrtObjectHandle out = nullptr;
      CheckTableCall(create(ctx, payload.get(), &out));
      Ref<Object> module = Ref<Object>::Adopt(static_cast<Object*>(out));
      if (!module || module->type_index() != kModrtObjModule ||
          static_cast<ModuleObj*>(module.get())->kind() != backend.name) {
        Fail("RuntimeError", "the ", backend.name, " module factory returned no ", backend.name,
             " module");
      }
      return Ref<ModuleObj>(static_cast<ModuleObj*>(module.get()));
    });
  });
}

int CoreRegisterDeviceApi(const char* name, const ModrtDeviceApi* api) {
  return GuardCall([&] {
    const BackendInfo& backend = GetBackend(name ? name : "");
    RegisterDeviceAPI(backend.name, CopyTable(api, MODRT_DEVICE_API_MIN_SIZE, "device API table"));
  });
}

int CoreModuleCreate(const ModrtModuleVTable* vtable, void* self, const char* kind,
                     ModrtObjectHandle payload, ModrtObjectHandle* out) {
  return GuardCall([&] {
    if (vtable == nullptr || vtable->struct_size < MODRT_MODULE_VTABLE_MIN_SIZE ||
        vtable->destroy == nullptr) {
      Fail("ValueError", "module_create needs a module vtable of plugin ABI 1.0 with destroy");
    }
    ModrtModuleVTable table = CopyTable(vtable, MODRT_MODULE_VTABLE_MIN_SIZE, "module vtable");
    std::unique_ptr<void, void (*)(void*)> owned(self, table.destroy);  // until a module owns it
    Require(reinterpret_cast<const void*>(table.get_function), "the module vtable", "get_function");
    if (kind == nullptr || *kind == '\0') Fail("ValueError", "module_create needs a module kind");
    Ref<ModuleObj> module;
    if (payload != nullptr) {
      Ref<PayloadObj> p(AsPayload(payload));
      module = MakeObject<PluginPayloadModule>(kind, std::move(p), vtable, table, owned.release());
    } else {
      Require(reinterpret_cast<const void*>(table.save_to_bytes), "a module vtable without payload",
              "save_to_bytes");
      Require(reinterpret_cast<const void*>(table.function_names),
              "a module vtable without payload", "function_names");
      module = MakeObject<PluginModule>(kind, vtable, table, owned.release());
    }
    *out = module.release();
  });
}

int CoreModuleGetSelf(ModrtObjectHandle module, const ModrtModuleVTable* vtable, void** self) {
  return GuardCall([&] {
    auto* m = static_cast<ModuleObj*>(AsObject(module, kModrtObjModule, "module"));
    const auto* part = dynamic_cast<const PluginPart*>(m);
    *self = part == nullptr ? nullptr : part->SelfIf(vtable);
  });
}

int CorePayloadView(ModrtObjectHandle payload, ModrtPayloadView* out) {
  return GuardCall([&] {
    const PayloadObj* p = AsPayload(payload);
    if (out == nullptr) Fail("ValueError", "null payload view");
    ModrtPayloadView view{};
    view.struct_size = out->struct_size;
    view.shape = static_cast<int32_t>(p->shape);
    view.fmt = p->fmt.data();
    view.fmt_size = p->fmt.size();
    view.code = p->code.data();
    view.code_size = p->code.size();
    view.num_functions = static_cast<int64_t>(p->fmap.size());
    view.num_shaders = static_cast<int64_t>(p->smap.size());
    std::memcpy(out, &view, std::min(out->struct_size, sizeof(view)));
  });
}

template <typename Map>
typename Map::const_iterator Nth(const Map& map, int64_t index, const char* what) {
  if (index < 0 || index >= static_cast<int64_t>(map.size())) {
    Fail("IndexError", what, " index ", index, " out of range (", map.size(), ")");
  }
  return std::next(map.begin(), index);
}

int CorePayloadFunction(ModrtObjectHandle payload, int64_t index, ModrtFunctionView* out) {
  return GuardCall([&] {
    const PayloadObj* p = AsPayload(payload);
    if (out == nullptr) Fail("ValueError", "null function view");
    const FunctionInfo& info = Nth(p->fmap, index, "function")->second;
    ModrtFunctionView view{};
    view.struct_size = out->struct_size;
    view.info = &info;
    view.name = info.name.data();
    view.name_size = info.name.size();
    view.num_args = static_cast<int64_t>(info.args.size());
    view.num_launch_tags = static_cast<int64_t>(info.launch_tags.size());
    std::memcpy(out, &view, std::min(out->struct_size, sizeof(view)));
  });
}

const FunctionInfo& AsFunctionInfo(const void* info) {
  if (info == nullptr) Fail("ValueError", "null function info");
  return *static_cast<const FunctionInfo*>(info);
}

int CoreFunctionArg(const void* info, int64_t index, ModrtArgInfo* out) {
  return GuardCall([&] {
    const FunctionInfo& f = AsFunctionInfo(info);
    if (index < 0 || index >= static_cast<int64_t>(f.args.size())) {
      Fail("IndexError", f.name, ": argument index ", index, " out of range");
    }
    out->dtype = f.args[index].dtype;
    out->is_buffer = f.args[index].is_buffer ? 1 : 0;
  });
}

int CoreFunctionLaunchTag(const void* info, int64_t index, const char** out) {
  return GuardCall([&] {
    const FunctionInfo& f = AsFunctionInfo(info);
    if (index < 0 || index >= static_cast<int64_t>(f.launch_tags.size())) {
      Fail("IndexError", f.name, ": launch tag index ", index, " out of range");
    }
    *out = f.launch_tags[index].c_str();
  });
}

int CorePayloadShader(ModrtObjectHandle payload, int64_t index, const char** name,
                      size_t* name_size, const char** data, size_t* size) {
  return GuardCall([&] {
    auto it = Nth(AsPayload(payload)->smap, index, "shader");
    *name = it->first.data();
    *name_size = it->first.size();
    *data = it->second.data();
    *size = it->second.size();
  });
}

int CoreKernelArgsPack(const void* info, const ModrtValue* args, int32_t num_args,
                       int32_t device_type, ModrtKernelArgs* out) {
  return GuardCall([&] {
    if (out == nullptr || out->struct_size < MODRT_KERNEL_ARGS_1_0_SIZE) {
      Fail("ValueError", "kernel_args_pack needs a ModrtKernelArgs of plugin ABI 1.0");
    }
    PackKernelArgs(AsFunctionInfo(info), Args(args, num_args),
                   static_cast<DLDeviceType>(device_type), out);
  });
}

int CoreDTypeToString(DLDataType dtype, ModrtObjectHandle* out) {
  return GuardCall([&] { *out = MakeObject<BytesObj>(DTypeToString(dtype), true).release(); });
}

const char* CoreDeviceKindName(int32_t device_type) {
  return DeviceKindName(static_cast<DLDeviceType>(device_type));
}

int CoreCurrentStream(int32_t device_type, int32_t device_id, void** out) {
  return GuardCall([&] {
    *out = CurrentNativeStream(DLDevice{static_cast<DLDeviceType>(device_type), device_id});
  });
}

// The load-time configuration of the plugin registering on this thread now
// (LoadPlugin sets it around register_plugin); null at any other time.
thread_local const std::map<std::string, std::string>* registering_options = nullptr;

int CoreLoadOption(const char* key, ModrtObjectHandle* out) {
  return GuardCall([&] {
    *out = nullptr;
    if (registering_options == nullptr) {
      Fail("RuntimeError",
           "load_option is answered only while a plugin registers (register_plugin)");
    }
    auto it = registering_options->find(key ? key : "");
    if (it != registering_options->end()) *out = MakeObject<BytesObj>(it->second, true).release();
  });
}

// A plugin's registry functions (program checks, builds, backend extras) may
// block, and none is on a launch's path: each runs with the caller's lock
// (the GIL) let go. Its launching functions (get_function) are not these.
int CoreRegisterGlobal(const char* name, ModrtObjectHandle func, int allow_override) {
  return GuardCall([&] {
    if (func == nullptr) Fail("ValueError", "null function for global '", name ? name : "", "'");
    Ref<FunctionObj> inner(
        ObjectAs<FunctionObj>(static_cast<Object*>(func), kModrtObjFunction, "function"));
    auto waiting = MakeObject<FunctionObj>(
        RawBody([inner](const ModrtValue* args, int32_t num_args, ModrtValue* ret) {
          WaitRegion region;
          inner->Call(args, num_args, ret);
        }));
    RegisterGlobalObject(name ? name : "", std::move(waiting), allow_override != 0);
  });
}
}  // namespace

RegisteringOptionsScope::RegisteringOptionsScope(
    const std::map<std::string, std::string>* options) {
  registering_options = options;
}
RegisteringOptionsScope::~RegisteringOptionsScope() { registering_options = nullptr; }

const ModrtCoreApi& CoreApi() {
  static const ModrtCoreApi api = {
      sizeof(ModrtCoreApi),
      MODRT_PLUGIN_ABI_MAJOR,
      MODRT_PLUGIN_ABI_MINOR,
      &ModrtSetLastError,
      &ModrtGetLastError,
      &ModrtObjectRetain,
      &ModrtObjectRelease,
      &ModrtObjectTypeIndex,
      &ModrtBytesCreate,
      &ModrtBytesGet,
      &ModrtFunctionCreate,
      &ModrtFunctionCall,
      &CoreRegisterGlobal,
      &ModrtGetGlobal,
      &ModrtTensorGetDLTensor,
      &CoreDeviceKindName,
      &CoreDTypeToString,
      &ModrtRegisterBackend,
      &CoreRegisterModuleFactory,
      &CoreRegisterDeviceApi,
      &CoreModuleCreate,
      &CoreModuleGetSelf,
      &CorePayloadView,
      &CorePayloadFunction,
      &CoreFunctionArg,
      &CoreFunctionLaunchTag,
      &CorePayloadShader,
      &CoreKernelArgsPack,
      &SetTypedError,
      &LastErrorCode,
      &LastErrorMessage,
      &CoreCurrentStream,
      &CoreLoadOption,
  };
  return api;
}

}  // namespace modrt
