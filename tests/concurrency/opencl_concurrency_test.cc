// 16 threads first-calling get_function on one lazily realized OpenCL module
// (its program is built on first launch) and launching kernels at once, with
// the OpenCL runtime DSO loaded as a plugin (argv[1]) by every thread.
#include "tests/concurrency/launch_harness.h"

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  return modrt::testing::ConcurrencyTestMain(
      argc, argv, {"opencl", "OpenCL", kDLOpenCL, [](modrt::PayloadObj& payload) {
                     payload.fmt = "cl";
                     payload.code = kSource;
                   }});
}
