"""What every backend that records graphs itself does alike (Graph.native:
ModrtGraphExtension, a replay one submission of the backend's recording, a
replay that rebinds buffers re-recorded), each with its own kernels
(device_layer_kernels.py). Which backends: those whose graph of one launch
says it is native; device_layer_test.py checks that answer against what each
backend declares (NATIVE_GRAPHS), so that none leaves this suite unseen. What
every backend's graphs do, native or not, is device_layer_test.py's; what is a
backend's own is in its folder (backends/<x>/native_streams_test.py)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from device_layer_kernels import KINDS, SLOW_ROUNDS, compile_kernels, device_or_skip, inputs, launch_params

import modrt

N = 4096
RE_RECORDED = "graphs recorded by the backend, rebound replays re-recorded"


@pytest.fixture(scope="module", params=KINDS)
def kind(request):
    return device_or_skip(request.param)


@pytest.fixture(scope="module")
def mod(kind):
    """The backend's kernels, compiled once (every case launches them as they
    are), when a graph of one launch of them is the backend's own."""
    mod = compile_kernels(kind)
    dev = modrt.device(kind)
    one = modrt.empty((1,), "float32", dev)
    with modrt.Stream(dev).capture() as g:
        vadd(mod, kind, one, one, modrt.empty((1,), "float32", dev), 1)
    if not g.native:
        pytest.skip(f"{kind} does not record graphs itself: {g.why_not_native}")
    return mod


def vadd(mod: Any, kind: str, a: Any, b: Any, c: Any, n: int = N, **stream: Any) -> None:
    mod["vadd"](a, b, c, n, *launch_params(kind, n), **stream)


def submission_counts(kind: str) -> Callable[[Any], dict[str, int]]:
    """The backend's counts of what it submitted (modrt.backend.<kind>.submission_counts:
    launches one by one, graph recordings, graph replays), which every backend
    that records graphs itself has: they show a replay ran as the backend's
    own submission, not launch by launch."""
    backend = importlib.import_module(f"modrt.backend.{kind}")
    assert hasattr(backend, "submission_counts"), f"modrt.backend.{kind} has no submission_counts"
    return backend.submission_counts


def zeros(dev: modrt.Device, n: int = N) -> modrt.Tensor:
    return modrt.tensor(np.zeros(n, "float32"), dev)


def test_graph_replay_equals_the_launches_one_by_one(kind, mod):
    """c = d + b, then 100 launches of one kernel adding 1 back and forth
    between c and d, each over its own n (a scalar of its own per launch, more
    launches than a batch's uniform ring; each launch recurs with another
    between): the replay equals those launches made one by one and numpy, is
    one submission where they are 101, and each replay after it (back to
    back, on another stream, on the default one) starts from where the one
    before left c and d."""
    dev = modrt.device(kind)
    _, y, _, b = inputs(dev, N)
    ones = modrt.tensor(np.ones(N, "float32"), dev)
    counts = [N - 40 * (i // 4) for i in range(100)]

    def launch(c, d):
        vadd(mod, kind, d, b, c)
        for i, n in enumerate(counts):
            src, dst = (c, d) if i % 2 == 0 else (d, c)
            vadd(mod, kind, src, ones, dst, n)

    state = [np.zeros(N, "float32"), np.zeros(N, "float32")]  # numpy's c and d

    def expected_after_a_replay():
        c, d = state
        c[:] = d + y
        for i, n in enumerate(counts):
            src, dst = (c, d) if i % 2 == 0 else (d, c)
            dst[:n] = src[:n] + 1
        return [c.copy(), d.copy()]

    c, d = zeros(dev), zeros(dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        launch(c, d)
    assert g.native and g.why_not_native is None and len(g) == 101
    s.synchronize(timeout=60)
    assert not c.numpy().any() and not d.numpy().any(), "a captured launch must not run while capturing"
    counted = submission_counts(kind)
    before = counted(dev)
    g.replay()
    replayed = c.numpy(stream=s, timeout=60), d.numpy(stream=s)
    replay = counted(dev)
    one_by_one = zeros(dev), zeros(dev)
    launch(*one_by_one)
    after = counted(dev)
    # The replay was one submission of the graph; the same launches one by one are 101.
    assert replay["launches"] == before["launches"] and replay["graph_replays"] == before["graph_replays"] + 1
    assert after["launches"] == replay["launches"] + 101 and after["graph_replays"] == replay["graph_replays"]
    for got, same, expected in zip(replayed, one_by_one, expected_after_a_replay()):
        np.testing.assert_array_equal(got, same.numpy())
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    # Replays queued back to back, without a wait between them, all run, in order.
    g.replay()
    g.replay()
    expected_after_a_replay()
    expected = expected_after_a_replay()
    np.testing.assert_allclose(c.numpy(stream=s, timeout=60), expected[0], rtol=1e-6)
    np.testing.assert_allclose(d.numpy(stream=s), expected[1], rtol=1e-6)
    # On another stream, and on the default one.
    other = modrt.Stream(dev)
    g.replay(stream=other)
    other.synchronize(timeout=60)
    np.testing.assert_allclose(d.numpy(), expected_after_a_replay()[1], rtol=1e-6)
    g.replay(stream=dev.default_stream)
    np.testing.assert_allclose(c.numpy(), expected_after_a_replay()[0], rtol=1e-6)


def test_a_graph_captures_on_the_default_stream(kind, mod):
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev, N)
    c, d = zeros(dev), zeros(dev)
    with dev.default_stream.capture() as g:
        vadd(mod, kind, a, b, c)
        vadd(mod, kind, c, b, d)
    assert g.native
    dev.sync(timeout=60)
    assert not d.numpy().any()
    g.replay()
    np.testing.assert_allclose(d.numpy(), x + 2 * y, rtol=1e-5, atol=1e-6)


def capture_twice_adding_b(dev, mod, kind):
    """A graph on a new stream of t = a + b then c = t + b: (x, y, a, b, c, stream, graph)."""
    x, y, a, b = inputs(dev, N)
    t, c = zeros(dev), zeros(dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        vadd(mod, kind, a, b, t)
        vadd(mod, kind, t, b, c)
    return x, y, a, b, c, s, g


def test_rebound_replays_are_re_recorded_into_the_graph_and_run_natively(kind, mod):
    """24 replays over four sets of bindings, each set twice in a row, then
    one on another stream: every result equals numpy's, every replay is one
    submission of the backend's recording, none runs launch by launch, and the graph is recorded again only when the
    bindings change."""
    dev = modrt.device(kind)
    x, y, a, _, c, s, g = capture_twice_adding_b(dev, mod, kind)
    assert g.native and RE_RECORDED in s.implementation
    counted = submission_counts(kind)
    rng = np.random.default_rng(11)
    sources = [rng.standard_normal(N).astype("float32") for _ in range(3)]
    # Bindings 0: as captured; 1..3: other inputs into other outputs.
    bindings = [{}] + [{a: modrt.tensor(v, dev), c: modrt.empty((N,), "float32", dev)} for v in sources]
    expected = [v + 2 * y for v in (x, *sources)]
    before = counted(dev)
    recordings, last = 0, 0  # the graph is recorded with the captured bindings
    for i in range(24):
        k = (i // 2) % 4  # each bindings twice in a row: the second replay reuses the recording
        g.replay(bindings[k])
        recordings += k != last
        last = k
        out = bindings[k].get(c, c)
        np.testing.assert_allclose(out.numpy(stream=s, timeout=60), expected[k], rtol=1e-5, atol=1e-5)
    assert recordings == 11
    after = counted(dev)
    # Every replay was one submission of the graph's recording; none ran launch by launch.
    assert after["launches"] == before["launches"]
    assert after["graph_replays"] - before["graph_replays"] == 24
    assert after["graph_recordings"] - before["graph_recordings"] == recordings
    # On another stream too: recorded there and submitted there.
    other, out = modrt.Stream(dev), modrt.empty((N,), "float32", dev)
    g.replay({c: out}, stream=other)
    np.testing.assert_allclose(out.numpy(stream=other, timeout=60), x + 2 * y, rtol=1e-5, atol=1e-5)
    final = counted(dev)
    assert final["launches"] == after["launches"] and final["graph_replays"] == after["graph_replays"] + 1
    assert len(g) == 2


def test_rebound_replays_queued_back_to_back_keep_their_own_buffers(kind, mod):
    """Each replay binds its own buffers, queued without a wait between them:
    a replay enqueued before a re-recording keeps the buffers it had; a
    rebound replay on another stream runs though the graph is dropped while
    it is pending."""
    dev = modrt.device(kind)
    x, y, a, b, c, s, g = capture_twice_adding_b(dev, mod, kind)
    ones = modrt.tensor(np.ones(N, "float32"), dev)
    out1, out2 = zeros(dev), zeros(dev)
    g.replay({a: ones, c: out1})
    g.replay({c: out2})
    g.replay()
    s.synchronize(timeout=60)
    assert g.native
    np.testing.assert_allclose(out1.numpy(), 1 + 2 * y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out2.numpy(), x + 2 * y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.numpy(), x + 2 * y, rtol=1e-5, atol=1e-6)
    other, out3 = modrt.Stream(dev), zeros(dev)
    g.replay({b: ones, c: out3}, stream=other)
    del g
    np.testing.assert_allclose(out3.numpy(stream=other, timeout=60), x + 2, rtol=1e-5, atol=1e-6)


def test_a_re_recording_keeps_the_replays_in_flight_intact(kind, mod):
    """Each replay rebinds other buffers, so each re-records the graph (and
    releases the recording before) while the replays before it may still run
    a slow launch: they run their own recording, and the graph may be dropped
    while they do."""
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev, N)
    t, c = zeros(dev), zeros(dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["slow_add"](a, b, t, N, SLOW_ROUNDS[kind], *launch_params(kind, N))
        vadd(mod, kind, t, b, c)  # c = a + 2 b
    sources = [modrt.tensor(x + i, dev) for i in range(6)]
    outs = [zeros(dev) for _ in range(6)]
    counted = submission_counts(kind)
    before = counted(dev)
    for source, out in zip(sources, outs):
        g.replay({a: source, c: out})
    del g
    for i, out in enumerate(outs):
        np.testing.assert_allclose(out.numpy(stream=s, timeout=120), x + i + 2 * y, rtol=1e-4, atol=1e-4)
    after = counted(dev)
    assert after["graph_recordings"] - before["graph_recordings"] == 6
    assert after["launches"] == before["launches"]
    s.synchronize(timeout=120)


@pytest.mark.parametrize(
    "wrong",
    [
        lambda dev: modrt.empty((N // 2,), "float32", dev),
        lambda dev: modrt.empty((N,), "int32", dev),
        lambda dev: modrt.empty((N,), "float32"),  # on the cpu
    ],
    ids=["shape", "dtype", "device"],
)
def test_a_rebound_tensor_that_does_not_match_is_refused_before_anything_is_recorded(kind, mod, wrong):
    """A graph replayed into a new output, then with an input rebound to
    another shape, dtype or device: a ValueError before anything is submitted
    or recorded, and the graph
    keeps its last recording and replays it."""
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev, N)
    c = zeros(dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        vadd(mod, kind, a, b, c)
    out = modrt.empty((N,), "float32", dev)
    g.replay({c: out})
    s.synchronize(timeout=60)
    bad = wrong(dev)
    counted = submission_counts(kind)
    before = counted(dev)
    with pytest.raises(ValueError, match="rebound tensor must have the captured tensor's shape, dtype and device"):
        g.replay({a: bad})
    assert counted(dev) == before
    # The graph keeps its last recording and replays it.
    np.testing.assert_allclose(out.numpy(stream=s, timeout=60), x + y, rtol=1e-6)
    out.copyfrom(np.zeros(N, "float32"), stream=s)
    g.replay({c: out})
    np.testing.assert_allclose(out.numpy(stream=s, timeout=60), x + y, rtol=1e-6)
    assert counted(dev)["graph_recordings"] == before["graph_recordings"]
