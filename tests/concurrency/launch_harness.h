// The shared body of the runtime concurrency tests: a runtime DSO loaded as a
// plugin (argv[1]) by 16 threads at once, then 16 threads first-calling
// get_function on one module of two kernels and launching them at once, each
// with values of its own, checking what it reads back. A test gives the
// runtime and the source of the kernels, in its own language:
//   fill(int32* out, int32 value, int32 n)  out[i] = value + i
//   twice(int32* x, int32 n)                x[i] *= 2
#ifndef MODRT_TESTS_CONCURRENCY_LAUNCH_HARNESS_H_
#define MODRT_TESTS_CONCURRENCY_LAUNCH_HARNESS_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "modrt/abi/c_api.h"
#include "modrt/core/backend.h"
#include "tests/concurrency/threads.h"

namespace modrt {
namespace testing {

struct RuntimeUnderTest {
  const char* kind;          // "opencl": module.create.opencl
  const char* display_name;  // "OpenCL", in messages
  DLDeviceType device_type;
  // Sets the payload's format and the source of fill and twice.
  std::function<void(PayloadObj&)> set_source;
};

constexpr int kLaunchesPerThread = 8;
constexpr int64_t kElements = 256;
constexpr int64_t kBlock = 64;

inline Ref<ModuleObj> CreateFillTwiceModule(const RuntimeUnderTest& rt) {
  auto payload = MakeObject<PayloadObj>();
  rt.set_source(*payload);
  for (const char* sig : {"fill(int32*, int32, int32; blockIdx.x, threadIdx.x)",
                          "twice(int32*, int32; blockIdx.x, threadIdx.x)"}) {
    FunctionInfo info = FunctionInfo::Parse(sig);
    payload->fmap.emplace(info.name, info);
  }
  const std::string create_name = std::string("module.create.") + rt.kind;
  Ref<FunctionObj> create = GetGlobal(create_name);
  Expect(static_cast<bool>(create), create_name + " is not registered");
  ModrtValue arg = ObjValue(payload.get());
  OwnedValue ret;
  create->Call(&arg, 1, ret.out());
  Ref<Object> module = ret.TakeObject();
  Expect(module && module->type_index() == kModrtObjModule, create_name + " returned no module");
  return Ref<ModuleObj>(static_cast<ModuleObj*>(module.get()));
}

inline void Launch(const Ref<FunctionObj>& f, std::vector<ModrtValue> args) {
  OwnedValue ret;
  f->Call(args.data(), static_cast<int32_t>(args.size()), ret.out());
}

inline void FirstCallsAndLaunches(const char* plugin, const RuntimeUnderTest& rt) {
  RunTogether(kThreads, [&](int) {
    if (ModrtLoadPlugin(plugin) != 0) FailTest(std::string("load failed: ") + ModrtGetLastError());
  });
  DeviceAPI* api = GetDeviceAPI(rt.device_type);
  Expect(api->DeviceCount() > 0,
         std::string("no ") + rt.display_name + " device: " + api->UnavailableReason());
  Ref<ModuleObj> module = CreateFillTwiceModule(rt);
  const DLDevice dev{rt.device_type, 0};
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

// The whole test: main() returns what this does.
inline int ConcurrencyTestMain(int argc, char** argv, const RuntimeUnderTest& rt) {
  if (argc != 2) {
    FailTest(std::string("usage: ") + rt.kind + "_concurrency_test libmodrt_runtime_" + rt.kind +
             ".so");
  }
  FirstCallsAndLaunches(argv[1], rt);
  std::fprintf(stderr, "PASSED\n");
  return 0;
}

}  // namespace testing
}  // namespace modrt

#endif  // MODRT_TESTS_CONCURRENCY_LAUNCH_HARNESS_H_
