"""The device layer on WebGPU (wgpu-native over lavapipe): every stream is
the device's one queue in submission order, events are submissions with
device timestamps where the adapter has timestamp queries, copies take
offsets, and a graph replays as one command buffer, recorded anew for a replay
that rebinds buffers (backends/webgpu/webgpu_queue.h). What every backend
does alike is in the device-layer suite, parametrized over every backend that
has the capability: tests/device_layer_test.py (streams, events, graphs,
copies), tests/native_streams_test.py (native streams) and
tests/native_graphs_test.py (graphs the backend records itself); here is only
what is WebGPU's own."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from webgpu_kernels import DEVICE_LAYER, SLOW_ADD_SIGNATURE

import modrt

BLOCK = 64
VADD = DEVICE_LAYER[0]["vadd"]  # the device-layer tests'
SLOW_ADD = DEVICE_LAYER[0]["slow_add"]
# y += alpha * x: each launch's scalar is its own (a uniform slot per launch).
AXPY = """
override block_x: u32 = 64;
struct Args { alpha: f32, n: i32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> args: Args;
@compute @workgroup_size(block_x)
fn axpy(@builtin(global_invocation_id) id: vec3<u32>) {
  if (i32(id.x) < args.n) { y[id.x] = y[id.x] + args.alpha * x[id.x]; }
}
"""
SIGNATURES = [
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
    "axpy(float32*, float32*, float32, int32; blockIdx.x, threadIdx.x)",
    SLOW_ADD_SIGNATURE,
]


@pytest.fixture(scope="module")
def dev():
    d = modrt.device("webgpu", 0)
    assert d.exist, d.unavailable_reason
    return d


@pytest.fixture(scope="module")
def mod(dev):
    return modrt.compile({"vadd": VADD, "axpy": AXPY, "slow_add": SLOW_ADD}, "webgpu", SIGNATURES)


def grid(n):
    return ((n + BLOCK - 1) // BLOCK, BLOCK)


def vadd(mod, a, b, c, n=300):
    mod["vadd"](a, b, c, n, *grid(n))


def axpy(mod, x, y, alpha, n=300):
    mod["axpy"](x, y, alpha, n, *grid(n))


def inputs(dev, n=300):
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    return x, y, modrt.tensor(x, dev), modrt.tensor(y, dev)


def test_streams_are_the_native_queue_in_submission_order(dev, mod):
    x, y, a, b = inputs(dev)
    c = modrt.empty((300,), "float32", dev)
    d = modrt.empty((300,), "float32", dev)
    first, second = modrt.Stream(dev), modrt.Stream(dev)
    assert first.native and second.native
    with modrt.stream(first):
        vadd(mod, a, b, c)
    # No wait between the streams: the one queue runs them in the order made.
    with modrt.stream(second):
        vadd(mod, c, b, d)
    second.synchronize(timeout=60)
    np.testing.assert_allclose(d.numpy(stream=second), x + 2 * y, rtol=1e-5)


def test_elapsed_ms_without_timestamp_queries_says_so():
    # MODRT_WEBGPU_TIMESTAMPS=0 opens the device without the feature, as an
    # adapter that lacks it would.
    script = textwrap.dedent(
        """
        import modrt
        dev = modrt.device("webgpu", 0)
        assert dev.attr("supports_timestamp_query") == 0
        s = dev.default_stream
        start, end = s.record(), s.record()
        end.synchronize(timeout=60)
        try:
            end.elapsed_ms(start)
        except NotImplementedError as e:
            print("refused:", e)
        """
    )
    env = dict(os.environ, MODRT_WEBGPU_TIMESTAMPS="0")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "no timestamp queries" in out.stdout
    assert "does not substitute host time" in out.stdout


def test_launches_behind_running_work_keep_their_own_scalars(dev, mod):
    """While the work submitted before it runs, a full batch is not submitted
    (lavapipe's vkQueueSubmit would wait for that work, on the caller's
    thread): the batch grows, each kernel's launches past its uniform ring on
    rings of their own, and every launch still sees its own scalars."""
    n = 256
    ones = modrt.tensor(np.ones(n, "float32"), dev)
    busy = modrt.empty((n,), "float32", dev)
    y = modrt.tensor(np.zeros(n, "float32"), dev)
    # Half a second to seconds of lavapipe's time here; the launches below
    # take milliseconds. (Were it done first, they would be batched as usual: the
    # result is the same either way.)
    mod["slow_add"](ones, ones, busy, n, 1_000_000, *grid(n))
    alphas = [float(i) for i in range(3 * 64 + 5)]  # three rings and part of a fourth
    for alpha in alphas:
        axpy(mod, ones, y, alpha, n)
    np.testing.assert_array_equal(y.numpy(), np.full(n, sum(alphas), "float32"))


def test_copies_on_a_stream_behind_running_work_keep_their_order(dev, mod):
    """Behind running work a stream's copies join the batch too: a copy into
    a tensor through a staging buffer copied there (a queue write would land
    before the launches ahead of it), a copy out mapped once the wait that
    submits its batch has."""
    n = 256
    ones = modrt.tensor(np.ones(n, "float32"), dev)
    busy = modrt.empty((n,), "float32", dev)
    y = modrt.tensor(np.zeros(n, "float32"), dev)
    s = modrt.Stream(dev)
    # As in the test above: the copies below are made while this runs.
    mod["slow_add"](ones, ones, busy, n, 1_000_000, *grid(n))
    dev.default_stream.record().query()  # submits it (nothing ran before it), never waits
    with modrt.stream(s):
        axpy(mod, ones, y, 2.0, n)
        y.copyfrom(np.full(n, 5, "float32"), stream=s)  # after the launch that made 2
        axpy(mod, ones, y, 3.0, n)
        # webgpu's host arrays are not pinned: this waits for the stream.
        seen = y.copyto(np.zeros(n, "float32"), stream=s)
    np.testing.assert_array_equal(seen, np.full(n, 8, "float32"))


def test_a_graph_is_one_command_buffer(dev):
    s = modrt.Stream(dev)
    assert "one command buffer, recorded anew when a replay rebinds buffers" in s.implementation
