// libmodrt_example_backend.so: an out-of-tree modrt backend plugin, built
// outside modrt's repository against its plugin headers only (plugin_api.h,
// plugin.h): it links no part of modrt.
//
// It registers `example.axpy(alpha, x, y)`, y += alpha * x on float32 CPU
// tensors. modrt loads it (dlopen, modrt_plugin_init, table and version checks, then Init) when the
// package's entry point calls modrt.backend.load_plugin().
#include <string>

#include "modrt/plugin/plugin.h"

namespace {

using namespace modrt::plugin;  // NOLINT(build/namespaces)

// A float32 CPU tensor laid out densely, else a TypeError/ValueError naming
// the argument: the plugin never reads memory it was not given.
float* Float32Data(const Args& args, int index, const char* name) {
  DLTensor* t = args.Tensor(index);
  if (t->device.device_type != kDLCPU) {
    Fail("ValueError", "example.axpy: ", name, " must be on the cpu, not on ",
         DeviceKindName(static_cast<DLDeviceType>(t->device.device_type)));
  }
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    Fail("TypeError", "example.axpy: ", name, " must be float32, not ", DTypeToString(t->dtype));
  }
  if (!IsContiguous(*t)) {
    Fail("ValueError", "example.axpy: ", name, " must be contiguous");
  }
  return reinterpret_cast<float*>(static_cast<char*>(t->data) + t->byte_offset);
}

void Axpy(const Args& args, Ret*) {
  args.ExpectCount(3, "example.axpy");
  const float alpha = static_cast<float>(args.Float(0));
  const float* x = Float32Data(args, 1, "x");
  float* y = Float32Data(args, 2, "y");
  const size_t n = TensorBytes(*args.Tensor(1)) / sizeof(float);
  if (TensorBytes(*args.Tensor(2)) / sizeof(float) != n) {
    Fail("ValueError", "example.axpy: x and y differ in size");
  }
  for (size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void Init() { RegisterGlobal("example.axpy", Axpy); }

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
