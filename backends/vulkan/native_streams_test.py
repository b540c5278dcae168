"""Vulkan's native streams (plugin_api.h, ModrtStreamExtension and
ModrtGraphExtension) on Mesa's lavapipe: each modrt stream is its own
sequence of queue submissions on a timeline semaphore, events are timeline
points with timestamp queries, copies on a stream go through staging
buffers, and a graph is one reusable command buffer, recorded anew for a
replay that rebinds buffers. What every backend with
native streams does alike (waits, event timing, copies and timeouts on a
stream) is tests/native_streams_test.py's; here is what is Vulkan's own."""

from __future__ import annotations

import numpy as np
import pytest
from device_layer_kernels import check_a_mismatched_rebinding_is_refused, check_rebound_replays_run_natively
from vulkan_kernels import DEVICE_LAYER, SLOW_ADD_SIGNATURE

import modrt
from modrt.backend import vulkan

SHARED = DEVICE_LAYER[0]  # the device-layer tests' vadd and slow_add
SOURCE = {
    "vadd": SHARED["vadd"],
    "slow_add": SHARED["slow_add"],
    # y += 1: replays that run twice leave twice the change.
    "inc": """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer Y { float y[]; };
layout(push_constant) uniform Args { int n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < n) y[i] += 1.0; }
""",
}
SIGNATURES = [
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
    SLOW_ADD_SIGNATURE,
    "inc(float32*, int32; blockIdx.x, threadIdx.x)",
]
N = 4096
BLOCK = 64
GRID = N // BLOCK


@pytest.fixture(scope="module")
def dev() -> modrt.Device:
    d = modrt.device("vulkan")
    assert d.exist, d.unavailable_reason
    return d


@pytest.fixture(scope="module")
def mod(dev: modrt.Device) -> modrt.Module:
    return modrt.compile(SOURCE, "vulkan", SIGNATURES)


def inputs(dev: modrt.Device):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(N).astype("float32")
    y = rng.standard_normal(N).astype("float32")
    return x, y, modrt.tensor(x, dev), modrt.tensor(y, dev)


def test_streams_and_graphs_are_native(dev, mod):
    s = modrt.Stream(dev)
    assert s.native and dev.default_stream.native
    _, _, a, b = inputs(dev)
    c = modrt.empty((N,), "float32", dev)
    with s.capture() as g:
        mod["vadd"](a, b, c, N, GRID, BLOCK)
    assert g.native and len(g) == 1


def test_a_wait_is_the_drivers_timed_wait_on_the_waiting_thread(dev, mod):
    # stream_wait_for (vkWaitSemaphores with a timeout): no hand-off to the
    # stream's worker thread and back per wait; the timeout still holds
    # (tests/device_layer_waits_test.py's spinning kernel).
    x, y, a, b = inputs(dev)
    c = modrt.empty((N,), "float32", dev)
    for s in (dev.default_stream, modrt.Stream(dev)):
        assert "a wait is the driver's own, with a timeout, on the waiting thread" in s.implementation
        mod["vadd"](a, b, c, N, GRID, BLOCK, stream=s)
        s.synchronize(timeout=30)
        np.testing.assert_allclose(c.numpy(), x + y)


def test_launches_on_one_stream_run_in_order(dev, mod):
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    mod["slow_add"](a, b, c, N, 2000, GRID, BLOCK, stream=s)
    for _ in range(5):
        mod["inc"](c, N, GRID, BLOCK, stream=s)
    slow = c.numpy(stream=s, timeout=120) - 5
    mod["slow_add"](a, b, c, N, 2000, GRID, BLOCK, stream=s)
    np.testing.assert_allclose(c.numpy(stream=s, timeout=120), slow, rtol=1e-5, atol=1e-5)


def test_a_copy_on_a_stream_comes_after_its_launches(dev, mod):
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    mod["slow_add"](a, b, c, N, 2000, GRID, BLOCK, stream=s)
    tail = np.empty(8, "float32")
    c.copyto(tail, offset=(N - 8) * 4, stream=s)
    np.testing.assert_allclose(tail, c.numpy()[-8:], rtol=1e-6)
    assert tail.any()


def test_consecutive_launches_of_one_kernel_bind_their_own_buffers_and_scalars(dev, mod):
    # A graph binds only what changed between launches: one kernel back to
    # back with other buffers, then with another n, must still see each.
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    d = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["vadd"](a, b, c, N, GRID, BLOCK)
        mod["vadd"](c, b, d, N, GRID, BLOCK)
        mod["inc"](d, N, GRID, BLOCK)
        mod["inc"](d, N // 2, GRID, BLOCK)  # the first half only
    g.replay()
    out = d.numpy(stream=s, timeout=60)
    expected = x + 2 * y + 1
    expected[: N // 2] += 1
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_graph_replay_equals_launching_one_by_one(dev, mod):
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    d = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["vadd"](a, b, c, N, GRID, BLOCK)
        for _ in range(3):
            mod["inc"](c, N, GRID, BLOCK)
        mod["vadd"](c, b, d, N, GRID, BLOCK)
    assert g.native and len(g) == 5
    s.synchronize(timeout=60)
    assert not d.numpy().any(), "a captured launch must not run while capturing"
    g.replay()
    replayed = d.numpy(stream=s, timeout=60)
    # The same launches one by one.
    c1 = modrt.tensor(np.zeros(N, "float32"), dev)
    d1 = modrt.tensor(np.zeros(N, "float32"), dev)
    mod["vadd"](a, b, c1, N, GRID, BLOCK)
    for _ in range(3):
        mod["inc"](c1, N, GRID, BLOCK)
    mod["vadd"](c1, b, d1, N, GRID, BLOCK)
    np.testing.assert_array_equal(replayed, d1.numpy())
    np.testing.assert_allclose(replayed, x + 2 * y + 3, rtol=1e-5, atol=1e-5)
    # Replays run again, in order with each other.
    g.replay()
    g.replay()
    np.testing.assert_array_equal(d.numpy(stream=s, timeout=60), replayed)


def capture_add_then_inc(dev, mod):
    """A graph on a new stream of c = a + b then c += 1: (x, y, a, c, stream, graph)."""
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["vadd"](a, b, c, N, GRID, BLOCK)
        mod["inc"](c, N, GRID, BLOCK)
    return x, y, a, c, s, g


def test_graph_replay_with_a_rebound_buffer(dev, mod):
    x, y, a, c, s, g = capture_add_then_inc(dev, mod)
    ones = modrt.tensor(np.ones(N, "float32"), dev)
    out = modrt.tensor(np.zeros(N, "float32"), dev)
    g.replay({a: ones, c: out})
    np.testing.assert_allclose(out.numpy(stream=s, timeout=60), 2 + y, rtol=1e-6)
    assert not c.numpy().any(), "the rebound replay must not write the captured buffer"
    g.replay()  # the captured buffers again
    np.testing.assert_allclose(c.numpy(stream=s, timeout=60), x + y + 1, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="shape, dtype and device"):
        g.replay({a: modrt.empty((7,), "float32", dev)})


def test_rebound_replays_are_re_recorded_into_the_graph_and_run_natively(dev, mod):
    x, y, a, c, s, g = capture_add_then_inc(dev, mod)
    assert g.native
    assert "rebound replays re-recorded" in s.implementation
    assert "one reusable command buffer, recorded anew when a replay rebinds buffers" in s.implementation
    check_rebound_replays_run_natively(dev, g, s, a, c, x, lambda v: v + y + 1, vulkan.submission_counts)
    assert len(g) == 2


def test_a_re_recording_keeps_the_replays_in_flight_intact(dev, mod):
    # Each replay rebinds other buffers, so each re-records the graph while
    # the replays before it may still run: they run their own recording.
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["slow_add"](a, b, c, N, 2000, GRID, BLOCK)
        mod["inc"](c, N, GRID, BLOCK)
    sources = [modrt.tensor(x + i, dev) for i in range(6)]
    outs = [modrt.tensor(np.zeros(N, "float32"), dev) for _ in range(6)]
    before = vulkan.submission_counts(dev)
    for source, out in zip(sources, outs):
        g.replay({a: source, c: out})
    for i, out in enumerate(outs):
        np.testing.assert_allclose(out.numpy(stream=s, timeout=120), x + i + y + 1, rtol=1e-4, atol=1e-4)
    after = vulkan.submission_counts(dev)
    assert after["graph_recordings"] - before["graph_recordings"] == 6
    assert after["launches"] == before["launches"]
    del g  # the last recording goes once its replay completed
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
def test_a_rebound_tensor_that_does_not_match_is_refused_before_anything_is_recorded(dev, mod, wrong):
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["vadd"](a, b, c, N, GRID, BLOCK)
    check_a_mismatched_rebinding_is_refused(dev, g, s, a, c, wrong, x + y, vulkan.submission_counts)
