"""modrt.backend.hexagon: Hexagon modules are prebuilt shared objects, given as bytes."""

from __future__ import annotations

from modrt import backend
from modrt._codegen import Source
from modrt.runtime import Device, Payload
from modrt.target import Target


def detect_target(dev: Device) -> Target:
    return Target("hexagon", name=dev.name)


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """`source` is the shared object built by the Hexagon toolchain (fmt "so")."""
    if not isinstance(source, bytes) or source[:4] != b"\x7fELF":
        raise ValueError("a Hexagon module is a prebuilt shared object: pass its ELF bytes")
    return Payload.create("single-binary", "so", functions, code=source)


def register_backend() -> None:
    backend.register_in_tree("hexagon", detect_target, codegen)
