"""modrt.backend.metal: Metal Shading Language codegen (source, compiled on the device)."""

from __future__ import annotations

from modrt import sdk
from modrt.sdk import Device, Payload, Source, Target, device_limits, text_shaders

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def detect_target(dev: Device) -> Target:
    return Target(
        "metal",
        **device_limits(dev),
        thread_warp_size=dev.warp_size,
    )


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """MSL, one source per function (or one shared), carried as fmt "metal"."""
    return text_shaders(source, functions, "metal")


def check(source: Any, functions: Sequence[str], filename: Any) -> None:
    """MSL has one front end, Apple's metal compiler: nothing checks it here."""
    sdk.not_checked(
        "metal",
        "MSL can be checked only on macOS, with Apple's metal compiler; it is compiled by the "
        "Metal runtime when the module is loaded",
    )


# `modrt demo`'s kernel (c = a + b over float32), in this backend's language.
DEMO_SOURCE = """\
#include <metal_stdlib>
using namespace metal;
kernel void vadd(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],
                 device float* c [[buffer(2)]], constant int& n [[buffer(3)]],
                 uint i [[thread_position_in_grid]]) {
  if (int(i) < n) c[i] = a[i] + b[i];
}
"""
DEMO_SIGNATURE = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"

BACKEND = sdk.Backend(
    "metal",
    codegen=codegen,
    detect=detect_target,
    check=check,
    language="Metal Shading Language",
    demo=(DEMO_SOURCE, DEMO_SIGNATURE),
)


def register_backend() -> None:
    sdk.register_in_tree(BACKEND)
