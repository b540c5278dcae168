"""modrt.backend.webgpu: WGSL codegen, and the wgpu-native library for the runtime.

The runtime (backends/webgpu/: webgpu_device.cc opens the library and the
device, webgpu_module.cc runs modules; docs/WEBGPU.md) runs WGSL on wgpu-native,
the library inside the `wgpu` package, which it dlopens. This hook finds that
library without importing `wgpu` and hands the paths to the runtime:
MODRT_WEBGPU_DRIVER_LIBRARY overrides everything (the runtime reads it itself);
otherwise wgpu/resources/libwgpu_native*.so under each sys.path entry and
WHEEL_ROOTS, then the runtime's own list (the same roots, PYTHONPATH, and the
loader's path).

Kernel conventions (docs/formats/wgsl.md): the shader's own declarations
are the binding layout. Its arguments are its `@group(G) @binding(B)` storage
buffers and uniforms in (group, binding) order, any groups and binding
numbers: a storage buffer is a buffer argument (`const` when declared `read`),
a uniform scalar one scalar argument, a uniform struct one scalar argument per
member. `modrt.compile(wgsl, "webgpu")` infers the signature from them (with
launch parameters blockIdx.x/y/z, threadIdx for each @workgroup_size
dimension that names an override constant, and dyn_shared_mem when `override
dyn_shared_mem` is declared); a given signature is checked against them. blockIdx
is the number of workgroups.
"""

from __future__ import annotations

import os
import sys

from modrt import sdk
from modrt.sdk import WHEEL_ROOTS, Device, Module, Payload, Source, Target, call, device_limits, text_shaders

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# The library's names inside the `wgpu` wheel, as wgpu-py prefers them.
LIBRARY_NAMES = ("libwgpu_native-release.so", "libwgpu_native.so")

# Properties of a WebGPU adapter that decide what code may be generated for it.
TARGET_ATTRS = (
    "adapter_name",
    "backend",
    "device_type",
    "max_storage_buffer_binding_size",
    "max_storage_buffers_per_shader_stage",
    "max_uniform_buffer_binding_size",
)


def driver_candidates() -> list[str]:
    """The `wgpu` package's wgpu-native libraries this interpreter can see,
    in search order (files that exist; `wgpu` itself is not imported)."""
    found: list[str] = []
    for root in [*sys.path, *WHEEL_ROOTS]:
        resources = os.path.join(root or ".", "wgpu", "resources")
        for name in LIBRARY_NAMES:
            path = os.path.join(resources, name)
            if os.path.isfile(path) and os.path.realpath(path) not in found:
                found.append(os.path.realpath(path))
    return found


def detect_target(dev: Device) -> Target:
    """A webgpu Target from the adapter's real limits."""
    return Target(
        "webgpu",
        **device_limits(dev),
        **{name: dev.attr(name) for name in TARGET_ATTRS},
        supports_float16=bool(dev.attr("supports_float16")),
    )


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """WGSL, one source per function (or one shared), carried as fmt "wgsl"."""
    return text_shaders(source, functions, "wgsl")


def reflect(source: str | bytes) -> list[str]:
    """The signature of each @compute entry point of WGSL `source`, read
    from its declarations (through libmodrt_compiler.so: the runtime's own
    scanner, runtime or not)."""
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    return call("webgpu.reflect", text).splitlines()


def _buffer_fits(given: str, source: str | bytes, index: int) -> bool:
    """Whether a `given` buffer may be bound as argument `index`: its own
    element type, or 8- and 16-bit data packed in 32-bit words (WGSL has no
    8-bit types; tinygrad packs uint8 and half into array<atomic<u32>>)."""
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    return bool(call("webgpu.buffer_fits", given, text, index))


def check(source: Any, functions: Sequence[str], filename: Any) -> None:
    """naga, through wgpu-native, where an adapter is found (source_check)."""
    from . import source_check  # imported on use: it costs milliseconds at `import modrt`

    source_check.check(source, functions, filename)


def pipelines_created(module: Module) -> int:
    """How many compute pipelines a real webgpu module has created: one per
    function and launch shape (override constants), reused by later launches."""
    return call("webgpu.pipelines_created", module)


# The counts of submission_counts, by name.
SUBMISSION_COUNTS = ("launches", "graph_recordings", "graph_replays")


def submission_counts(device: Device) -> dict[str, int]:
    """What webgpu(0) has submitted since the process began: launches encoded
    one by one (`launches`), graph recordings (`graph_recordings`: one per
    capture and one per replay that rebinds buffers differently from the
    graph's last), and graph replays (`graph_replays`: one command buffer
    each). A rebound replay that ran natively adds one replay (and one
    recording when its bindings changed) and no launch."""
    return {name: call("webgpu.submission_count", device.index, name) for name in SUBMISSION_COUNTS}


# `modrt demo`'s kernel (c = a + b over float32), in this backend's language.
DEMO_SOURCE = """\
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> n: i32;
@compute @workgroup_size(64)
fn vadd(@builtin(global_invocation_id) id: vec3<u32>) {
  if (i32(id.x) < n) { c[id.x] = a[id.x] + b[id.x]; }
}
"""
DEMO_SIGNATURE = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"

BACKEND = sdk.Backend(
    "webgpu",
    codegen=codegen,
    detect=detect_target,
    check=check,
    reflector=sdk.Reflector(reflect, buffer_fits=_buffer_fits),
    language="WGSL",
    demo=(DEMO_SOURCE, DEMO_SIGNATURE),
)


def register_backend() -> None:
    sdk.register_in_tree(BACKEND)
    if sdk.runtime_status("webgpu").loaded and not os.environ.get("MODRT_WEBGPU_DRIVER_LIBRARY"):
        call("webgpu.driver_candidates", ":".join(driver_candidates()))
