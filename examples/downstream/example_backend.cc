// libmodrt_example_backend.so: an out-of-tree modrt backend plugin, built
// outside modrt's repository against its public headers only.
//
// It registers `example.axpy(alpha, x, y)`, y += alpha * x on float32 CPU
// tensors. modrt loads it (dlopen, ABI check, then Init) when the package's
// entry point calls modrt.backend.load_plugin().
#include <string>

#include "modrt/backend.h"

namespace {

// A float32 CPU tensor laid out densely, else a TypeError/ValueError naming
// the argument: the plugin never reads memory it was not given.
float* Float32Data(const modrt::Args& args, int index, const char* name) {
  DLTensor* t = args.Tensor(index);
  if (t->device.device_type != kDLCPU) {
    modrt::Fail("ValueError", "example.axpy: ", name, " must be on the cpu, not on ",
                modrt::DeviceKindName(static_cast<DLDeviceType>(t->device.device_type)));
  }
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    modrt::Fail("TypeError", "example.axpy: ", name, " must be float32, not ",
                modrt::DTypeToString(t->dtype));
  }
  if (!modrt::IsContiguous(*t)) {
    modrt::Fail("ValueError", "example.axpy: ", name, " must be contiguous");
  }
  return reinterpret_cast<float*>(static_cast<char*>(t->data) + t->byte_offset);
}

void Axpy(const modrt::Args& args, modrt::Ret*) {
  args.ExpectCount(3, "example.axpy");
  const float alpha = static_cast<float>(args.Float(0));
  const float* x = Float32Data(args, 1, "x");
  float* y = Float32Data(args, 2, "y");
  const size_t n = modrt::TensorBytes(*args.Tensor(1)) / sizeof(float);
  if (modrt::TensorBytes(*args.Tensor(2)) / sizeof(float) != n) {
    modrt::Fail("ValueError", "example.axpy: x and y differ in size");
  }
  for (size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void Init() { modrt::RegisterGlobal("example.axpy", Axpy); }

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
