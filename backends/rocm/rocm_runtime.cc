// libmodrt_runtime_rocm.so: ROCm devices and code-object (hsaco) modules on
// the HIP runtime, libamdhip64.so.6 (rocm_driver.h), loaded lazily like every
// vendor driver. The device API and the device layer are in rocm_device.cc.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend_identity.h"
#include "backends/rocm/rocm_driver.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace rocm {
namespace {

class RocmModule final : public IndexedModule<Workspace, hipFunction_t> {
 public:
  using IndexedModule::IndexedModule;

 private:
  hipModule_t LoadOn(int device_id) override {
    Workspace& ws = Workspace::Get();
    hipModule_t module = nullptr;
    ws.Check(ws.hip().hipModuleLoadData(&module, payload().code.data()),
             StrCat("loading the code object on rocm(", device_id,
                    ") (built for this GPU's gfx arch?)"));
    return module;
  }

  hipFunction_t Prepare(int, hipModule_t module, const std::string& name, const LaunchConfig&,
                        hipFunction_t* function) override {
    if (*function == nullptr) {
      Workspace& ws = Workspace::Get();
      ws.Check(ws.hip().hipModuleGetFunction(function, module, name.c_str()),
               StrCat("finding kernel '", name,
                      "' in the code object (is it extern \"C\" __global__?)"));
    }
    return *function;
  }
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<RocmModule>(std::move(p));
  });
  RegisterDeviceApi();
}

}  // namespace
}  // namespace rocm
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::rocm::InitPlugin)
