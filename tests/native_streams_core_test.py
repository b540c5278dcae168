"""The core's side of native streams (plugin ABI 1.1's stream and graph
extensions), on tests/plugins/native_stream_backend.cc: a backend whose queues
are threads, so every path runs here without a driver. What each backend
does with its own driver is tested in its package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modrt
import modrt_testing

PLUGIN = Path(modrt._ffi.package_root(), "tests", "plugins", "native_stream_backend.so")
N = 64


@pytest.fixture(scope="module")
def dev() -> modrt.Device:
    modrt.backend.load_plugin(PLUGIN)
    d = modrt.device("streamsim")
    assert d.exist, d.unavailable_reason
    return d


@pytest.fixture(scope="module")
def mod(dev: modrt.Device) -> modrt.Module:
    payload = modrt.runtime.Payload.create(
        "single-binary", "sim", ["fill(int32*, int32, int32)", "fault(int32*)"], code=b"sim"
    )
    return modrt.get_global_func("module.create.streamsim")(payload)


def counters() -> dict[str, int]:
    text = modrt.get_global_func("streamsim.counters")()
    return {k: int(v) for k, v in (part.split("=") for part in text.split())}


def test_streams_are_the_backends_queues(dev, mod):
    s = modrt.Stream(dev)
    assert s.native and dev.default_stream.native
    out = modrt.empty((N,), "int32", dev)
    mod["fill"](out, 10, N, stream=s)
    assert "fill" in s.pending and dev.default_stream.pending == ""
    np.testing.assert_array_equal(out.numpy(stream=s), 10 + np.arange(N))
    with modrt.stream(s):
        mod["fill"](out, 20, N)
    s.synchronize(timeout=60)
    np.testing.assert_array_equal(out.numpy(), 20 + np.arange(N))


def test_events_order_streams_and_time_on_the_device(dev, mod):
    first, second = modrt.Stream(dev), modrt.Stream(dev)
    a = modrt.empty((N,), "int32", dev)
    b = modrt.empty((N,), "int32", dev)
    start = first.record()
    mod["fill"](a, 3, N, stream=first)
    end = first.record()
    second.wait(end)
    b.copyfrom(a, stream=second)  # device to device, after `first`'s fill
    np.testing.assert_array_equal(b.numpy(stream=second, timeout=60), 3 + np.arange(N))
    end.synchronize(timeout=60)
    assert end.query() and end.elapsed_ms(start) >= 0.0


def test_async_copies_stage_host_memory(dev):
    s = modrt.Stream(dev)
    t = modrt.tensor(np.zeros(16, "int32"), dev)
    src = np.arange(4, dtype="int32")
    t.copyfrom(src, offset=8, stream=s)
    src[:] = -1
    part = np.empty(6, "int32")
    t.copyto(part, offset=4, stream=s, timeout=60)
    np.testing.assert_array_equal(part, [0, 0, 1, 2, 3, 0])


def test_native_graph_replays_with_one_launch(dev, mod):
    s = modrt.Stream(dev)
    a = modrt.tensor(np.zeros(N, "int32"), dev)
    b = modrt.tensor(np.zeros(N, "int32"), dev)
    with s.capture() as g:
        mod["fill"](a, 1, N)
        mod["fill"](b, 2, N)
    assert len(g) == 2 and g.native
    s.synchronize(timeout=60)
    assert not a.numpy().any() and not b.numpy().any(), "a captured launch must not run"
    before = counters()
    g.replay()
    s.synchronize(timeout=60)
    after = counters()
    assert after["graph_launches"] == before["graph_launches"] + 1
    assert after["kernels"] == before["kernels"] + 2
    np.testing.assert_array_equal(b.numpy(), 2 + np.arange(N))
    c = modrt.tensor(np.zeros(N, "int32"), dev)
    g.replay({a: c})  # rebound: the core's list, on the stream's queue
    s.synchronize(timeout=60)
    assert counters()["graph_launches"] == after["graph_launches"]
    np.testing.assert_array_equal(c.numpy(), 1 + np.arange(N))


def test_an_async_failure_surfaces_at_the_next_wait(dev, mod):
    s = modrt.Stream(dev)
    out = modrt.empty((N,), "int32", dev)
    mod["fill"](out, 0, N, stream=s)
    mod["fault"](out, stream=s)
    with pytest.raises(RuntimeError, match=r"fault \(grid \[1, 1, 1\].*illegal memory access"):
        s.synchronize(timeout=60)
    mod["fill"](out, 5, N, stream=s)  # raised once: the stream goes on
    np.testing.assert_array_equal(out.numpy(stream=s, timeout=60), 5 + np.arange(N))


def test_a_kernel_takes_a_buffer_at_a_byte_offset(dev, mod):
    # The backend's identity says its buffers are addresses (ABI 1.3,
    # addressable_buffers): the kernel is handed data + byte_offset.
    base = modrt.tensor(np.full(N + 2, -1, "int32"), dev)
    producer = modrt_testing.ByteOffsetView(base, offset=8, count=N)
    view = modrt.from_dlpack(producer)
    mod["fill"](view, 7, N)
    np.testing.assert_array_equal(base.numpy(timeout=60), np.r_[-1, -1, 7 + np.arange(N)])


def test_a_launch_makes_no_call_back_into_the_core():
    """The plugin launches with the queue and the capture state the core packed
    (plugin ABI 1.2): with MODRT_COUNT_CORE_CALLS=1 the plugin's core table
    counts every call, and launches (default stream, a stream, a current
    stream, a capture) count none; making a module counts (the counter works)."""
    r = modrt_testing.run_python(
        f"""
import numpy as np, modrt
modrt.backend.load_plugin({str(PLUGIN)!r})
dev = modrt.device("streamsim")
calls = modrt.get_global_func("testing.core_calls_from_plugins")
payload = modrt.runtime.Payload.create("single-binary", "sim", ["fill(int32*, int32, int32)"], code=b"sim")
before = calls()
mod = modrt.get_global_func("module.create.streamsim")(payload)
print("MODULE", calls() - before)
out = modrt.empty(({N},), "int32", dev)
fill = mod["fill"]

def counted(launch):
    before = calls()
    launch()
    return calls() - before

s = modrt.Stream(dev)
counts = [counted(lambda: fill(out, 1, {N}))]
dev.default_stream.synchronize(timeout=60)  # the other streams' fills come after it
counts += [counted(lambda: fill(out, 2, {N}, stream=s))]
with modrt.stream(s):
    counts += [counted(lambda: fill(out, 3, {N}))]
with s.capture() as g:
    counts += [counted(lambda: fill(out, 4, {N}))]
assert g.native
g.replay(stream=s)
s.synchronize(timeout=60)
print("LAUNCHES", counts)
np.testing.assert_array_equal(out.numpy(timeout=60), 4 + np.arange({N}))
""",
        env={"MODRT_COUNT_CORE_CALLS": "1"},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert int(lines["MODULE"]) > 0, r.stdout
    assert lines["LAUNCHES"] == str([0] * 4), r.stdout
