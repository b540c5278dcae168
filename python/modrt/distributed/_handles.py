"""What a session hands out: tensors, streams and modules on its workers,
functions to call on them and running calls. Each asks its session for the
work (SessionCalls), which it does not import: Session stands on these."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any, Protocol


class SessionCalls(Protocol):
    """The parts of a Session its handles use."""

    @property
    def size(self) -> int: ...

    def gather(self, tensor: DTensor) -> Any: ...

    def _own(self, tensor: Any) -> None: ...

    def _free(self, tensor_id: int) -> None: ...

    def _unload(self, module_id: int) -> None: ...

    def _launch(self, module_id: int, name: str, args: list[tuple[str, Any]], stream: DStream | None) -> Launch: ...

    def _wait(
        self, refs: dict[int, Any], what: str, timeout: float | None = None, dead_first: bool = False
    ) -> dict[int, Any]: ...


class DTensor:
    """A tensor on the workers of a session: sharded along `axis` (worker i
    holds part i), or one tensor of the full shape per worker (`axis` None).
    Freed on the workers when the driver drops its last reference."""

    def __init__(
        self, session: SessionCalls, tensor_id: int, shape: Sequence[int], dtype: str, axis: int | None
    ) -> None:
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

    def __init__(self, session: SessionCalls, stream_id: int) -> None:
        self.session = session
        self.id = stream_id
        weakref.finalize(self, session._free, stream_id)

    def __repr__(self) -> str:
        return f"<DStream {self.id} over {self.session.size} workers>"


class DModule:
    """A module loaded on every worker of a session; `dmod["f"](...)` runs
    f on every worker (SPMD), each on its own part of the worker tensors."""

    def __init__(self, session: SessionCalls, module_id: int, functions: dict[str, str | None]) -> None:
        self.session = session
        self.id = module_id
        self.functions = functions
        weakref.finalize(self, session._unload, module_id)

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
            check_call(self.name, self.signature, args)
        launch = session._launch(self.module.id, self.name, encoded, stream)
        if not wait:
            return launch
        launch.wait(timeout)
        return None


class Launch:
    """A call running on every worker (DFunction with wait=False)."""

    def __init__(self, session: SessionCalls, refs: dict[int, Any], what: str) -> None:
        self._session = session
        self._refs = refs
        self._what = what

    def wait(self, timeout: float | None = None) -> None:
        """Returns when every worker has finished the call; raises what the
        call raised (WorkerError, WorkerTimeout, a worker's error)."""
        self._session._wait(self._refs, self._what, timeout)


def check_call(name: str, signature: str, args: Sequence[Any]) -> None:
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
