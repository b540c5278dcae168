"""Sessions of modrt workers on a Ray cluster (see docs/DISTRIBUTED.md).

The driver owns every decision: it places one Ray actor per requested modrt
device, ships modules as `.modrt` bytes, launches each call on every worker
(SPMD) and orchestrates collectives. Every wait is bounded by the session's
`timeout` and names the workers it waited for; a worker that dies is a
WorkerError naming its node, worker and device.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._worker import Worker

# Collective reductions, every dtype a host array can hold (modrt._shapes.HOST_DTYPES).
REDUCE_OPS = ("sum", "prod", "min", "max")
# Each node offers its modrt devices to Ray as custom resources of these names.
RESOURCE_PREFIX = "modrt_"
_PING_S = 2.0
_RELEASE_S = 10.0
_ALL_AT_ONCE_S = 0.5


class WorkerError(RuntimeError):
    """A worker process died or became unreachable (its node left, it was
    killed, it crashed). Names the node, the worker and its device."""

    def __init__(self, message: str, workers: Sequence[WorkerInfo]) -> None:
        super().__init__(message)
        self.workers = tuple(workers)


class WorkerTimeout(TimeoutError):
    """A call or collective that some workers did not finish within the
    session's `timeout`; names them. The session is still open."""

    def __init__(self, message: str, workers: Sequence[WorkerInfo]) -> None:
        super().__init__(message)
        self.workers = tuple(workers)


@dataclass(frozen=True)
class WorkerInfo:
    rank: int
    node_id: str
    host: str
    pid: int
    kind: str
    device: str  # the device's name on its node

    def __str__(self) -> str:
        where = f"on node {self.host} [{self.node_id[:12]}]"
        return f"worker {self.rank} (pid {self.pid}, {self.kind} device {self.device!r}) {where}"


def _ray() -> Any:
    """Ray, installed (`pip install 'modrt[ray]'`) or, like modrt's other
    optional wheels, under a root of modrt._locate.WHEEL_ROOTS (pip --target:
    the toolchain root's /opt/modrt/pip)."""
    import importlib.util
    import sys

    from modrt._locate import WHEEL_ROOTS

    if importlib.util.find_spec("ray") is None:
        for root in WHEEL_ROOTS:
            if os.path.isdir(os.path.join(root, "ray")):
                sys.path.append(root)
                # The processes of a local cluster (raylet, workers) find it too.
                paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
                os.environ["PYTHONPATH"] = os.pathsep.join(paths + [root])
                break
    try:
        import ray
    except ImportError as e:
        raise ImportError(f"modrt.distributed needs Ray: pip install 'modrt[ray]' ({e})") from None
    return ray


def node_resources(workers_per_device: int = 1) -> dict[str, float]:
    """The Ray custom resources this node offers: `modrt_<kind>` = the number
    of devices of each kind that exist here, times `workers_per_device`
    (several workers may share one device). `python -m modrt.distributed
    resources` prints it for `ray start --resources=...`."""
    import modrt

    if workers_per_device < 1:
        raise ValueError(f"workers_per_device must be at least 1, got {workers_per_device}")
    out: dict[str, float] = {}
    for kind, device_type in modrt.runtime.device_kinds().items():
        count = modrt._ffi.call("device.count", device_type)
        if count > 0 and modrt.device(kind, 0).exist:
            out[RESOURCE_PREFIX + kind] = float(count * workers_per_device)
    return out


def _parse_devices(devices: Any) -> list[str] | str:
    """The kind of each worker, or "<kind>:*" (every device of that kind in the cluster)."""
    if isinstance(devices, bool):
        raise TypeError("devices is a kind ('cpu'), 'kind:N', 'kind:*', a count or a list of kinds, not a bool")
    if isinstance(devices, int):
        if devices < 1:
            raise ValueError(f"devices: a session needs at least one worker, got {devices}")
        return ["cpu"] * devices
    if isinstance(devices, str):
        kind, sep, count = devices.partition(":")
        if not kind:
            raise ValueError(f"devices: no kind in {devices!r}")
        if not sep:
            return [kind]
        if count == "*":
            return devices
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"devices: {devices!r} is not 'kind', 'kind:N' (N >= 1) or 'kind:*'")
        return [kind] * int(count)
    if isinstance(devices, Sequence) and devices and all(isinstance(d, str) and ":" not in d for d in devices):
        return list(devices)
    raise TypeError(
        f"devices is a kind ('cpu'), 'kind:N', 'kind:*', a count or a non-empty list of kinds, not {devices!r}"
    )


def _cluster_summary(ray: Any) -> str:
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    offered: dict[str, float] = {}
    for n in nodes:
        for name, amount in n.get("Resources", {}).items():
            if name.startswith(RESOURCE_PREFIX):
                offered[name[len(RESOURCE_PREFIX) :]] = offered.get(name[len(RESOURCE_PREFIX) :], 0) + amount
    free = ray.available_resources()
    devices = ", ".join(
        f"{kind}: {int(total)} ({int(free.get(RESOURCE_PREFIX + kind, 0))} free)"
        for kind, total in sorted(offered.items())
    )
    return f"{len(nodes)} node(s) offering {devices or 'no modrt devices'}"


class Session:
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

    def __init__(
        self,
        devices: Any = "cpu",
        *,
        address: str | None = None,
        timeout: float = 60.0,
        trusted_keys: Sequence[Any] | None = None,
        allow_host_code: bool | None = None,
        num_cpus: int = 1,
        object_store_memory: int = 256 * 2**20,
    ) -> None:
        ray = _ray()
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.timeout = float(timeout)
        self._ray = ray
        self._closed = False
        self._ids = itertools.count(1)
        self._actors: list[Any] = []
        self._last: list[Any] = []  # each worker's last task (_remote)
        self.workers: tuple[WorkerInfo, ...] = ()
        self._trusted_keys = _key_texts(trusted_keys)
        self._allow_host_code = allow_host_code
        wanted = _parse_devices(devices)
        self._owns_cluster = False
        self._temp_dir: str | None = None
        if not ray.is_initialized():
            if address is None:
                self._start_local(wanted, num_cpus, object_store_memory)
            else:
                ray.init(address=address, logging_level="WARNING", log_to_driver=False)
        try:
            kinds = self._check_request(wanted)
            self._start_workers(kinds)
        except BaseException:
            self.close()
            raise

    # -- cluster and workers -------------------------------------------------

    def _start_local(self, wanted: list[str] | str, num_cpus: int, object_store_memory: int) -> None:
        here = node_resources()
        kinds = [wanted.partition(":")[0]] if isinstance(wanted, str) else wanted
        for kind in set(kinds):
            name = RESOURCE_PREFIX + kind
            if name in here:
                here[name] = max(here[name], float(kinds.count(kind)))
        # A short path: Ray's Unix sockets live under it (108 bytes at most).
        self._temp_dir = tempfile.mkdtemp(prefix="modrt-ray-", dir="/tmp")
        self._ray.init(
            num_cpus=num_cpus,
            num_gpus=0,
            resources=here,
            object_store_memory=object_store_memory,
            include_dashboard=False,
            logging_level="WARNING",
            log_to_driver=False,
            _temp_dir=self._temp_dir,
        )
        self._owns_cluster = True

    def _check_request(self, wanted: list[str] | str) -> list[str]:
        free = self._ray.available_resources()
        if isinstance(wanted, str):
            kind = wanted.partition(":")[0]
            count = int(free.get(RESOURCE_PREFIX + kind, 0))
            if count == 0:
                raise ValueError(
                    f"modrt.distributed: no free {kind} device in the cluster for {wanted!r}; "
                    f"it has {_cluster_summary(self._ray)}"
                )
            return [kind] * count
        for kind in sorted(set(wanted)):
            need = wanted.count(kind)
            have = int(free.get(RESOURCE_PREFIX + kind, 0))
            if have < need:
                raise ValueError(
                    f"modrt.distributed: the cluster cannot give {need} {kind} worker(s) ({have} free); "
                    f"it has {_cluster_summary(self._ray)}. Each node offers its devices with "
                    '`ray start ... --resources="$(python -m modrt.distributed resources)"`'
                )
        return wanted

    def _start_workers(self, kinds: list[str]) -> None:
        ray = self._ray
        remote = ray.remote(Worker)
        self._actors = [
            remote.options(
                num_cpus=0, resources={RESOURCE_PREFIX + kind: 1}, max_restarts=0, max_task_retries=0
            ).remote()
            for kind in kinds
        ]
        # Placeholders until the workers answer, so that errors can name them.
        self.workers = tuple(WorkerInfo(r, "?", "?", 0, kind, "?") for r, kind in enumerate(kinds))
        identities = self._wait({r: a.identity.remote() for r, a in enumerate(self._actors)}, "starting the workers")
        slots: dict[tuple[str, str], int] = {}
        opened = {}
        for rank, (actor, kind) in enumerate(zip(self._actors, kinds)):
            key = (identities[rank]["node_id"], kind)
            opened[rank] = actor.open.remote(kind, slots.get(key, 0))
            slots[key] = slots.get(key, 0) + 1
            ident = identities[rank]
            self.workers = _replace(
                self.workers, rank, WorkerInfo(rank, ident["node_id"], ident["host"], ident["pid"], kind, "?")
            )
        names = self._wait(opened, "opening the devices")
        self.workers = tuple(WorkerInfo(w.rank, w.node_id, w.host, w.pid, w.kind, names[w.rank]) for w in self.workers)
        self._last = [None] * len(self._actors)
        # One MPI communicator of all workers, for the collectives.
        port = self._wait({0: self._actors[0].group_port.remote()}, "opening the MPI port")[0]
        joins = {rank: self._remote(rank, "join_group", port, rank, len(kinds)) for rank in range(len(kinds))}
        self._wait(joins, "joining the workers' MPI group")

    @property
    def size(self) -> int:
        return len(self._actors)

    def __len__(self) -> int:
        return len(self._actors)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.size} workers"
        return f"<modrt.distributed.Session {state}>"

    def close(self) -> None:
        """Ends every worker process (and the local cluster, if this session
        started it). Idempotent; the handles it made are unusable after."""
        if self._closed:
            return
        self._closed = True
        ray = self._ray
        free_before = ray.available_resources() if self._actors and not self._owns_cluster else {}
        for actor in self._actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - an actor already gone is what close wants
                pass
        self._actors = []
        if free_before:
            self._await_release(free_before)
        if self._owns_cluster:
            ray.shutdown()
            if self._temp_dir:
                _remove_tree(self._temp_dir)

    def _await_release(self, free_before: dict[str, float]) -> None:
        """Waits (a few seconds at most) until Ray has taken back the devices
        of the killed workers, so that a session opened next can have them."""
        held: dict[str, float] = {}
        for w in self.workers:
            held[RESOURCE_PREFIX + w.kind] = held.get(RESOURCE_PREFIX + w.kind, 0) + 1
        deadline = time.monotonic() + _RELEASE_S
        while time.monotonic() < deadline:
            free = self._ray.available_resources()
            if all(free.get(name, 0) >= free_before.get(name, 0) + count for name, count in held.items()):
                return
            time.sleep(0.05)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this modrt.distributed.Session is closed")

    # -- waiting -------------------------------------------------------------

    def _wait(
        self, refs: dict[int, Any], what: str, timeout: float | None = None, dead_first: bool = False
    ) -> dict[int, Any]:
        """The results of `refs` ({rank: ObjectRef}) within the timeout. A
        worker that died is a WorkerError, an error raised on a worker is
        re-raised here naming it (with `dead_first`, a WorkerError instead if
        some worker died: in a collective, the others' errors follow from
        it), a worker too slow is a WorkerTimeout."""
        ray = self._ray
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        pending = {ref: rank for rank, ref in refs.items()}
        results: dict[int, Any] = {}
        # Most waits end with every worker done soon: one wait and one get.
        # Otherwise (a worker slow, dead or failing) one at a time below, so
        # that a dead worker is named while the others still wait for it.
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=min(_ALL_AT_ONCE_S, limit))
        if len(ready) == len(pending):
            try:
                values = ray.get(ready)
            except ray.exceptions.RayError:
                pass
            else:
                return {pending[ref]: value for ref, value in zip(ready, values)}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                late = [self.workers[r] for r in sorted(pending.values())]
                dead = self._dead_workers()
                if dead:
                    raise self._worker_error(what, dead)
                raise WorkerTimeout(f"{what}: no answer within {limit:g} s from " + "; ".join(map(str, late)), late)
            for ref in ready:
                rank = pending.pop(ref)
                try:
                    results[rank] = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    cause = e.cause if isinstance(e.cause, Exception) else RuntimeError(str(e))
                    if isinstance(cause, ray.exceptions.RayError):
                        raise self._worker_error(what, self._dead_workers() or [self.workers[rank]]) from None
                    dead = self._dead_workers() if dead_first else []
                    if dead:
                        raise self._worker_error(what, dead) from None
                    raise type(cause)(f"{what}: {self.workers[rank]}: {cause}") from None
                except ray.exceptions.RayError:
                    raise self._worker_error(what, self._dead_workers() or [self.workers[rank]]) from None
        return results

    def _dead_workers(self) -> list[WorkerInfo]:
        """The workers that fail a ping (Ray knows a dead actor at once; a
        busy one just does not answer within the ping's time)."""
        ray = self._ray
        pings = {actor.held.remote(): rank for rank, actor in enumerate(self._actors)}
        ready, _ = ray.wait(list(pings), num_returns=len(pings), timeout=_PING_S)
        dead = []
        for ref in ready:
            try:
                ray.get(ref)
            except ray.exceptions.RayError:
                dead.append(self.workers[pings[ref]])
        return sorted(dead, key=lambda w: w.rank)

    @staticmethod
    def _worker_error(what: str, dead: Sequence[WorkerInfo]) -> WorkerError:
        return WorkerError(f"{what}: lost " + "; ".join(map(str, dead)), dead)

    def _remote(self, rank: int, method: str, *args: Any) -> Any:
        """Gives worker `rank` a task; the worker runs its tasks in the order
        given. The last one is remembered: a collective that times out names
        the workers still busy with what came before it."""
        ref = getattr(self._actors[rank], method).remote(*args)
        self._last[rank] = ref
        return ref

    def _all(self, method: str, *args: Any) -> dict[int, Any]:
        return {rank: self._remote(rank, method, *args) for rank in range(self.size)}

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

    def _free(self, tensor_id: int) -> None:
        if self._closed:
            return
        for actor in self._actors:
            try:
                actor.free.remote([tensor_id])
            except Exception:  # noqa: BLE001 - a dead worker holds nothing
                pass

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
        keys = self._trusted_keys if trusted_keys is None else _key_texts(trusted_keys)
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


class DTensor:
    """A tensor on the workers of a session: sharded along `axis` (worker i
    holds part i), or one tensor of the full shape per worker (`axis` None).
    Freed on the workers when the driver drops its last reference."""

    def __init__(self, session: Session, tensor_id: int, shape: Sequence[int], dtype: str, axis: int | None) -> None:
        self.session = session
        self.id = tensor_id
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.axis = axis
        weakref.finalize(self, session._free, tensor_id)

    @property
    def local_shape(self) -> tuple[int, ...]:
        """The shape of each worker's own tensor."""
        if self.axis is None:
            return self.shape
        local = list(self.shape)
        local[self.axis] //= self.session.size
        return tuple(local)

    def numpy(self) -> Any:
        return self.session.gather(self)

    def __repr__(self) -> str:
        layout = "replicated" if self.axis is None else f"sharded on axis {self.axis}"
        return f"<DTensor {self.dtype}{list(self.shape)} {layout} over {self.session.size} workers>"


class DStream:
    """A modrt stream on every worker's device (Session.stream()); dropped on
    the workers when the driver drops its handle."""

    def __init__(self, session: Session, stream_id: int) -> None:
        self.session = session
        self.id = stream_id
        weakref.finalize(self, session._free, stream_id)

    def __repr__(self) -> str:
        return f"<DStream {self.id} over {self.session.size} workers>"


class DModule:
    """A module loaded on every worker of a session; `dmod["f"](...)` runs
    f on every worker (SPMD), each on its own part of the worker tensors."""

    def __init__(self, session: Session, module_id: int, functions: dict[str, str | None]) -> None:
        self.session = session
        self.id = module_id
        self.functions = functions
        weakref.finalize(self, _unload, session, module_id)

    def __getitem__(self, name: str) -> DFunction:
        if name not in self.functions:
            raise KeyError(f"no function {name!r} in this module; it has {', '.join(sorted(self.functions))}")
        return DFunction(self, name, self.functions[name])


class DFunction:
    def __init__(self, module: DModule, name: str, signature: str | None) -> None:
        self.module = module
        self.name = name
        self.signature = signature

    def __call__(
        self, *args: Any, timeout: float | None = None, wait: bool = True, stream: DStream | None = None
    ) -> Launch | None:
        """Runs on every worker, each on its own part of the worker tensors
        (scalars go as they are), and returns when all have finished. With
        wait=False it returns at once a Launch, whose wait() does that; each
        worker runs what it is given in order, so later calls and
        collectives come after it. With `stream` (Session.stream()) each
        worker launches it on that stream and goes on: "finished" means
        launched; the stream orders what comes after it there, and
        Session.synchronize(stream) waits for it."""
        session = self.module.session
        encoded: list[tuple[str, Any]] = []
        for arg in args:
            if isinstance(arg, DTensor):
                session._own(arg)
                encoded.append(("tensor", arg.id))
            else:
                encoded.append(("scalar", arg))
        if self.signature is not None:
            _check_call(self.name, self.signature, args)
        launch = session._launch(self.module.id, self.name, encoded, stream)
        if not wait:
            return launch
        launch.wait(timeout)
        return None


class Launch:
    """A call running on every worker (DFunction with wait=False)."""

    def __init__(self, session: Session, refs: dict[int, Any], what: str) -> None:
        self._session = session
        self._refs = refs
        self._what = what

    def wait(self, timeout: float | None = None) -> None:
        """Returns when every worker has finished the call; raises what the
        call raised (WorkerError, WorkerTimeout, a worker's error)."""
        self._session._wait(self._refs, self._what, timeout)


def _check_call(name: str, signature: str, args: Sequence[Any]) -> None:
    """Refuses, before anything launches, arguments that do not fit the signature."""
    from modrt._signature import parse_signature

    _, params, tags = parse_signature(signature)
    given = [p for p in params if not p.launch_tag]
    if len(args) != len(given) + len(tags):
        raise TypeError(f"{name}: {signature} takes {len(given) + len(tags)} values, got {len(args)}")
    for i, (arg, param) in enumerate(zip(args, given)):
        if param.is_buffer and not isinstance(arg, DTensor):
            raise TypeError(
                f"{name}: argument {i} ({param}) is a buffer: pass a worker tensor "
                f"(Session.shard/replicate/empty), not {type(arg).__name__}"
            )
        if not param.is_buffer and isinstance(arg, DTensor):
            raise TypeError(f"{name}: argument {i} ({param}) is a scalar, got a worker tensor")
        if param.is_buffer and arg.dtype != param.dtype:
            raise TypeError(f"{name}: argument {i} ({param}) got a worker tensor of {arg.dtype}")
    for i, arg in enumerate(args[len(given) :], start=len(given)):
        if isinstance(arg, DTensor):
            raise TypeError(f"{name}: argument {i} is a launch parameter, got a worker tensor")


def _unload(session: Session, module_id: int) -> None:
    if session._closed:
        return
    for actor in session._actors:
        try:
            actor.unload.remote(module_id)
        except Exception:  # noqa: BLE001 - a dead worker holds nothing
            pass


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


def _key_texts(keys: Sequence[Any] | None) -> list[str] | None:
    """Public keys as texts, so that workers on other machines need no files."""
    if keys is None:
        import modrt

        keys = modrt.artifact.trusted_keys_from_env()
        if not keys:
            return None
    if isinstance(keys, (str, bytes, os.PathLike)):
        raise TypeError("trusted_keys is a list of public key files or key texts, not one")
    texts = []
    for key in keys:
        if isinstance(key, bytes):
            key = key.decode()
        if isinstance(key, os.PathLike) or (isinstance(key, str) and os.path.isfile(key)):
            with open(key) as f:
                key = f.read()
        texts.append(str(key))
    return texts


def _replace(items: tuple[WorkerInfo, ...], index: int, value: WorkerInfo) -> tuple[WorkerInfo, ...]:
    return items[:index] + (value,) + items[index + 1 :]


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
