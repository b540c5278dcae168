"""modrt.backend.opencl: the OpenCL hook (runtime DSO, target detector, codegen)."""

from __future__ import annotations

from typing import Sequence, Union

from modrt import backend, target
from modrt._compile import register_codegen
from modrt.runtime import Device, Payload


def detect_target(dev: Device) -> target.Target:
    return target.Target(
        "opencl",
        device_name=dev.name,
        max_threads_per_block=dev.max_threads_per_block,
        max_shared_memory_per_block=dev.max_shared_memory_per_block,
        max_num_threads=dev.max_threads_per_block,
    )


def codegen(source: Union[str, bytes], functions: Sequence[str], tgt: target.Target) -> Payload:
    """OpenCL C is carried as source (fmt "cl") and built by the runtime on first use."""
    text = source.decode("utf-8") if isinstance(source, bytes) else source
    return Payload.create("single-binary", "cl", functions, code=text.encode("utf-8"), sources={"cl": text})


def register_backend() -> None:
    backend.load_runtime("opencl")
    target.register_device_target_detector("opencl", detect_target)
    register_codegen("opencl", codegen)
