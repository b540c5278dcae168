"""Vulkan's own native streams (plugin_api.h, ModrtStreamExtension and
ModrtGraphExtension) on Mesa's lavapipe: each modrt stream is its own
sequence of queue submissions on a timeline semaphore, events are timeline
points with timestamp queries, copies on a stream go through staging
buffers, and a graph is one reusable command buffer, recorded anew for a
replay that rebinds buffers. What every backend does alike is in the
device-layer suite, parametrized over every backend that has the capability:
tests/device_layer_test.py (streams, events, graphs, copies),
tests/native_streams_test.py (native streams) and
tests/native_graphs_test.py (graphs the backend records itself); here is
only what is Vulkan's own."""

from __future__ import annotations

import numpy as np
import pytest
from vulkan_kernels import DEVICE_LAYER

import modrt

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
    return modrt.compile(DEVICE_LAYER[0], "vulkan", DEVICE_LAYER[1])


def test_a_graph_is_one_reusable_command_buffer(dev):
    s = modrt.Stream(dev)
    assert "one reusable command buffer, recorded anew when a replay rebinds buffers" in s.implementation


def test_a_wait_is_the_drivers_timed_wait_on_the_waiting_thread(dev, mod):
    # stream_wait_for (vkWaitSemaphores with a timeout): no hand-off to the
    # stream's worker thread and back per wait; the timeout still holds
    # (tests/device_layer_waits_test.py's spinning kernel).
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(N).astype("float32"), rng.standard_normal(N).astype("float32")
    a, b = modrt.tensor(x, dev), modrt.tensor(y, dev)
    c = modrt.empty((N,), "float32", dev)
    for s in (dev.default_stream, modrt.Stream(dev)):
        assert "a wait is the driver's own, with a timeout, on the waiting thread" in s.implementation
        mod["vadd"](a, b, c, N, GRID, BLOCK, stream=s)
        s.synchronize(timeout=30)
        np.testing.assert_allclose(c.numpy(), x + y)
