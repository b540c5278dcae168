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


def reflect(source: str | bytes) -> list[str]:
    """The canonical signature of every __kernel in OpenCL C `source`, read by
    clang's OpenCL front end (docs/formats/opencl.md)."""
    from . import reflection  # imported on use: it costs milliseconds at `import modrt`

    return reflection.reflect(text_of(source))


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """OpenCL C is carried as source (fmt "cl") and built by the runtime on
    first use. Given signatures are checked against the kernels' own
    parameters (docs/formats/opencl.md)."""
    text = text_of(source)
    from modrt import _validate

    if _validate.enabled() and _validate._clang() is not None:
        from modrt import _signature_match

        from . import reflection

        readable = reflection.readable(text)
        known = {r.partition("(")[0] for r in readable}
        # A kernel modrt cannot read is left to its signature; one the source lacks, to _validate's error.
        _signature_match.check("OpenCL C", readable, [f for f in functions if f.partition("(")[0].strip() in known])
    return Payload.create("single-binary", "cl", functions, code=text.encode(), sources={"cl": text})


def register_backend() -> None:
    backend.register_in_tree("opencl", detect_target, codegen)
