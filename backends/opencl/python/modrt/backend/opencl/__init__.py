"""modrt.backend.opencl: OpenCL devices (PoCL here), OpenCL C codegen."""

from __future__ import annotations

from modrt import backend
from modrt._codegen import Source, text_of
from modrt.runtime import Device, Payload
from modrt.target import Target, device_limits


def detect_target(dev: Device) -> Target:
    return Target(
        "opencl",
        device_name=dev.name,
        **device_limits(dev),
    )


def reflect(source: str | bytes) -> list[str] | None:
    """The canonical signature of every __kernel in OpenCL C `source`, read by
    clang's OpenCL front end (docs/formats/opencl.md); None where there is no clang."""
    from . import reflection  # imported on use: it costs milliseconds at `import modrt`

    return reflection.reflect(text_of(source))


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """OpenCL C is carried as source (fmt "cl") and built by the runtime on first use."""
    text = text_of(source)
    return Payload.create("single-binary", "cl", functions, code=text.encode(), sources={"cl": text})


def register_backend() -> None:
    backend.register_in_tree("opencl", detect_target, codegen, reflect)
