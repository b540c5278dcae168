"""Devices, tensors, modules and payloads."""

from __future__ import annotations

import ctypes
# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Optional, Sequence

from . import _ffi
from ._ffi import call

# Device kinds seen so far, both ways. Kinds come from the core's backend
# registry (cpu, and each backend that names its DLPack device type) and are
# never withdrawn, so answers are cached.
_TYPE_OF_KIND: dict[str, int] = {"cpu": 1}
_KIND_OF_TYPE: dict[int, str] = {1: "cpu"}


def device_type_of(kind: str) -> int:
    """The DLPack device type of `kind`, as its backend declared it (in its
    BUILD file, or an out-of-tree plugin or package). ValueError if unknown."""
    device_type = _TYPE_OF_KIND.get(kind)
    if device_type is None:
        device_type = call("device.type_of_kind", kind)
        if device_type < 0:
            raise ValueError(f"unknown device kind '{kind}'; known: {', '.join(device_kinds())}")
        _TYPE_OF_KIND[kind] = device_type
        _KIND_OF_TYPE[device_type] = kind
    return device_type


def device_kinds() -> dict[str, int]:
    """Every device kind the core knows now, with its DLPack device type."""
    kinds = {"cpu": 1}
    for line in call("backend.list").splitlines():
        name = line.split("\t", 1)[0]
        device_type = call("device.type_of_kind", name)
        if device_type >= 0:
            kinds[name] = device_type
    return kinds


class Device:
    """A device: `modrt.device("opencl", 0)`. Querying a device never raises
    for a missing driver: `exist` is False and `unavailable_reason` says why."""

    __slots__ = ("kind", "index", "device_type")

    def __init__(self, kind: str, index: int = 0) -> None:
        device_type = device_type_of(kind)
        if index < 0:
            raise ValueError(f"device index must be >= 0, got {index}")
        self.kind = kind
        self.index = index
        self.device_type = device_type

    @classmethod
    def _from_dl(cls, dl: _ffi.DLDevice) -> "Device":
        kind = _KIND_OF_TYPE.get(dl.device_type)
        if kind is None:
            kind = call("device.kind_name", dl.device_type)
            _KIND_OF_TYPE[dl.device_type] = kind
        return cls(kind, dl.device_id)

    def _as_dl_device(self) -> _ffi.DLDevice:
        return _ffi.DLDevice(self.device_type, self.index)

    def __repr__(self) -> str:
        return f"{self.kind}({self.index})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (other.kind, other.index) == (self.kind, self.index)

    def __hash__(self) -> int:
        return hash((self.kind, self.index))

    @property
    def unavailable_reason(self) -> str:
        """Empty when the device exists; else why not (runtime not loaded, no driver, ...)."""
        return call("device.unavailable_reason", self)

    @property
    def exist(self) -> bool:
        return not self.unavailable_reason

    def attr(self, name: str) -> Any:
        """A device attribute by name, or None when the backend does not report it."""
        return call("device.attr", self, name)

    @property
    def name(self) -> Optional[str]:
        return self.attr("name")

    @property
    def max_threads_per_block(self) -> Optional[int]:
        return self.attr("max_threads_per_block")

    @property
    def warp_size(self) -> Optional[int]:
        return self.attr("warp_size")

    @property
    def max_shared_memory_per_block(self) -> Optional[int]:
        return self.attr("max_shared_memory_per_block")

    @property
    def compute_version(self) -> Optional[str]:
        return self.attr("compute_version")

    @property
    def multi_processor_count(self) -> Optional[int]:
        return self.attr("multi_processor_count")

    def sync(self) -> None:
        call("device.sync", self)


def device(kind: str, index: int = 0) -> Device:
    return Device(kind, index)


def cpu(index: int = 0) -> Device:
    return Device("cpu", index)


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_PyCapsule_GetPointerRaw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_PyCapsule_SetName = ctypes.pythonapi.PyCapsule_SetName
_PyCapsule_SetName.restype = ctypes.c_int
_PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", _ffi.DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
    ]


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):  # type: ignore[no-untyped-def]
    # Runs only if no consumer took the tensor (the capsule kept its name).
    if _PyCapsule_IsValid(capsule, b"dltensor"):
        raw = _PyCapsule_GetPointerRaw(capsule, b"dltensor")
        managed = ctypes.cast(raw, ctypes.POINTER(_DLManagedTensor))
        managed.contents.deleter(ctypes.cast(managed, ctypes.c_void_p))


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

    def numpy(self) -> Any:
        import numpy as np

        arr = np.empty(self.shape, dtype=self.dtype)
        call("tensor.copy_to_host", self, arr.ctypes.data, arr.nbytes)
        return arr

    def copyfrom(self, source: Any) -> "Tensor":
        import numpy as np

        arr = np.ascontiguousarray(source)
        if arr.shape != self.shape or str(arr.dtype) != self.dtype:
            raise ValueError(
                f"cannot copy an array of {arr.dtype}{list(arr.shape)} into a tensor of "
                f"{self.dtype}{list(self.shape)}"
            )
        call("tensor.copy_from_host", self, arr.ctypes.data, arr.nbytes)
        return self

    def __dlpack_device__(self) -> tuple[int, int]:
        dl = self._dl()
        return (dl.device.device_type, dl.device.device_id)

    def __dlpack__(self, stream: Any = None, max_version: Any = None, **_: Any) -> Any:
        out = ctypes.c_void_p()
        _ffi.check(_ffi.LIB.ModrtTensorToDLPack(self.handle, ctypes.byref(out)))
        return _PyCapsule_New(out.value, b"dltensor", ctypes.cast(_capsule_destructor, ctypes.c_void_p))

    def __repr__(self) -> str:
        return f"modrt.Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device})"


_ffi.register_object_class(_ffi.OBJ_TENSOR, Tensor)

_DTYPE_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}


def _dtype_name(dt: _ffi.DLDataType) -> str:
    if dt.code == 6:
        base = "bool"
    else:
        base = f"{_DTYPE_CODES.get(dt.code, f'code{dt.code}_')}{dt.bits}"
    return base if dt.lanes == 1 else f"{base}x{dt.lanes}"


def empty(shape: Sequence[int], dtype: str = "float32", device: Optional[Device] = None) -> Tensor:
    return call("tensor.empty", device or cpu(), dtype, *[int(d) for d in shape])


def tensor(array: Any, device: Optional[Device] = None) -> Tensor:
    """A tensor on `device` (default cpu) holding a copy of `array` (numpy-like)."""
    import numpy as np

    arr = np.ascontiguousarray(array)
    t = empty(arr.shape, str(arr.dtype), device)
    call("tensor.copy_from_host", t, arr.ctypes.data, arr.nbytes)
    return t


def from_dlpack(obj: Any) -> Tensor:
    """A tensor sharing memory with a DLPack producer (numpy array, ...)."""
    capsule = obj.__dlpack__() if hasattr(obj, "__dlpack__") else obj
    ptr = _PyCapsule_GetPointer(capsule, b"dltensor")
    out = ctypes.c_void_p()
    _ffi.check(_ffi.LIB.ModrtTensorFromDLPack(ptr, ctypes.byref(out)))
    _PyCapsule_SetName(capsule, b"used_dltensor")
    return Tensor(out.value)


class Module(_ffi.Object):
    """Compiled code of one kind, with imported child modules."""

    __slots__ = ()

    @property
    def kind(self) -> str:
        return call("module.kind", self)

    @property
    def is_fallback(self) -> bool:
        """True when this module holds code whose runtime is not loaded here."""
        return bool(call("module.is_fallback", self))

    @property
    def function_names(self) -> list[str]:
        return call("module.function_names", self).split()

    def get_function(self, name: str) -> _ffi.Function:
        f = call("module.get_function", self, name)
        if f is None:
            raise AttributeError(
                f"{self.kind} module has no function '{name}' (it has: "
                f"{', '.join(self.function_names) or 'none'})"
            )
        return f

    def __getitem__(self, name: str) -> _ffi.Function:
        return self.get_function(name)

    def save_to_bytes(self) -> bytes:
        return call("module.save_to_bytes", self)

    def export(self, path: str) -> None:
        """Writes this module and its imports to a `.modrt` artifact file
        (`modrt.load_module(path)` reads it back)."""
        from . import artifact

        artifact.export(self, path)

    def inspect_source(self, format: str = "") -> Any:
        """Source of a held format (text as str, binary formats as bytes)."""
        data = call("module.inspect_source", self, format)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data

    @property
    def imports(self) -> list["Module"]:
        return [call("module.get_import", self, i) for i in range(call("module.num_imports", self))]

    def import_module(self, child: "Module") -> None:
        call("module.import_module", self, child)

    def __repr__(self) -> str:
        extra = ", fallback" if self.is_fallback else ""
        return f"modrt.Module(kind={self.kind}{extra}, functions={self.function_names})"


_ffi.register_object_class(_ffi.OBJ_MODULE, Module)


def load_module(path: str) -> Module:
    """Loads a `.modrt` artifact written by `Module.export` (see modrt.artifact)."""
    from . import artifact

    return artifact.load_module(path)


def load_module_from_bytes(kind: str, data: bytes) -> Module:
    """A real module of `kind` from bytes saved by `Module.save_to_bytes`."""
    return call("module.load_from_bytes", kind, data)


class Payload(_ffi.Object):
    """What a codegen driver produces: code, format, signatures and sources."""

    __slots__ = ()

    @staticmethod
    def create(
        shape: str,
        fmt: str,
        functions: Iterable[str],
        code: bytes = b"",
        shaders: Optional[dict[str, bytes]] = None,
        sources: Optional[dict[str, str]] = None,
    ) -> "Payload":
        p = call("payload.new", shape, fmt)
        for sig in functions:
            call("payload.add_function", p, sig)
        if code:
            call("payload.set_code", p, code)
        for name, blob in (shaders or {}).items():
            call("payload.set_shader", p, name, blob)
        for source_fmt, text in (sources or {}).items():
            call("payload.set_source", p, source_fmt, text)
        return p

    def save(self) -> bytes:
        return call("payload.save", self)


_ffi.register_object_class(_ffi.OBJ_PAYLOAD, Payload)
