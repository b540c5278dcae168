"""modrt.backend.cuda: CUDA C++ codegen (nvcc, else NVRTC, else carried as source)."""

from __future__ import annotations

import warnings

from modrt import _ffi, backend
from modrt._codegen import Source, ToolError, find_tool, run_tool, text_of
from modrt.runtime import Device, Payload
from modrt.target import Target, device_limits

# When the target names no arch: PTX for this virtual arch runs (JIT-compiled
# by the driver) on every GPU from Turing on; older ones are deprecated in NVRTC 12.
DEFAULT_ARCH = "sm_75"


def detect_target(dev: Device) -> Target:
    major, _, minor = (dev.compute_version or "0.0").partition(".")
    return Target(
        "cuda",
        arch=f"sm_{major}{minor}",
        **device_limits(dev),
        thread_warp_size=dev.warp_size,
    )


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """CUDA C++ to PTX with nvcc when it is installed, else with NVRTC when a
    libnvrtc is found (see modrt.backend.cuda.nvrtc for the library search and
    the arch policy, shared with the runtime); without either the source
    is kept as fmt "cuda", which the CUDA runtime compiles when it loads the
    module. Kernels need extern "C" so their names are unmangled."""
    text = text_of(source)
    arch = tgt.attrs.get("arch", DEFAULT_ARCH)
    nvcc = find_tool("nvcc")
    if nvcc is not None:
        try:
            ptx = run_tool(
                [nvcc, "--ptx", f"-arch={arch}", "-o", "kernel.ptx", "kernel.cu"], {"kernel.cu": text}, "kernel.ptx"
            )
        except ToolError as e:
            from modrt import _validate  # on failure only: it costs milliseconds to import

            raise _validate.tool_failed("cuda", functions, "kernel.cu", e) from None
        return Payload.create("single-binary", "ptx", functions, code=ptx, sources={"cuda": text})
    from . import nvrtc  # imported on use: it costs milliseconds at `import modrt`

    compiler = nvrtc.load()
    if compiler is not None:
        try:
            ptx = compiler.compile_to_ptx(text, arch)
        except nvrtc.NvrtcCompileError as e:
            from modrt import _validate  # on failure only: it costs milliseconds to import

            raise _validate.tool_failed("cuda", functions, "kernel.cu", e) from None
        return Payload.create("single-binary", "ptx", functions, code=ptx, sources={"cuda": text})
    warnings.warn(
        "modrt: neither nvcc nor NVRTC is installed, so CUDA C++ is kept as source (fmt 'cuda'); "
        "the CUDA runtime compiles it with NVRTC when the module is loaded. Install the "
        "nvidia-cuda-nvrtc-cu12 wheel (or set MODRT_NVRTC_LIBRARY) to get PTX here.",
        RuntimeWarning,
        stacklevel=2,
    )
    return Payload.create("single-binary", "cuda", functions, code=text.encode(), sources={"cuda": text})


def _nvrtc_package_roots() -> str:
    from . import nvrtc

    return nvrtc.package_roots()


def register_backend() -> None:
    # The one native NVRTC search (backends/cuda/nvrtc.h), for codegen and for
    # the runtime's compile-on-load alike, asks this where Python packages
    # live, so NVRTC from a wheel is found the same way by both.
    _ffi.register_func("backend.cuda.nvrtc_package_roots", _nvrtc_package_roots, override=True)
    backend.register_in_tree("cuda", detect_target, codegen)
