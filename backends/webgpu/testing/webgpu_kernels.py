"""WebGPU's kernels for the suites every backend shares, which find this module
by its name, `<backend>_kernels` (tests/backend_kernels.py), and for
WebGPU's own tests.

- DEVICE_LAYER: (sources, signatures) of `vadd`, `slow_add` and `spin`
  (tests/device_layer_kernels.py says what each does); NATIVE_STREAMS: the
  plugin has native streams (plugin_api.h, ModrtStreamExtension); NATIVE_GRAPHS:
  it records graphs itself (ModrtGraphExtension); SLOW_ROUNDS:
  slow_add's rounds for tests/native_streams_test.py;
- RELIABILITY: (sources, signatures) of `fill`, `fillf` and `copy`
  (tests/reliability_kernels.py);
- FALLBACK: (source of `scale`, the format to inspect, the text it holds or
  None) for the fallback contract (tests/fallback_contract_test.py).
"""

from __future__ import annotations

SLOW_ADD_SIGNATURE = "slow_add(float32*, float32*, float32*, int32, int32; blockIdx.x, threadIdx.x)"

DEVICE_LAYER = (
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
)
NATIVE_STREAMS = True
NATIVE_GRAPHS = True
# Rounds of slow_add's busy work: long enough to be seen unfinished, short
# enough on the device here.
SLOW_ROUNDS = 2000

_WGSL_FILL = """
override block_x: u32 = 64;
struct Args { v: T, n: i32 }
@group(0) @binding(0) var<storage, read_write> out: array<T>;
@group(0) @binding(1) var<uniform> args: Args;
@compute @workgroup_size(block_x)
fn NAME(@builtin(global_invocation_id) id: vec3<u32>) { if (i32(id.x) < args.n) { out[id.x] = args.v; } }
"""
_WGSL_COPY = """
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read> src: array<i32>;
@group(0) @binding(1) var<storage, read_write> dst: array<i32>;
@group(0) @binding(2) var<uniform> n: i32;
@compute @workgroup_size(block_x)
fn copy(@builtin(global_invocation_id) id: vec3<u32>) { if (i32(id.x) < n) { dst[id.x] = src[id.x]; } }
"""
RELIABILITY = (
    {
        "fill": _WGSL_FILL.replace("T", "i32").replace("NAME", "fill"),
        "fillf": _WGSL_FILL.replace("T", "f32").replace("NAME", "fillf"),
        "copy": _WGSL_COPY,
    },
    [
        "fill(int32* out, int32 v, int32 n; blockIdx.x, threadIdx.x)",
        "fillf(float32* out, float32 v, int32 n; blockIdx.x, threadIdx.x)",
        "copy(const int32* src, int32* dst, int32 n; blockIdx.x, threadIdx.x)",
    ],
)

# Declares what the contract's signature says (the reflector checks it).
FALLBACK = (
    """@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> a: f32;
@group(0) @binding(2) var<uniform> n: i32;
override block_x: u32 = 64;
@compute @workgroup_size(block_x) fn scale(@builtin(global_invocation_id) i: vec3<u32>) {
  if (i32(i.x) < n) { x[i.x] *= a; }
}
""",
    "wgsl",
    None,
)
