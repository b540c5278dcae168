"""OpenCL's kernels for the suites every backend shares, which find this module
by its name, `<backend>_kernels` (tests/backend_kernels.py), and for
OpenCL's own tests.

- DEVICE_LAYER: (source, signatures) of `vadd`, `slow_add` and `spin`
  (tests/device_layer_kernels.py says what each does); NATIVE_STREAMS: the
  plugin has native streams (plugin_api.h, ModrtStreamExtension); NATIVE_GRAPHS:
  it records graphs itself (ModrtGraphExtension); SLOW_ROUNDS:
  slow_add's rounds for tests/native_streams_test.py;
- INC (a[i] += 1) and BLOCK_SUM (a sum per work-group in __local memory
  sized at launch): OpenCL's own tests add them to DEVICE_LAYER's;
- RELIABILITY: (sources, signatures) of `fill`, `fillf` and `copy`
  (tests/reliability_kernels.py);
- CONTRACT: what the runtime contract test (backends/runtime_contract_test.py)
  compiles and expects of this runtime DSO.
"""

from __future__ import annotations

SLOW_ADD_SIGNATURE = "slow_add(float32*, float32*, float32*, int32, int32; blockIdx.x, threadIdx.x)"

DEVICE_LAYER = (
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
)
NATIVE_STREAMS = True
NATIVE_GRAPHS = True
# Rounds of slow_add's busy work: long enough to be seen unfinished, short
# enough on the device here (PoCL's is the fastest of the three).
SLOW_ROUNDS = 20000

INC = (
    """
__kernel void inc(__global float* a, int n) {
  int i = get_global_id(0);
  if (i < n) a[i] += 1.0f;
}
""",
    "inc(float32*, int32; blockIdx.x, threadIdx.x)",
)
BLOCK_SUM = (
    """
__kernel void block_sum(__global const int* x, __global int* out, __local int* scratch) {
  int lid = get_local_id(0);
  scratch[lid] = x[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}
""",
    "block_sum(int32*, int32*; blockIdx.x, threadIdx.x, dyn_shared_mem)",
)

RELIABILITY = (
    """
__kernel void fill(__global int* out, int v, int n) { int i = get_global_id(0); if (i < n) out[i] = v; }
__kernel void fillf(__global float* out, float v, int n) { int i = get_global_id(0); if (i < n) out[i] = v; }
__kernel void copy(__global const int* src, __global int* dst, int n) {
  int i = get_global_id(0); if (i < n) dst[i] = src[i];
}
""",
    [
        "fill(int32* out, int32 v, int32 n; blockIdx.x, threadIdx.x)",
        "fillf(float32* out, float32 v, int32 n; blockIdx.x, threadIdx.x)",
        "copy(const int32* src, int32* dst, int32 n; blockIdx.x, threadIdx.x)",
    ],
)

CONTRACT = {
    "source": "__kernel void scale(__global float* x, float a, int n) { int i = get_global_id(0); "
    "if (i < n) x[i] *= a; }",
    "signature": "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)",
    "vendor_needed": ("opencl",),
    "missing_driver": "{path}: cannot load the driver library",
}
