// 16 threads first-calling get_function on one WebGPU module and launching
// kernels with scalars of their own at once (every launch's scalars take a
// slot of the kernel's uniform ring; launches are batched), with the WebGPU
// runtime DSO loaded as a plugin (argv[1]) by every thread.
#include "tests/concurrency/launch_harness.h"

namespace {

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

}  // namespace

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
  return modrt::testing::ConcurrencyTestMain(
      argc, argv, {"webgpu", "WebGPU", kDLWebGPU, [](modrt::PayloadObj& payload) {
                     payload.shape = modrt::PayloadShape::kMultiShader;
                     payload.fmt = "wgsl";
                     payload.smap = {{"fill", kFill}, {"twice", kTwice}};
                   }});
}
