"""Test support for tests/reliability_test.py: one small kernel set per backend
with a device here, and helpers a child process uses to assert an error.

The kernels, the same on every backend:
  fill(out: int32*, v: int32, n: int32)      out[i] = v for i < n
  fillf(out: float32*, v: float32, n: int32) out[i] = v for i < n
  copy(src: const int32*, dst: int32*, n: int32)  dst[i] = src[i] for i < n
(the signatures name the arguments, so errors name them too).
Device kernels take (blockIdx.x, threadIdx.x) after the arguments; cpu kernels loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import modrt

BACKENDS = ("cpu", "opencl", "vulkan", "webgpu")

_C = """
#include <stdint.h>
void fill(int32_t* out, int32_t v, int32_t n) { for (int32_t i = 0; i < n; ++i) out[i] = v; }
void fillf(float* out, float v, int32_t n) { for (int32_t i = 0; i < n; ++i) out[i] = v; }
void copy(const int32_t* src, int32_t* dst, int32_t n) { for (int32_t i = 0; i < n; ++i) dst[i] = src[i]; }
"""

_CL = """
__kernel void fill(__global int* out, int v, int n) { int i = get_global_id(0); if (i < n) out[i] = v; }
__kernel void fillf(__global float* out, float v, int n) { int i = get_global_id(0); if (i < n) out[i] = v; }
__kernel void copy(__global const int* src, __global int* dst, int n) {
  int i = get_global_id(0); if (i < n) dst[i] = src[i];
}
"""

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

_CPU_SIGNATURES = [
    "fill(int32* out, int32 v, int32 n)",
    "fillf(float32* out, float32 v, int32 n)",
    "copy(const int32* src, int32* dst, int32 n)",
]
_DEVICE_SIGNATURES = [s.replace(")", "; blockIdx.x, threadIdx.x)") for s in _CPU_SIGNATURES]


def _sources(kind: str) -> object:
    if kind == "cpu":
        return _C
    if kind == "opencl":
        return _CL
    if kind == "vulkan":
        return {
            "fill": _GLSL_FILL.replace("\n", "\n#define T int\n", 1),
            "fillf": _GLSL_FILL.replace("\n", "\n#define T float\n", 1),
            "copy": _GLSL_COPY,
        }
    return {
        "fill": _WGSL_FILL.replace("T", "i32").replace("NAME", "fill"),
        "fillf": _WGSL_FILL.replace("T", "f32").replace("NAME", "fillf"),
        "copy": _WGSL_COPY,
    }


def device_or_skip_reason(kind: str) -> str:
    """Why `kind` cannot run here ("" when it can)."""
    if kind != "cpu" and not modrt.backend.runtime_status(kind).loaded:
        return f"the {kind} runtime is not in this build"
    dev = modrt.device(kind, 0)
    return "" if dev.exist else dev.unavailable_reason


class Kernels:
    """The kernels on device 0 of `kind`; calls take the launch for n items."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.dev = modrt.device(kind, 0)
        signatures = _CPU_SIGNATURES if kind == "cpu" else _DEVICE_SIGNATURES
        if kind == "vulkan":
            # Vulkan checks names against the GLSL's, which cannot say `out`
            # (a keyword): fill's buffer keeps the kernel's own name there.
            signatures = [s.replace("* out,", "*,") for s in signatures]
        self.module = modrt.compile(_sources(kind), kind, signatures)

    def launch(self, name: str, *args: object, n: int, grid: int | None = None, block: int = 64) -> None:
        if self.kind == "cpu":
            self.module[name](*args)
        else:
            self.module[name](*args, grid if grid is not None else max(1, (n + block - 1) // block), block)

    def fill(self, out: modrt.Tensor, v: object, n: int, **launch: int) -> None:
        self.launch("fill", out, v, n, n=n, **launch)

    def fillf(self, out: modrt.Tensor, v: object, n: int, **launch: int) -> None:
        self.launch("fillf", out, v, n, n=n, **launch)

    def copy(self, src: modrt.Tensor, dst: modrt.Tensor, n: int, **launch: int) -> None:
        self.launch("copy", src, dst, n, n=n, **launch)


def expect(error: type[BaseException], pattern: str, call: Callable[[], object]) -> BaseException:
    """Runs `call`, which must raise `error` with a message matching `pattern`."""
    try:
        call()
    except error as e:
        if not re.search(pattern, str(e)):
            raise AssertionError(f"{type(e).__name__}: {e!s} does not match {pattern!r}") from e
        return e
    raise AssertionError(f"no {error.__name__} (expected one matching {pattern!r})")


def use_in_child(kind: str, queue: object, inherited: tuple[Kernels, modrt.Tensor] | None) -> None:
    """A multiprocessing child's work; puts ("ran", values), ("refused",
    message) or ("error", text) on `queue`. `inherited` (fork only): the
    parent's kernels and a tensor, on a device the parent opened."""
    try:
        if inherited is not None:
            k, out = inherited
            dev = modrt.device(kind)
            pattern = r"cannot be used in this process: it was opened by process \d+ before this process was forked"
            messages = [
                str(expect(RuntimeError, pattern, call))
                for call in (
                    lambda: k.fill(out, 1, 64),
                    lambda: modrt.empty((4,), "int32", dev),
                    lambda: dev.sync(),
                    # A device tensor's copy to the host (a cpu tensor's memory is shared, not copied).
                    *([lambda: out.numpy()] if kind != "cpu" else []),
                )
            ]
            assert not dev.exist and "forked" in dev.unavailable_reason, dev.unavailable_reason
            queue.put(("refused", messages[0]))
            return
        k = Kernels(kind)
        out = modrt.empty((64,), "int32", k.dev)
        k.fill(out, 9, 64)
        queue.put(("ran", out.numpy().tolist()))
    except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent
        queue.put(("error", f"{type(e).__name__}: {e}"))
