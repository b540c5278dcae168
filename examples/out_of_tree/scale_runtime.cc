// libmodrt_runtime_scale.so: an out-of-tree backend, built against modrt's
// public headers only. Module kind "scale": its code is a factor written as
// text (fmt "factor"), and each of its functions, declared (float32*, int32),
// multiplies a CPU buffer by that factor in place.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "modrt/backend.h"

namespace {

const modrt::BackendInfo& ScaleBackend() {
  static const modrt::BackendInfo info{"scale", "Scale", kDLCPU, modrt::PayloadShape::kSingleBinary, {"factor"}};
  return info;
}

class ScaleModule final : public modrt::PayloadModule {
 public:
  explicit ScaleModule(modrt::Ref<modrt::PayloadObj> p) : PayloadModule("scale", std::move(p)) {
    const std::string& text = payload().code;
    char* end = nullptr;
    factor_ = std::strtof(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      modrt::Fail("ValueError", "a scale module's code is a number, got '", text, "'");
    }
    for (const auto& kv : payload().fmap) {
      const modrt::FunctionInfo& f = kv.second;
      if (f.args.size() != 2 || !f.args[0].is_buffer || modrt::DTypeToString(f.args[0].dtype) != "float32" ||
          f.args[1].is_buffer || modrt::DTypeToString(f.args[1].dtype) != "int32" || !f.launch_tags.empty()) {
        modrt::Fail("ValueError", "scale functions take (float32*, int32), got ", f.ToString());
      }
    }
  }

  modrt::Ref<modrt::FunctionObj> GetFunction(const std::string& name) override {
    if (payload().fmap.count(name) == 0) return nullptr;
    modrt::Ref<ScaleModule> self(this);  // the function keeps its module alive
    const modrt::FunctionInfo* info = &payload().Function(name);
    return modrt::MakeObject<modrt::FunctionObj>([self, info](const modrt::Args& args, modrt::Ret*) {
      modrt::KernelArgs k = modrt::KernelArgs::Pack(*info, args, kDLCPU);
      float* x = nullptr;
      int32_t n = 0;
      std::memcpy(&x, &k.slots[0], sizeof(x));
      std::memcpy(&n, &k.slots[1], sizeof(n));
      const int64_t size = k.buffers[0]->ndim > 0 ? k.buffers[0]->shape[0] : 1;
      if (n < 0 || n > size) modrt::Fail("ValueError", info->name, ": n=", n, " but the buffer holds ", size);
      for (int32_t i = 0; i < n; ++i) x[i] *= self->factor_;
    });
  }

 private:
  float factor_ = 1;
};

modrt::Ref<modrt::ModuleObj> MakeScaleModule(modrt::Ref<modrt::PayloadObj> payload) {
  return modrt::MakeObject<ScaleModule>(std::move(payload));
}

void Init() {
  // module.create.scale and module.load_from_bytes.scale ...
  modrt::RegisterRuntimeModule(ScaleBackend(), &MakeScaleModule);
  // ... and what modrt.compile calls for target "scale": this backend has no
  // fallback, since its codegen and its runtime ship together.
  modrt::RegisterGlobal("codegen.scale.create_module", [](const modrt::Args& a, modrt::Ret* r) {
    a.ExpectCount(1, "codegen.scale.create_module");
    modrt::Ref<modrt::PayloadObj> p(static_cast<modrt::PayloadObj*>(a.Obj(0, kModrtObjPayload, "payload")));
    ScaleBackend().CheckPayload(*p);
    r->SetObject(MakeScaleModule(std::move(p)));
  });
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
