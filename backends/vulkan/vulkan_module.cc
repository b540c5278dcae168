#include "vulkan_module.h"

#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "modrt/plugin/launch_limits.h"
#include "vulkan_api.h"
#include "vulkan_commands.h"
#include "vulkan_device.h"
#include "vulkan_pipelines.h"
#include "vulkan_streams.h"
#include "vulkan_submit.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

// ValueError when the grid is over the device's limits.
void CheckGrid(const FunctionInfo& info, const LaunchConfig& launch, const Device& d) {
  const VkPhysicalDeviceLimits& limits = d.caps.props.limits;
  for (int a = 0; a < 3; ++a) {
    if (launch.grid[a] > limits.maxComputeWorkGroupCount[a]) {
      Fail("ValueError", LaunchLimitExceeded(info.name, StrCat("blockIdx.", "xyz"[a]),
                                             launch.grid[a], limits.maxComputeWorkGroupCount[a],
                                             StrCat("maxComputeWorkGroupCount[", a, "]"),
                                             d.caps.props.deviceName));
    }
  }
}

// The dispatch of packed arguments `k` on pipeline `p`: buffers bound whole,
// scalars at their push-constant or uniform offsets; an argument whose
// binding the shader dropped (ArgLayout::Place::kUnused) is ignored.
Dispatch DispatchOf(const FunctionInfo& info, const PackedArgs& k, const Pipeline& p) {
  Dispatch dispatch;
  dispatch.pipeline = &p;
  dispatch.device_id = k.device_id;
  dispatch.constants.assign(p.args.push_size, 0);
  dispatch.uniforms.assign(p.args.uniform_bytes, 0);
  for (size_t i = 0; i < info.args.size(); ++i) {
    const ArgLayout::Arg& a = p.args.args[i];
    switch (a.place) {
      case ArgLayout::Place::kBuffer:
        dispatch.buffers.push_back(
            {static_cast<const Buffer*>(k.buffers[i]->data)->buffer, 0, VK_WHOLE_SIZE});
        break;
      case ArgLayout::Place::kPush:
        std::memcpy(dispatch.constants.data() + a.offset, k.ptrs[i], k.sizes[i]);
        break;
      case ArgLayout::Place::kUniform:
        std::memcpy(dispatch.uniforms.data() + a.offset, k.ptrs[i], k.sizes[i]);
        break;
      case ArgLayout::Place::kUnused: break;
    }
  }
  for (int a = 0; a < 3; ++a) dispatch.grid[a] = static_cast<uint32_t>(k.launch.grid[a]);
  return dispatch;
}

class VulkanModule final : public PayloadModule {
 public:
  explicit VulkanModule(Payload payload) : PayloadModule(std::move(payload)) {}

  ObjectRef GetFunction(const std::string& name) override {
    return PackedLaunchingFunction(name, kDLVulkan);
  }

  int64_t pipelines_created() const { return pipelines_.created(); }

  // A launch goes down once: the core packs the arguments, then calls here.
  bool LaunchesPacked() const override { return true; }
  void LaunchPacked(const FunctionInfo& info, size_t, const PackedArgs& k) override {
    Device& d = Workspace::Get().device(k.device_id);
    CheckGrid(info, k.launch, d);
    const Pipeline& p =
        pipelines_.Get(k.device_id, d, info, k.launch, payload().smap.at(info.name));
    SubmitLaunch(StreamOf(k.NativeStream(kDLVulkan), d), DispatchOf(info, k, p), info.name);
  }

 private:
  PipelineCache pipelines_;
};

}  // namespace

std::unique_ptr<PayloadModule> NewVulkanModule(Payload payload) {
  return std::make_unique<VulkanModule>(std::move(payload));
}

void PipelinesCreated(const Args& args, Ret* ret) {
  args.ExpectCount(1, "vulkan.pipelines_created");
  ModrtObjectHandle handle = args.Obj(0, kModrtObjModule, "module");
  auto* module = ModuleAs<VulkanModule>(handle);
  if (module == nullptr) {
    auto ask = [&](const char* what, OwnedValue* out) {
      ModrtValue arg{};
      arg.type_code = kModrtObject;
      arg.v_obj = handle;
      CallFunction(GetGlobal(what), &arg, 1, out);
    };
    OwnedValue kind, fallback;
    ask("module.kind", &kind);
    ask("module.is_fallback", &fallback);
    Fail("TypeError", "vulkan.pipelines_created takes a real vulkan module, got a ",
         Args(&fallback.value(), 1).Int(0) ? "fallback " : "", Args(&kind.value(), 1).Str(0),
         " module");
  }
  ret->SetInt(module->pipelines_created());
}

}  // namespace vulkan
}  // namespace modrt
