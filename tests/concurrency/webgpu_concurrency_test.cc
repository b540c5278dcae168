// 16 threads first-calling get_function on one WebGPU module and launching
// kernels with scalars of their own at once (every launch's scalars take a
// slot of the kernel's uniform ring; launches are batched), with the WebGPU
// runtime DSO loaded as a plugin (argv[1]) by every thread.
#include <cstdint>
#include <string>
#include <vector>

#include "modrt/backend.h"
#include "modrt/c_api.h"
#include "tests/concurrency/threads.h"

namespace modrt {
namespace testing {
namespace {

constexpr int kLaunchesPerThread = 8;
constexpr int64_t kElements = 256;
constexpr int64_t kBlock = 64;

constexpr const char* kFill = R"(
override block_x: u32 = 64;
struct Args { value: i32, n: i32 }
@group(0) @binding(0) var<storage, read_write> out: array<i32>;
@group(0) @binding(1) var<uniform> args: Args;
@compute @workgroup_size(block_x) fn fill(@builtin(global_invocation_id) i: vec3<u32>) {
  if (i32(i.x) < args.n) { out[i.x] = args.value + i32(i.x); }
}
)";
constexpr const char* kTwice = R"(
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read_write> x: array<i32>;
@group(0) @binding(1) var<uniform> n: i32;
@compute @workgroup_size(block_x) fn twice(@builtin(global_invocation_id) i: vec3<u32>) {
  if (i32(i.x) < n) { x[i.x] *= 2; }
}
)";

Ref<ModuleObj> CreateModule() {
  auto payload = MakeObject<PayloadObj>();
  payload->shape = PayloadShape::kMultiShader;
  payload->fmt = "wgsl";
  payload->smap = {{"fill", kFill}, {"twice", kTwice}};
  for (const char* sig : {"fill(int32*, int32, int32; blockIdx.x, threadIdx.x)",
                          "twice(int32*, int32; blockIdx.x, threadIdx.x)"}) {
    FunctionInfo info = FunctionInfo::Parse(sig);
    payload->fmap.emplace(info.name, info);
  }
  Ref<FunctionObj> create = GetGlobal("module.create.webgpu");
  Expect(static_cast<bool>(create), "module.create.webgpu is not registered");
  ModrtValue arg = ObjValue(payload.get());
  OwnedValue ret;
  create->Call(&arg, 1, ret.out());
  Ref<Object> module = ret.TakeObject();
  Expect(module && module->type_index() == kModrtObjModule,
         "module.create.webgpu returned no module");
  return Ref<ModuleObj>(static_cast<ModuleObj*>(module.get()));
}

void Launch(const Ref<FunctionObj>& f, std::vector<ModrtValue> args) {
  OwnedValue ret;
  f->Call(args.data(), static_cast<int32_t>(args.size()), ret.out());
}

void FirstCallsAndLaunches(const char* plugin) {
  RunTogether(kThreads, [&](int) {
    if (ModrtLoadPlugin(plugin) != 0) FailTest(std::string("load failed: ") + ModrtGetLastError());
  });
  DeviceAPI* api = GetDeviceAPI(kDLWebGPU);
  Expect(api->DeviceCount() > 0, "no WebGPU device: " + api->UnavailableReason());
  Ref<ModuleObj> module = CreateModule();
  const DLDevice dev{kDLWebGPU, 0};
  RunTogether(kThreads, [&](int t) {
    Ref<FunctionObj> fill = FindFunction(module.get(), "fill");
    Ref<FunctionObj> twice = FindFunction(module.get(), "twice");
    Expect(fill && twice, "get_function returned null");
    Ref<TensorObj> buffer = TensorObj::Empty({kElements}, DLDataType{kDLInt, 32, 1}, dev);
    ModrtValue tensor = ObjValue(buffer.get());
    for (int k = 0; k < kLaunchesPerThread; ++k) {
      const int64_t value = int64_t{t} * 1000 + k;
      Launch(fill, {tensor, IntValue(value), IntValue(kElements), IntValue(kElements / kBlock),
                    IntValue(kBlock)});
      Launch(twice, {tensor, IntValue(kElements), IntValue(kElements / kBlock), IntValue(kBlock)});
      std::vector<int32_t> host(kElements);
      api->CopyToHost(buffer->dl(), host.data(), host.size() * sizeof(int32_t));
      for (int64_t i = 0; i < kElements; ++i) {
        Expect(host[i] == 2 * (value + i), "thread " + std::to_string(t) + " read " +
                                               std::to_string(host[i]) + " at " +
                                               std::to_string(i));
      }
    }
  });
}

}  // namespace
}  // namespace testing
}  // namespace modrt

// wgpu-native is Rust, not instrumented, and synchronizes with its own
// futex-based locks, which ThreadSanitizer cannot see: the memory accesses it
// and the Vulkan driver it drives (Mesa's lavapipe, under wgpu's locks) make
// through intercepted functions (malloc, memcpy) would be reported as races
// among their own threads. Ignore what those libraries call; our code stays
// checked.
extern "C" const char* __tsan_default_suppressions() {
  return "called_from_lib:libwgpu_native\ncalled_from_lib:libvulkan_lvp.so\ncalled_from_lib:"
         "libvulkan.so.1\n";
}

int main(int argc, char** argv) {
  if (argc != 2)
    modrt::testing::FailTest("usage: webgpu_concurrency_test libmodrt_runtime_webgpu.so");
  modrt::testing::FirstCallsAndLaunches(argv[1]);
  std::fprintf(stderr, "PASSED\n");
  return 0;
}
