"""Binding of the modrt C ABI (core/include/modrt/abi/c_api.h).

Loads libmodrt_runtime.so once per process with RTLD_GLOBAL, converts values
across the ABI, and maps native errors ("Kind: message") to exceptions that are
both `modrt.Error` and the matching builtin (ValueError, TypeError, ...).

Calls into native functions go through the CPython extension modrt._ffi_ext
(python/native/ffi_ext.cc), which also owns object handles; the rest of the
ABI, and Python functions called from native code, go through ctypes.
"""

from __future__ import annotations

import builtins
import ctypes
import os

from . import _selection
from ._locate import PACKAGE_DIR as _PACKAGE_DIR
from ._locate import find_library, package_root

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

ABI_VERSION = 7

# ModrtTypeCode
NONE, INT, FLOAT, OPAQUE_PTR, DEVICE, DLTENSOR_PTR, RAW_STR, OBJECT = range(8)
# ModrtObjectType
OBJ_STRING, OBJ_BYTES, OBJ_FUNCTION, OBJ_MODULE, OBJ_TENSOR, OBJ_PAYLOAD = range(1, 7)


class Error(RuntimeError):
    """Base of every error raised by modrt's native side."""


_ERROR_CLASSES: dict[str, type] = {}


def _error_class(kind: str) -> type:
    cls = _ERROR_CLASSES.get(kind)
    if cls is None:
        base = getattr(builtins, kind, None)
        if isinstance(base, type) and issubclass(base, Exception) and base is not RuntimeError:
            cls = type(kind, (Error, base), {"__module__": "modrt"})
        else:
            cls = Error
        _ERROR_CLASSES[kind] = cls
    return cls


def error_from_message(message: str) -> BaseException:
    kind, sep, text = message.partition(": ")
    if not sep or not kind.isidentifier():
        return Error(message)
    if kind == "KeyboardInterrupt":  # Ctrl-C ended a native wait (ModrtSetInterruptCheck)
        return KeyboardInterrupt(text)
    cls = _error_class(kind)
    return cls(text) if cls is not Error or kind == "RuntimeError" else Error(message)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _ValueUnion(ctypes.Union):
    _fields_ = [
        ("v_int64", ctypes.c_int64),
        ("v_float64", ctypes.c_double),
        ("v_ptr", ctypes.c_void_p),
        ("v_str", ctypes.c_char_p),
        ("v_device", DLDevice),
    ]


class BackendIdentity(ctypes.Structure):
    """plugin_api.h's ModrtBackendIdentity."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("name", ctypes.c_char_p),
        ("display_name", ctypes.c_char_p),
        ("device_type", ctypes.c_int32),
        ("payload_shape", ctypes.c_int32),
        ("formats", ctypes.c_char_p),
        ("addressable_buffers", ctypes.c_int32),
    ]


PAYLOAD_SHAPES = {"single-binary": 0, "multi-shader": 1}


class ModrtValue(ctypes.Structure):
    _fields_ = [("type_code", ctypes.c_int32), ("reserved", ctypes.c_int32), ("u", _ValueUnion)]


SafeCallFunc = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ModrtValue), ctypes.c_int32, ctypes.POINTER(ModrtValue)
)
Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _load_core() -> ctypes.CDLL:
    path = find_library(_selection.CORE)
    if path is None:
        raise ImportError(
            f"modrt: cannot find libmodrt_runtime.so (looked in MODRT_LIBRARY_PATH, "
            f"{os.path.join(_PACKAGE_DIR, 'lib')}, {os.path.join(package_root(), _selection.CORE)})"
        )
    lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    found = lib.ModrtAbiVersion()
    if found != ABI_VERSION:
        raise ImportError(f"modrt: {path} has ABI version {found}, this package expects {ABI_VERSION}")
    c = ctypes
    for fn, res, args in [
        ("ModrtGetLastError", c.c_char_p, []),
        ("ModrtSetLastError", None, [c.c_char_p]),
        ("ModrtObjectRetain", c.c_int, [c.c_void_p]),
        ("ModrtObjectRelease", c.c_int, [c.c_void_p]),
        ("ModrtObjectTypeIndex", c.c_int32, [c.c_void_p]),
        ("ModrtBytesCreate", c.c_int, [c.c_char_p, c.c_size_t, c.c_int, c.POINTER(c.c_void_p)]),
        ("ModrtBytesGet", c.c_int, [c.c_void_p, c.POINTER(c.c_void_p), c.POINTER(c.c_size_t)]),
        ("ModrtFunctionCreate", c.c_int, [SafeCallFunc, c.c_void_p, Deleter, c.POINTER(c.c_void_p)]),
        ("ModrtFunctionCall", c.c_int, [c.c_void_p, c.POINTER(ModrtValue), c.c_int32, c.POINTER(ModrtValue)]),
        ("ModrtRegisterGlobal", c.c_int, [c.c_char_p, c.c_void_p, c.c_int]),
        ("ModrtGetGlobal", c.c_int, [c.c_char_p, c.POINTER(c.c_void_p)]),
        ("ModrtTensorGetDLTensor", c.c_int, [c.c_void_p, c.POINTER(c.POINTER(DLTensor))]),
        ("ModrtTensorFromDLPack", c.c_int, [c.c_void_p, c.c_int, c.POINTER(c.c_void_p)]),
        ("ModrtTensorFromDLPackVersioned", c.c_int, [c.c_void_p, c.c_int, c.POINTER(c.c_void_p)]),
        ("ModrtTensorToDLPack", c.c_int, [c.c_void_p, c.POINTER(c.c_void_p)]),
        ("ModrtTensorToDLPackVersioned", c.c_int, [c.c_void_p, c.c_uint64, c.POINTER(c.c_void_p)]),
        ("ModrtLoadPlugin", c.c_int, [c.c_char_p]),
        (
            "ModrtLoadPluginWithOptions",
            c.c_int,
            [c.c_char_p, c.POINTER(c.c_char_p), c.POINTER(c.c_char_p), c.c_size_t],
        ),
        ("ModrtRegisterBackend", c.c_int, [c.POINTER(BackendIdentity)]),
    ]:
        f = getattr(lib, fn)
        f.restype = res
        f.argtypes = args
    return lib


LIB = _load_core()

# Resolves its C ABI symbols from the libmodrt_runtime.so loaded just above.
from . import _ffi_ext  # noqa: E402


def check(status: int) -> None:
    if status != 0:
        raise error_from_message(LIB.ModrtGetLastError().decode("utf-8", "replace"))


def load_plugin(path: str | os.PathLike, options: Mapping[str, str] | None = None) -> None:
    """Loads a plugin DSO; `options` (strings) are its load-time configuration."""
    if not options:
        check(LIB.ModrtLoadPlugin(os.fsencode(path)))
        return
    for key, value in options.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"load options are strings: {key!r}: {value!r}")
    count = len(options)
    keys = (ctypes.c_char_p * count)(*(k.encode() for k in options))
    values = (ctypes.c_char_p * count)(*(v.encode() for v in options.values()))
    check(LIB.ModrtLoadPluginWithOptions(os.fsencode(path), keys, values, count))


def register_backend_identity(
    name: str,
    display_name: str,
    device_type: int,
    payload_shape: str,
    formats: Sequence[str],
    addressable_buffers: bool = False,
) -> None:
    if payload_shape not in PAYLOAD_SHAPES:
        raise ValueError(f"unknown payload shape '{payload_shape}' (single-binary or multi-shader)")
    identity = BackendIdentity(
        ctypes.sizeof(BackendIdentity),
        name.encode(),
        display_name.encode(),
        device_type,
        PAYLOAD_SHAPES[payload_shape],
        ",".join(formats).encode(),
        int(addressable_buffers),
    )
    check(LIB.ModrtRegisterBackend(ctypes.byref(identity)))


class Object(_ffi_ext.ObjectBase):
    """An owned reference to a native object: `Object(handle)` takes one
    reference, released when the Python object goes. `handle` is an int, or
    None for a null handle."""

    __slots__ = ()


_OBJECT_CLASSES: dict[int, Callable[[int], Any]] = {}


def register_object_class(type_index: int, cls: Callable[[int], Any]) -> None:
    _OBJECT_CLASSES[type_index] = cls


def _bytes_of(handle: int) -> bytes:
    data = ctypes.c_void_p()
    size = ctypes.c_size_t()
    check(LIB.ModrtBytesGet(handle, ctypes.byref(data), ctypes.byref(size)))
    return ctypes.string_at(data, size.value) if size.value else b""


def _new_bytes(data: bytes, is_string: bool) -> int:
    out = ctypes.c_void_p()
    check(LIB.ModrtBytesCreate(data, len(data), int(is_string), ctypes.byref(out)))
    return out.value


def _object_from_handle(handle: int) -> Any:
    """Wraps an owned handle (one reference, ours to release)."""
    type_index = LIB.ModrtObjectTypeIndex(handle)
    if type_index in (OBJ_STRING, OBJ_BYTES):
        try:
            data = _bytes_of(handle)
        finally:
            LIB.ModrtObjectRelease(handle)
        return data.decode("utf-8") if type_index == OBJ_STRING else data
    cls = _OBJECT_CLASSES.get(type_index, Object)
    return cls(handle)


def _argument_to_python(value: ModrtValue) -> Any:
    """A borrowed argument of a Python function called from native code."""
    code = value.type_code
    if code == NONE:
        return None
    if code == INT:
        return value.u.v_int64
    if code == FLOAT:
        return value.u.v_float64
    if code == OPAQUE_PTR:
        return value.u.v_ptr or 0
    if code == RAW_STR:
        return value.u.v_str.decode("utf-8")
    if code == DEVICE:
        return _make_device(value.u.v_device.device_type, value.u.v_device.device_id)
    if code == DLTENSOR_PTR:
        raise TypeError("borrowed DLTensor arguments cannot be passed to Python functions")
    if code == OBJECT:
        handle = value.u.v_ptr
        if handle is None:
            return None
        LIB.ModrtObjectRetain(handle)
        return _object_from_handle(handle)
    raise TypeError(f"unknown value type code {code}")


def _box_arg(arg: Any) -> Any:
    """An argument that is not None, an Object, int, float or str, as what the
    ABI can carry: an Object to pass (its holder keeps it alive for the call),
    or a (device_type, device_id) pair. An array (numpy's, or anything with
    the buffer protocol or `__array__`) passes as a copy of its bytes, in
    row-major order: what a kernel's uniform block takes."""
    dl_pair = getattr(arg, "_dl_pair", None)
    if dl_pair is not None:  # a modrt.Device: no DLDevice structure built per call
        return dl_pair()
    if callable(arg):
        return convert_to_function(arg)
    if hasattr(arg, "__array__"):
        import numpy as np  # imported on use: it costs milliseconds at `import modrt`

        return Object(_new_bytes(np.ascontiguousarray(arg).tobytes(), False))
    try:  # bytes, bytearray, memoryview and other buffers
        return Object(_new_bytes(memoryview(arg).tobytes(), False))
    except TypeError:
        raise TypeError(f"cannot pass a {type(arg).__name__} to a modrt function") from None


class Function(_ffi_ext.FunctionBase, Object):
    """A native function: from the registry, a module, or wrapped Python.
    Calling it converts the arguments and the result in _ffi_ext.

    A kernel from a module (`module["k"]`) also takes its arguments by the
    names its signature declares (the kernel's own, where modrt read them from
    it), and its launch parameters as blockIdx_x, threadIdx_x, ...: keywords
    go through _bind_keywords, positional calls never do."""

    # `_parameters`: the names of the values a call passes, in order, or a
    # callable giving them (looked up on the first call with keywords).
    __slots__ = ("_parameters",)


def _parameter_names(fn: Function) -> Any:
    params = getattr(fn, "_parameters", None)
    if callable(params):
        params = fn._parameters = params()
    return params


# `with modrt.stream(s): fn(*values)`: set by modrt.streams, which imports this module.
_call_on_stream: Callable[[Function, tuple[Any, ...], Any], Any] | None = None


def _call_with_keywords(fn: Function, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A call with keywords: `stream=` (unless the kernel has an argument of
    that name) launches on that modrt.Stream; the other keywords are bound by
    name."""
    launch_stream = None
    if "stream" in kwargs and "stream" not in (_parameter_names(fn) or ()):
        kwargs = dict(kwargs)
        launch_stream = kwargs.pop("stream")
    values = _bind_keywords(fn, args, kwargs) if kwargs else args
    if launch_stream is None or _call_on_stream is None:
        return fn(*values)
    return _call_on_stream(fn, values, launch_stream)


def _bind_keywords(fn: Function, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The values of a call with keywords, in the order the function takes them."""
    params = _parameter_names(fn)
    if not params:
        raise TypeError("this function's arguments have no names: it takes positional arguments only")
    if len(args) > len(params):
        raise TypeError(f"takes {len(params)} values ({', '.join(params)}), got {len(args)} positional")
    values: list[Any] = list(args) + [_MISSING] * (len(params) - len(args))
    for key, value in kwargs.items():
        if key not in params:
            raise TypeError(f"unexpected keyword argument '{key}' (arguments: {', '.join(params)})")
        index = params.index(key)
        if values[index] is not _MISSING:
            raise TypeError(f"argument '{key}' given twice (by position and by keyword)")
        values[index] = value
    for index, (param, value) in enumerate(zip(params, values)):
        if value is _MISSING and param in _HIGHER_AXES:
            values[index] = 1
    missing = [p for p, v in zip(params, values) if v is _MISSING]
    if missing:
        raise TypeError(f"missing argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    return tuple(values)


_MISSING = object()
# The launch rule of every target (README, "Launch parameters"): a call by
# keyword names the launch parameters of the axes it uses, and a y or z one
# it leaves out is 1, so a 1-D launch is blockIdx_x (and threadIdx_x where the
# kernel takes it) whatever the kernel's format.
_HIGHER_AXES = frozenset({"blockIdx_y", "blockIdx_z", "threadIdx_y", "threadIdx_z"})


register_object_class(OBJ_FUNCTION, Function)


# How a DLDevice becomes a modrt.Device: set by modrt.devices, which imports
# this module (so this module never imports it back).
_device_from_dl: Callable[[DLDevice], Any] | None = None


def register_device_class(from_dl: Callable[[DLDevice], Any]) -> None:
    global _device_from_dl
    _device_from_dl = from_dl


def _make_device(device_type: int, device_id: int) -> Any:
    if _device_from_dl is None:
        raise RuntimeError("modrt.devices is not imported: devices cannot be made yet")
    return _device_from_dl(DLDevice(device_type, device_id))


_ffi_ext.init(_box_arg, _object_from_handle, _make_device, error_from_message, _call_with_keywords)

# Python callables live here while a native function refers to them.
_PY_FUNCTIONS: dict[int, Callable[..., Any]] = {}
_next_resource = 0


def _exception_kind(e: BaseException) -> str:
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins" and cls.__name__ != "BaseException":
            return cls.__name__
    return "RuntimeError"


@SafeCallFunc
def _call_python(resource, args, num_args, ret):  # type: ignore[no-untyped-def]
    try:
        fn = _PY_FUNCTIONS[resource]
        result = fn(*[_argument_to_python(args[i]) for i in range(num_args)])
        # The same conversion as a call's arguments (_ffi_ext), into the owned result.
        _ffi_ext.write_return(ctypes.addressof(ret.contents), result)
        return 0
    except BaseException as e:  # noqa: BLE001 - every error must cross as a code
        LIB.ModrtSetLastError(f"{_exception_kind(e)}: {e}".encode("utf-8", "replace"))
        return -1


@Deleter
def _forget_python(resource):  # type: ignore[no-untyped-def]
    _PY_FUNCTIONS.pop(resource, None)


def convert_to_function(fn: Callable[..., Any]) -> Function:
    global _next_resource
    _next_resource += 1
    key = _next_resource
    _PY_FUNCTIONS[key] = fn
    out = ctypes.c_void_p()
    check(LIB.ModrtFunctionCreate(_call_python, key, _forget_python, ctypes.byref(out)))
    return Function(out.value)


def get_global_func(name: str, allow_missing: bool = False) -> Function | None:
    out = ctypes.c_void_p()
    check(LIB.ModrtGetGlobal(name.encode("utf-8"), ctypes.byref(out)))
    if not out.value:
        if allow_missing:
            return None
        raise _error_class("KeyError")(f"no global function '{name}' is registered")
    return Function(out.value)


def register_func(name: str, fn: Callable[..., Any] | None = None, override: bool = False) -> Any:
    """Registers a Python callable as global `name`; usable as a decorator."""

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        func = convert_to_function(f)
        check(LIB.ModrtRegisterGlobal(name.encode("utf-8"), func.handle, int(override)))
        return f

    return register(fn) if fn is not None else register


_GLOBALS: dict[str, Function] = {}


def call(name: str, *args: Any) -> Any:
    """Calls a core global by name (cached: core globals never change)."""
    f = _GLOBALS.get(name)
    if f is None:
        f = _GLOBALS[name] = get_global_func(name)
    return f(*args)
