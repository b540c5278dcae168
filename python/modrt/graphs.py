"""Graphs: launches recorded by `with stream.capture() as g:` and replayed
by `g.replay()`, the top of modrt's device layer (on streams and tensors)."""

from __future__ import annotations

from . import _ffi, streams
from ._ffi import call
from .tensors import Tensor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The core-internal object type of a graph (core/src/stream.h).
_OBJ_GRAPH = 18


class Graph:
    """Launches recorded by `with stream.capture() as g:`, replayed by `g.replay()`."""

    __slots__ = ("_obj", "_stream")

    @classmethod
    def _wrap(cls, handle: int) -> Graph:
        # The core makes graphs (Stream.capture); the capture names the stream.
        g = object.__new__(cls)
        g._obj = _ffi.Object(handle)
        g._stream = None
        return g

    def __len__(self) -> int:
        return call("graph.size", self._obj)

    @property
    def native(self) -> bool:
        """True when the backend recorded the launches itself (a replay
        without `bindings` launches that recording); False when replays run
        the core's list of launches one by one."""
        return bool(call("graph.native", self._obj))

    @property
    def why_not_native(self) -> str | None:
        """Why the backend did not record the launches itself (no graph
        extension, a stream it cannot capture on, a launch it could not
        record), in the backend's words; None when `native` is True."""
        return call("graph.why_not_native", self._obj) or None

    def replay(
        self,
        bindings: dict[Tensor, Tensor] | None = None,
        *,
        scalars: dict[tuple[int, int | str], int | float] | None = None,
        stream: streams.Stream | None = None,
    ) -> None:
        """Runs the recorded launches again, in order, on `stream` (default:
        the stream it was captured on).

        `bindings` maps captured tensors to tensors of the same shape, dtype
        and device used in their place, all at once: each argument of a
        recorded launch is looked up once, so `{x: z, z: x}` swaps x and z,
        and a cycle rotates. A key no launch took is refused (ValueError
        naming it), as is a replacement of another shape, dtype or device;
        the captured tensors themselves are untouched by a rebound replay.

        `scalars` gives new values to scalars the launches took, for this
        replay: each key is `(launch, argument)`, the launch by its index in
        capture order (0 is the first launch recorded) and the argument by
        the index of the value among those that launch was called with, or
        by its name in the function's signature, or by a launch parameter's
        tag ("blockIdx.x", "threadIdx.x", ...), so `{(0, 3): 200}` and, with
        a signature naming it, `{(0, "n"): 200}` are the same. Each value is
        checked as the launch checks it (a TypeError or OverflowError naming
        the argument), and a launch or argument the graph lacks, or a tensor
        argument, is refused, all before anything runs. A graph the backend
        recorded itself is recorded again with the new values (as with new
        bindings); replays already submitted keep the values they were given,
        and the captured launches keep theirs."""
        if stream is not None:
            streams._check_stream(stream, "Graph.replay: stream=")
        if bindings is not None and not isinstance(bindings, dict):
            raise TypeError(
                f"Graph.replay: bindings is a dict {{captured tensor: replacement}}, not {type(bindings).__name__}"
            )
        if scalars is not None and not isinstance(scalars, dict):
            raise TypeError(
                f"Graph.replay: scalars is a dict {{(launch, argument): value}}, not {type(scalars).__name__}"
            )
        pairs: list[Any] = []
        for captured, replacement in (bindings or {}).items():
            for role, value in (("key", captured), ("value", replacement)):
                if not isinstance(value, Tensor):
                    raise TypeError(
                        f"Graph.replay: every binding's {role} is a modrt.Tensor, not {type(value).__name__}"
                    )
            pairs += [captured, replacement]
        triples: list[Any] = []
        for key, value in (scalars or {}).items():
            if not (
                isinstance(key, tuple)
                and len(key) == 2
                and type(key[0]) is int
                and (type(key[1]) is int or isinstance(key[1], str))
            ):
                raise TypeError(
                    f"Graph.replay: every key of scalars is (launch index, argument index or name), not {key!r}"
                )
            if type(value) not in (int, float):
                raise TypeError(f"Graph.replay: scalars[{key!r}] is an int or a float, not {type(value).__name__}")
            triples += [key[0], key[1], value]
        call("graph.replay", self._obj, (stream or self._stream)._obj, len(pairs) // 2, *pairs, *triples)


_ffi.register_object_class(_OBJ_GRAPH, Graph._wrap)
