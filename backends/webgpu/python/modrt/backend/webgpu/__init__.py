"""modrt.backend.webgpu: WGSL codegen. The receiving runtime is a browser's; here
WebGPU modules are always the canonical fallback module."""

from __future__ import annotations

from modrt import backend
from modrt._codegen import Source, per_function
from modrt.runtime import Device, Payload
from modrt.target import Target


def detect_target(dev: Device) -> Target:
    return Target("webgpu", max_threads_per_block=dev.max_threads_per_block)


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """WGSL, one source per function (or one shared), carried as fmt "wgsl"."""
    shaders = {name: text if isinstance(text, str) else text.decode() for name, text in per_function(source, functions).items()}
    joined = "\n".join(f"// function: {n}\n{t}" for n, t in shaders.items())
    return Payload.create(
        "multi-shader", "wgsl", functions, shaders={n: t.encode() for n, t in shaders.items()}, sources={"wgsl": joined}
    )


def register_backend() -> None:
    backend.register_in_tree("webgpu", detect_target, codegen)
