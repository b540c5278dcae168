"""Tensors: n-dimensional arrays on a device (`modrt.empty`, `modrt.tensor`,
`modrt.from_dlpack`), their copies (ordered on streams) and DLPack. Above
devices and streams, which it uses; graphs stand on it."""

from __future__ import annotations

import ctypes

from . import _ffi, streams
from ._ffi import call
from .devices import Device, cpu, wait_device

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# DLPack (dlpack.h 1.x): the version modrt asks producers for, the least it
# exports as a versioned capsule; flags of DLManagedTensorVersioned. Capsules
# are made and consumed in modrt._ffi_ext (their destructor must be C).
DLPACK_VERSION = (1, 0)
_FLAG_IS_COPIED = 1 << 1


class Tensor(_ffi.Object):
    """An n-dimensional array on a device (a DLPack DLTensor)."""

    __slots__ = ()

    def _dl(self) -> _ffi.DLTensor:
        out = ctypes.POINTER(_ffi.DLTensor)()
        _ffi.check(_ffi.LIB.ModrtTensorGetDLTensor(self.handle, ctypes.byref(out)))
        return out.contents

    @property
    def shape(self) -> tuple[int, ...]:
        dl = self._dl()
        return tuple(dl.shape[i] for i in range(dl.ndim))

    @property
    def dtype(self) -> str:
        dl = self._dl()
        return _dtype_name(dl.dtype)

    @property
    def device(self) -> Device:
        return Device._from_dl(self._dl().device)

    def view(self, dtype: Any) -> Tensor:
        """The same memory as elements of `dtype` (a name or a numpy dtype),
        as numpy's `ndarray.view(dtype)`: no copy, on any device. The last
        dimension scales by the ratio of the element sizes and must hold a
        whole number of the new elements (ValueError otherwise); a 0-d tensor
        takes only a type of its own size. A float16 tensor viewed as uint16
        is what a kernel declaring `ushort` takes; 16 bytes as `uint32x4`, a
        WGSL uniform block. The view keeps this tensor's memory alive and is
        read-only when it is."""
        return call("tensor.view", self, dtype if isinstance(dtype, str) else str(_numpy_dtype(dtype)))

    def _wait(self, stream: streams.Stream | None, timeout: float | None) -> None:
        if stream is not None:
            if stream.device != self.device:
                raise ValueError(f"a copy of a tensor on {self.device} cannot run on a stream of {stream.device}")
            stream.synchronize(timeout)
        else:
            wait_device(self.device, timeout)

    def _read_on(self, s: streams.Stream, nbytes: int, offset: int, timeout: float | None) -> Any:
        """A copy of `nbytes` from byte `offset`, ordered on the native stream
        `s`, as a uint8 array: the stream holds the host buffer until the copy
        completed, so a timeout leaves nothing writing into freed memory."""
        import numpy as np

        staging = empty((nbytes,), "uint8", cpu())
        call("tensor.copy_to_host_async", self, s._obj, staging, nbytes, offset)
        s.record().synchronize(timeout)
        return np.from_dlpack(staging)

    def _native_stream(self, stream: streams.Stream | None) -> streams.Stream | None:
        """`stream` when it is a native stream of this tensor's device (a copy
        on it is asynchronous and ordered there), else None."""
        if stream is not None and not isinstance(stream, streams.Stream):
            raise TypeError(f"stream= takes a modrt.Stream, not {type(stream).__name__}")
        if stream is None or not stream.native:
            return None
        if stream.device != self.device:
            raise ValueError(f"a copy of a tensor on {self.device} cannot run on a stream of {stream.device}")
        return stream

    def numpy(self, *, stream: streams.Stream | None = None, timeout: float | None = None) -> Any:
        """A numpy copy, once the launches on `stream` (default: every stream
        of the tensor's device) completed; TimeoutError after `timeout` s."""
        import numpy as np

        native = self._native_stream(stream)
        if native is not None:
            nbytes = int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize
            return self._read_on(native, nbytes, 0, timeout).view(self.dtype).reshape(self.shape)
        arr = np.empty(self.shape, dtype=self.dtype)
        self._wait(stream, timeout)
        call("tensor.copy_to_host", self, arr.ctypes.data, arr.nbytes)
        return arr

    def copyto(
        self, out: Any, *, offset: int = 0, stream: streams.Stream | None = None, timeout: float | None = None
    ) -> Any:
        """Copies `out.nbytes` bytes from this tensor, from byte `offset`, into
        the writable contiguous array `out`; returns `out`. On a native
        `stream` into pinned memory of the device (modrt.pinned_empty) it
        returns at once and writes `out` when the stream gets there."""
        if not (out.flags.c_contiguous and out.flags.writeable):
            raise ValueError("copyto needs a writable C-contiguous array")
        native = self._native_stream(stream)
        if native is not None and call("pinned.covers", self.device, out.ctypes.data, out.nbytes):
            # Pinned memory (modrt.pinned_empty) is written in place, later: asynchronous.
            call("tensor.copy_to_host_async", self, native._obj, out.ctypes.data, out.nbytes, int(offset))
            return out
        if native is not None:
            out.reshape(-1).view("uint8")[...] = self._read_on(native, out.nbytes, int(offset), timeout)
            return out
        self._wait(stream, timeout)
        call("tensor.copy_to_host", self, out.ctypes.data, out.nbytes, int(offset))
        return out

    def copyfrom(
        self,
        source: Any,
        *,
        offset: int | None = None,
        stream: streams.Stream | None = None,
        timeout: float | None = None,
    ) -> Tensor:
        """Copies `source` into this tensor: a modrt Tensor of the same byte
        size (on any device: across backends it is staged through host
        memory), or an array of this tensor's shape and dtype; with `offset`,
        the array's bytes go to this tensor from byte `offset` on. On a native
        `stream` the copy is ordered there and returns at once (the bytes of
        an array are staged first, so the array is free to change; pinned
        memory from modrt.pinned_empty is read in place, when the stream gets
        there)."""
        native = self._native_stream(stream)
        if isinstance(source, Tensor):
            if native is None and source.device == self.device:
                current = streams.current_stream(self.device)
                if current.native:
                    self._wait(stream, timeout)
                    native = current
            if native is not None and source.device == self.device:
                call("tensor.copy_device_async", self, source, native._obj)
                return self
            self._wait(stream, timeout)
            source._wait(None, timeout)
            call("tensor.copy", self, source)
            return self
        import numpy as np

        arr = np.ascontiguousarray(source)
        if offset is None and (arr.shape != self.shape or str(arr.dtype) != self.dtype):
            raise ValueError(
                f"cannot copy an array of {arr.dtype}{list(arr.shape)} into a tensor of {self.dtype}{list(self.shape)}"
            )
        if native is not None:
            call("tensor.copy_from_host_async", self, native._obj, arr.ctypes.data, arr.nbytes, int(offset or 0))
            return self
        self._wait(stream, timeout)
        if offset is None:
            call("tensor.copy_from_host", self, arr.ctypes.data, arr.nbytes)
        else:
            call("tensor.copy_from_host", self, arr.ctypes.data, arr.nbytes, int(offset))
        return self

    def __dlpack_device__(self) -> tuple[int, int]:
        dl = self._dl()
        return (dl.device.device_type, dl.device.device_id)

    @property
    def read_only(self) -> bool:
        """True for memory a DLPack producer exported read-only (a read-only
        numpy array, ...): modrt does not write it and exports it read-only."""
        return bool(call("tensor.read_only", self))

    def __dlpack__(
        self,
        stream: Any = None,
        *,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """A DLPack capsule of this tensor, per the array API standard.

        `max_version` >= (1, 0): a versioned capsule ("dltensor_versioned",
        DLManagedTensorVersioned, with the read-only flag for a read-only
        tensor); otherwise the legacy "dltensor" capsule. `copy=None` or False
        shares the memory (zero-copy); `copy=True` exports a copy (flagged as
        copied). `dl_device` may name this tensor's device, or the CPU
        ((1, 0)), which copies to host unless copy=False (BufferError then).
        `stream` (a consumer's stream on a device) makes modrt wait for an
        event recorded on the current stream of the tensor's device (the
        launches made so far there), unless it is -1 (no synchronization, per
        the standard) or None."""
        source, copied = self, False
        own = self.__dlpack_device__()
        if stream is not None and stream != -1:
            streams.current_stream(self.device).record().synchronize()
        if dl_device is not None and tuple(dl_device) != own:
            if tuple(dl_device) != (1, 0):
                raise BufferError(f"modrt cannot export a tensor on {self.device} to DLPack device {tuple(dl_device)}")
            if copy is False:
                raise BufferError(f"a tensor on {self.device} reaches the CPU only by a copy, and copy=False")
            source, copied = tensor(self.numpy()), True
        elif copy:
            source, copied = tensor(self.numpy(), self.device), True
        versioned = max_version is not None and tuple(max_version)[0] >= DLPACK_VERSION[0]
        return _ffi._ffi_ext.to_dlpack(source, versioned, _FLAG_IS_COPIED if copied else 0)

    def __repr__(self) -> str:
        return f"modrt.Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device})"


_ffi.register_object_class(_ffi.OBJ_TENSOR, Tensor)

_DTYPE_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}


def _numpy_dtype(dtype: Any) -> Any:
    import numpy as np

    return np.dtype(dtype)


def _dtype_name(dt: _ffi.DLDataType) -> str:
    if dt.code == 6:
        base = "bool"
    else:
        base = f"{_DTYPE_CODES.get(dt.code, f'code{dt.code}_')}{dt.bits}"
    return base if dt.lanes == 1 else f"{base}x{dt.lanes}"


def empty(shape: Sequence[int] | int, dtype: str = "float32", device: Device | None = None) -> Tensor:
    """An uninitialised tensor. A dimension that is not an integer is a
    TypeError naming it; `dtype` is a modrt dtype name or a numpy dtype."""
    from ._shapes import dims

    if not isinstance(dtype, str):
        dtype = _numpy_dtype_name(dtype)
    return call("tensor.empty", device or cpu(), dtype, *dims(shape, "modrt.empty"))


def _numpy_dtype_name(dtype: Any) -> str:
    """The name of a numpy dtype (np.float32, np.dtype("int8")) for the core,
    which refuses those modrt has none of ('object', 'str96', ...)."""
    import numpy as np

    try:
        return np.dtype(dtype).name
    except TypeError:
        raise TypeError(f"modrt.empty: dtype is a name such as 'float32' or a numpy dtype, not {dtype!r}") from None


def tensor(array: Any, device: Device | None = None) -> Tensor:
    """A tensor on `device` (default cpu) holding a copy of `array` (numpy-like)."""
    import numpy as np

    arr = np.ascontiguousarray(array)
    t = empty(arr.shape, str(arr.dtype), device)
    call("tensor.copy_from_host", t, arr.ctypes.data, arr.nbytes)
    return t


def from_dlpack(obj: Any, *, device: Device | None = None, copy: bool | None = None) -> Tensor:
    """A tensor sharing memory with a DLPack producer (numpy, PyTorch, CuPy,
    JAX arrays, another modrt tensor), or adopting a DLPack capsule.

    modrt asks the producer for DLPack 1.x (`__dlpack__(max_version=(1, 0),
    ...)`) and falls back to the legacy protocol for producers that do not
    take those keywords; capsules of both kinds ("dltensor_versioned",
    "dltensor") are accepted. A read-only producer gives a read-only tensor.
    Memory must be compact row-major: other strides raise ValueError saying
    how to make it compact, unless `copy=True`, which copies host memory into
    a new compact tensor. `copy=False` never copies; `device`, when given,
    is the device the tensor must be on (the producer is asked for it)."""
    want = (device.device_type, device.index) if device is not None else None
    if hasattr(obj, "__dlpack__"):
        try:
            capsule = obj.__dlpack__(max_version=DLPACK_VERSION, dl_device=want, copy=copy)
        except TypeError:
            # A producer from before the array API's keywords (DLPack < 1.0).
            capsule = obj.__dlpack__()
    else:
        capsule = obj
    t = Tensor(_ffi._ffi_ext.from_dlpack(capsule, bool(copy)))
    if want is not None and t.__dlpack_device__() != want:
        raise BufferError(f"the producer's tensor is on {t.device}, not on {device}")
    return t
