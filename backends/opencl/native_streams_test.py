"""OpenCL's native streams (plugin_api.h, ModrtStreamExtension) on PoCL: each
modrt stream is a command queue with profiling, events are markers with
device timestamps, copies on a stream are non-blocking enqueues."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import modrt

SOURCE = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
// c = a + b after `rounds` rounds of busy work per item: a kernel long enough
// that a reader on another queue without a wait would see it unfinished.
__kernel void slow_add(__global const float* a, __global const float* b, __global float* c, int n,
                       int rounds) {
  int i = get_global_id(0);
  if (i >= n) return;
  float x = a[i];
  for (int r = 0; r < rounds; ++r) x = x * 0.999f + 0.001f * a[i];
  c[i] = x + b[i];
}
__kernel void spin(__global volatile int* flag) { while (flag[0] == 0) {} }
"""
SIGNATURES = [
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
    "slow_add(float32*, float32*, float32*, int32, int32; blockIdx.x, threadIdx.x)",
    "spin(int32*; blockIdx.x, threadIdx.x)",
]
N = 4096
BLOCK = 64
GRID = N // BLOCK


@pytest.fixture(scope="module")
def dev() -> modrt.Device:
    d = modrt.device("opencl")
    assert d.exist, d.unavailable_reason
    return d


@pytest.fixture(scope="module")
def mod(dev: modrt.Device) -> modrt.Module:
    return modrt.compile(SOURCE, "opencl", SIGNATURES)


def inputs(dev: modrt.Device):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(N).astype("float32")
    y = rng.standard_normal(N).astype("float32")
    return x, y, modrt.tensor(x, dev), modrt.tensor(y, dev)


def test_every_stream_is_a_native_queue(dev):
    s = modrt.Stream(dev)
    assert s.native and dev.default_stream.native
    assert s.implementation.startswith("native:") and "replayed from the core's list" in s.implementation


def test_launch_with_stream_goes_to_that_stream(dev, mod):
    x, y, a, b = inputs(dev)
    c = modrt.empty((N,), "float32", dev)
    s = modrt.Stream(dev)
    dev.sync(timeout=60)
    mod["vadd"](a, b, c, N, GRID, BLOCK, stream=s)
    # Pending until a wait learns otherwise: recorded on `s`, not the default stream.
    assert "vadd (grid [64, 1, 1], block [64, 1, 1])" in s.pending
    assert dev.default_stream.pending == ""
    s.synchronize(timeout=60)
    assert s.pending == ""
    np.testing.assert_allclose(c.numpy(stream=s), x + y, rtol=1e-6)
    with pytest.raises(TypeError, match="modrt.Stream"):
        mod["vadd"](a, b, c, N, GRID, BLOCK, stream=3)


def test_a_stream_waits_for_another_streams_event(dev, mod):
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    d = modrt.tensor(np.zeros(N, "float32"), dev)
    first, second = modrt.Stream(dev), modrt.Stream(dev)
    for _ in range(3):
        mod["slow_add"](a, b, c, N, 20000, GRID, BLOCK, stream=first)
    second.wait(first.record())
    mod["vadd"](c, c, d, N, GRID, BLOCK, stream=second)
    expected = c.numpy(stream=first)  # `first` finished: c holds its final value
    np.testing.assert_allclose(d.numpy(stream=second), 2 * expected, rtol=1e-5)
    assert not np.all(expected == 0)


def test_events_carry_device_time_in_order(dev, mod):
    _, _, a, b = inputs(dev)
    c = modrt.empty((N,), "float32", dev)
    s = modrt.Stream(dev)
    start = s.record()
    mod["slow_add"](a, b, c, N, 20000, GRID, BLOCK, stream=s)
    middle = s.record()
    mod["slow_add"](a, b, c, N, 20000, GRID, BLOCK, stream=s)
    end = s.record()
    end.synchronize(timeout=60)
    assert start.query() and middle.query() and end.query()
    first, both = middle.elapsed_ms(start), end.elapsed_ms(start)
    assert first > 0.0 and both > first
    assert start.elapsed_ms(end) == pytest.approx(-both)
    # The default stream (the default queue) has device time too.
    e0 = dev.default_stream.record()
    mod["vadd"](a, b, c, N, GRID, BLOCK)
    e1 = dev.default_stream.record()
    e1.synchronize(timeout=60)
    assert e1.elapsed_ms(e0) >= 0.0


def test_async_ranged_copies_on_a_stream(dev):
    s = modrt.Stream(dev)
    t = modrt.tensor(np.zeros(16, "int32"), dev)
    src = np.arange(4, dtype="int32")
    t.copyfrom(src, offset=8, stream=s)  # elements 2..5
    src[:] = -1  # staged on enqueue: the copy keeps the values it was given
    np.testing.assert_array_equal(t.numpy(stream=s)[:7], [0, 0, 0, 1, 2, 3, 0])
    part = np.empty(3, "int32")
    assert t.copyto(part, offset=12, stream=s) is part
    np.testing.assert_array_equal(part, [1, 2, 3])
    whole = np.arange(16, dtype="int32") * 3
    t.copyfrom(whole, stream=s)
    np.testing.assert_array_equal(t.numpy(stream=s, timeout=60), whole)
    with pytest.raises(ValueError, match="outside the tensor"):
        t.copyfrom(np.arange(4, dtype="int32"), offset=56, stream=s)
    other = modrt.Stream(modrt.device("cpu"))
    with pytest.raises(ValueError, match="cannot run on a stream of"):
        t.numpy(stream=other)


def test_device_to_device_copies(dev, mod):
    x, y, a, b = inputs(dev)
    s = modrt.Stream(dev)
    c = modrt.empty((N,), "float32", dev)
    copy = modrt.empty((N,), "float32", dev)
    mod["vadd"](a, b, c, N, GRID, BLOCK, stream=s)
    copy.copyfrom(c, stream=s)  # after the launch: ordered on `s`
    np.testing.assert_allclose(copy.numpy(stream=s), x + y, rtol=1e-6)
    again = modrt.empty((N,), "float32", dev)
    again.copyfrom(copy)  # on the current (default) stream
    np.testing.assert_allclose(again.numpy(), x + y, rtol=1e-6)
    with pytest.raises(ValueError, match="bytes into one of"):
        modrt.empty((3,), "float32", dev).copyfrom(copy, stream=s)


def test_graph_replays_the_core_list_on_opencl(dev, mod):
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["vadd"](a, b, c, N, GRID, BLOCK)
    assert len(g) == 1 and not g.native  # PoCL has no cl_khr_command_buffer
    g.replay()
    np.testing.assert_allclose(c.numpy(stream=s), x + y, rtol=1e-6)


def test_a_spinning_kernel_on_a_stream_times_out_naming_it(dev):
    code = textwrap.dedent(
        f"""
        import numpy as np, modrt
        dev = modrt.device("opencl")
        mod = modrt.compile({SOURCE!r}, "opencl", {SIGNATURES!r})
        flag = modrt.tensor(np.zeros(1, "int32"), dev)
        s = modrt.Stream(dev)
        mod["spin"](flag, 1, 1, stream=s)
        for wait in (lambda: s.synchronize(timeout=0.3), lambda: s.record().synchronize(timeout=0.3),
                     lambda: dev.sync(timeout=0.3)):
            try:
                wait()
                print("RETURNED")
            except TimeoutError as e:
                print("TIMEOUT", e)
        print("DONE", flush=True)
        """
    )
    env = dict(os.environ, MODRT_EXIT_TIMEOUT="1")
    # The guard against a hang of the test itself, not a timed assertion.
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=240)
    lines = r.stdout.splitlines()
    assert lines and lines[-1] == "DONE" and len(lines) == 4, r.stdout + r.stderr
    for line in lines[:3]:
        assert line.startswith("TIMEOUT") and "spin (grid [1, 1, 1], block [1, 1, 1])" in line, line
    assert r.returncode == 1 and "exiting with work still pending" in r.stderr, r.stderr
