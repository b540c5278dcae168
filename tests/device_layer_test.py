"""The device layer on every backend with a device here: streams, events,
bounded waits, recorded launches (graphs), the pool, and copies.

Each backend runs the same two kernels: `vadd` (c = a + b, one item per
element, block 64) and `spin` (waits for flag[0] != 0, which never comes).
Cases that leave a kernel spinning run in a child process."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import modrt

BLOCK = 64

KERNELS = {
    "cpu": (
        """
void vadd(const float* a, const float* b, float* c, int n) { for (int i = 0; i < n; ++i) c[i] = a[i] + b[i]; }
void spin(int* flag) { volatile int* f = flag; while (f[0] == 0) {} }
""",
        ["vadd(float32*, float32*, float32*, int32)", "spin(int32*)"],
    ),
    "opencl": (
        """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
__kernel void spin(__global volatile int* flag) { while (flag[0] == 0) {} }
""",
        [
            "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
            "spin(int32*; blockIdx.x, threadIdx.x)",
        ],
    ),
    "vulkan": (
        {
            "vadd": """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Args { int n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < n) c[i] = a[i] + b[i]; }
""",
            "spin": """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) coherent buffer F { int flag[]; };
void main() { while (flag[0] == 0) {} }
""",
        },
        [
            "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
            "spin(int32*; blockIdx.x, threadIdx.x)",
        ],
    ),
    "webgpu": (
        {
            "vadd": """
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> n: i32;
@compute @workgroup_size(block_x)
fn vadd(@builtin(global_invocation_id) id: vec3<u32>) {
  if (i32(id.x) < n) { c[id.x] = a[id.x] + b[id.x]; }
}
""",
            "spin": """
override block_x: u32 = 1;
@group(0) @binding(0) var<storage, read_write> flag: array<atomic<i32>>;
@compute @workgroup_size(block_x)
fn spin() { loop { if (atomicLoad(&flag[0]) != 0) { break; } } }
""",
        },
        [
            "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
            "spin(int32*; blockIdx.x, threadIdx.x)",
        ],
    ),
}
KINDS = list(KERNELS)
# Backends whose plugin has native streams (plugin_api.h, ModrtStreamExtension).
NATIVE_STREAMS = {"opencl", "vulkan", "webgpu"}


def launch_params(kind, n):
    return () if kind == "cpu" else ((n + BLOCK - 1) // BLOCK, BLOCK)


def spin_params(kind):
    return () if kind == "cpu" else (1, 1)


@pytest.fixture(params=KINDS)
def kind(request):
    d = modrt.device(request.param, 0)
    if not d.exist:
        pytest.skip(f"{request.param}: {d.unavailable_reason}")
    return request.param


@pytest.fixture
def mod(kind):
    source, signatures = KERNELS[kind]
    return modrt.compile(source, kind, signatures)


def vadd(mod, kind, a, b, c, n):
    mod["vadd"](a, b, c, n, *launch_params(kind, n))


def inputs(dev, n=300):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    return x, y, modrt.tensor(x, dev), modrt.tensor(y, dev)


def test_launches_on_a_stream_complete_in_order(kind, mod):
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev)
    c = modrt.empty((300,), "float32", dev)
    d = modrt.empty((300,), "float32", dev)
    s = modrt.Stream(dev)
    assert s.device == dev and not s.is_default and s.implementation
    assert s.native == (kind in NATIVE_STREAMS)
    with modrt.stream(s):
        assert modrt.current_stream(dev) == s
        vadd(mod, kind, a, b, c, 300)
        vadd(mod, kind, c, b, d, 300)  # reads what the launch before wrote
        done = s.record()
    assert modrt.current_stream(dev) == dev.default_stream
    done.synchronize(timeout=60)
    assert done.query() and s.pending == ""
    np.testing.assert_allclose(d.numpy(stream=s), x + 2 * y, rtol=1e-5)


def test_another_stream_waits_for_an_event(kind, mod):
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev)
    c = modrt.empty((300,), "float32", dev)
    d = modrt.empty((300,), "float32", dev)
    first, second = modrt.Stream(dev), modrt.Stream(dev)
    with modrt.stream(first):
        vadd(mod, kind, a, b, c, 300)
    second.wait(first.record())
    with modrt.stream(second):
        vadd(mod, kind, c, c, d, 300)
    second.synchronize(timeout=60)
    np.testing.assert_allclose(d.numpy(), 2 * (x + y), rtol=1e-5)


def test_event_timing_is_device_time_or_refused(kind, mod):
    dev = modrt.device(kind)
    _, _, a, b = inputs(dev)
    c = modrt.empty((300,), "float32", dev)
    s = dev.default_stream
    start = s.record()
    vadd(mod, kind, a, b, c, 300)
    end = s.record()
    end.synchronize(timeout=60)
    if kind == "cpu" or s.native:  # cpu: the worker thread is the device, its clock the device's
        assert end.elapsed_ms(start) >= 0.0
    else:
        with pytest.raises(RuntimeError, match="no device timestamps"):
            end.elapsed_ms(start)


def test_graph_replays_with_rebound_buffers(kind, mod):
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(300, "float32"), dev)
    d = modrt.tensor(np.zeros(300, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        vadd(mod, kind, a, b, c, 300)
        vadd(mod, kind, c, b, d, 300)
    assert len(g) == 2
    s.synchronize(timeout=60)
    assert not d.numpy().any(), "a captured launch must not run while capturing"
    g.replay()
    np.testing.assert_allclose(d.numpy(), x + 2 * y, rtol=1e-5)
    ones = modrt.tensor(np.ones(300, "float32"), dev)
    out = modrt.tensor(np.zeros(300, "float32"), dev)
    g.replay({a: ones, d: out})
    np.testing.assert_allclose(out.numpy(), 1 + 2 * y, rtol=1e-5)
    with pytest.raises(ValueError, match="shape, dtype and device"):
        g.replay({a: modrt.empty((7,), "float32", dev)})


def test_pool_reuses_freed_blocks(kind, mod):
    dev = modrt.device(kind)
    dev.sync(timeout=60)
    dev.empty_cache()
    nbytes = 4 * 12345
    modrt.empty((12345,), "float32", dev)  # made and dropped: its block is cached
    dev.sync(timeout=60)
    before = dev.memory_stats()
    assert before["pool_bytes"] >= nbytes and before["largest_free_block"] >= nbytes
    for _ in range(20):
        t = modrt.empty((12345,), "float32", dev)
        del t
    after = dev.memory_stats()
    assert after["driver_allocations"] == before["driver_allocations"]
    assert after["peak"] >= nbytes
    dev.empty_cache()
    assert dev.memory_stats()["pool_bytes"] == 0


def test_ranged_and_device_to_device_copies(kind):
    dev = modrt.device(kind)
    t = modrt.tensor(np.zeros(16, "int32"), dev)
    t.copyfrom(np.arange(4, dtype="int32"), offset=8)  # elements 2..5
    np.testing.assert_array_equal(t.numpy()[:7], [0, 0, 0, 1, 2, 3, 0])
    part = np.empty(3, "int32")
    t.copyto(part, offset=12)
    np.testing.assert_array_equal(part, [1, 2, 3])
    with pytest.raises(ValueError, match="outside the tensor"):
        t.copyfrom(np.arange(4, dtype="int32"), offset=56)
    same = modrt.empty((16,), "int32", dev)
    same.copyfrom(t)
    np.testing.assert_array_equal(same.numpy(), t.numpy())
    host = modrt.empty((16,), "int32")
    host.copyfrom(t)
    np.testing.assert_array_equal(host.numpy(), t.numpy())
    back = modrt.tensor(np.full(16, 9, "int32"), dev)
    t.copyfrom(modrt.tensor(np.full(16, 9, "int32")))
    np.testing.assert_array_equal(t.numpy(), back.numpy())


def test_cross_backend_copy_stages_through_host():
    devices = [modrt.device(k) for k in KINDS if k != "cpu" and modrt.device(k).exist]
    if len(devices) < 2:
        pytest.skip("needs two backend devices")
    src = modrt.tensor(np.arange(10, dtype="float32"), devices[0])
    dst = modrt.empty((10,), "float32", devices[1])
    dst.copyfrom(src)
    np.testing.assert_array_equal(dst.numpy(), np.arange(10, dtype="float32"))


def run_child(kind, body, env_extra=None):
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


def test_spinning_kernel_times_out_and_the_process_exits(kind):
    r = run_child(
        kind,
        """
        mod["spin"](flag, *spin_params)
        for wait in (lambda: dev.sync(timeout=0.5), lambda: dev.default_stream.synchronize(timeout=0.2),
                     lambda: dev.default_stream.record().synchronize(timeout=0.2),
                     lambda: flag.numpy(timeout=0.2)):
            try:
                wait()
                print("RETURNED")
            except TimeoutError as e:
                print("TIMEOUT", e)
        print("DONE", flush=True)
        """,
    )
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == "DONE" and len(lines) == 5, r.stdout + r.stderr
    for line in lines[:4]:
        assert line.startswith("TIMEOUT") and "spin (grid [1, 1, 1], block [1, 1, 1])" in line, line
    assert "exiting with work still pending" in r.stderr and "spin" in r.stderr


def test_ctrl_c_interrupts_a_wait(kind):
    r = run_child(
        kind,
        """
        mod["spin"](flag, *spin_params)
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            dev.sync()
        except KeyboardInterrupt:
            print("INTERRUPTED", flush=True)
        """,
    )
    assert r.stdout.strip() == "INTERRUPTED", r.stdout + r.stderr
    assert "exiting with work still pending" in r.stderr


def test_in_flight_launches_are_bounded():
    """A launcher faster than the device blocks at the in-flight limit
    (MODRT_MAX_IN_FLIGHT) instead of queueing without end."""
    r = run_child(
        "cpu",
        """
        host_flag = np.zeros(1, "int32")
        shared_flag = modrt.from_dlpack(host_flag)  # the same memory: set from here, seen by the kernel
        s = modrt.Stream(dev)
        most = 0
        ones = modrt.tensor(np.ones(4, "float32"))
        with modrt.stream(s):
            mod["spin"](shared_flag)
            threading.Timer(0.5, host_flag.__setitem__, (0, 1)).start()
            for _ in range(20):
                mod["vadd"](ones, ones, modrt.empty((4,), "float32"), 4)
                pending = s.pending
                most = max(most, int(pending.split()[0]) if pending else 0)
        s.synchronize(timeout=60)
        print("MOST", most)
        """,
        {"MODRT_MAX_IN_FLIGHT": "4"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "MOST" and 1 <= int(r.stdout.split()[1]) <= 4, r.stdout
