"""The worker: one Ray actor per modrt device, holding that device, the
modules loaded on it and the tensors the driver made there.

Only the driver (modrt.distributed.Session) talks to workers; every method
is called by it. Collective data moves as Ray objects: a worker returns its
contribution, and the driver passes the contributions of the others as Ray
object references to each receiving worker, which Ray resolves node to node
before the method runs (the driver never holds the bytes of a large one).
"""

from __future__ import annotations

import builtins
import os
import socket
from typing import Any

# Reductions by name; each keeps the tensor's dtype (bool: or, and, and, or).
_REDUCE_UFUNCS = {"sum": "add", "prod": "multiply", "min": "minimum", "max": "maximum"}
# What a worker may raise to the driver: builtin classes, which pickle by
# reference wherever the driver is (modrt's own error classes are made at run time).
# Subclasses before their bases.
_PORTABLE_ERRORS = (
    ValueError,
    TypeError,
    MemoryError,
    OverflowError,
    ZeroDivisionError,
    ArithmeticError,
    IndexError,
    KeyError,
    TimeoutError,
    OSError,
)


def _portable(e: BaseException) -> Exception:
    for cls in _PORTABLE_ERRORS:
        if isinstance(e, cls):
            return getattr(builtins, cls.__name__)(str(e))
    return RuntimeError(f"{type(e).__name__}: {e}")


def _portable_errors(method: Any) -> Any:
    def wrapped(self: Worker, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 - re-raised as a builtin the driver can unpickle
            raise _portable(e) from None

    wrapped.__name__ = method.__name__
    wrapped.__doc__ = method.__doc__
    return wrapped


class Worker:
    """Made remote by the session (ray.remote(Worker).options(...)), so this
    module imports neither Ray nor modrt at import time."""

    def __init__(self) -> None:
        self._device: Any = None
        self._modules: dict[int, Any] = {}
        self._tensors: dict[int, Any] = {}

    def identity(self) -> dict[str, Any]:
        import ray

        ctx = ray.get_runtime_context()
        return {"node_id": ctx.get_node_id(), "host": socket.gethostname(), "pid": os.getpid()}

    @_portable_errors
    def open(self, kind: str, slot: int) -> str:
        """Takes device `slot` modulo the devices of `kind` on this node (the
        driver numbers the workers of a kind on each node from 0)."""
        import modrt

        count = modrt._ffi.call("device.count", modrt.runtime.device_type_of(kind))
        device = modrt.device(kind, slot % max(count, 1))
        if not device.exist:
            raise ValueError(f"device {device} does not exist on this node: {device.unavailable_reason}")
        self._device = device
        return device.name or repr(device)

    @_portable_errors
    def load(self, module_id: int, data: bytes, trusted_keys: list[str], allow_host_code: bool | None) -> None:
        import modrt

        self._modules[module_id] = modrt.artifact.load_from_bytes(data, trusted_keys, allow_host_code)

    def unload(self, module_id: int) -> None:
        self._modules.pop(module_id, None)

    @_portable_errors
    def put(self, tensor_id: int, array: Any) -> None:
        import modrt

        self._tensors[tensor_id] = modrt.tensor(array, self._device)

    @_portable_errors
    def empty(self, tensor_id: int, shape: tuple[int, ...], dtype: str) -> None:
        import modrt

        self._tensors[tensor_id] = modrt.empty(shape, dtype, self._device)

    def free(self, tensor_ids: list[int]) -> None:
        for tensor_id in tensor_ids:
            self._tensors.pop(tensor_id, None)

    @_portable_errors
    def call(self, module_id: int, function: str, args: list[tuple[str, Any]]) -> None:
        values = [self._tensors[v] if kind == "tensor" else v for kind, v in args]
        self._modules[module_id][function](*values)
        self._device.sync()

    @_portable_errors
    def fetch(self, tensor_id: int) -> Any:
        return self._tensors[tensor_id].numpy()

    def held(self) -> int:
        """How many tensors this worker holds (the driver frees them with its handles)."""
        return len(self._tensors)

    def sync(self) -> None:
        if self._device is not None:
            self._device.sync()

    @_portable_errors
    def contribute_split(self, tensor_id: int, parts: int, axis: int) -> Any:
        """This worker's tensor cut into `parts` along `axis`, one Ray object each."""
        import numpy as np

        chunks = np.split(self._tensors[tensor_id].numpy(), parts, axis=axis)
        return chunks[0] if parts == 1 else tuple(chunks)

    @_portable_errors
    def reduce_into(self, tensor_id: int, op: str, *arrays: Any) -> None:
        """Writes the elementwise reduction of `arrays` into the tensor."""
        import numpy as np

        ufunc = getattr(np, _REDUCE_UFUNCS[op])
        out = np.array(arrays[0], copy=True)
        for other in arrays[1:]:
            ufunc(out, other, out=out)
        self._store(tensor_id, out)

    @_portable_errors
    def concat_into(self, tensor_id: int, axis: int, *arrays: Any) -> None:
        """A new tensor holding `arrays` joined along `axis`."""
        import numpy as np

        import modrt

        self._tensors[tensor_id] = modrt.tensor(np.concatenate(arrays, axis=axis), self._device)

    @_portable_errors
    def reduce_new(self, tensor_id: int, op: str, *arrays: Any) -> None:
        """A new tensor holding the reduction of `arrays` (reduce_scatter's receiving end)."""
        import numpy as np

        import modrt

        ufunc = getattr(np, _REDUCE_UFUNCS[op])
        out = np.array(arrays[0], copy=True)
        for other in arrays[1:]:
            ufunc(out, other, out=out)
        self._tensors[tensor_id] = modrt.tensor(out, self._device)

    @_portable_errors
    def assign(self, tensor_id: int, array: Any) -> None:
        self._store(tensor_id, array)

    def _store(self, tensor_id: int, array: Any) -> None:
        import numpy as np

        target = self._tensors[tensor_id]
        target.copyfrom(np.ascontiguousarray(array))
        self._device.sync()
