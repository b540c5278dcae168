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
#include "modrt/driver.h"
#include "modrt/plugin.h"

namespace modrt {
namespace hexagon {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

constexpr uint16_t kMachineQdsp6 = 164;  // EM_QDSP6

class FastRpc : public LazyDriverState<FastRpc> {
 private:
  friend class LazyDriverState<FastRpc>;

  std::string Init() {
    if (!lib_.Open({"libcdsprpc.so", "libcdsprpc.so.1", "libadsprpc.so"})) {
      return "no Hexagon DSP reachable: " + lib_.error() +
             " (libcdsprpc.so is Qualcomm's FastRPC library, present on Snapdragon systems)";
    }
    return "libcdsprpc.so is present, but this runtime does not open FastRPC sessions: "
           "Hexagon modules load and validate here but cannot launch";
  }
  DriverLibrary lib_;
};

class HexagonDeviceAPI final : public DeviceAPI {
 public:
  int DeviceCount() override { return 0; }
  std::string UnavailableReason() override { return FastRpc::Get().reason(); }
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

// Refuses anything but a 32-bit little-endian QDSP6 shared object.
void CheckHexagonObject(const std::string& code) {
  constexpr size_t kHeaderSize = 52;  // Elf32_Ehdr
  if (code.size() < kHeaderSize || std::memcmp(code.data(), "\x7f" "ELF", 4) != 0) {
    Fail("ValueError", "a Hexagon module must be an ELF shared object; got ", code.size(),
         " bytes that are not one");
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(code.data());
  const uint16_t type = static_cast<uint16_t>(bytes[16] | bytes[17] << 8);
  const uint16_t machine = static_cast<uint16_t>(bytes[18] | bytes[19] << 8);
  if (bytes[4] != 1 || bytes[5] != 1 || machine != kMachineQdsp6) {
    Fail("ValueError", "the module's ELF object is not for Hexagon (ELF machine ", machine,
         ", expected ", kMachineQdsp6, " for QDSP6)");
  }
  if (type != 3) Fail("ValueError", "the Hexagon ELF object is not a shared object (type ", type, ")");
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
