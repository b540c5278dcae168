"""tinygrad's MODRT device: tinygrad's renderers, modrt's compile, memory and launch.

One tinygrad device per modrt backend and device index:

    MODRT:opencl  MODRT:opencl:1  MODRT:webgpu  MODRT:vulkan  MODRT:cpu  MODRT:cuda

`DEV=MODRT:opencl` makes tinygrad's default device `MODRT` with the target
renderer `OPENCL`; the plain `MODRT` device (and `MODRT:<n>`, which tinygrad
uses for device n of the default) takes its backend from that renderer, its
index from the target's arch (`DEV=MODRT:opencl:1`), or, with neither, the first
of cuda, opencl, webgpu, vulkan, cpu that has a device here.

The pieces, by tinygrad's own roles (each module stands on those before it):
- memory.py: the allocator; buffers are modrt tensors of bytes, viewed as
  each kernel's element types; no buffer views at an offset (_views.py);
- compiler.py: tinygrad's renderers for each backend and modrt's compile;
- program.py: the launch of a compiled kernel;
- graph.py: TinyJit's batches of kernels replay as one modrt.Graph each, with
  the jitted function's input buffers rebound per call;
- this module: the device, which puts them together.
"""

from __future__ import annotations

import functools
import platform
import time
import warnings
from collections.abc import Callable
from typing import Any

from tinygrad.device import Compiled
from tinygrad.helpers import DEV

import modrt

from . import _views
from .compiler import RENDERERS, WGSL_BACKENDS, cuda_arch
from .memory import ModrtAllocator
from .program import ModrtProgram

DEVICE_NAME = "MODRT"
# The backends a MODRT device can run on, in the order a plain `MODRT` picks one.
BACKENDS = ("cuda", "opencl", "webgpu", "vulkan", "cpu")


def parse_device(device: str) -> tuple[str, int]:
    """(modrt backend, device index) of a tinygrad device string."""
    parts = device.split(":")
    if parts[0].upper() != DEVICE_NAME or len(parts) > 3:
        raise ValueError(f"{device!r} is not a MODRT device (MODRT, MODRT:<backend>, MODRT:<backend>:<index>)")
    if len(parts) == 1 or parts[1].isdigit():
        target = DEV.target(DEVICE_NAME)
        backend = target.renderer.lower() or default_backend()
        index = int(parts[1]) if len(parts) > 1 else int(target.arch or 0)
        return _known(backend, device), index
    index = parts[2] if len(parts) == 3 else "0"
    if not index.isdigit():
        raise ValueError(f"{device!r}: the device index {index!r} is not a number")
    return _known(parts[1].lower(), device), int(index)


def _known(backend: str, device: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(
            f"{device!r}: modrt backend {backend!r} has no tinygrad device; choose one of {', '.join(BACKENDS)}"
        )
    return backend


@functools.cache
def default_backend() -> str:
    for backend in BACKENDS:
        if modrt.device(backend).exist:
            return backend
    raise RuntimeError(
        "MODRT: no modrt backend has a device here: "
        + ", ".join(f"{b}: {modrt.device(b).unavailable_reason}" for b in BACKENDS)
    )


class ModrtDevice(Compiled):
    def __init__(self, device: str) -> None:
        self.backend, index = parse_device(device)
        self.modrt_device = modrt.device(self.backend, index)
        if not self.modrt_device.exist:
            raise RuntimeError(
                f"{device}: modrt {self.backend}({index}) does not exist: {self.modrt_device.unavailable_reason}"
            )
        from .graph import ModrtGraph  # imports tinygrad's JIT, which needs tinygrad.device complete

        allocator = ModrtAllocator(self, self.modrt_device, whole_words=self.backend in WGSL_BACKENDS)
        super().__init__(
            device, allocator, [RENDERERS[self.backend]], ModrtProgram, graph=ModrtGraph, arch=self._arch()
        )
        self.device_id = index
        self.device_timing = True  # until a stream says it has no device timestamps

    def _arch(self) -> str:
        if self.backend == "cpu":
            # tinygrad's "<arch>,<cpu>" (its C compiler's -march); modrt's compiles for the host.
            return f"{platform.machine()},native"
        if self.backend == "opencl":
            return ",".join(_opencl_extensions(self.modrt_device))
        if self.backend == "cuda":
            return cuda_arch(self.modrt_device.compute_version)
        if self.backend == "webgpu" and self.modrt_device.attr("supports_float16"):
            # What tinygrad's own WEBGPU device declares when its adapter has the
            # feature: its WGSL renderer then runs half in f16.
            return "shader-f16"
        return ""

    def _select_renderer(self) -> Any:
        # One renderer per device: its backend's, whatever DEV names for others.
        # Its target names this device: BEAM search times kernels on Device[target.device].
        key = (RENDERERS[self.backend],)
        if key not in self.cached_renderer:
            from tinygrad.helpers import Target

            target = Target(self.device, self.backend.upper(), self.arch or "")
            self.cached_renderer[key] = RENDERERS[self.backend](target)
        return self.cached_renderer[key]

    def synchronize(self) -> None:
        self.modrt_device.sync()

    def time_launch(self, launch: Callable[[], None]) -> float:
        """Seconds `launch` ran: from modrt events on the device's clock where
        its stream has device timestamps, else on the host between two device
        syncs (modrt never substitutes host time for an event's, so the
        choice is made here, once per device)."""
        stream = modrt.current_stream(self.modrt_device) if self.device_timing else None
        self.synchronize()
        begin = time.perf_counter()
        start = stream.record() if stream is not None else None
        launch()
        end = stream.record() if stream is not None else None
        self.synchronize()
        host = time.perf_counter() - begin
        if start is not None and end is not None:
            try:
                return end.elapsed_ms(start) / 1e3
            except RuntimeError:  # this device's streams have no device timestamps
                self.device_timing = False
        return host


# tinygrad's OpenCL renderer emits double only where the target's arch names
# cl_khr_fp64; found by building a kernel that uses it on the device. Half is
# left out: tinygrad then emulates it (as on PoCL, which has no cl_khr_fp16).
_FP64_PROBE = "__kernel void probe(__global double* a) { a[0] = 1.0; }"


@functools.cache
def _opencl_extensions(device: modrt.Device) -> tuple[str, ...]:
    try:
        with warnings.catch_warnings():  # where clang is missing: the probe's own source needs no warning
            warnings.simplefilter("ignore", modrt.SourceNotCheckedWarning)
            warnings.simplefilter("ignore", modrt.CompileWarning)
            modrt.compile(_FP64_PROBE, "opencl", ["probe(float64*; blockIdx.x, threadIdx.x)"])
    except (modrt.CompileError, ValueError):
        return ()
    return ("cl_khr_fp64",)


_views.forbid_views_on(DEVICE_NAME)
