"""modrt.backend.metal: Metal Shading Language codegen (source, compiled on the device)."""

from __future__ import annotations

from modrt import backend
from modrt._codegen import Source, text_shaders
from modrt.runtime import Device, Payload
from modrt.target import Target


def detect_target(dev: Device) -> Target:
    return Target(
        "metal",
        max_threads_per_block=dev.max_threads_per_block,
        max_shared_memory_per_block=dev.max_shared_memory_per_block,
        thread_warp_size=dev.warp_size,
    )


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """MSL, one source per function (or one shared), carried as fmt "metal"."""
    return text_shaders(source, functions, "metal")


def register_backend() -> None:
    backend.register_in_tree("metal", detect_target, codegen)
