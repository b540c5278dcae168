"""Vulkan's kernels for the suites every backend shares, which find this module
by its name, `<backend>_kernels` (tests/backend_kernels.py), and for
Vulkan's own tests.

- DEVICE_LAYER: (sources, signatures) of `vadd`, `slow_add` and `spin`
  (tests/device_layer_kernels.py says what each does); NATIVE_STREAMS: the
  plugin has native streams (plugin_api.h, ModrtStreamExtension); NATIVE_GRAPHS:
  it records graphs itself (ModrtGraphExtension); SLOW_ROUNDS:
  slow_add's rounds for tests/native_streams_test.py;
- RELIABILITY: (sources, signatures) of `fill`, `fillf` and `copy`
  (tests/reliability_kernels.py);
- CONTRACT: what the runtime contract test (backends/runtime_contract_test.py)
  compiles and expects of this runtime DSO;
- FALLBACK: (source of `scale`, the format to inspect, the text it holds or
  None) for the fallback contract (tests/fallback_contract_test.py).
"""

from __future__ import annotations

SLOW_ADD_SIGNATURE = "slow_add(float32*, float32*, float32*, int32, int32; blockIdx.x, threadIdx.x)"

DEVICE_LAYER = (
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
)
NATIVE_STREAMS = True
NATIVE_GRAPHS = True
# Rounds of slow_add's busy work: long enough to be seen unfinished, short
# enough on the device here.
SLOW_ROUNDS = 2000

_GLSL_FILL = """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer Out { T o[]; };
layout(push_constant) uniform Args { T v; int n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < n) o[i] = v; }
"""
_GLSL_COPY = """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer Src { int src[]; };
layout(std430, binding = 1) buffer Dst { int dst[]; };
layout(push_constant) uniform Args { int n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < n) dst[i] = src[i]; }
"""
RELIABILITY = (
    {
        "fill": _GLSL_FILL.replace("\n", "\n#define T int\n", 1),
        "fillf": _GLSL_FILL.replace("\n", "\n#define T float\n", 1),
        "copy": _GLSL_COPY,
    },
    # Vulkan checks names against the GLSL's, which cannot say `out` (a
    # keyword): fill's buffer keeps the kernel's own name there.
    [
        "fill(int32*, int32 v, int32 n; blockIdx.x, threadIdx.x)",
        "fillf(float32*, float32 v, int32 n; blockIdx.x, threadIdx.x)",
        "copy(const int32* src, int32* dst, int32 n; blockIdx.x, threadIdx.x)",
    ],
)

CONTRACT = {
    "source": "#version 450\nlayout(local_size_x_id = 0) in;\n"
    "layout(set = 0, binding = 0) buffer X { float x[]; };\n"
    "layout(push_constant) uniform P { float a; int n; };\n"
    "void main() { int i = int(gl_GlobalInvocationID.x); if (i < n) x[i] *= a; }\n",
    "signature": "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)",
    "vendor_needed": ("vulkan",),
    "missing_driver": "{path}: cannot load the driver library",
}

# Declares what the contract's signature says (the reflector checks it).
FALLBACK = (
    """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(push_constant) uniform Args { float a; int n; };
void main() { if (gl_GlobalInvocationID.x < n) x[gl_GlobalInvocationID.x] *= a; }
""",
    "glsl",
    None,
)
