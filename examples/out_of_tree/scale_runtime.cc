// libmodrt_runtime_scale.so: an out-of-tree backend, built against modrt's
// plugin headers only (plugin_api.h and the header-only plugin.h): it links
// no part of modrt, so any compiler and C++ standard library will do. Module
// kind "scale": its code is a factor written as text (fmt "factor"), and each
// of its functions, declared (float32*, int32), multiplies a CPU buffer by
// that factor in place.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "modrt/plugin/plugin.h"

namespace {

using namespace modrt::plugin;  // NOLINT(build/namespaces)

// The backend's identity: registered through the same call as an in-tree
// backend's (whose identity comes from its BUILD file).
constexpr ModrtBackendIdentity kScaleBackend = {
    sizeof(ModrtBackendIdentity), "scale", "Scale", kDLCPU, kModrtSingleBinary, "factor"};

class ScaleModule final : public PayloadModule {
 public:
  explicit ScaleModule(Payload p) : PayloadModule(std::move(p)) {
    const std::string& text = payload().code;
    char* end = nullptr;
    factor_ = std::strtof(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      Fail("ValueError", "a scale module's code is a number, got '", text, "'");
    }
    for (const auto& kv : payload().fmap) {
      const FunctionInfo& f = kv.second;
      if (f.args.size() != 2 || !f.args[0].is_buffer ||
          DTypeToString(f.args[0].dtype) != "float32" || f.args[1].is_buffer ||
          DTypeToString(f.args[1].dtype) != "int32" || !f.launch_tags.empty()) {
        Fail("ValueError", "scale functions take (float32*, int32), got ", f.ToString());
      }
    }
  }

  ObjectRef GetFunction(const std::string& name) override {
    return LaunchingFunction(name, [this](const FunctionInfo& info, size_t, const Args& args) {
      KernelArgs k = KernelArgs::Pack(info, args, kDLCPU);
      float* x = nullptr;
      int32_t n = 0;
      std::memcpy(&x, &k.slots[0], sizeof(x));
      std::memcpy(&n, &k.slots[1], sizeof(n));
      const int64_t size = k.buffers[0]->ndim > 0 ? k.buffers[0]->shape[0] : 1;
      if (n < 0 || n > size)
        Fail("ValueError", info.name, ": n=", n, " but the buffer holds ", size);
      for (int32_t i = 0; i < n; ++i) x[i] *= factor_;
    });
  }

 private:
  float factor_ = 1;
};

std::unique_ptr<PayloadModule> MakeScaleModule(Payload payload) {
  return std::make_unique<ScaleModule>(std::move(payload));
}

void Init() {
  // The identity, module.create.scale and module.load_from_bytes.scale ...
  RegisterRuntimeModule(kScaleBackend, &MakeScaleModule);
  // ... and what modrt.compile calls for target "scale": this backend has no
  // fallback, since its codegen and its runtime ship together.
  RegisterGlobal("codegen.scale.create_module", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "codegen.scale.create_module");
    ObjectRef create = GetGlobal("module.create.scale");
    OwnedValue module;
    CallFunction(create, a.values(), 1, &module);  // checks the payload against the identity
    r->SetObject(ObjectRef::Borrow(module.value().v_obj));
  });
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
