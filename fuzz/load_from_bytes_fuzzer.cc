// `module.load_from_bytes.<kind>` for one module kind (MODRT_FUZZ_KIND). When
// the kind's runtime DSO is in this build (MODRT_FUZZ_PLUGIN, a runfiles
// path) it is loaded as a plugin and its registered loader is fuzzed; a kind
// without a runtime here still has its payload parser and fallback module
// fuzzed through codegen's create-with-fallback. A module that loads must
// save bytes that load to the same bytes.
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "modrt/abi/c_api.h"
#include "modrt/core/backend.h"

namespace modrt {
namespace fuzz {
namespace {

const std::string kKind = MODRT_FUZZ_KIND;

// Host modules are native code: loading one runs the dynamic loader over the
// image and then its constructors, and glibc's loader does not survive
// arbitrary ELF bytes (it crashed on the first mutated image). Such images
// are trusted like any shared object (a .modrt artifact guards them with a
// SHA-256); the harness fuzzes everything around them and hands the real
// loader only images of the seeds (MODRT_FUZZ_SEEDS, a runfiles directory).
const bool kNativeImage = kKind == "so";

const std::vector<std::string>& TrustedImages() {
  static const std::vector<std::string> images = [] {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(MODRT_FUZZ_SEEDS, ec)) {
      std::ifstream in(e.path(), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      try {
        out.push_back(PayloadObj::Load(PayloadShape::kSingleBinary, bytes, "seed")->code);
      } catch (const Error&) {
      }
    }
    return out;
  }();
  return images;
}

// The bytes with their image swapped for a trusted one (picked by the
// image's size, so mutations still choose among them).
std::string WithTrustedImage(std::string_view bytes) {
  Ref<PayloadObj> payload =
      PayloadObj::Load(PayloadShape::kSingleBinary, bytes, kKind + " module bytes");
  const std::vector<std::string>& images = TrustedImages();
  Check(!images.empty(), std::string("no trusted images in ") + MODRT_FUZZ_SEEDS);
  for (const std::string& image : images) {
    if (payload->code == image) return std::string(bytes);
  }
  payload->code = images[payload->code.size() % images.size()];
  return payload->Save();
}

bool Exists(const std::string& path) {
  struct stat st{};
  return !path.empty() && stat(path.c_str(), &st) == 0;
}

// The kind's registered loader, after loading its runtime DSO if this build has one.
}  // namespace

bool HasRealLoader() {
  static const bool real = [] {
    const std::string plugin = MODRT_FUZZ_PLUGIN;
    if (Exists(plugin) && ModrtLoadPlugin(plugin.c_str()) != 0) {
      Finding("cannot load " + plugin + ": " + ModrtGetLastError());
    }
    const bool registered = static_cast<bool>(GetGlobal("module.load_from_bytes." + kKind));
    if (!registered && FindBackend(kKind) == nullptr) {
      Finding("kind '" + kKind + "' has neither a loader nor a registered backend identity");
    }
    std::fprintf(stderr, "modrt fuzz: kind %s, %s\n", kKind.c_str(),
                 registered ? "registered module.load_from_bytes loader"
                            : "no runtime in this build: payload parser and fallback module");
    return registered;
  }();
  return real;
}

namespace {

Ref<ModuleObj> Load(std::string_view bytes) {
  if (HasRealLoader()) {
    if (kNativeImage) return LoadModuleFromBytes(kKind, WithTrustedImage(bytes));
    return LoadModuleFromBytes(kKind, bytes);
  }
  // What a user of this build gets: the payload through codegen, which
  // yields the fallback module (libmodrt_compiler.so is linked in).
  const BackendInfo& backend = GetBackend(kKind);
  Ref<PayloadObj> payload = PayloadObj::Load(backend.shape, bytes, kKind + " module bytes");
  Ref<FunctionObj> codegen = GetGlobal("codegen." + kKind + ".create_module");
  Check(static_cast<bool>(codegen), "codegen." + kKind + ".create_module is not registered");
  ModrtValue arg = ObjValue(payload.get());
  OwnedValue ret;
  codegen->Call(&arg, 1, ret.out());
  Ref<Object> module = ret.TakeObject();
  Check(module && module->type_index() == kModrtObjModule, "codegen returned no module");
  return Ref<ModuleObj>(static_cast<ModuleObj*>(module.get()));
}

}  // namespace

void FuzzLoad(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Ref<ModuleObj> module;
  if (Rejects([&] { module = Load(bytes); })) return;
  Check(static_cast<bool>(module), "the loader returned no module and no error");
  Check(module->kind() == kKind, "loaded a module of kind '" + module->kind() + "'");
  const std::string saved = module->SaveToBytes();
  Ref<ModuleObj> again;
  if (Rejects([&] { again = Load(saved); })) {
    Finding("a loaded " + kKind + " module saved bytes that do not load");
  }
  Check(again->SaveToBytes() == saved, "a reloaded " + kKind + " module saves other bytes");
  for (const std::string& name : module->FunctionNames()) {
    Rejects([&] { module->GetFunction(name); });
  }
  Rejects([&] { Check(!module->GetFunction(""), "a function with an empty name"); });
  Rejects([&] { module->InspectSource(""); });
}

}  // namespace fuzz
}  // namespace modrt

// Loads the runtime DSO before fuzzing starts, so its coverage is tracked.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  modrt::fuzz::HasRealLoader();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  modrt::fuzz::FuzzLoad(data, size);
  return 0;
}
