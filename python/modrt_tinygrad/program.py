"""tinygrad's Program on modrt: a compiled kernel launched as a modrt function
with tinygrad's global/local sizes and values; `wait=True` times it with
modrt events on the device's clock, or on the host between device syncs
where the stream has no device timestamps (the device's time_launch)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from tinygrad.device import TinyELF

import modrt
from modrt.sdk import parse_signature

from .compiler import WGSL_BACKENDS, buffer_dtypes, compile_kernel, kernel_signature, spirv_arguments
from .memory import ModrtBuffer


class LaunchDevice(Protocol):
    """What a program and a graph use of their MODRT device (modrt_tinygrad.device)."""

    backend: str
    arch: str | None
    modrt_device: modrt.Device

    def uniform(self, dtype: str, value: float) -> modrt.Tensor: ...

    def time_launch(self, launch: Callable[[], None]) -> float: ...


class ModrtProgram:
    def __init__(self, dev: LaunchDevice, obj: TinyELF) -> None:
        self.dev, self.name = dev, obj.name
        # WGSL on webgpu: tinygrad's INFINITY uniform, a scalar, comes first.
        self.leading: tuple[float, ...] = (float("inf"),) if dev.backend == "webgpu" else ()
        self.module = compile_kernel(dev.backend, dev.arch or "", obj)
        self.spirv_arguments: list[tuple[bool, int, str]] | None = None
        if dev.backend == "webgpu":
            # The shader's own element types (packed small dtypes are u32 words).
            self.buffer_dtypes = buffer_dtypes(self.module.signature(obj.name))
        elif dev.backend == "vulkan":
            signature = self.module.signature(obj.name)
            buffers = sum(1 for name, *_ in obj.signature if name is None)
            self.spirv_arguments = spirv_arguments(obj.lib.decode(), signature, buffers)
            # An unused buffer (not bound) keeps tinygrad's element type.
            self.buffer_dtypes = kernel_signature(dev.backend, obj)[1]
            for is_buffer, index, dtype in self.spirv_arguments:
                if is_buffer:
                    self.buffer_dtypes[index] = dtype
            # The dispatch has an axis for each workgroup_id axis the shader reads.
            self.grid_axes = sum(tag.startswith("blockIdx.") for tag in parse_signature(signature)[2])
        else:
            _, self.buffer_dtypes = kernel_signature(dev.backend, obj)
        self.function = self.module[obj.name]
        self.grid, self.blocks = dev.backend != "cpu", dev.backend not in WGSL_BACKENDS

    def __call__(
        self,
        *bufs: ModrtBuffer,
        global_size: tuple[int, int, int] = (1, 1, 1),
        local_size: tuple[int, int, int] | None = (1, 1, 1),
        vals: tuple[int, ...] = (),
        wait: bool = False,
        **kw: Any,
    ) -> float | None:
        if self.spirv_arguments is not None:
            args = self._spirv_args(bufs, global_size, vals)
        else:
            args = [*self.leading, *(b.typed(d) for b, d in zip(bufs, self.buffer_dtypes)), *vals]
            if self.grid:
                args += global_size
            if self.blocks and self.grid:
                args += local_size if local_size is not None else (1, 1, 1)
        if not wait:
            self.function(*args)
            return None
        return self.dev.time_launch(lambda: self.function(*args))

    def _spirv_args(
        self, bufs: tuple[ModrtBuffer, ...], global_size: tuple[int, int, int], vals: tuple[int, ...]
    ) -> list:
        # The uniforms (INFINITY, the variables) are uniform blocks in SPIR-V:
        # tensors holding their values; the workgroup size is the shader's.
        values = (float("inf"), *vals)
        args: list[Any] = [
            bufs[i].typed(d) if is_buffer else self.dev.uniform(d, values[i])
            for is_buffer, i, d in self.spirv_arguments
        ]
        return args + list(global_size[: self.grid_axes])
