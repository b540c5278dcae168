"""The demo's kernel, c = a + b over float32, written once per target language."""

from __future__ import annotations

from typing import NamedTuple, Optional


class DemoKernel(NamedTuple):
    source: Optional[str]  # None: no kernel can be written here, see `why_not`
    signature: str
    launched: bool  # takes (grid, block) launch parameters
    why_not: str = ""


DEVICE_SIGNATURE = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"

_C = """\
void vadd(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
"""
_OPENCL = """\
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""
_CUDA = """\
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""
_HIP = "#include <hip/hip_runtime.h>\n" + _CUDA
# Buffers bind to set 0 in argument order, scalars are push constants, and
# threadIdx.x is specialization constant 0 (the Vulkan runtime's convention).
_GLSL = """\
#version 450
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Params { int n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(n)) c[i] = a[i] + b[i];
}
"""
_MSL = """\
#include <metal_stdlib>
using namespace metal;
kernel void vadd(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],
                 device float* c [[buffer(2)]], constant int& n [[buffer(3)]],
                 uint i [[thread_position_in_grid]]) {
  if (int(i) < n) c[i] = a[i] + b[i];
}
"""
_WGSL = """\
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> n: i32;
@compute @workgroup_size(64)
fn vadd(@builtin(global_invocation_id) id: vec3<u32>) {
  if (i32(id.x) < n) { c[id.x] = a[id.x] + b[id.x]; }
}
"""

KERNELS: dict[str, DemoKernel] = {
    "cpu": DemoKernel(_C, "vadd(float32*, float32*, float32*, int32)", launched=False),
    "opencl": DemoKernel(_OPENCL, DEVICE_SIGNATURE, launched=True),
    "cuda": DemoKernel(_CUDA, DEVICE_SIGNATURE, launched=True),
    "rocm": DemoKernel(_HIP, DEVICE_SIGNATURE, launched=True),
    "vulkan": DemoKernel(_GLSL, DEVICE_SIGNATURE, launched=True),
    "metal": DemoKernel(_MSL, DEVICE_SIGNATURE, launched=True),
    "webgpu": DemoKernel(_WGSL, DEVICE_SIGNATURE, launched=True),
    "hexagon": DemoKernel(
        None, DEVICE_SIGNATURE, launched=True,
        why_not="Hexagon modules are prebuilt shared objects and no Hexagon toolchain is installed",
    ),
}
