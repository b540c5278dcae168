"""Loads libmodrt_testing.so, the registry functions that only tests and
benchmarks use (testing.nop, testing.apply, testing.call_global,
testing.raise); the production core does not carry them."""

from __future__ import annotations

import ctypes

import modrt._ffi

_LOADED: list[ctypes.CDLL] = []


def load() -> None:
    """Registers the test hooks in this process (once; later calls do nothing)."""
    if _LOADED:
        return
    path = modrt._ffi.find_library("tests/hooks/libmodrt_testing.so")
    if path is None:
        raise ImportError("libmodrt_testing.so not found: depend on //tests/hooks")
    _LOADED.append(ctypes.CDLL(path))
