"""OpenCL's native streams (plugin_api.h, ModrtStreamExtension) on PoCL: each
modrt stream is a command queue with profiling, events are markers with
device timestamps, copies on a stream are non-blocking enqueues. Graphs
(ModrtGraphExtension) are the plugin's own: each captured launch a cl_kernel
with its arguments set at capture, a replay their enqueues, a rebound replay
re-recorded. What every backend does alike is in the device-layer suite,
parametrized over every backend that has the capability:
tests/device_layer_test.py (streams, events, graphs, copies),
tests/native_streams_test.py (native streams) and tests/native_graphs_test.py
(graphs the backend records itself); here is only what is OpenCL's own."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from opencl_kernels import BLOCK_SUM, DEVICE_LAYER, INC

import modrt
import modrt_testing

# vadd, slow_add and spin (the device-layer tests' kernels), inc and block_sum.
OPENCL_SOURCE, OPENCL_SIGNATURES = DEVICE_LAYER
SOURCE = OPENCL_SOURCE + INC[0] + BLOCK_SUM[0]
SIGNATURES = [*OPENCL_SIGNATURES, INC[1], BLOCK_SUM[1]]
N = 4096
BLOCK = 64
GRID = N // BLOCK


@pytest.fixture(scope="module")
def dev() -> modrt.Device:
    d = modrt.device("opencl")
    assert d.exist, d.unavailable_reason
    return d


@pytest.fixture(scope="module")
def mod(dev) -> modrt.Module:
    return modrt.compile(SOURCE, "opencl", SIGNATURES)


def inputs(dev: modrt.Device):
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(N).astype("float32"), rng.standard_normal(N).astype("float32")
    return x, y, modrt.tensor(x, dev), modrt.tensor(y, dev)


def zeros(dev: modrt.Device) -> modrt.Tensor:
    return modrt.tensor(np.zeros(N, "float32"), dev)


def test_a_graph_keeps_each_launchs_dynamic_local_memory(dev, mod):
    x = np.arange(256, dtype="int32")
    out64, out32 = modrt.tensor(np.zeros(4, "int32"), dev), modrt.tensor(np.zeros(8, "int32"), dev)
    xs = modrt.tensor(x, dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["block_sum"](xs, out64, 4, 64, 64 * 4)
        mod["block_sum"](xs, out32, 8, 32, 32 * 4)
    assert g.native
    g.replay()
    np.testing.assert_array_equal(out64.numpy(stream=s, timeout=60), x.reshape(4, 64).sum(axis=1))
    np.testing.assert_array_equal(out32.numpy(), x.reshape(8, 32).sum(axis=1))


def test_a_launch_refused_while_capturing_leaves_the_list_and_the_stream_usable(dev, mod):
    x, y, a, b = inputs(dev)
    c = zeros(dev)
    s = modrt.Stream(dev)
    with pytest.raises(ValueError, match="exceeds the device.s limit"):
        with s.capture() as g:
            mod["vadd"](a, b, c, N, GRID, BLOCK)
            mod["vadd"](a, b, c, N, 1, 1 << 20)  # over the device's work-item limits
    assert not g.native  # the backend's recording was dropped
    assert g.why_not_native.startswith("the backend could not record a launch of vadd: ")
    with s.capture() as again:
        mod["vadd"](a, b, c, N, GRID, BLOCK)
    assert again.native
    again.replay()
    np.testing.assert_allclose(c.numpy(stream=s, timeout=60), x + y, rtol=1e-6)


def test_a_spinning_kernel_in_a_replay_times_out_naming_the_graph():
    # In a child: the spin never ends, and the process must still exit.
    code = textwrap.dedent(
        f"""
        import numpy as np, modrt
        dev = modrt.device("opencl")
        mod = modrt.compile({SOURCE!r}, "opencl", {SIGNATURES!r})
        flag = modrt.tensor(np.zeros(1, "int32"), dev)
        s = modrt.Stream(dev)
        with s.capture() as g:
            mod["inc"](modrt.empty((64,), "float32", dev), 64, 1, 64)
            mod["spin"](flag, 1, 1)
        assert g.native
        g.replay()
        for wait in (lambda: s.synchronize(timeout=0.3), lambda: flag.numpy(stream=s, timeout=0.3)):
            try:
                wait()
                print("RETURNED")
            except TimeoutError as e:
                print("TIMEOUT", e)
        print("DONE", flush=True)
        """
    )
    r = modrt_testing.run_python(code, env={"MODRT_EXIT_TIMEOUT": "1"})
    lines = r.stdout.splitlines()
    assert lines[-1:] == ["DONE"] and len(lines) == 3, r.stdout + r.stderr
    for line in lines[:-1]:
        assert line.startswith("TIMEOUT") and "graph of 2 launches from inc (grid [1, 1, 1], block [64, 1, 1])" in line
    assert r.returncode == 1 and "exiting with work still pending" in r.stderr, r.stderr
