"""The kernels the device-layer tests run, in each backend's language: the same
three everywhere, so that a case reads alike on every backend
(tests/device_layer_test.py) and a backend's own tests can take them
(backends/<x>/native_streams_test.py, device_layer_test.py).

`vadd` (c = a + b, one item per element, block BLOCK), `slow_add` (c = a + b
after `rounds` rounds of busy work per item: long enough that a reader on
another stream without a wait would see it unfinished) and `spin` (waits for
flag[0] != 0, which never comes). KERNELS[kind] is (source, signatures).
"""

BLOCK = 64
SLOW_ADD_SIGNATURE = "slow_add(float32*, float32*, float32*, int32, int32; blockIdx.x, threadIdx.x)"

KERNELS = {
    "cpu": (
        """
void vadd(const float* a, const float* b, float* c, int n) { for (int i = 0; i < n; ++i) c[i] = a[i] + b[i]; }
void slow_add(const float* a, const float* b, float* c, int n, int rounds) {
  for (int i = 0; i < n; ++i) {
    volatile float x = a[i];
    for (int r = 0; r < rounds; ++r) x = x * 0.999f + 0.001f * a[i];
    c[i] = x + b[i];
  }
}
void spin(int* flag) { volatile int* f = flag; while (f[0] == 0) {} }
""",
        [
            "vadd(float32*, float32*, float32*, int32)",
            "slow_add(float32*, float32*, float32*, int32, int32)",
            "spin(int32*)",
        ],
    ),
    "opencl": (
        """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
__kernel void slow_add(__global const float* a, __global const float* b, __global float* c, int n,
                       int rounds) {
  int i = get_global_id(0);
  if (i >= n) return;
  float x = a[i];
  for (int r = 0; r < rounds; ++r) x = x * 0.999f + 0.001f * a[i];
  c[i] = x + b[i];
}
__kernel void spin(__global volatile int* flag) { while (flag[0] == 0) {} }
""",
        [
            "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
            SLOW_ADD_SIGNATURE,
            "spin(int32*; blockIdx.x, threadIdx.x)",
        ],
    ),
    "vulkan": (
        {
            "vadd": """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Args { int n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < n) c[i] = a[i] + b[i]; }
""",
            "slow_add": """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Args { int n; int rounds; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= n) return;
  float x = a[i];
  for (int r = 0; r < rounds; ++r) x = x * 0.999 + 0.001 * a[i];
  c[i] = x + b[i];
}
""",
            "spin": """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) coherent buffer F { int flag[]; };
void main() { while (flag[0] == 0) {} }
""",
        },
        [
            "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
            SLOW_ADD_SIGNATURE,
            "spin(int32*; blockIdx.x, threadIdx.x)",
        ],
    ),
    "webgpu": (
        {
            "vadd": """
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> n: i32;
@compute @workgroup_size(block_x)
fn vadd(@builtin(global_invocation_id) id: vec3<u32>) {
  if (i32(id.x) < n) { c[id.x] = a[id.x] + b[id.x]; }
}
""",
            "slow_add": """
override block_x: u32 = 64;
struct Args { n: i32, rounds: i32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> args: Args;
@compute @workgroup_size(block_x)
fn slow_add(@builtin(global_invocation_id) id: vec3<u32>) {
  if (i32(id.x) >= args.n) { return; }
  var x = a[id.x];
  for (var r = 0; r < args.rounds; r++) { x = x * 0.999 + 0.001 * a[id.x]; }
  c[id.x] = x + b[id.x];
}
""",
            "spin": """
override block_x: u32 = 1;
@group(0) @binding(0) var<storage, read_write> flag: array<atomic<i32>>;
@compute @workgroup_size(block_x)
fn spin() { loop { if (atomicLoad(&flag[0]) != 0) { break; } } }
""",
        },
        [
            "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
            SLOW_ADD_SIGNATURE,
            "spin(int32*; blockIdx.x, threadIdx.x)",
        ],
    ),
}
KINDS = list(KERNELS)
# Backends whose plugin has native streams (plugin_api.h, ModrtStreamExtension).
NATIVE_STREAMS = {"opencl", "vulkan", "webgpu"}
