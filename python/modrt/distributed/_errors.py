"""A worker as the driver names it, and the two ways workers fail a wait."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


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
