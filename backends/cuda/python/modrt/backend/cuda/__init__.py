"""modrt.backend.cuda: CUDA C++ codegen (nvcc when present, else carried as source)."""

from __future__ import annotations

import shutil

from modrt import backend
from modrt._codegen import Source, run_tool, text_of
from modrt.runtime import Device, Payload
from modrt.target import Target, device_limits


def detect_target(dev: Device) -> Target:
    major, _, minor = (dev.compute_version or "0.0").partition(".")
    return Target(
        "cuda",
        arch=f"sm_{major}{minor}",
        **device_limits(dev),
        thread_warp_size=dev.warp_size,
    )


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """CUDA C++ to PTX with nvcc when it is installed; otherwise the source is
    kept as fmt "cuda", which the CUDA runtime compiles when it loads the module.
    Kernels need extern "C" so their names are unmangled."""
    text = text_of(source)
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return Payload.create("single-binary", "cuda", functions, code=text.encode(), sources={"cuda": text})
    arch = tgt.attrs.get("arch", "sm_70")
    ptx = run_tool([nvcc, "--ptx", f"-arch={arch}", "-o", "kernel.ptx", "kernel.cu"], {"kernel.cu": text}, "kernel.ptx")
    return Payload.create("single-binary", "ptx", functions, code=ptx, sources={"cuda": text})


def register_backend() -> None:
    backend.register_in_tree("cuda", detect_target, codegen)
