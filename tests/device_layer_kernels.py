"""The kernels the device-layer tests run, in each backend's language: the same
three everywhere, so that a case reads alike on every backend
(tests/device_layer_test.py, device_layer_waits_test.py, native_streams_test.py,
native_graphs_test.py)
and a backend's own tests can take them (backends/<x>/native_streams_test.py). Each backend's
are in backends/<x>/testing/<x>_kernels.py (DEVICE_LAYER), found by
tests/backend_kernels.py.

`vadd` (c = a + b, one item per element, block BLOCK), `slow_add` (c = a + b
after `rounds` rounds of busy work per item: long enough that a reader on
another stream without a wait would see it unfinished) and `spin` (waits for
flag[0] != 0, which never comes). KERNELS[kind] is (source, signatures).

NATIVE_STREAMS and NATIVE_GRAPHS: the backends that declare native streams
and graphs they record themselves, which device_layer_test.py holds their
devices to.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

from backend_kernels import having

BLOCK = 64

# The host's kernels; each backend's are its DEVICE_LAYER
# (backends/<x>/testing/<x>_kernels.py).
KERNELS = {
    "cpu": (
        """
void vadd(const float* a, const float* b, float* c, int n) { for (int i = 0; i < n; ++i) c[i] = a[i] + b[i]; }
void slow_add(const float* a, const float* b, float* c, int n, int rounds) {
  for (int i = 0; i < n; ++i) {
    volatile float x = a[i];
    for (int r = 0; r < rounds; ++r) x = x * 0.999f + 0.001f * a[i];
    c[i] = x + b[i];
  }
}
void spin(int* flag) { volatile int* f = flag; while (f[0] == 0) {} }
""",
        [
            "vadd(float32*, float32*, float32*, int32)",
            "slow_add(float32*, float32*, float32*, int32, int32)",
            "spin(int32*)",
        ],
    ),
    **having("DEVICE_LAYER"),
}
KINDS = list(KERNELS)
# Backends whose plugin has native streams (plugin_api.h, ModrtStreamExtension).
NATIVE_STREAMS = {backend for backend, native in having("NATIVE_STREAMS").items() if native}
# Backends whose plugin records graphs itself (plugin_api.h, ModrtGraphExtension).
NATIVE_GRAPHS = {backend for backend, native in having("NATIVE_GRAPHS").items() if native}
# Rounds of slow_add's busy work on each backend with native streams: long
# enough to be seen unfinished, short enough on its device here.
SLOW_ROUNDS = having("SLOW_ROUNDS")


def device_or_skip(kind: str) -> str:
    """`kind`, when device 0 of it exists here; else the test is skipped."""
    import pytest

    import modrt

    d = modrt.device(kind, 0)
    if not d.exist:
        pytest.skip(f"{kind}: {d.unavailable_reason}")
    return kind


def launch_params(kind: str, n: int) -> tuple[int, ...]:
    return () if kind == "cpu" else ((n + BLOCK - 1) // BLOCK, BLOCK)


def spin_params(kind: str) -> tuple[int, ...]:
    return () if kind == "cpu" else (1, 1)


def compile_kernels(kind: str) -> Any:
    import modrt

    source, signatures = KERNELS[kind]
    return modrt.compile(source, kind, signatures)


def vadd(mod: Any, kind: str, a: Any, b: Any, c: Any, n: int) -> None:
    mod["vadd"](a, b, c, n, *launch_params(kind, n))


def inputs(dev: Any, n: int = 300) -> tuple[Any, Any, Any, Any]:
    import numpy as np

    import modrt

    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    return x, y, modrt.tensor(x, dev), modrt.tensor(y, dev)


def run_child(kind: str, body: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`body` in a fresh Python with `dev`, its kernels compiled as `mod`, a
    spin flag and the spin's launch parameters defined."""
    source, signatures = KERNELS[kind]
    code = textwrap.dedent(
        f"""
        import os, signal, sys, threading, numpy as np, modrt
        kind = {kind!r}
        dev = modrt.device(kind)
        mod = modrt.compile({source!r}, kind, {signatures!r})
        flag = modrt.tensor(np.zeros(1, "int32"), dev)
        spin_params = {spin_params(kind)!r}
        """
    ) + textwrap.dedent(body)
    env = dict(os.environ, MODRT_EXIT_TIMEOUT="1", **(env_extra or {}))
    # The guard against a hang of the test itself, not a timed assertion.
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=240)
