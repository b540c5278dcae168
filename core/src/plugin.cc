// The core's side of the plugin ABI (plugin_api.h, docs/C_ABI.md): the
// function table every plugin gets, the adapters that turn a plugin's C
// tables into the core's device APIs and modules, and the loader (dlopen,
// table and version checks, registration). Every failure is an error naming
// the file and the reason; nothing here may crash on a bad file or table.
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "elf_check.h"
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

// A plugin's call failed: rethrow what it reported.
void CheckPluginCall(int status) {
  if (status != 0) ThrowLastError();
}

// Copies a plugin's table into a zeroed one of this core's layout: fields
// past the plugin's struct_size (an older minor) stay null, fields past ours
// (a newer minor) are not read.
template <typename Table>
Table CopyTable(const Table* given, size_t min_size, const char* what) {
  if (given == nullptr) Fail("ValueError", "null ", what);
  if (given->struct_size < min_size) {
    Fail("ValueError", what, " is ", given->struct_size, " bytes, smaller than plugin ABI ",
         MODRT_PLUGIN_ABI_MAJOR, ".0's ", min_size);
  }
  Table table{};
  std::memcpy(&table, given, std::min(given->struct_size, sizeof(Table)));
  table.struct_size = sizeof(Table);
  return table;
}

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

// A plugin's device API, as the core's DeviceAPI.
class PluginDeviceAPI final : public DeviceAPI {
 public:
  explicit PluginDeviceAPI(const ModrtDeviceApi& table) : t_(table) {
    native_.self = t_.self;
    native_.streams = Streams(t_);
    native_.graphs = native_.streams ? Graphs(t_) : nullptr;
  }
  const NativeQueues* native() const { return native_.streams ? &native_ : nullptr; }
  int DeviceCount() override {
    int32_t n = 0;
    CheckPluginCall(t_.device_count(t_.self, &n));
    return n;
  }
  std::string UnavailableReason() override {
    ModrtObjectHandle out = nullptr;
    CheckPluginCall(t_.unavailable_reason(t_.self, &out));
    return TakeString(out, "unavailable_reason");
  }
  void GetAttr(int device_id, std::string_view name, Ret* ret) override {
    ModrtValue value{};
    value.type_code = kModrtNone;
    CheckPluginCall(t_.get_attr(t_.self, device_id, std::string(name).c_str(), &value));
    ret->Adopt(value);
  }
  void* Alloc(int device_id, size_t nbytes) override {
    void* out = nullptr;
    CheckPluginCall(t_.alloc(t_.self, device_id, nbytes, &out));
    return out;
  }
  void Free(int device_id, void* ptr) override {
    CheckPluginCall(t_.free(t_.self, device_id, ptr));
  }
  void CopyFromHost(const void* src, DLTensor* tensor, size_t nbytes) override {
    CheckPluginCall(t_.copy_from_host(t_.self, src, tensor, nbytes));
  }
  void CopyToHost(const DLTensor* tensor, void* dst, size_t nbytes) override {
    CheckPluginCall(t_.copy_to_host(t_.self, tensor, dst, nbytes));
  }
  void Sync(int device_id) override { CheckPluginCall(t_.sync(t_.self, device_id)); }
  bool CopyRange(const void* src, DLTensor* dst, size_t offset, size_t nbytes) override {
    if (ranged_ == nullptr) return false;
    CheckPluginCall(ranged_->copy_from_host_range(t_.self, src, dst, offset, nbytes));
    return true;
  }
  bool CopyRange(const DLTensor* src, size_t offset, void* dst, size_t nbytes) override {
    if (ranged_ == nullptr) return false;
    CheckPluginCall(ranged_->copy_to_host_range(t_.self, src, offset, dst, nbytes));
    return true;
  }

 private:
  // The optional tables of ABI 1.1 that this core reads.
  static const ModrtRangedCopyExtension* RangedCopy(const ModrtDeviceApi& t) {
    const ModrtExtension* e = ModrtFindExtension(t.extensions, kModrtExtensionRangedCopy);
    if (e == nullptr || e->struct_size < sizeof(ModrtRangedCopyExtension)) return nullptr;
    const auto* r = reinterpret_cast<const ModrtRangedCopyExtension*>(e);
    return r->copy_from_host_range != nullptr && r->copy_to_host_range != nullptr ? r : nullptr;
  }

  // Used only when complete: every function of the table set.
  static const ModrtStreamExtension* Streams(const ModrtDeviceApi& t) {
    const ModrtExtension* e = ModrtFindExtension(t.extensions, kModrtExtensionStreams);
    if (e == nullptr || e->struct_size < sizeof(ModrtStreamExtension)) return nullptr;
    const auto* x = reinterpret_cast<const ModrtStreamExtension*>(e);
    const void* fns[] = {reinterpret_cast<const void*>(x->stream_create),
                         reinterpret_cast<const void*>(x->stream_destroy),
                         reinterpret_cast<const void*>(x->stream_synchronize),
                         reinterpret_cast<const void*>(x->event_record),
                         reinterpret_cast<const void*>(x->event_query),
                         reinterpret_cast<const void*>(x->event_synchronize),
                         reinterpret_cast<const void*>(x->event_elapsed_ms),
                         reinterpret_cast<const void*>(x->event_destroy),
                         reinterpret_cast<const void*>(x->stream_wait_event),
                         reinterpret_cast<const void*>(x->copy_from_host_async),
                         reinterpret_cast<const void*>(x->copy_to_host_async),
                         reinterpret_cast<const void*>(x->copy_device_to_device)};
    for (const void* f : fns) {
      if (f == nullptr) return nullptr;
    }
    return x;
  }
  static const ModrtGraphExtension* Graphs(const ModrtDeviceApi& t) {
    const ModrtExtension* e = ModrtFindExtension(t.extensions, kModrtExtensionGraphs);
    if (e == nullptr || e->struct_size < sizeof(ModrtGraphExtension)) return nullptr;
    const auto* x = reinterpret_cast<const ModrtGraphExtension*>(e);
    return x->graph_begin && x->graph_end && x->graph_launch && x->graph_destroy ? x : nullptr;
  }

  const ModrtDeviceApi t_;
  const ModrtRangedCopyExtension* ranged_ = RangedCopy(t_);
  NativeQueues native_{};
};

}  // namespace

const NativeQueues* NativeQueuesOf(DeviceAPI* api) {
  auto* plugin = dynamic_cast<PluginDeviceAPI*>(api);
  return plugin ? plugin->native() : nullptr;
}

namespace {

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
    if (!InForkedChild()) t_.destroy(self_);
  }

  void* SelfIf(const ModrtModuleVTable* key) const { return key == key_ ? self_ : nullptr; }

 protected:
  Ref<FunctionObj> PluginFunction(const std::string& name) {
    ModrtObjectHandle out = nullptr;
    CheckPluginCall(t_.get_function(self_, name.c_str(), &out));
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
          CheckPluginCall(launch(self, index, &k));
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
    CheckPluginCall(table().save_to_bytes(self(), &out));
    return TakeString(out, "the plugin module's save_to_bytes");
  }
  std::vector<std::string> FunctionNames() const override {
    ModrtObjectHandle out = nullptr;
    CheckPluginCall(table().function_names(self(), &out));
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
      CheckPluginCall(create(ctx, payload.get(), &out));
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
    const std::string backend_name = name ? name : "";
    const BackendInfo& backend = GetBackend(backend_name);
    ModrtDeviceApi table = CopyTable(api, MODRT_DEVICE_API_MIN_SIZE, "device API table");
    const char* what = "the device API table";
    Require(reinterpret_cast<const void*>(table.device_count), what, "device_count");
    Require(reinterpret_cast<const void*>(table.unavailable_reason), what, "unavailable_reason");
    Require(reinterpret_cast<const void*>(table.get_attr), what, "get_attr");
    Require(reinterpret_cast<const void*>(table.alloc), what, "alloc");
    Require(reinterpret_cast<const void*>(table.free), what, "free");
    Require(reinterpret_cast<const void*>(table.copy_from_host), what, "copy_from_host");
    Require(reinterpret_cast<const void*>(table.copy_to_host), what, "copy_to_host");
    Require(reinterpret_cast<const void*>(table.sync), what, "sync");
    // Device APIs live for the process, like the plugin.
    RegisterDeviceAPI(backend.name, std::make_unique<PluginDeviceAPI>(table).release());
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
    if (out == nullptr || out->struct_size < sizeof(ModrtKernelArgs)) {
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
  };
  return api;
}

std::string Version(int32_t major, int32_t minor) { return StrCat(major, ".", minor); }

// Checks a plugin's table; the reason it is refused, or "".
std::string RefusalOf(const ModrtPluginApi* api) {
  if (api == nullptr) return "its modrt_plugin_init returned no plugin table";
  if (api->struct_size < MODRT_PLUGIN_API_MIN_SIZE) {
    return StrCat("its plugin table is ", api->struct_size, " bytes, smaller than plugin ABI ",
                  MODRT_PLUGIN_ABI_MAJOR, ".0's ", MODRT_PLUGIN_API_MIN_SIZE);
  }
  if (api->abi_major != MODRT_PLUGIN_ABI_MAJOR) {
    return StrCat("it was built for modrt plugin ABI ", Version(api->abi_major, api->abi_minor),
                  ", but this libmodrt_runtime.so implements plugin ABI ",
                  Version(MODRT_PLUGIN_ABI_MAJOR, MODRT_PLUGIN_ABI_MINOR),
                  " (the major versions must match); rebuild the backend against this core");
  }
  if (api->register_plugin == nullptr) return "its plugin table has no register_plugin function";
  return "";
}

}  // namespace

// "<file name> <problem> (backend library in <directory>)": the name first,
// the one thing to act on, kept when a table shortens the line.
std::string PluginProblem(const std::string& path, const std::string& problem) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return StrCat(path, " ", problem, " (backend library)");
  return StrCat(path.substr(slash + 1), " ", problem, " (backend library in ",
                slash == 0 ? "/" : path.substr(0, slash), ")");
}

void LoadPlugin(const std::string& path) {
  static std::mutex mu;
  // Files already loaded, by (device, inode): the same plugin reached through
  // another path (a symlink, a hard link) is not initialised twice.
  static std::set<std::pair<dev_t, ino_t>> loaded;
  std::lock_guard lock(mu);

  struct stat st{};
  if (path.empty() || stat(path.c_str(), &st) != 0) {
    Fail("FileNotFoundError", PluginProblem(path, "does not exist"));
  }
  if (loaded.count({st.st_dev, st.st_ino})) return;
  if (!S_ISREG(st.st_mode)) Fail("ValueError", PluginProblem(path, "is not a regular file"));
  if (st.st_size == 0) Fail("ValueError", PluginProblem(path, "is empty"));
  std::string damage = ElfFileProblem(path);
  if (!damage.empty()) Fail("ImportError", PluginProblem(path, "refused before dlopen: " + damage));

  // RTLD_LOCAL: plugins reach the core through its table, not symbols.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    Fail("ImportError",
         PluginProblem(path, StrCat("cannot be loaded: ", why ? why : "unknown dlopen error")));
  }
  // From here on the library stays mapped: if it registered anything, those
  // functions point into it.
  auto init = reinterpret_cast<ModrtPluginInitFunc>(dlsym(handle, MODRT_PLUGIN_INIT_SYMBOL));
  if (init == nullptr) {
    Fail("ImportError", PluginProblem(path, StrCat("is not a modrt plugin: it does not export ",
                                                   MODRT_PLUGIN_INIT_SYMBOL)));
  }
  const ModrtPluginApi* api = init(&CoreApi());
  std::string refusal = RefusalOf(api);
  if (!refusal.empty()) Fail("ImportError", PluginProblem(path, "refused: " + refusal));
  ModrtPluginApi table = CopyTable(api, MODRT_PLUGIN_API_MIN_SIZE, "plugin table");
  if (table.register_plugin() != 0) {
    Fail("ImportError", PluginProblem(path, StrCat("failed to initialize: ", ModrtGetLastError())));
  }
  loaded.insert({st.st_dev, st.st_ino});
}

namespace {

// The same check for the loads Python makes itself (libmodrt_compiler.so through ctypes).
MODRT_STATIC_INIT([] {
  RegisterGlobal("elf.file_problem", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "elf.file_problem");
    r->SetStr(ElfFileProblem(std::string(a.Str(0))));
  });
  // elf.shared_object_problem(image, display_name, elf_class, machine, machine_name): the
  // one check of a device shared object, for runtimes (Hexagon) and their codegen.
  RegisterGlobal("elf.shared_object_problem", [](const Args& a, Ret* r) {
    a.ExpectCount(5, "elf.shared_object_problem");
    r->SetStr(ElfSharedObjectProblem(a.Bytes(0), std::string(a.Str(1)), static_cast<int>(a.Int(2)),
                                     static_cast<int>(a.Int(3)), std::string(a.Str(4))));
  });
});

}  // namespace
}  // namespace modrt
