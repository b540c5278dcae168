"""tinygrad's Program on modrt: a compiled kernel launched as a modrt function
with tinygrad's global/local sizes and values; `wait=True` times it with
modrt events on the device's clock, or on the host between device syncs
where the stream has no device timestamps (the device's time_launch)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from tinygrad.device import TinyELF

import modrt

from .compiler import WGSL_BACKENDS, buffer_dtypes, compile_kernel, kernel_signature, threaded, threaded_name
from .memory import ModrtBuffer


class LaunchDevice(Protocol):
    """What a program and a graph use of their MODRT device (modrt_tinygrad.device)."""

    backend: str
    arch: str | None
    modrt_device: modrt.Device

    def time_launch(self, launch: Callable[[], None]) -> float: ...


class ModrtProgram:
    def __init__(self, dev: LaunchDevice, obj: TinyELF) -> None:
        self.dev, self.name = dev, obj.name
        # WGSL (webgpu, vulkan): tinygrad's INFINITY uniform, a scalar, comes first.
        self.leading: tuple[float, ...] = (float("inf"),) if dev.backend in WGSL_BACKENDS else ()
        self.module = compile_kernel(dev.backend, dev.arch or "", obj)
        if dev.backend in WGSL_BACKENDS:
            # The shader's own element types (packed small dtypes are u32 words).
            self.buffer_dtypes = buffer_dtypes(self.module.signature(obj.name))
        else:
            _, self.buffer_dtypes = kernel_signature(dev.backend, obj)
        # A cpu kernel split over threads runs as its threaded entry, which
        # takes the thread count (global_size[0]) where tinygrad's vals leave
        # core_id None.
        self.threaded = dev.backend == "cpu" and threaded(obj)
        name = threaded_name(obj) if self.threaded else obj.name
        if dev.backend == "cpu":
            # Compiled by ModrtCCompiler from the signature its renderer wrote:
            # tinygrad passes buffers and values in the order of obj's.
            signature, _ = kernel_signature("cpu", obj)
            if (compiled := self.module.signature(name)) != name + signature[len(obj.name) :]:
                raise RuntimeError(
                    f"MODRT:cpu kernel {obj.name} was compiled as {compiled}, tinygrad calls {signature}"
                )
        self.function = self.module[name]
        self.grid, self.blocks = dev.backend != "cpu", dev.backend not in WGSL_BACKENDS
        # Where the scalars (`scalars`) begin among a launch's values.
        self.first_scalar = len(self.leading) + len(self.buffer_dtypes)

    def scalars(
        self,
        global_size: tuple[int, int, int] = (1, 1, 1),
        local_size: tuple[int, int, int] | None = (1, 1, 1),
        vals: tuple[int | None, ...] = (),
    ) -> list[int]:
        """The values a launch takes after its buffers: tinygrad's vals, then
        the global and local sizes where the backend takes them."""
        if self.threaded:
            vals = tuple(global_size[0] if v is None else v for v in vals)
        tail: list[Any] = [*vals]
        if self.grid:
            tail += global_size
        if self.blocks and self.grid:
            tail += local_size if local_size is not None else (1, 1, 1)
        return tail

    def __call__(
        self,
        *bufs: ModrtBuffer,
        global_size: tuple[int, int, int] = (1, 1, 1),
        local_size: tuple[int, int, int] | None = (1, 1, 1),
        vals: tuple[int | None, ...] = (),
        wait: bool = False,
        **kw: Any,
    ) -> float | None:
        args = [
            *self.leading,
            *(b.typed(d) for b, d in zip(bufs, self.buffer_dtypes)),
            *self.scalars(global_size, local_size, vals),
        ]
        if not wait:
            self.function(*args)
            return None
        return self.dev.time_launch(lambda: self.function(*args))
