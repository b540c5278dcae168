"""The workers of a session (see docs/DISTRIBUTED.md): placing one Ray actor
per requested modrt device, giving them tasks, and every bounded wait for
them. Every wait is bounded by the session's `timeout` and names the
workers it waited for; a worker that dies is a WorkerError naming its node,
worker and device. Session (what a user calls) stands on this.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from ._cluster import RESOURCE_PREFIX, cluster_summary, import_ray, node_resources, parse_devices
from ._errors import WorkerError, WorkerInfo, WorkerTimeout
from ._worker import Worker

_PING_S = 2.0
_RELEASE_S = 10.0
_ALL_AT_ONCE_S = 0.5


class WorkerGroup:
    """One Ray actor per requested modrt device, and the bounded waits for
    them (the arguments are Session's)."""

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
        ray = import_ray()
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.timeout = float(timeout)
        self._ray = ray
        self._closed = False
        self._ids = itertools.count(1)
        self._actors: list[Any] = []
        self._last: list[Any] = []  # each worker's last task (_remote)
        self.workers: tuple[WorkerInfo, ...] = ()
        self._trusted_keys = key_texts(trusted_keys)
        self._allow_host_code = allow_host_code
        wanted = parse_devices(devices)
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
                    f"it has {cluster_summary(self._ray)}"
                )
            return [kind] * count
        for kind in sorted(set(wanted)):
            need = wanted.count(kind)
            have = int(free.get(RESOURCE_PREFIX + kind, 0))
            if have < need:
                raise ValueError(
                    f"modrt.distributed: the cluster cannot give {need} {kind} worker(s) ({have} free); "
                    f"it has {cluster_summary(self._ray)}. Each node offers its devices with "
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

    # -- what the driver drops -----------------------------------------------

    def _free(self, tensor_id: int) -> None:
        if self._closed:
            return
        for actor in self._actors:
            try:
                actor.free.remote([tensor_id])
            except Exception:  # noqa: BLE001 - a dead worker holds nothing
                pass

    def _unload(self, module_id: int) -> None:
        if self._closed:
            return
        for actor in self._actors:
            try:
                actor.unload.remote(module_id)
            except Exception:  # noqa: BLE001 - a dead worker holds nothing
                pass


def key_texts(keys: Sequence[Any] | None) -> list[str] | None:
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
