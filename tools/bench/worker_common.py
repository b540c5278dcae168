"""What every worker case shares: the kernels the rows run, their sizes, and
`timed`, the loop a case hands back (see worker.py)."""

from __future__ import annotations

import time
from collections.abc import Callable

Run = Callable[[int], float]

N_ELEMENTS = 64
# The launch kernel: one work-group of 64 items, one buffer and one scalar.
LAUNCH_SOURCE = """
__kernel void add_one(__global float* a, int n) {
  int i = get_global_id(0);
  if (i < n) a[i] += 1.0f;
}
"""
ARTIFACT_KERNELS = 100
# The Vulkan dispatch kernel, the same as LAUNCH_SOURCE: binding 0, n as a push
# constant, the workgroup size from specialization constant 0. The C floor
# (floors/vulkan_dispatch.c) runs this shader's SPIR-V too.
VULKAN_SOURCE = """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer A { float a[]; };
layout(push_constant) uniform Args { int n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) a[i] += 1.0;
}
"""
# The same kernel in WGSL, for wgpu-py (and modrt's webgpu backend): WebGPU has
# no push constants, so n is the buffer's length.
WGSL_SOURCE = """
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@compute @workgroup_size(64)
fn add_one(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&a)) { a[id.x] = a[id.x] + 1.0; }
}
"""
# Bytes per copy in the bandwidth rows.
BANDWIDTH_BYTES = {"opencl": 64 << 20, "vulkan": 64 << 20, "cuda": 256 << 20}
# Where the toolchain root installs wgpu-py (pip --target).
WGPU_ROOT = "/opt/modrt/pip"


def artifact_source(count: int = ARTIFACT_KERNELS) -> str:
    """`count` distinct small kernels in one OpenCL program."""
    return "\n".join(
        f"__kernel void k{i}(__global float* a, int n) {{\n"
        f"  int j = get_global_id(0);\n"
        f"  if (j < n) a[j] = a[j] * {i + 1}.0f + {i}.0f;\n"
        f"}}"
        for i in range(count)
    )


def timed(body: Callable[[], None]) -> Run:
    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            body()
        return time.perf_counter() - start

    return run


def modrt_opencl():  # type: ignore[no-untyped-def]
    import modrt

    dev = modrt.device("opencl")
    if not dev.exist:
        raise ImportError(f"no OpenCL device in modrt: {dev.unavailable_reason}")
    return modrt, dev


def check_ran(values, times: int) -> None:  # type: ignore[no-untyped-def]
    """The kernel really ran: a measured launch that computes nothing is no launch."""
    if not (values == float(times)).all():
        raise RuntimeError(f"add_one did not run {times} time(s): {values[:4]}...")


def modrt_device(kind: str):  # type: ignore[no-untyped-def]
    import modrt

    dev = modrt.device(kind)
    if not dev.exist:
        raise ImportError(f"no {kind} device in modrt: {dev.unavailable_reason}")
    return modrt, dev


def pyopencl_pocl():  # type: ignore[no-untyped-def]
    import pyopencl as cl

    for platform in cl.get_platforms():
        if "Portable Computing Language" in platform.name or "pocl" in platform.name.lower():
            device = platform.get_devices()[0]
            ctx = cl.Context(devices=[device])
            return cl, ctx, cl.CommandQueue(ctx)
    raise ImportError("pyopencl finds no PoCL platform")
