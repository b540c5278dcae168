"""Test support for tests/reliability_test.py: one small kernel set per backend
with a device here (each backend's in backends/<x>/testing/<x>_kernels.py,
RELIABILITY), and helpers a child process uses to assert an error.

The kernels, the same on every backend:
  fill(out: int32*, v: int32, n: int32)      out[i] = v for i < n
  fillf(out: float32*, v: float32, n: int32) out[i] = v for i < n
  copy(src: const int32*, dst: int32*, n: int32)  dst[i] = src[i] for i < n
(the signatures name the arguments, so errors name them too).
Device kernels take (blockIdx.x, threadIdx.x) after the arguments; cpu kernels loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from backend_kernels import having

import modrt

# The host and every backend with RELIABILITY kernels
# (backends/<x>/testing/<x>_kernels.py: (sources, signatures)).
_BACKEND_KERNELS = having("RELIABILITY")
BACKENDS = ("cpu", *_BACKEND_KERNELS)

_C = """
#include <stdint.h>
void fill(int32_t* out, int32_t v, int32_t n) { for (int32_t i = 0; i < n; ++i) out[i] = v; }
void fillf(float* out, float v, int32_t n) { for (int32_t i = 0; i < n; ++i) out[i] = v; }
void copy(const int32_t* src, int32_t* dst, int32_t n) { for (int32_t i = 0; i < n; ++i) dst[i] = src[i]; }
"""
_CPU_SIGNATURES = [
    "fill(int32* out, int32 v, int32 n)",
    "fillf(float32* out, float32 v, int32 n)",
    "copy(const int32* src, int32* dst, int32 n)",
]


def _kernels(kind: str) -> tuple[object, list[str]]:
    """(sources, signatures) of the kernels on `kind`."""
    return (_C, _CPU_SIGNATURES) if kind == "cpu" else _BACKEND_KERNELS[kind]


def device_or_skip_reason(kind: str) -> str:
    """Why `kind` cannot run here ("" when it can)."""
    if kind != "cpu" and not modrt.backend.runtime_status(kind).loaded:
        return f"the {kind} runtime is not in this build"
    dev = modrt.device(kind, 0)
    return "" if dev.exist else dev.unavailable_reason


class Kernels:
    """The kernels on device 0 of `kind`; calls take the launch for n items."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.dev = modrt.device(kind, 0)
        sources, signatures = _kernels(kind)
        self.module = modrt.compile(sources, kind, signatures)

    def launch(self, name: str, *args: object, n: int, grid: int | None = None, block: int = 64) -> None:
        if self.kind == "cpu":
            self.module[name](*args)
        else:
            self.module[name](*args, grid if grid is not None else max(1, (n + block - 1) // block), block)

    def fill(self, out: modrt.Tensor, v: object, n: int, **launch: int) -> None:
        self.launch("fill", out, v, n, n=n, **launch)

    def fillf(self, out: modrt.Tensor, v: object, n: int, **launch: int) -> None:
        self.launch("fillf", out, v, n, n=n, **launch)

    def copy(self, src: modrt.Tensor, dst: modrt.Tensor, n: int, **launch: int) -> None:
        self.launch("copy", src, dst, n, n=n, **launch)


def expect(error: type[BaseException], pattern: str, call: Callable[[], object]) -> BaseException:
    """Runs `call`, which must raise `error` with a message matching `pattern`."""
    try:
        call()
    except error as e:
        if not re.search(pattern, str(e)):
            raise AssertionError(f"{type(e).__name__}: {e!s} does not match {pattern!r}") from e
        return e
    raise AssertionError(f"no {error.__name__} (expected one matching {pattern!r})")


def use_in_child(kind: str, queue: object, inherited: tuple[Kernels, modrt.Tensor] | None) -> None:
    """A multiprocessing child's work; puts ("ran", values), ("refused",
    message) or ("error", text) on `queue`. `inherited` (fork only): the
    parent's kernels and a tensor, on a device the parent opened."""
    try:
        if inherited is not None:
            k, out = inherited
            dev = modrt.device(kind)
            pattern = r"cannot be used in this process: it was opened by process \d+ before this process was forked"
            messages = [
                str(expect(RuntimeError, pattern, call))
                for call in (
                    lambda: k.fill(out, 1, 64),
                    lambda: modrt.empty((4,), "int32", dev),
                    lambda: dev.sync(),
                    # A device tensor's copy to the host (a cpu tensor's memory is shared, not copied).
                    *([lambda: out.numpy()] if kind != "cpu" else []),
                )
            ]
            assert not dev.exist and "forked" in dev.unavailable_reason, dev.unavailable_reason
            queue.put(("refused", messages[0]))
            return
        k = Kernels(kind)
        out = modrt.empty((64,), "int32", k.dev)
        k.fill(out, 9, 64)
        queue.put(("ran", out.numpy().tolist()))
    except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent
        queue.put(("error", f"{type(e).__name__}: {e}"))
