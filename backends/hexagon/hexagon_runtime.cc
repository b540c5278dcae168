// libmodrt_runtime_hexagon.so: Hexagon modules and the Hexagon device API.
//
// A Hexagon module is a shared object for the DSP (ELF, machine QDSP6); this
// runtime checks that on load, so a host object or a truncated file is refused
// here rather than on the DSP. Devices are reached through Qualcomm's FastRPC
// library (libcdsprpc.so), loaded lazily. Opening FastRPC sessions and
// launching on the DSP are not implemented: with the library present the device
// still reports that it is unavailable, and says so.
#include <cstring>

#include "backend_identity.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace hexagon {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

constexpr int kMachineQdsp6 = 164;  // EM_QDSP6
constexpr int kElfClass32 = 1;      // ELFCLASS32

class FastRpc : public LazyDriverState<FastRpc> {
 public:
  int count() const { return 0; }  // sessions are not implemented

 private:
  friend class LazyDriverState<FastRpc>;

  std::string Init() {
    // MODRT_HEXAGON_DRIVER_LIBRARY, else Qualcomm's FastRPC library.
    if (!lib_.Open(DriverLibraryCandidates(
            kBackendIdentity.name, {"libcdsprpc.so", "libcdsprpc.so.1", "libadsprpc.so"}))) {
      return "no Hexagon DSP reachable: " + lib_.error() +
             " (libcdsprpc.so is Qualcomm's FastRPC library, present on Snapdragon systems)";
    }
    return "libcdsprpc.so is present, but this runtime does not open FastRPC sessions: "
           "Hexagon modules load and validate here but cannot launch";
  }
  DriverLibrary lib_;
};

class HexagonDeviceAPI final : public DriverDeviceAPI<FastRpc> {
 public:
  void GetAttr(int, std::string_view, Ret*) override {}
  void* Alloc(int, size_t) override { Fail("RuntimeError", FastRpc::Get().reason()); }
  void Free(int, void*) override {}
  void CopyFromHost(const void*, DLTensor*, size_t) override {
    Fail("RuntimeError", FastRpc::Get().reason());
  }
  void CopyToHost(const DLTensor*, void*, size_t) override {
    Fail("RuntimeError", FastRpc::Get().reason());
  }
  void Sync(int) override {}
};

// Refuses anything but a 32-bit little-endian QDSP6 shared object: the core's
// elf.shared_object_problem, the same check the codegen side runs.
void CheckHexagonObject(const std::string& code) {
  const ObjectRef check = GetGlobal("elf.shared_object_problem");
  if (!check) Fail("RuntimeError", "the core does not register elf.shared_object_problem");
  ObjectRef image = MakeBytes(code);
  ModrtValue args[5] = {};
  args[0].type_code = kModrtObject;
  args[0].v_obj = image.get();
  args[1].type_code = kModrtRawStr;
  args[1].v_str = "Hexagon";
  args[2].type_code = kModrtInt;
  args[2].v_int64 = kElfClass32;
  args[3].type_code = kModrtInt;
  args[3].v_int64 = kMachineQdsp6;
  args[4].type_code = kModrtRawStr;
  args[4].v_str = "QDSP6";
  OwnedValue problem;
  CallFunction(check, args, 5, &problem);
  const std::string_view why = Args(&problem.value(), 1).Str(0);
  if (!why.empty()) Fail("ValueError", why);
}

class HexagonModule final : public PayloadModule {
 public:
  explicit HexagonModule(Payload payload) : PayloadModule(std::move(payload)) {
    CheckHexagonObject(this->payload().code);
  }
  ObjectRef GetFunction(const std::string& name) override {
    if (payload().fmap.count(name) == 0) return nullptr;
    Fail("RuntimeError", "cannot launch ", name, " on Hexagon: ", FastRpc::Get().reason());
  }
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<HexagonModule>(std::move(p));
  });
  static HexagonDeviceAPI api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
}

}  // namespace
}  // namespace hexagon
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::hexagon::InitPlugin)
