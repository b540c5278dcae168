"""The kernels the device-layer tests run, in each backend's language: the same
three everywhere, so that a case reads alike on every backend
(tests/device_layer_test.py, device_layer_waits_test.py, native_streams_test.py)
and a backend's own tests can take them (backends/<x>/native_streams_test.py). Each backend's
are in backends/<x>/testing/<x>_kernels.py (DEVICE_LAYER), found by
tests/backend_kernels.py.

`vadd` (c = a + b, one item per element, block BLOCK), `slow_add` (c = a + b
after `rounds` rounds of busy work per item: long enough that a reader on
another stream without a wait would see it unfinished) and `spin` (waits for
flag[0] != 0, which never comes). KERNELS[kind] is (source, signatures).

`check_rebound_replays_run_natively` and `check_a_mismatched_rebinding_is_refused`
are the checks shared by the backends that re-record a graph for a replay with
other buffers (Vulkan, WebGPU).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
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


def check_rebound_replays_run_natively(
    dev: Any,
    g: Any,
    s: Any,
    a: Any,
    c: Any,
    x: Any,
    result_of: Callable[[Any], Any],
    submission_counts: Callable[[Any], dict[str, int]],
) -> None:
    """Replays graph `g` (captured on stream `s`, reading `a` = `x` and
    writing `c` = result_of(x)) 24 times over four sets of bindings, each set
    twice in a row, then once on another stream: every result equals numpy's,
    every replay is one submission of the backend's graph and none runs launch
    by launch, and the graph is recorded again only when the bindings change."""
    import numpy as np

    import modrt

    n = x.shape[0]
    rng = np.random.default_rng(11)
    sources = [rng.standard_normal(n).astype("float32") for _ in range(3)]
    # Bindings 0: as captured; 1..3: other inputs into other outputs.
    bindings = [{}] + [{a: modrt.tensor(v, dev), c: modrt.empty((n,), "float32", dev)} for v in sources]
    expected = [result_of(x)] + [result_of(v) for v in sources]
    before = submission_counts(dev)
    recordings, last = 0, 0  # the graph is recorded with the captured bindings
    for i in range(24):
        k = (i // 2) % 4  # each bindings twice in a row: the second replay reuses the recording
        g.replay(bindings[k])
        recordings += k != last
        last = k
        out = bindings[k].get(c, c)
        np.testing.assert_allclose(out.numpy(stream=s, timeout=60), expected[k], rtol=1e-5, atol=1e-5)
    after = submission_counts(dev)
    # Every replay was one submission of the graph's recording; none ran launch by launch.
    assert after["launches"] == before["launches"]
    assert after["graph_replays"] - before["graph_replays"] == 24
    assert after["graph_recordings"] - before["graph_recordings"] == recordings == 11
    # On another stream too: recorded there and submitted there.
    other, out = modrt.Stream(dev), modrt.empty((n,), "float32", dev)
    g.replay({c: out}, stream=other)
    np.testing.assert_allclose(out.numpy(stream=other, timeout=60), result_of(x), rtol=1e-5, atol=1e-5)
    final = submission_counts(dev)
    assert final["launches"] == after["launches"] and final["graph_replays"] == after["graph_replays"] + 1


def check_a_mismatched_rebinding_is_refused(
    dev: Any,
    g: Any,
    s: Any,
    a: Any,
    c: Any,
    wrong: Callable[[Any], Any],
    expected: Any,
    submission_counts: Callable[[Any], dict[str, int]],
) -> None:
    """Graph `g` (captured on stream `s`, reading `a`, writing `c` =
    `expected`) is replayed into a new output, then with `a` rebound to
    wrong(dev) (another shape, dtype or device): a ValueError before anything
    is submitted or recorded, and the graph keeps its last recording and
    replays it."""
    import numpy as np
    import pytest

    import modrt

    n = expected.shape[0]
    out = modrt.empty((n,), "float32", dev)
    g.replay({c: out})
    s.synchronize(timeout=60)
    bad = wrong(dev)
    before = submission_counts(dev)
    with pytest.raises(ValueError, match="rebound tensor must have the captured tensor's shape, dtype and device"):
        g.replay({a: bad})
    assert submission_counts(dev) == before
    # The graph keeps its last recording and replays it.
    np.testing.assert_allclose(out.numpy(stream=s, timeout=60), expected, rtol=1e-6)
    out.copyfrom(np.zeros(n, "float32"), stream=s)
    g.replay({c: out})
    np.testing.assert_allclose(out.numpy(stream=s, timeout=60), expected, rtol=1e-6)
    assert submission_counts(dev)["graph_recordings"] == before["graph_recordings"]


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
