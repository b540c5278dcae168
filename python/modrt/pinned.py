"""Pinned (page-locked) host memory: `modrt.pinned_empty(shape, dtype, device=)`.

A copy with `stream=` between a device tensor and pinned memory of its
backend is asynchronous and reads or writes the array in place, when the
stream reaches it: modrt holds no staging copy. So, as with CUDA's pinned
memory, the array must not be changed (before a copy to the device) or read
(after a copy to the host) until an event recorded after the copy completed:

    host = modrt.pinned_empty((n,), "float32", device=dev)
    host[:] = data
    t.copyfrom(host, stream=s)      # returns at once, reads `host` later
    t.copyto(host, stream=s)        # returns at once, writes `host` later
    s.synchronize()                 # now `host` holds the result

Where the backend has no pinned memory the array is ordinary host memory and
says so: `array.pinned` is False and `array.pinned_memory` tells why; copies
then stage it as they stage any array. `modrt.pinned_memory(device)` says what
a device's pinned memory is ("" when it has none) without allocating.
"""

from __future__ import annotations

import numpy as np

from . import _shapes
from ._ffi import call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .devices import Device


class PinnedArray(np.ndarray):
    """A numpy array on host memory from `modrt.pinned_empty`."""

    pinned: bool
    pinned_memory: str

    def __array_finalize__(self, obj: Any) -> None:
        # Views and slices of pinned memory are pinned memory too.
        self.pinned = getattr(obj, "pinned", False)
        self.pinned_memory = getattr(obj, "pinned_memory", "")


class _PinnedBuffer:
    """Owns the core's allocation; numpy arrays over it keep it alive."""

    __slots__ = ("_obj", "__array_interface__")

    def __init__(self, obj: Any, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self._obj = obj
        self.__array_interface__ = {
            "version": 3,
            "shape": shape,
            "typestr": dtype.str,
            "data": (call("pinned.address", obj), False),
        }


def pinned_empty(shape: int | tuple[int, ...], dtype: Any = "float32", *, device: Device) -> PinnedArray:
    """An uninitialised host array for copies with `device`: page-locked
    memory of its backend where it has it (`.pinned` True; a cpu device's is
    plain aligned memory, which it uses in place), else ordinary host memory
    (`.pinned` False, `.pinned_memory` says why)."""
    from .devices import Device

    if not isinstance(device, Device):
        raise TypeError(f"device= takes a modrt.Device, not {type(device).__name__}")
    dims = _shapes.dims(shape, "pinned_empty")
    dt = _shapes.host_dtype(dtype, "pinned_empty")
    nbytes = int(np.prod(dims, dtype=np.int64)) * dt.itemsize
    obj = call("pinned.alloc", device, nbytes)
    array = np.asarray(_PinnedBuffer(obj, dims, dt)).view(PinnedArray)
    array.pinned = bool(call("pinned.in_place", obj))
    array.pinned_memory = call("pinned.description", obj)
    return array


def pinned_memory(device: Device) -> str:
    """What pinned host memory `device`'s backend gives (`pinned_empty`), or
    "" when it has none."""
    return call("device.pinned_memory", device)


def covers(device: Device, array: Any) -> bool:
    """True when `array`'s bytes are pinned memory that `device`'s copies use in place."""
    return bool(call("pinned.covers", device, array.ctypes.data, array.nbytes))
