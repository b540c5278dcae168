"""modrt.backend.webgpu: WGSL codegen. The receiving runtime is a browser's; here
WebGPU modules are always the canonical fallback module."""

from __future__ import annotations

from modrt import backend
from modrt._codegen import Source, text_shaders
from modrt.runtime import Device, Payload
from modrt.target import Target


def detect_target(dev: Device) -> Target:
    return Target("webgpu", max_threads_per_block=dev.max_threads_per_block)


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """WGSL, one source per function (or one shared), carried as fmt "wgsl"."""
    return text_shaders(source, functions, "wgsl")


def register_backend() -> None:
    backend.register_in_tree("webgpu", detect_target, codegen)
