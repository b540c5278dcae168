"""The worker: one Ray actor per modrt device, holding that device, the
modules loaded on it and the tensors the driver made there.

Only the driver (modrt.distributed.Session) talks to workers; every method
is called by it. Collective data moves through MPI (mpi4py on MPICH): the
session's workers join one communicator when it starts (join_group), and
each collective is one MPI collective that every worker enters from the
task the driver gave it; the driver never holds the bytes.
"""

from __future__ import annotations

import builtins
import os
import socket
from typing import Any

# Reductions by name; each keeps the tensor's dtype (bool: or, and, and, or).
_REDUCE_UFUNCS = {"sum": "add", "prod": "multiply", "min": "minimum", "max": "maximum"}
_MPI_OPS = {"sum": "SUM", "prod": "PROD", "min": "MIN", "max": "MAX"}
_BOOL_OPS = {"sum": "LOR", "prod": "LAND", "min": "LAND", "max": "LOR"}
_SEND_TAG = 17
_DLPACK_CPU = 1
# Where the toolchain root installs the mpich wheel (tools/toolchain/pip-prefix-requirements.txt).
_MPI_PREFIXES = ("/opt/modrt/prefix",)
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
        self._comm: Any = None  # the session's MPI communicator (join_group)
        self._streams: dict[int, Any] = {}

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

    def free(self, ids: list[int]) -> None:
        """Drops tensors and streams (the driver numbers both from one counter)."""
        for handle in ids:
            self._tensors.pop(handle, None)
            self._streams.pop(handle, None)

    @_portable_errors
    def stream(self, stream_id: int) -> None:
        import modrt

        self._streams[stream_id] = modrt.Stream(self._device)

    @_portable_errors
    def synchronize(self, stream_id: int | None, timeout: float | None) -> None:
        if stream_id is None:
            self._device.sync(timeout)
        else:
            self._streams[stream_id].synchronize(timeout)

    def query(self, stream_id: int) -> bool:
        """Whether the stream has finished all it was given (no launch
        pending; Stream.query records a new event, which a cpu stream's
        worker may not have reached yet even when idle)."""
        return not self._streams[stream_id].pending

    @_portable_errors
    def call(self, module_id: int, function: str, args: list[tuple[str, Any]], stream_id: int | None) -> None:
        """Runs the function to its end, or with a stream, launches it there
        and returns (the stream orders what comes after it)."""
        values = [self._tensors[v] if kind == "tensor" else v for kind, v in args]
        if stream_id is None:
            self._modules[module_id][function](*values)
            self._device.sync()
        else:
            import modrt

            with modrt.stream(self._streams[stream_id]):
                self._modules[module_id][function](*values)

    @_portable_errors
    def fetch(self, tensor_id: int) -> Any:
        return self._tensors[tensor_id].numpy()

    def held(self) -> int:
        """How many tensors this worker holds (the driver frees them with its handles)."""
        return len(self._tensors)

    def sync(self) -> None:
        if self._device is not None:
            self._device.sync()

    # -- collectives (MPI) ------------------------------------------------------

    def group_port(self) -> str:
        """Rank 0 opens the MPI port the others connect to (join_group)."""
        mpi = _mpi()
        self._port = mpi.Open_port()
        return self._port

    @_portable_errors
    def join_group(self, port: str, rank: int, size: int) -> None:
        """Joins the session's workers into one MPI communicator, ranked as
        the session ranks them. Every worker runs it at once: each connects
        to rank 0's port in turn, and the group made so far accepts it."""
        mpi = _mpi()
        comm = mpi.COMM_SELF
        if rank > 0:
            inter = comm.Connect(port, root=0)
            comm = inter.Merge(high=True)
            inter.Free()
        while comm.Get_size() < size:
            inter = comm.Accept(port, root=0)
            merged = inter.Merge(high=False)
            inter.Free()
            if comm != mpi.COMM_SELF:
                comm.Free()
            comm = merged
        if rank == 0:
            mpi.Close_port(port)
        self._comm = comm.Split(0, rank)
        if comm != mpi.COMM_SELF:
            comm.Free()
        # A peer that dies is an exception here, not an abort of this process.
        self._comm.Set_errhandler(mpi.ERRORS_RETURN)

    @_portable_errors
    def allreduce(self, tensor_id: int, op: str, stream_id: int | None) -> None:
        """Every worker's tensor becomes the elementwise `op` of all of them."""
        mpi = _mpi()
        target = self._tensors[tensor_id]
        buf, staged = self._host(target, stream_id)
        self._comm.Allreduce(mpi.IN_PLACE, buf.reshape(-1), _mpi_op(mpi, op, buf.dtype))
        if staged:
            self._store(target, buf, stream_id)

    @_portable_errors
    def allgather(self, tensor_id: int, out_id: int, axis: int, stream_id: int | None) -> None:
        """A new tensor: every worker's tensor joined along `axis`, in rank order."""
        import numpy as np

        part = np.ascontiguousarray(self._host(self._tensors[tensor_id], stream_id)[0])
        joined = np.empty((self._comm.Get_size(), *part.shape), part.dtype)
        self._comm.Allgather(part.reshape(-1), joined.reshape(-1))
        self._new(out_id, np.concatenate(joined, axis=axis) if part.ndim else joined, stream_id)

    @_portable_errors
    def reduce_scatter(self, tensor_id: int, out_id: int, op: str, axis: int, stream_id: int | None) -> None:
        """A new tensor: part `rank` (along `axis`) of the reduction of every worker's tensor."""
        import numpy as np

        mpi = _mpi()
        whole = self._host(self._tensors[tensor_id], stream_id)[0]
        blocks = np.ascontiguousarray(np.stack(np.split(whole, self._comm.Get_size(), axis=axis)))
        part = np.empty(blocks.shape[1:], blocks.dtype)
        self._comm.Reduce_scatter_block(blocks.reshape(-1), part.reshape(-1), _mpi_op(mpi, op, part.dtype))
        self._new(out_id, part, stream_id)

    @_portable_errors
    def broadcast(self, tensor_id: int, root: int, stream_id: int | None) -> None:
        target = self._tensors[tensor_id]
        buf, staged = self._host(target, stream_id)
        self._comm.Bcast(buf.reshape(-1), root=root)
        if staged and self._comm.Get_rank() != root:
            self._store(target, buf, stream_id)

    @_portable_errors
    def send_to(self, tensor_id: int, dst: int, stream_id: int | None) -> None:
        import numpy as np

        buf = np.ascontiguousarray(self._host(self._tensors[tensor_id], stream_id)[0])
        self._comm.Send(buf.reshape(-1), dest=dst, tag=_SEND_TAG)

    @_portable_errors
    def receive_from(self, tensor_id: int, src: int, stream_id: int | None) -> None:
        target = self._tensors[tensor_id]
        buf, staged = self._host(target, stream_id)
        self._comm.Recv(buf.reshape(-1), source=src, tag=_SEND_TAG)
        if staged:
            self._store(target, buf, stream_id)

    @_portable_errors
    def copy(self, tensor_id: int, out_id: int, stream_id: int | None) -> None:
        """A send from this worker to itself."""
        self._store(self._tensors[out_id], self._host(self._tensors[tensor_id], stream_id)[0], stream_id)

    def _host(self, tensor: Any, stream_id: int | None) -> tuple[Any, bool]:
        """Host memory holding the tensor's value once the stream's work
        before it is done (without a stream: every call ran to its end):
        the tensor's own memory on a CPU device (a DLPack view), else a copy
        (staged: True) that _store writes back. Only that stream is waited
        for: launches on the device's other streams go on meanwhile."""
        import numpy as np

        stream = None if stream_id is None else self._streams[stream_id]
        if tensor.__dlpack_device__()[0] == _DLPACK_CPU:
            if stream is not None:
                stream.synchronize()
            return np.from_dlpack(tensor), False
        return tensor.numpy(stream=stream), True

    def _new(self, tensor_id: int, array: Any, stream_id: int | None) -> None:
        """A new tensor holding the array (see _store)."""
        import modrt

        if stream_id is None:
            self._tensors[tensor_id] = modrt.tensor(array, self._device)
        else:
            self._tensors[tensor_id] = modrt.empty(array.shape, str(array.dtype), self._device)
            self._store(self._tensors[tensor_id], array, stream_id)

    def _store(self, tensor: Any, array: Any, stream_id: int | None) -> None:
        """The array into the tensor, ordered on the stream: launches given
        to it later see the array. On a CPU device the tensor's own memory is
        written once the stream's work before it is done (the core's cpu
        `copyfrom(stream=)` would wait for every stream of the device);
        elsewhere a copy on the stream (the core stages the bytes)."""
        import numpy as np

        stream = None if stream_id is None else self._streams[stream_id]
        if tensor.__dlpack_device__()[0] == _DLPACK_CPU:
            if stream is not None:
                stream.synchronize()
            np.from_dlpack(tensor)[...] = array
        elif stream is None:
            tensor.copyfrom(np.ascontiguousarray(array))
            self._device.sync()
        else:
            tensor.copyfrom(np.ascontiguousarray(array), stream=stream)


def _mpi_op(mpi: Any, op: str, dtype: Any) -> Any:
    """The MPI reduction for `op` on `dtype`: bool reduces as or/and/and/or;
    float16, which MPI has no arithmetic for, through numpy."""
    if dtype.kind == "b":
        return getattr(mpi, _BOOL_OPS[op])
    if dtype.itemsize == 2 and dtype.kind == "f":
        return _float16_op(mpi, op)
    return getattr(mpi, _MPI_OPS[op])


_FLOAT16_OPS: dict[str, Any] = {}


def _float16_op(mpi: Any, op: str) -> Any:
    if op not in _FLOAT16_OPS:
        import numpy as np

        ufunc = getattr(np, _REDUCE_UFUNCS[op])

        def reduce(into: Any, inout: Any, datatype: Any) -> None:
            a = np.frombuffer(into, np.float16)
            b = np.frombuffer(inout, np.float16)
            ufunc(a, b, out=b)

        _FLOAT16_OPS[op] = mpi.Op.Create(reduce, commute=True)
    return _FLOAT16_OPS[op]


def _mpi() -> Any:
    """mpi4py's MPI, on MPICH: both installed (`pip install 'modrt[ray]'`)
    or, in the toolchain root, mpi4py under a root of
    modrt._locate.WHEEL_ROOTS and MPICH's library under _MPI_PREFIXES
    (loaded first, so that mpi4py finds it among the loaded libraries)."""
    import ctypes
    import importlib.util
    import sys

    if "mpi4py.MPI" in sys.modules:
        return sys.modules["mpi4py.MPI"]
    from modrt._locate import WHEEL_ROOTS

    if importlib.util.find_spec("mpi4py") is None:
        sys.path.extend(root for root in WHEEL_ROOTS if os.path.isdir(os.path.join(root, "mpi4py")))
    for prefix in _MPI_PREFIXES:
        for libdir in ("lib", "local/lib"):
            path = os.path.join(prefix, libdir, "libmpi.so.12")
            if os.path.exists(path):
                ctypes.CDLL(path, mode=os.RTLD_GLOBAL)
                break
    # Waits yield the core: several workers may share few cores (MPICH spins otherwise).
    os.environ.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    # libfabric's TCP provider: UCX, the wheel's other network module, did not
    # connect workers in different network namespaces (docs/DISTRIBUTED.md).
    os.environ.setdefault("MPIR_CVAR_CH4_NETMOD", "ofi")
    os.environ.setdefault("FI_PROVIDER", "tcp")
    # Workers are separate MPI jobs: MPICH's shortcuts for processes on one
    # node hung messages of 1 MiB between workers of one machine.
    os.environ.setdefault("MPIR_CVAR_NOLOCAL", "1")
    try:
        import mpi4py

        mpi4py.rc.thread_level = "serialized"
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(f"modrt.distributed's collectives need MPI: pip install 'modrt[ray]' ({e})") from None
    return MPI
