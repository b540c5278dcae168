"""Streams and events: the queues of modrt's device layer (above devices;
tensors and graphs stand on it).

A stream is an ordered sequence of launches on one device. Launches go to the
current stream of their device (`with modrt.stream(s):`, else the device's
default stream, or `stream=` on the launch). On the cpu a stream has a
worker thread that runs its launches, so a cpu launch returns before it
ran; on a backend whose plugin has native streams (`Stream.native`) each
stream is one of the backend's own queues, with the backend's events (device
timestamps) and recorded graphs; elsewhere the core emulates streams over the
backend's one in-order queue (`Stream.implementation` says which). Every wait takes a timeout (default:
MODRT_WAIT_TIMEOUT seconds, else none) and raises TimeoutError naming the
pending launches; waits run in short slices, so Ctrl-C interrupts them. An
asynchronous failure is raised by the next wait on its stream, naming the
kernel, its grid and block.
"""

from __future__ import annotations

import atexit
import os
import sys
import time

from . import _ffi, _waits
from ._ffi import call
from ._waits import bounded_wait
from .devices import Device

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Core-internal object types of the device layer (core/src/stream.h).
_OBJ_STREAM, _OBJ_EVENT = 16, 17


def _check_device(value: Any, where: str) -> None:
    if not isinstance(value, Device):
        raise TypeError(f"{where} takes a modrt.Device, not {type(value).__name__}")


def _check_stream(value: Any, where: str) -> None:
    """TypeError naming `where` unless `value` is a modrt.Stream."""
    if not isinstance(value, Stream):
        raise TypeError(f"{where} takes a modrt.Stream, not {type(value).__name__}")


def _event_handle(value: Any, where: str) -> Any:
    """The core handle of the event `value`: TypeError naming `where` when it
    is no modrt.Event, RuntimeError when it was never recorded."""
    if not isinstance(value, Event):
        raise TypeError(f"{where} takes a modrt.Event (from Stream.record()), not {type(value).__name__}")
    handle = getattr(value, "_obj", None)
    if handle is None:
        raise RuntimeError(
            f"{where}: the event was never recorded (modrt.Event() is an empty event); "
            "an event comes from Stream.record()"
        )
    return handle


class Stream:
    """An ordered sequence of launches on one device: `modrt.Stream(device)`."""

    __slots__ = ("_obj",)

    def __new__(cls, device: Device) -> Stream:
        _check_device(device, "modrt.Stream(device)")
        return call("stream.create", device)

    @classmethod
    def from_external(cls, device: Device, handle: int) -> Stream:
        """Another library's queue on `device` as a modrt stream: `handle` is
        a CUstream / hipStream_t as an integer (PyTorch's
        `torch.cuda.current_stream().cuda_stream`, CuPy's `stream.ptr`).
        Launches, copies, events and graphs on it go to that queue, ordered
        with the other library's work there; modrt never destroys it (keep
        the other library's stream alive while modrt uses it). ValueError on
        a backend that adopts no foreign queues, and for 0 (the legacy default
        stream: use `device.default_stream`)."""
        if not isinstance(handle, int) or isinstance(handle, bool):
            raise TypeError(f"a foreign stream handle is an int, not {type(handle).__name__}")
        return call("stream.from_external", device, handle)

    @classmethod
    def _wrap(cls, handle: int) -> Stream:
        s = object.__new__(cls)
        s._obj = _ffi.Object(handle)
        return s

    @property
    def device(self) -> Device:
        return call("stream.device", self._obj)

    @property
    def is_default(self) -> bool:
        return bool(call("stream.is_default", self._obj))

    @property
    def native(self) -> bool:
        """True when this stream is one of the backend's own queues (the
        backend's plugin has the stream extension); False when the core
        runs it (see `implementation`)."""
        return bool(call("stream.native", self._obj))

    @property
    def adopted(self) -> bool:
        """True for a stream made by `Stream.from_external` (another library's queue)."""
        return bool(call("stream.adopted", self._obj))

    @property
    def implementation(self) -> str:
        """How this stream runs its launches, in words (the backend's own
        description of its queue where its plugin gives one)."""
        return call("stream.implementation", self._obj)

    @property
    def pending(self) -> str:
        """The launches not known complete, or "" when none."""
        return call("stream.pending", self._obj)

    def synchronize(self, timeout: float | None = None) -> None:
        """Waits until every launch made so far completed; raises its failure."""
        bounded_wait("stream.wait", self._obj, timeout)

    def query(self) -> bool:
        """True when every launch made so far completed (never blocks)."""
        return self.record().query()

    def record(self) -> Event:
        """An event that completes when the launches made so far did."""
        return call("stream.record", self._obj)

    def wait(self, event: Event) -> None:
        """Launches made on this stream from now on start after `event` completed."""
        call("stream.wait_event", self._obj, _event_handle(event, "Stream.wait(event)"))

    def capture(self) -> _Capture:
        """`with s.capture() as g:` records the launches made in the block
        (on this stream, which is current there) into a Graph; they do not run.
        Only this thread's launches are recorded: another thread's launch on
        the stream meanwhile is refused (RuntimeError), and so is an event
        recorded on it (a graph records launches; time a replay with events
        around `g.replay()`)."""
        return _Capture(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and bool(call("stream.same", self._obj, other._obj))

    def __hash__(self) -> int:
        return hash(self.device)

    def __repr__(self) -> str:
        kind = "default stream" if self.is_default else "stream"
        return f"modrt.Stream({kind} of {self.device})"


class _StreamScope:
    """`with modrt.stream(s):` makes `s` this thread's current stream."""

    __slots__ = ("_stream", "_previous")

    def __init__(self, stream: Stream | None) -> None:
        if stream is not None:
            _check_stream(stream, "modrt.stream(s)")
        self._stream = stream
        self._previous: Stream | None = None

    def __enter__(self) -> Stream | None:
        self._previous = call("stream.swap_current", self._stream._obj if self._stream else None)
        return self._stream

    def __exit__(self, *exc: object) -> None:
        call("stream.swap_current", self._previous._obj if self._previous else None)


def stream(s: Stream | None) -> _StreamScope:
    """`with modrt.stream(s):` launches and copies in the block use `s`
    (for launches on `s`'s device); `None` restores the default stream."""
    return _StreamScope(s)


def current_stream(device: Device) -> Stream:
    """The stream a launch on `device` from this thread goes to now."""
    _check_device(device, "modrt.current_stream(device)")
    return call("stream.current", device)


class Event:
    """A point in a stream: `stream.record()`. `modrt.Event()` is an event
    never recorded: waiting for it, querying it or timing with it raises
    RuntimeError saying so."""

    __slots__ = ("_obj",)

    @classmethod
    def _wrap(cls, handle: int) -> Event:
        e = object.__new__(cls)
        e._obj = _ffi.Object(handle)
        return e

    @property
    def stream(self) -> Stream:
        return call("event.stream", _event_handle(self, "Event.stream"))

    def query(self) -> bool:
        """True when the launches before it completed (never blocks)."""
        return bool(call("event.query", _event_handle(self, "Event.query")))

    def synchronize(self, timeout: float | None = None) -> None:
        bounded_wait("event.wait", _event_handle(self, "Event.synchronize"), timeout)

    def elapsed_ms(self, start: Event) -> float:
        """Milliseconds from `start` to this event, on the device's clock. A
        stream without device timestamps raises RuntimeError saying so."""
        end = _event_handle(self, "Event.elapsed_ms")
        return call("event.elapsed_ms", end, _event_handle(start, "Event.elapsed_ms(start)"))


class _Capture:
    __slots__ = ("_stream", "_scope", "_graph")

    def __init__(self, s: Stream) -> None:
        self._stream = s
        self._scope = _StreamScope(s)

    def __enter__(self) -> Any:
        # A modrt.Graph: modrt.graphs, which stands on this module, registers
        # the class the core's graph objects become. It replays on this stream
        # unless told another.
        self._graph = call("stream.begin_capture", self._stream._obj)
        self._graph._stream = self._stream
        self._scope.__enter__()
        return self._graph

    def __exit__(self, *exc: object) -> None:
        try:
            self._scope.__exit__(*exc)
        finally:
            call("stream.end_capture", self._stream._obj)


def _call_on_stream(fn: Any, values: tuple[Any, ...], s: Stream) -> Any:
    """A launch with `stream=s`: made on `s` (current for the call)."""
    _check_stream(s, "stream=")
    with _StreamScope(s):
        return fn(*values)


_ffi._call_on_stream = _call_on_stream
_ffi.register_object_class(_OBJ_STREAM, Stream._wrap)
_ffi.register_object_class(_OBJ_EVENT, Event._wrap)


def _drain_at_exit() -> None:
    """A process with pending launches waits for them up to
    MODRT_EXIT_TIMEOUT seconds (default 10), then warns and exits at once: a
    kernel that never ends must not keep the process alive."""
    limit = float(os.environ.get("MODRT_EXIT_TIMEOUT", "10"))
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if call("stream.wait_everywhere", _waits._SLICE_S):
            return
    pending = call("stream.pending_everywhere")
    if not pending:
        return
    sys.stderr.write(
        f"modrt: warning: exiting with work still pending after {limit:g} s (MODRT_EXIT_TIMEOUT): {pending}\n"
    )
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(1)


atexit.register(_drain_at_exit)
