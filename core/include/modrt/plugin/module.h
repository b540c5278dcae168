// A plugin's modules: the payload a module is made from, kernel arguments
// packed by the core, the Module and PayloadModule classes, and the
// registration of a backend's module factory.
#ifndef MODRT_PLUGIN_MODULE_H_
#define MODRT_PLUGIN_MODULE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "modrt/plugin/values.h"

namespace modrt {
namespace plugin MODRT_PLUGIN_HIDDEN {

struct ArgInfo {
  DLDataType dtype;
  bool is_buffer;  // a tensor of `dtype`, passed as its device pointer
};

// A function's signature, as the payload declares it.
struct FunctionInfo {
  std::string name;
  std::vector<ArgInfo> args;
  std::vector<std::string> launch_tags;
  const void* core_info = nullptr;  // the core's description, for KernelArgs::Pack

  // "vadd(float32*, float32*, int32; blockIdx.x, threadIdx.x)"
  std::string ToString() const {
    std::string s = name + "(";
    for (size_t i = 0; i < args.size(); ++i) {
      s += (i ? ", " : "") + DTypeToString(args[i].dtype) + (args[i].is_buffer ? "*" : "");
    }
    for (size_t i = 0; i < launch_tags.size(); ++i) s += (i ? ", " : "; ") + launch_tags[i];
    return s + ")";
  }
};

using FunctionMap = std::map<std::string, FunctionInfo>;

// What a module is made from: the payload the core holds, read once.
class Payload {
 public:
  static Payload FromHandle(ModrtObjectHandle handle) {
    const ModrtCoreApi& core = Core();
    Payload p;
    p.handle_ = ObjectRef::Borrow(handle);
    ModrtPayloadView view{};
    view.struct_size = sizeof(view);
    Check(core.payload_view(handle, &view));
    p.shape = static_cast<ModrtPayloadShape>(view.shape);
    p.fmt.assign(view.fmt, view.fmt_size);
    p.code.assign(view.code, view.code_size);
    for (int64_t i = 0; i < view.num_functions; ++i) {
      ModrtFunctionView f{};
      f.struct_size = sizeof(f);
      Check(core.payload_function(handle, i, &f));
      FunctionInfo info;
      info.name.assign(f.name, f.name_size);
      info.core_info = f.info;
      for (int64_t a = 0; a < f.num_args; ++a) {
        ModrtArgInfo arg{};
        Check(core.function_arg(f.info, a, &arg));
        info.args.push_back(ArgInfo{arg.dtype, arg.is_buffer != 0});
      }
      for (int64_t t = 0; t < f.num_launch_tags; ++t) {
        const char* tag = nullptr;
        Check(core.function_launch_tag(f.info, t, &tag));
        info.launch_tags.emplace_back(tag);
      }
      std::string name = info.name;
      p.fmap.emplace(std::move(name), std::move(info));
    }
    for (int64_t i = 0; i < view.num_shaders; ++i) {
      const char *name = nullptr, *data = nullptr;
      size_t name_size = 0, size = 0;
      Check(core.payload_shader(handle, i, &name, &name_size, &data, &size));
      p.smap.emplace(std::string(name, name_size), std::string(data, size));
    }
    return p;
  }

  ModrtPayloadShape shape = kModrtSingleBinary;
  std::string fmt;
  FunctionMap fmap;
  std::string code;                         // single-binary
  std::map<std::string, std::string> smap;  // multi-shader: function -> bytes

  const FunctionInfo& Function(const std::string& name) const {
    auto it = fmap.find(name);
    if (it == fmap.end()) Fail("KeyError", "no function '", name, "' in this module");
    return it->second;
  }
  ModrtObjectHandle handle() const { return handle_.get(); }

 private:
  ObjectRef handle_;
};

using common::LaunchConfig;

// `size` elements of T at `data`: the part of C++20's std::span a launch uses.
template <typename T>
class Span {
 public:
  Span(T* data, size_t size) : data_(data), size_(size) {}
  size_t size() const { return size_; }
  T* data() const { return data_; }
  T& operator[](size_t i) const { return data_[i]; }
  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }

 private:
  T* data_;
  size_t size_;
};

// Kernel arguments as the core packed them (ModrtKernelArgs), borrowed for
// one launch: a slot per argument with its value in its declared C type
// (buffers: the device pointer), ptrs[i] = &slots[i], sizes[i], buffers[i]
// (the tensor; null for scalars), and the launch configuration.
struct PackedArgs {
  Span<const uint64_t> slots;
  Span<void* const> ptrs;
  Span<const size_t> sizes;
  Span<const DLTensor* const> buffers;
  LaunchConfig launch;
  int device_id = 0;  // of every buffer argument (0 when there are none)
  // Where the launch goes, as the core packed it (ABI 1.2); from an older
  // core (where_known false) NativeStream() and Capturing() ask or assume.
  void* stream = nullptr;
  bool capturing = false;
  bool where_known = false;

  // The native queue of the launch's stream (null: the default queue). With
  // a core of ABI 1.2 or later no call back into the core.
  void* NativeStream(DLDeviceType type) const {
    if (where_known) return stream;
    const ModrtCoreApi& core = Core();
    if (!MODRT_CORE_HAS(&core, current_stream)) return nullptr;  // a core of ABI 1.0
    void* current = nullptr;
    Check(core.current_stream(type, device_id, &current));
    return current;
  }
  // Whether the launch's stream captures a graph natively (the plugin then
  // records the launch); from an older core: true, look the capture up.
  bool Capturing() const { return !where_known || capturing; }

  static PackedArgs Of(const ModrtKernelArgs& c) {
    const auto n = static_cast<size_t>(c.num_args);
    PackedArgs p{{c.slots, n}, {c.ptrs, n}, {c.sizes, n}, {c.buffers, n}, {}, c.device_id};
    for (int d = 0; d < 3; ++d) {
      p.launch.grid[d] = c.grid[d];
      p.launch.block[d] = c.block[d];
    }
    p.launch.dyn_shared_bytes = c.dyn_shared_bytes;
    if (MODRT_STRUCT_HAS(ModrtKernelArgs, &c, capturing)) {
      p.stream = c.stream;
      p.capturing = c.capturing != 0;
      p.where_known = true;
    }
    return p;
  }
};

// Kernel arguments marshalled by the core, the same way for every backend
// (common::KernelArgsBase).
struct KernelArgs : common::KernelArgsBase {
  // Checks count, kinds, dtypes, device type and that all buffers share one
  // device (TypeError / ValueError naming the function and the argument),
  // then fills the slots.
  static KernelArgs Pack(const FunctionInfo& info, const Args& args, DLDeviceType device_type) {
    KernelArgs k;
    k.Fill(info.args.size(), [&](ModrtKernelArgs* c) {
      Check(Core().kernel_args_pack(info.core_info, args.values(), args.size(), device_type, c));
    });
    k.where_known = Core().abi_minor >= 2;  // an older core leaves stream and capturing unset
    return k;
  }
  PackedArgs View() const {
    const size_t n = slots.size();
    PackedArgs p{{slots.data(), n},   {ptrs.data(), n}, {sizes.data(), n},
                 {buffers.data(), n}, launch,           device_id};
    p.stream = stream;
    p.capturing = capturing;
    p.where_known = where_known;
    return p;
  }
};

namespace internal {
struct ModuleAccess;
}  // namespace internal

// A plugin module: the core's module object owns it and asks it for
// functions. Modules made without a payload also answer SaveToBytes() and
// FunctionNames().
class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;
  // Null when this module has no such function.
  virtual ObjectRef GetFunction(const std::string& name) = 0;
  virtual std::string SaveToBytes() const { Fail("RuntimeError", "this module cannot be saved"); }
  virtual std::vector<std::string> FunctionNames() const { return {}; }
  // ABI 1.1, modules made with a payload: true when the core may launch
  // function `index` (payload order) with the arguments it packed, through
  // LaunchPackedAt: one call down per launch (PayloadModule::LaunchPacked).
  virtual bool LaunchesPacked() const { return false; }
  virtual void LaunchPackedAt(int64_t index, const ModrtKernelArgs& args) {
    Fail("RuntimeError", "this module does not launch packed arguments");
  }

  // The core's module object (borrowed: it owns this).
  ModrtObjectHandle handle() const { return handle_; }

 private:
  friend struct internal::ModuleAccess;
  ModrtObjectHandle handle_ = nullptr;
};

namespace internal {
struct ModuleAccess {
  static void Bind(Module* module, ModrtObjectHandle handle) { module->handle_ = handle; }
};
inline Module* Self(void* self) { return static_cast<Module*>(self); }
// Two tables: with the launch entry for modules that launch packed
// arguments, without it for the others (the core then calls their functions).
inline ModrtModuleVTable BaseModuleVTable() {
  return {
      sizeof(ModrtModuleVTable),
      [](void* self) { delete Self(self); },
      [](void* self, const char* name, ModrtObjectHandle* out) {
        return GuardCall([&] { *out = Self(self)->GetFunction(name).release(); });
      },
      [](void* self, ModrtObjectHandle* out) {
        return GuardCall([&] { *out = MakeBytes(Self(self)->SaveToBytes()).release(); });
      },
      [](void* self, ModrtObjectHandle* out) {
        return GuardCall([&] {
          std::string joined;
          for (const std::string& n : Self(self)->FunctionNames()) joined += n + "\n";
          *out = MakeString(joined).release();
        });
      },
      nullptr,
  };
}
inline const ModrtModuleVTable& ModuleVTable() {
  static const ModrtModuleVTable table = BaseModuleVTable();
  return table;
}
inline const ModrtModuleVTable& PackedModuleVTable() {
  static const ModrtModuleVTable table = [] {
    ModrtModuleVTable t = BaseModuleVTable();
    t.launch = [](void* self, int64_t index, const ModrtKernelArgs* args) {
      return GuardCall([&] { Self(self)->LaunchPackedAt(index, *args); });
    };
    return t;
  }();
  return table;
}
}  // namespace internal

// The core's module object for `module`: of backend `kind` made from
// `payload`, or (payload null) a module that saves and names itself.
inline ObjectRef MakeModule(std::unique_ptr<Module> module, const std::string& kind,
                            ModrtObjectHandle payload = nullptr) {
  Module* self = module.release();  // the core owns it from here, also on error
  const ModrtModuleVTable* vtable = self->LaunchesPacked() && payload != nullptr
                                        ? &internal::PackedModuleVTable()
                                        : &internal::ModuleVTable();
  ModrtObjectHandle out = nullptr;
  Check(Core().module_create(vtable, self, kind.c_str(), payload, &out));
  internal::ModuleAccess::Bind(self, out);
  return ObjectRef::Adopt(out);
}

// The plugin module of type T behind a module object; null when the object is
// not one of this plugin's modules or not a T.
template <typename T>
T* ModuleAs(ModrtObjectHandle module) {
  void* self = nullptr;
  Check(Core().module_get_self(module, &internal::ModuleVTable(), &self));
  if (self == nullptr)
    Check(Core().module_get_self(module, &internal::PackedModuleVTable(), &self));
  return self == nullptr ? nullptr : dynamic_cast<T*>(internal::Self(self));
}

// A device module defined by its payload: the core saves and inspects it
// (one serializer, so the real module and the fallback save the same bytes).
class PayloadModule : public Module {
 public:
  explicit PayloadModule(Payload payload) : payload_(std::move(payload)) {
    for (const auto& entry : payload_.fmap) by_index_.push_back(&entry.second);
  }
  const Payload& payload() const { return payload_; }

  // A module that launches with the arguments the core packed overrides
  // LaunchesPacked (true) and LaunchPacked, and returns
  // PackedLaunchingFunction(name, device_type) from GetFunction (what a
  // core of plugin ABI 1.0 calls: it packs, then calls LaunchPacked).
  virtual void LaunchPacked(const FunctionInfo& info, size_t index, const PackedArgs& args) {
    Fail("RuntimeError", "this module does not launch packed arguments");
  }
  void LaunchPackedAt(int64_t index, const ModrtKernelArgs& args) final {
    if (index < 0 || static_cast<size_t>(index) >= by_index_.size()) {
      Fail("IndexError", "function index ", index, " out of range");
    }
    LaunchPacked(*by_index_[index], static_cast<size_t>(index), PackedArgs::Of(args));
  }

 protected:
  // What runtime modules return from GetFunction: a function that calls
  // `launch(info, index in fmap, args)` and keeps this module alive; null when
  // the payload has no function `name`.
  using Launcher = std::function<void(const FunctionInfo& info, size_t index, const Args& args)>;
  ObjectRef LaunchingFunction(const std::string& name, Launcher launch) {
    auto it = payload_.fmap.find(name);
    if (it == payload_.fmap.end()) return nullptr;
    struct Launching {
      ObjectRef keep_alive;  // the module object, which owns `info`
      Launcher launch;
      const FunctionInfo* info;
      size_t index;
    };
    auto state = std::make_unique<Launching>(
        Launching{ObjectRef::Borrow(handle()), std::move(launch), &it->second,
                  static_cast<size_t>(std::distance(payload_.fmap.begin(), it))});
    ModrtObjectHandle out = nullptr;
    Check(Core().function_create(
        [](void* resource, const ModrtValue* args, int32_t num_args, ModrtValue*) {
          return GuardCall([&] {
            const auto* s = static_cast<const Launching*>(resource);
            s->launch(*s->info, s->index, Args(args, num_args));
          });
        },
        state.get(), [](void* resource) { delete static_cast<Launching*>(resource); }, &out));
    state.release();  // the function object owns it now
    return ObjectRef::Adopt(out);
  }
  ObjectRef PackedLaunchingFunction(const std::string& name, DLDeviceType device_type) {
    return LaunchingFunction(
        name, [this, device_type](const FunctionInfo& info, size_t index, const Args& args) {
          LaunchPacked(info, index, KernelArgs::Pack(info, args, device_type).View());
        });
  }

 private:
  Payload payload_;
  std::vector<const FunctionInfo*> by_index_;  // fmap's functions in order
};

// Registers `module.create.<name>` and `module.load_from_bytes.<name>` for
// backend `identity` (registering the identity too): the core checks each
// payload against the identity, then `factory` makes the module.
using ModuleFactory = std::unique_ptr<PayloadModule> (*)(Payload payload);
inline void RegisterRuntimeModule(const ModrtBackendIdentity& identity, ModuleFactory factory) {
  RegisterBackend(identity);
  struct Context {
    std::string kind;
    ModuleFactory factory;
  };
  // Lives for the process, like the registration that points at it.
  Context* ctx = std::make_unique<Context>(Context{identity.name, factory}).release();
  Check(Core().register_module_factory(
      identity.name,
      [](void* c, ModrtObjectHandle payload, ModrtObjectHandle* out) {
        return GuardCall([&] {
          const auto* context = static_cast<const Context*>(c);
          *out = MakeModule(context->factory(Payload::FromHandle(payload)), context->kind, payload)
                     .release();
        });
      },
      ctx));
}

}  // namespace plugin
}  // namespace modrt

#endif  // MODRT_PLUGIN_MODULE_H_
