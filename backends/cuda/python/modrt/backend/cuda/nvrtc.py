"""NVRTC through ctypes: CUDA C++ to PTX without a GPU, a driver or a toolkit.

The library is looked for, in order: MODRT_NVRTC_LIBRARY; an
nvidia-cuda-nvrtc wheel (nvidia/cuda_nvrtc/lib) on sys.path or under one of
WHEEL_ROOTS; the loader's own path (a CUDA toolkit's libnvrtc.so.12).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from pathlib import Path

# Where wheels may be installed outside sys.path (pip --target): the
# toolchain root installs them under /opt/modrt/pip.
WHEEL_ROOTS: tuple[str, ...] = ("/opt/modrt/pip",)
SONAMES = ("libnvrtc.so.12", "libnvrtc.so")

_c = ctypes
_SIGNATURES = {
    "nvrtcVersion": [_c.POINTER(_c.c_int), _c.POINTER(_c.c_int)],
    "nvrtcGetNumSupportedArchs": [_c.POINTER(_c.c_int)],
    "nvrtcGetSupportedArchs": [_c.POINTER(_c.c_int)],
    "nvrtcCreateProgram": [_c.POINTER(_c.c_void_p), _c.c_char_p, _c.c_char_p, _c.c_int, _c.c_void_p, _c.c_void_p],
    "nvrtcDestroyProgram": [_c.POINTER(_c.c_void_p)],
    "nvrtcCompileProgram": [_c.c_void_p, _c.c_int, _c.POINTER(_c.c_char_p)],
    "nvrtcGetProgramLogSize": [_c.c_void_p, _c.POINTER(_c.c_size_t)],
    "nvrtcGetProgramLog": [_c.c_void_p, _c.c_char_p],
    "nvrtcGetPTXSize": [_c.c_void_p, _c.POINTER(_c.c_size_t)],
    "nvrtcGetPTX": [_c.c_void_p, _c.c_char_p],
}


def find_library() -> str | None:
    """Path (or soname) of libnvrtc, or None when there is none here."""
    chosen = os.environ.get("MODRT_NVRTC_LIBRARY")
    if chosen:
        return chosen
    for root in [*sys.path, *WHEEL_ROOTS]:
        lib = Path(root or ".", "nvidia", "cuda_nvrtc", "lib")
        if lib.is_dir():
            for name in SONAMES:
                if (lib / name).is_file():
                    return str(lib / name)
    return ctypes.util.find_library("nvrtc")


class Nvrtc:
    """A loaded libnvrtc."""

    def __init__(self, path: str) -> None:
        try:
            self.lib = ctypes.CDLL(path)
        except OSError as e:
            raise RuntimeError(f"cannot load NVRTC from {path}: {e}") from None
        self.path = path
        for name, args in _SIGNATURES.items():
            fn = getattr(self.lib, name)
            fn.argtypes = args
            fn.restype = ctypes.c_int
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        self.lib.nvrtcGetErrorString.argtypes = [ctypes.c_int]

    @property
    def version(self) -> str:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        return f"{major.value}.{minor.value}"

    def supported_archs(self) -> list[int]:
        """Compute capabilities this NVRTC compiles for, e.g. [50, 52, ..., 120]."""
        n = ctypes.c_int()
        self._check(self.lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)), "nvrtcGetNumSupportedArchs")
        archs = (ctypes.c_int * n.value)()
        self._check(self.lib.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
        return list(archs)

    def compile_to_ptx(self, source: str, arch: str) -> bytes:
        """PTX text for the virtual arch of `arch` ("sm_86", "sm_90a" or "compute_86")."""
        _, _, suffix = arch.partition("_")
        digits = "".join(c for c in suffix if c.isdigit())
        supported = self.supported_archs()
        if not digits or int(digits) not in supported:
            raise ValueError(
                f"NVRTC {self.version} cannot compile for {arch}; it supports {', '.join(f'sm_{a}' for a in supported)}"
            )
        prog = ctypes.c_void_p()
        self._check(
            self.lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None),
            "nvrtcCreateProgram",
        )
        try:
            options = (ctypes.c_char_p * 1)(f"--gpu-architecture=compute_{suffix}".encode())
            status = self.lib.nvrtcCompileProgram(prog, 1, options)
            if status != 0:
                raise NvrtcCompileError(
                    f"NVRTC {self.version}, compute_{suffix}",
                    f"{self.lib.nvrtcGetErrorString(status).decode()}\n{self._log(prog)}",
                )
            size = ctypes.c_size_t()
            self._check(self.lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "nvrtcGetPTXSize")
            ptx = ctypes.create_string_buffer(size.value)
            self._check(self.lib.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
            return ptx.raw.rstrip(b"\0")
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(prog))

    def _log(self, prog: ctypes.c_void_p) -> str:
        size = ctypes.c_size_t()
        self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        self.lib.nvrtcGetProgramLog(prog, log)
        return log.value.decode("utf-8", "replace")

    def _check(self, status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"{what} failed: {self.lib.nvrtcGetErrorString(status).decode()}")


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
