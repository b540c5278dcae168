"""OpenCL's native streams (plugin_api.h, ModrtStreamExtension) on PoCL: each
modrt stream is a command queue with profiling, events are markers with
device timestamps, copies on a stream are non-blocking enqueues. What every
backend with native streams does alike (launches, waits, event timing,
copies and timeouts on a stream) is tests/device_layer_test.py's; here is
what is OpenCL's own."""

from __future__ import annotations

import numpy as np
import pytest

import modrt

SOURCE = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""
SIGNATURES = ["vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"]
N = 4096
BLOCK = 64
GRID = N // BLOCK


@pytest.fixture(scope="module")
def dev() -> modrt.Device:
    d = modrt.device("opencl")
    assert d.exist, d.unavailable_reason
    return d


def test_every_stream_is_a_native_queue(dev):
    s = modrt.Stream(dev)
    assert s.native and dev.default_stream.native
    assert s.implementation.startswith("native:") and "replayed from the core's list" in s.implementation


def test_graph_replays_the_core_list_on_opencl(dev):
    mod = modrt.compile(SOURCE, "opencl", SIGNATURES)
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(N).astype("float32"), rng.standard_normal(N).astype("float32")
    a, b = modrt.tensor(x, dev), modrt.tensor(y, dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["vadd"](a, b, c, N, GRID, BLOCK)
    assert len(g) == 1 and not g.native  # PoCL has no cl_khr_command_buffer
    g.replay()
    np.testing.assert_allclose(c.numpy(stream=s), x + y, rtol=1e-6)
