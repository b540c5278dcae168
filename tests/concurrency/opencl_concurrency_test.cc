// 16 threads first-calling get_function on one lazily realized OpenCL module
// (its program is built on first launch) and launching kernels at once, with
// the OpenCL runtime DSO loaded as a plugin (argv[1]) by every thread.
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

constexpr const char* kSource = R"(
__kernel void fill(__global int* out, int value, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = value + i;
}
__kernel void twice(__global int* x, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] *= 2;
}
)";

Ref<ModuleObj> CreateModule() {
  auto payload = MakeObject<PayloadObj>();
  payload->fmt = "cl";
  payload->code = kSource;
  for (const char* sig : {"fill(int32*, int32, int32; blockIdx.x, threadIdx.x)",
                          "twice(int32*, int32; blockIdx.x, threadIdx.x)"}) {
    FunctionInfo info = FunctionInfo::Parse(sig);
    payload->fmap.emplace(info.name, info);
  }
  Ref<FunctionObj> create = GetGlobal("module.create.opencl");
  Expect(static_cast<bool>(create), "module.create.opencl is not registered");
  ModrtValue arg = ObjValue(payload.get());
  OwnedValue ret;
  create->Call(&arg, 1, ret.out());
  Ref<Object> module = ret.TakeObject();
  Expect(module && module->type_index() == kModrtObjModule,
         "module.create.opencl returned no module");
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
  DeviceAPI* api = GetDeviceAPI(kDLOpenCL);
  Expect(api->DeviceCount() > 0, "no OpenCL device: " + api->UnavailableReason());
  Ref<ModuleObj> module = CreateModule();
  const DLDevice dev{kDLOpenCL, 0};
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

int main(int argc, char** argv) {
  if (argc != 2)
    modrt::testing::FailTest("usage: opencl_concurrency_test libmodrt_runtime_opencl.so");
  modrt::testing::FirstCallsAndLaunches(argv[1]);
  std::fprintf(stderr, "PASSED\n");
  return 0;
}
