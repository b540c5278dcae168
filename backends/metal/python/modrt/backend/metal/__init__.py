"""modrt.backend.metal: Metal Shading Language codegen (source, compiled on the device)."""

from __future__ import annotations

from modrt import backend
from modrt._codegen import Source, text_shaders
from modrt.runtime import Device, Payload
from modrt.target import Target, device_limits


def detect_target(dev: Device) -> Target:
    return Target(
        "metal",
        **device_limits(dev),
        thread_warp_size=dev.warp_size,
    )


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """MSL, one source per function (or one shared), carried as fmt "metal"."""
    return text_shaders(source, functions, "metal")


def register_backend() -> None:
    backend.register_in_tree("metal", detect_target, codegen)
