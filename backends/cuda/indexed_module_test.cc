// IndexedModule (modrt/plugin/driver.h), the module of the CUDA and ROCm
// runtimes, launches in one trip: the core's module vtable gets `launch`,
// and a launch through it hands the core's packed parameters to the driver's
// launch as they are, without calling back into the core (kernel_args_pack).
// A grid the driver's unsigned int cannot hold is refused naming the kernel,
// the axis and the limit. The core here is a table of fakes that counts the
// calls back and keeps the last error; the driver a fake that records its
// launches.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

int calls_back = 0;  // kernel_args_pack calls
std::string last_error;

ModrtCoreApi FakeCore() {
  ModrtCoreApi core{};
  core.struct_size = sizeof(core);
  core.abi_major = MODRT_PLUGIN_ABI_MAJOR;
  core.abi_minor = MODRT_PLUGIN_ABI_MINOR;
  core.set_last_error = [](const char* message) { last_error = message; };
  core.get_last_error = [] { return last_error.c_str(); };
  core.set_error = [](int32_t, const char* message) { last_error = message; };
  core.device_kind_name = [](int32_t) { return "fake"; };
  core.kernel_args_pack = [](const void*, const ModrtValue*, int32_t, int32_t, ModrtKernelArgs*) {
    ++calls_back;
    return -1;
  };
  core.current_stream = [](int32_t, int32_t, void**) {
    ++calls_back;
    return -1;
  };
  return core;
}

struct Launched {
  void** params;
  unsigned grid_x;
  std::string name;
  void* stream;
};

// What IndexedModule calls on its driver (driver.h).
struct FakeDriver {
  static constexpr DLDeviceType kDeviceType = kDLCUDA;
  using ModuleHandle = int*;
  using FunctionHandle = int*;
  static FakeDriver& Get() {
    static FakeDriver driver;
    return driver;
  }
  void Activate(int) {}
  void ActivateQuietly(int) noexcept {}
  void UnloadQuietly(ModuleHandle) noexcept {}
  void Launch(FunctionHandle, const LaunchConfig& c, void** params, const std::string& name,
              void* stream) {
    launches.push_back({params, static_cast<unsigned>(c.grid[0]), name, stream});
  }
  std::vector<Launched> launches;
};

class FakeModule final : public IndexedModule<FakeDriver, int> {
 public:
  using IndexedModule::IndexedModule;

 private:
  int* LoadOn(int) override { return &module_; }
  int* Prepare(int, int* module, const std::string&, const LaunchConfig&, int*) override {
    return module;
  }
  int module_ = 0;
};

int failures = 0;
void Expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  static const ModrtCoreApi core = FakeCore();
  internal::CoreSlot() = &core;

  Payload payload;
  FunctionInfo info;
  info.name = "k";
  info.args = {ArgInfo{DLDataType{kDLInt, 32, 1}, false}};
  payload.fmap.emplace("k", info);
  FakeModule module(std::move(payload));
  Expect(module.LaunchesPacked(), "IndexedModule launches packed arguments");
  const ModrtModuleVTable& vtable = internal::PackedModuleVTable();

  // The core's packed arguments, as it hands them to the vtable's launch.
  uint64_t slots[1] = {7};
  void* ptrs[1] = {&slots[0]};
  size_t sizes[1] = {4};
  const DLTensor* buffers[1] = {nullptr};
  ModrtKernelArgs k{};
  k.struct_size = sizeof(k);
  k.num_args = 1;
  k.slots = slots;
  k.ptrs = ptrs;
  k.sizes = sizes;
  k.buffers = buffers;
  for (int d = 0; d < 3; ++d) k.grid[d] = k.block[d] = 1;
  k.grid[0] = 5;
  int queue = 0;
  k.stream = &queue;  // the launch's native stream (ABI 1.2)

  FakeDriver& driver = FakeDriver::Get();
  Expect(vtable.launch(&module, 0, &k) == 0, "a packed launch succeeds");
  Expect(driver.launches.size() == 1, "the driver launched once");
  Expect(!driver.launches.empty() && driver.launches[0].params == ptrs,
         "the driver got the core's parameter pointers as they are");
  Expect(
      !driver.launches.empty() && driver.launches[0].grid_x == 5 && driver.launches[0].name == "k",
      "the driver got the grid and the kernel's name");
  Expect(!driver.launches.empty() && driver.launches[0].stream == &queue,
         "the driver launched on the stream the core packed");
  Expect(calls_back == 0, "no call back into the core (kernel_args_pack, current_stream)");

  k.grid[0] = int64_t{1} << 32;
  Expect(vtable.launch(&module, 0, &k) != 0, "a grid over unsigned int is refused");
  Expect(last_error ==
             "k: blockIdx.x = 4294967296 exceeds the device's limit of 4294967295 (the "
             "driver's unsigned int, fake(0))",
         "the refusal names the kernel, the axis, the value and the limit");
  Expect(driver.launches.size() == 1, "a refused launch never reaches the driver");
  Expect(vtable.launch(&module, 3, &k) != 0, "a function index out of range is refused");

  if (failures == 0) std::printf("all passed\n");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
