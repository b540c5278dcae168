"""tinygrad's memory on modrt: the allocator of a MODRT device and its buffers.

Each tinygrad buffer is a modrt tensor of bytes (uint8); a kernel receives it
as a modrt tensor of the element type it declares, sharing the same memory
(`Tensor.view(dtype)`, see `ModrtBuffer.typed`). Copies: host<->device with
the tensor's copy functions; device to device with modrt's tensor copy
(across backends modrt stages it through host). No buffer views at an
offset, like tinygrad's own CL and WEBGPU devices (see _views.py).
"""

from __future__ import annotations

import numpy as np
from tinygrad.device import BufferSpec, Compiled, LRUAllocator

import modrt


class ModrtBuffer:
    """A tinygrad buffer: `nbytes` bytes of a modrt uint8 tensor (for WGSL
    rounded up to whole 32-bit words, see ModrtAllocator), and the typed
    tensors over the same memory that kernels have taken it as."""

    __slots__ = ("storage", "nbytes", "view", "_typed")

    def __init__(self, storage: modrt.Tensor, nbytes: int, view: bool = False) -> None:
        # A view (ModrtAllocator._offset) is the first `nbytes` of another buffer's storage.
        self.storage, self.nbytes, self.view = storage, nbytes, view
        self._typed: dict[str, modrt.Tensor] = {"uint8": storage}

    def typed(self, dtype: str) -> modrt.Tensor:
        """This buffer as a modrt tensor of `dtype` (the same memory: modrt
        checks that a kernel's buffers have its signature's element types, and
        tinygrad's buffers are untyped bytes)."""
        t = self._typed.get(dtype)
        if t is None:
            t = self._typed[dtype] = self.storage.view(dtype)
        return t


class ModrtAllocator(LRUAllocator[Compiled]):
    """Buffers of one modrt device for the tinygrad device `dev`; with
    `whole_words`, each rounded up to whole 32-bit words: tinygrad's WGSL
    keeps bool, 8- and 16-bit elements packed in u32 words, and a kernel
    takes such a buffer as whole words (as tinygrad's own WEBGPU device
    allocates it)."""

    def __init__(self, dev: Compiled, device: modrt.Device, whole_words: bool) -> None:
        super().__init__(dev)
        self.device, self.whole_words = device, whole_words

    def _alloc(self, size: int, options: BufferSpec) -> ModrtBuffer:
        storage = -(-size // 4) * 4 if self.whole_words else size
        return ModrtBuffer(modrt.empty((storage,), "uint8", self.device), size)

    def _offset(self, buf: ModrtBuffer, size: int, offset: int) -> ModrtBuffer:
        # Only views at offset 0 reach here (see _views.py): the same memory.
        if offset != 0:
            raise ValueError(f"a MODRT buffer cannot be viewed at byte offset {offset} (only at 0)")
        return ModrtBuffer(buf.storage, size, view=True)

    def _copyin(self, dest: ModrtBuffer, src: memoryview) -> None:
        dest.storage.copyfrom(np.frombuffer(src, dtype=np.uint8, count=dest.nbytes), offset=0)

    def _copyout(self, dest: memoryview, src: ModrtBuffer) -> None:
        src.storage.copyto(np.frombuffer(dest, dtype=np.uint8))

    def _transfer(self, dest: ModrtBuffer, src: ModrtBuffer, sz: int, src_dev: Compiled, dest_dev: Compiled) -> None:
        # Any two modrt devices: device to device on one backend, staged
        # through host memory by modrt across backends; through host here
        # where one side is rounded up to whole words and the other is not,
        # or is a view (whose storage goes on past its bytes).
        if dest.storage.shape == src.storage.shape and not (dest.view or src.view):
            dest.storage.copyfrom(src.storage)
            return
        staged = np.empty(sz, dtype=np.uint8)
        src.storage.copyto(staged)
        dest.storage.copyfrom(staged, offset=0)
