"""Bounded waits: every wait of the device layer (a device, a stream, an
event, the process's exit) runs the core's wait in short slices, so Ctrl-C
interrupts it, and raises TimeoutError after its timeout (default:
MODRT_WAIT_TIMEOUT seconds, else none)."""

from __future__ import annotations

import numbers
import os
import time

from ._ffi import call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# How long one native wait blocks before Python checks for signals (Ctrl-C).
_SLICE_S = 0.05


def default_timeout() -> float | None:
    """MODRT_WAIT_TIMEOUT in seconds, or None (wait without a bound)."""
    text = os.environ.get("MODRT_WAIT_TIMEOUT", "")
    return float(text) if text else None


def check_timeout(timeout: Any) -> None:
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, numbers.Real)):
        raise TypeError(f"timeout is a number of seconds or None, not {type(timeout).__name__}")


def bounded_wait(function: str, target: Any, timeout: float | None) -> None:
    """Runs the native wait `function(target, slice, raise_after)` in slices
    until it reports completion, or raises TimeoutError after `timeout` s."""
    check_timeout(timeout)
    if timeout is None:
        timeout = default_timeout()
    if timeout is None:
        while not call(function, target, _SLICE_S, -1.0):
            pass
        return
    if timeout < 0:
        raise ValueError(f"timeout must be >= 0 seconds, got {timeout}")
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= _SLICE_S:
            call(function, target, max(left, 0.0), float(timeout))
            return
        if call(function, target, _SLICE_S, -1.0):
            return
