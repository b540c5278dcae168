"""Sessions of modrt workers on a Ray cluster (see docs/DISTRIBUTED.md).

The driver owns every decision: it places one Ray actor per requested modrt
device (WorkerGroup), ships modules as `.modrt` bytes, launches each call on
every worker (SPMD) and orchestrates collectives.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ._errors import WorkerTimeout
from ._group import WorkerGroup, key_texts
from ._handles import DModule, DStream, DTensor, Launch

# Collective reductions, every dtype a host array can hold (modrt._shapes.HOST_DTYPES).
REDUCE_OPS = ("sum", "prod", "min", "max")


class Session(WorkerGroup):
    """One worker per requested modrt device, on a Ray cluster.

    devices: 'cpu' (one worker), 'opencl:4' (four), 'opencl:*' (one per
        opencl device the cluster offers), an int n (n cpu workers) or a
        list of kinds (one worker each, e.g. ['cpu', 'opencl']).
    address: None starts a local cluster (this machine's devices, each
        shared by as many workers as asked for) unless Ray is already
        initialized in this process; 'auto' or 'host:port' connects to a
        running one (`ray start`, see docs/DISTRIBUTED.md).
    timeout: seconds any call, collective or transfer may wait for the
        workers (WorkerTimeout, naming those that did not answer).
    trusted_keys: public keys (paths or texts) every worker checks module
        signatures against; None takes MODRT_TRUSTED_KEYS on the driver.
    """

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.size} workers"
        return f"<modrt.distributed.Session {state}>"

    # -- tensors -------------------------------------------------------------

    def shard(self, array: Any, axis: int = 0) -> DTensor:
        """`array` cut into equal parts along `axis`, part i on worker i.
        ValueError if the axis does not divide by the number of workers."""
        import numpy as np

        self._check_open()
        arr = np.ascontiguousarray(array)
        _check_dtype(str(arr.dtype))
        axis = _axis(axis, arr.ndim)
        if arr.shape[axis] % self.size:
            raise ValueError(f"shard: axis {axis} of shape {list(arr.shape)} does not divide among {self.size} workers")
        tensor = DTensor(self, next(self._ids), arr.shape, str(arr.dtype), axis)
        parts = np.split(arr, self.size, axis=axis)
        self._wait(
            {r: self._remote(r, "put", tensor.id, np.ascontiguousarray(p)) for r, p in enumerate(parts)},
            "shard",
        )
        return tensor

    def replicate(self, array: Any) -> DTensor:
        """A copy of `array` on every worker."""
        import numpy as np

        self._check_open()
        arr = np.ascontiguousarray(array)
        _check_dtype(str(arr.dtype))
        tensor = DTensor(self, next(self._ids), arr.shape, str(arr.dtype), None)
        ref = self._ray.put(arr)
        self._wait(self._all("put", tensor.id, ref), "replicate")
        return tensor

    def empty(self, shape: Sequence[int] | int, dtype: str = "float32", axis: int | None = None) -> DTensor:
        """An uninitialised tensor of global `shape`: sharded along `axis`, or
        of that shape on every worker when `axis` is None."""
        from modrt._shapes import dims

        self._check_open()
        shape = dims(shape, "Session.empty")
        _check_dtype(dtype)
        local = list(shape)
        if axis is not None:
            axis = _axis(axis, len(shape))
            if shape[axis] % self.size:
                raise ValueError(f"empty: axis {axis} of shape {list(shape)} does not divide among {self.size} workers")
            local[axis] //= self.size
        tensor = DTensor(self, next(self._ids), shape, dtype, axis)
        self._wait(self._all("empty", tensor.id, tuple(local), dtype), "empty")
        return tensor

    def gather(self, tensor: DTensor) -> Any:
        """The tensor's value on the driver (numpy): the parts joined along
        the shard axis, or worker 0's copy of a replicated tensor."""
        import numpy as np

        self._own(tensor)
        if tensor.axis is None:
            return self._wait({0: self._remote(0, "fetch", tensor.id)}, "gather")[0]
        parts = self._wait(self._all("fetch", tensor.id), "gather")
        return np.concatenate([parts[r] for r in range(self.size)], axis=tensor.axis)

    def local_parts(self, tensor: DTensor) -> list[Any]:
        """Each worker's own tensor (numpy), in rank order."""
        self._own(tensor)
        parts = self._wait(self._all("fetch", tensor.id), "local_parts")
        return [parts[r] for r in range(self.size)]

    def held(self) -> list[int]:
        """How many tensors each worker holds now."""
        self._check_open()
        held = self._wait(self._all("held"), "held")
        return [held[r] for r in range(self.size)]

    def _own(self, tensor: Any) -> None:
        self._check_open()
        if not isinstance(tensor, DTensor):
            raise TypeError(f"expected a worker tensor (Session.shard/replicate/empty), got {type(tensor).__name__}")
        if tensor.session is not self:
            raise ValueError("this tensor belongs to another session")

    # -- modules -------------------------------------------------------------

    def load(
        self, module: Any, *, trusted_keys: Sequence[Any] | None = None, allow_host_code: bool | None = None
    ) -> DModule:
        """Loads a module on every worker: a modrt.Module (compiled here, a
        fallback module is fine), the bytes of a `.modrt` artifact, or the
        path of one. The driver, then every worker, checks it against the
        trusted keys (the session's unless given here: a signature by one of
        them is required) and the host-code policy."""
        import modrt

        self._check_open()
        keys = self._trusted_keys if trusted_keys is None else key_texts(trusted_keys)
        allow = self._allow_host_code if allow_host_code is None else allow_host_code
        if isinstance(module, (bytes, bytearray)):
            data = bytes(module)
        elif isinstance(module, (str, os.PathLike)):
            with open(module, "rb") as f:
                data = f.read()
        else:
            data = modrt.artifact.save(module)
        # Refused here first (integrity, signature), before any worker is asked.
        manifest = modrt.artifact.manifest_from_bytes(data, keys)
        if allow is False and any(m.kind == "so" for m in manifest.modules):
            raise ValueError("load: the artifact holds host code (a module of kind so) and allow_host_code is False")
        functions = {f.name: f.signature for m in manifest.modules for f in m.functions}
        module_id = next(self._ids)
        ref = self._ray.put(data)
        self._wait(self._all("load", module_id, ref, keys, allow), "load")
        return DModule(self, module_id, functions)

    def _launch(self, module_id: int, name: str, args: list[tuple[str, Any]], stream: DStream | None) -> Launch:
        self._check_open()
        return Launch(self, self._all("call", module_id, name, args, self._stream_id(stream)), f"call {name}")

    # -- streams ---------------------------------------------------------------

    def stream(self) -> DStream:
        """A new modrt stream on every worker's device. A call or collective
        given `stream=` is ordered after what was given to that stream before
        it, and independent of the device's other streams: a collective on
        one stream overlaps the kernels running on another."""
        self._check_open()
        handle = DStream(self, next(self._ids))
        self._wait(self._all("stream", handle.id), "stream")
        return handle

    def synchronize(self, stream: DStream | None = None, timeout: float | None = None) -> None:
        """Returns when every worker's stream (None: whole device) has
        finished all it was given; raises what a launch there raised."""
        self._check_open()
        stream_id = self._stream_id(stream)
        limit = self.timeout if timeout is None else timeout
        self._wait(self._all("synchronize", stream_id, limit), "synchronize", limit)

    def query(self, stream: DStream) -> bool:
        """Whether every worker's stream has finished all it was given (asks
        the workers, which answer after the tasks given to them before)."""
        stream_id = self._stream_id(stream)
        if stream_id is None:
            raise TypeError("query: pass a stream of this session (Session.stream())")
        return all(self._wait(self._all("query", stream_id), "query").values())

    def _stream_id(self, stream: DStream | None) -> int | None:
        if stream is None:
            return None
        if not isinstance(stream, DStream):
            raise TypeError(
                f"stream: expected a stream of this session (Session.stream()), got {type(stream).__name__}"
            )
        if stream.session is not self:
            raise ValueError("this stream belongs to another session")
        return stream.id

    # -- collectives -----------------------------------------------------------

    def _collective(self, tasks: dict[int, tuple[Any, ...]], what: str, timeout: float | None) -> None:
        """Gives each worker of `tasks` ({rank: (method, *args)}) its part of
        one MPI collective and waits for all. A worker that dies is a
        WorkerError naming it (not the others, whose MPI calls fail with
        it); one that never joins within the timeout, still busy with what
        came before, a WorkerTimeout naming it. MPI cannot cancel a
        collective: it completes once the late worker joins."""
        before = {rank: self._last[rank] for rank in tasks}
        refs = {rank: self._remote(rank, *task) for rank, task in tasks.items()}
        try:
            self._wait(refs, what, timeout, dead_first=True)
        except WorkerTimeout as timed_out:
            busy = [r for r, ref in before.items() if ref is not None and not self._done(ref)]
            if not busy:
                raise
            late = [self.workers[r] for r in sorted(busy)]
            raise WorkerTimeout(
                f"{what}: never joined within the timeout: " + "; ".join(map(str, late)), late
            ) from timed_out

    def _done(self, ref: Any) -> bool:
        ready, _ = self._ray.wait([ref], timeout=0, fetch_local=False)
        return bool(ready)

    def allreduce(
        self, tensor: DTensor, op: str = "sum", timeout: float | None = None, stream: DStream | None = None
    ) -> DTensor:
        """Every worker's tensor becomes the elementwise `op` (sum, prod, min,
        max) of all of them. In place; returns `tensor`."""
        self._own(tensor)
        _check_op(op)
        sid = self._stream_id(stream)
        self._collective({r: ("allreduce", tensor.id, op, sid) for r in range(self.size)}, f"allreduce({op})", timeout)
        return tensor

    def allgather(
        self, tensor: DTensor, axis: int = 0, timeout: float | None = None, stream: DStream | None = None
    ) -> DTensor:
        """A new tensor on every worker: all workers' tensors joined along
        `axis`, in rank order (replicated)."""
        self._own(tensor)
        local = tensor.local_shape
        axis = _axis(axis, len(local))
        shape = list(local)
        if shape:
            shape[axis] *= self.size
        else:
            shape = [self.size]
        sid = self._stream_id(stream)
        out = DTensor(self, next(self._ids), tuple(shape), tensor.dtype, None)
        self._collective(
            {r: ("allgather", tensor.id, out.id, axis, sid) for r in range(self.size)}, "allgather", timeout
        )
        return out

    def reduce_scatter(
        self,
        tensor: DTensor,
        op: str = "sum",
        axis: int = 0,
        timeout: float | None = None,
        stream: DStream | None = None,
    ) -> DTensor:
        """The elementwise `op` of every worker's tensor, cut along `axis`:
        part i on worker i (a new tensor sharded along `axis`). ValueError if
        the axis does not divide by the number of workers."""
        self._own(tensor)
        _check_op(op)
        local = tensor.local_shape
        axis = _axis(axis, len(local))
        if not local or local[axis] % self.size:
            raise ValueError(
                f"reduce_scatter: axis {axis} of the workers' shape {list(local)} "
                f"does not divide among {self.size} workers"
            )
        sid = self._stream_id(stream)
        out = DTensor(self, next(self._ids), local, tensor.dtype, axis)
        self._collective(
            {r: ("reduce_scatter", tensor.id, out.id, op, axis, sid) for r in range(self.size)},
            f"reduce_scatter({op})",
            timeout,
        )
        return out

    def broadcast(
        self, tensor: DTensor, root: int = 0, timeout: float | None = None, stream: DStream | None = None
    ) -> DTensor:
        """Every worker's tensor becomes worker `root`'s. In place."""
        self._own(tensor)
        root = self._rank(root, "root")
        sid = self._stream_id(stream)
        self._collective(
            {r: ("broadcast", tensor.id, root, sid) for r in range(self.size)}, f"broadcast(root={root})", timeout
        )
        return tensor

    def send(
        self,
        tensor: DTensor,
        src: int,
        dst: int,
        out: DTensor | None = None,
        timeout: float | None = None,
        stream: DStream | None = None,
    ) -> None:
        """Worker `src`'s tensor is copied into worker `dst`'s `out` (default:
        `dst`'s own part of `tensor`): a send from src and its receive on dst."""
        self._own(tensor)
        out = tensor if out is None else out
        self._own(out)
        src, dst = self._rank(src, "src"), self._rank(dst, "dst")
        if (out.local_shape, out.dtype) != (tensor.local_shape, tensor.dtype):
            raise ValueError(
                f"send: the receiving tensor is {out.dtype}{list(out.local_shape)} on each worker, "
                f"the sent one {tensor.dtype}{list(tensor.local_shape)}"
            )
        sid = self._stream_id(stream)
        if src == dst:
            tasks = {src: ("copy", tensor.id, out.id, sid)}
        else:
            tasks = {src: ("send_to", tensor.id, dst, sid), dst: ("receive_from", out.id, src, sid)}
        self._collective(tasks, f"send({src} -> {dst})", timeout)

    def barrier(self, timeout: float | None = None) -> None:
        """Returns when every worker has finished all it was given."""
        self._check_open()
        self._wait(self._all("sync"), "barrier", timeout)

    def _rank(self, rank: int, what: str) -> int:
        if not isinstance(rank, int) or not 0 <= rank < self.size:
            raise ValueError(f"{what}: {rank!r} is not a worker rank (0..{self.size - 1})")
        return rank


def _check_op(op: str) -> None:
    if op not in REDUCE_OPS:
        raise ValueError(f"unknown reduction {op!r}; one of {', '.join(REDUCE_OPS)}")


def _check_dtype(dtype: str) -> None:
    from modrt._shapes import HOST_DTYPES

    if dtype not in HOST_DTYPES:
        raise ValueError(f"worker tensors hold {', '.join(HOST_DTYPES)}; not {dtype}")


def _axis(axis: int, ndim: int) -> int:
    if not isinstance(axis, int) or not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis!r} is out of range for {ndim} dimension(s)")
    return axis % max(ndim, 1)
