"""NVRTC for CUDA codegen: CUDA C++ to PTX without a GPU, a driver or a toolkit.

NVRTC is driven in one place, in C++ (backends/cuda/nvrtc.cc): the runtime
compiles fmt "cuda" modules with it, and libmodrt_compiler.so (loaded with or
without the CUDA runtime) exposes it to codegen as the backend.cuda.nvrtc.*
globals this module calls. So the library search and the arch policy are the
same for codegen and for compile-on-load:

- the library: MODRT_NVRTC_LIBRARY; else an nvidia-cuda-nvrtc wheel
  (nvidia/cuda_nvrtc/lib) under one of package_roots() (sys.path, then
  WHEEL_ROOTS); else the loader's own path (a CUDA toolkit's libnvrtc.so.12);
- the arch: the newest one this NVRTC supports that is <= the one asked for
  (an arch-specific one such as sm_90a only as itself); none is a ValueError
  naming the supported archs;
- the CUDA headers (cuda_fp16.h, cuda_bf16.h, <cuda/std/...>): -I for the
  include directory of the nvidia-cuda-runtime-cu12 and nvidia-cuda-cccl-cu12
  wheels under the same package roots (header_dirs()), which modrt-cuda
  depends on; then the user's options.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from modrt import sdk

# Where wheels may be installed outside sys.path (pip --target).
WHEEL_ROOTS: tuple[str, ...] = sdk.WHEEL_ROOTS


def package_roots() -> str:
    """The directories Python packages live in, one a line: what the native
    search is given (it never asks Python). Each codegen call passes them as
    they are now; the hook passes them to the runtime DSO when it loads it."""
    return "\n".join([*sys.path, *WHEEL_ROOTS])


def _native(name: str) -> sdk.Function:
    fn = sdk.get_global_func(f"backend.cuda.nvrtc.{name}", allow_missing=True)
    if fn is None:
        raise RuntimeError("NVRTC codegen lives in libmodrt_compiler.so, which is not loaded (MODRT_RUNTIME_ONLY=1?)")
    return fn


def find_library() -> str | None:
    """Path (or soname) of libnvrtc, or None when there is none here."""
    return _native("find")(package_roots())


def header_dirs() -> list[str]:
    """The CUDA header directories NVRTC is given (-I), from the NVIDIA wheels found here."""
    return [d for d in _native("header_dirs")(package_roots()).split("\n") if d]


class Nvrtc:
    """A loaded libnvrtc."""

    def __init__(self, path: str) -> None:
        self.path = path
        # Loads it: a RuntimeError "cannot load NVRTC from <path>: ..." when it does not.
        self.version: str = _native("version")(path)

    def supported_archs(self) -> list[int]:
        """Compute capabilities this NVRTC compiles for, e.g. [50, 52, ..., 120]."""
        return [int(a) for a in _native("supported_archs")(self.path).split(",") if a]

    def compile_to_ptx(self, source: str, arch: str, options: Sequence[str] = ()) -> bytes:
        """PTX text for `arch` ("sm_86", "sm_90a" or "compute_86") under the arch
        policy (module doc), with the CUDA headers and then `options`:
        ValueError when this NVRTC has no arch for it, NvrtcCompileError when
        NVRTC refuses the source (or an option)."""
        tool = f"NVRTC {self.version}, {_native('target')(self.path, arch)}"
        try:
            return _native("compile_ptx")(self.path, source, arch, "kernel.cu", "\n".join(options), package_roots())
        except ValueError as e:
            prefix = f"CUDA C++ does not compile ({tool}): "
            if str(e).startswith(prefix):
                raise NvrtcCompileError(tool, str(e)[len(prefix) :]) from None
            raise


class NvrtcCompileError(ValueError):
    """CUDA C++ that NVRTC refused: `tool` names NVRTC, `output` is its log."""

    def __init__(self, tool: str, output: str) -> None:
        self.tool = tool
        self.output = output
        super().__init__(f"CUDA C++ does not compile ({tool}): {output}")


_loaded: dict[str, Nvrtc] = {}


def load() -> Nvrtc | None:
    """The NVRTC found here, loaded once per path; None when there is none.
    A library named by MODRT_NVRTC_LIBRARY that does not load is an error."""
    path = find_library()
    if path is None:
        return None
    if path not in _loaded:
        _loaded[path] = Nvrtc(path)
    return _loaded[path]
