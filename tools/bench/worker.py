"""One side of an in-process comparison, run in its own interpreter.

`python worker.py CASE` sets the case up, prints `ready` (or `unavailable:
REASON` when a package or device it needs is missing), then answers each line
`N` on stdin with the seconds that N repetitions took. The driver
(measure.fresh_worker) starts a fresh worker for every sample, runs a warm-up
batch and a few measured batches in it, and stops it: effects fixed for the
life of a process (address layout, the core it runs on) vary between samples
instead of biasing a whole row.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable

Run = Callable[[int], float]

N_ELEMENTS = 64
# The launch kernel: one work-group of 64 items, one buffer and one scalar.
LAUNCH_SOURCE = """
__kernel void add_one(__global float* a, int n) {
  int i = get_global_id(0);
  if (i < n) a[i] += 1.0f;
}
"""
ARTIFACT_KERNELS = 100
# The Vulkan dispatch kernel, the same as LAUNCH_SOURCE: binding 0, n as a push
# constant, the workgroup size from specialization constant 0. The C floor
# (floors/vulkan_dispatch.c) runs this shader's SPIR-V too.
VULKAN_SOURCE = """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer A { float a[]; };
layout(push_constant) uniform Args { int n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) a[i] += 1.0;
}
"""
# The same kernel in WGSL, for wgpu-py (and modrt's webgpu backend): WebGPU has
# no push constants, so n is the buffer's length.
WGSL_SOURCE = """
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@compute @workgroup_size(64)
fn add_one(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&a)) { a[id.x] = a[id.x] + 1.0; }
}
"""
# Bytes per copy in the bandwidth rows.
BANDWIDTH_BYTES = {"opencl": 64 << 20, "vulkan": 64 << 20, "cuda": 256 << 20}
# Where the toolchain root installs wgpu-py (pip --target).
WGPU_ROOT = "/opt/modrt/pip"


def artifact_source(count: int = ARTIFACT_KERNELS) -> str:
    """`count` distinct small kernels in one OpenCL program."""
    return "\n".join(
        f"__kernel void k{i}(__global float* a, int n) {{\n"
        f"  int j = get_global_id(0);\n"
        f"  if (j < n) a[j] = a[j] * {i + 1}.0f + {i}.0f;\n"
        f"}}"
        for i in range(count)
    )


def timed(body: Callable[[], None]) -> Run:
    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            body()
        return time.perf_counter() - start

    return run


def modrt_nop() -> Run:
    import modrt
    import modrt_test_hooks  # testing.nop lives in libmodrt_testing.so (//core:testing)

    modrt_test_hooks.load()
    return timed(modrt.get_global_func("testing.nop"))


def tvm_ffi_nop() -> Run:
    import tvm_ffi

    return timed(tvm_ffi.get_global_func("testing.nop"))


def _modrt_opencl():  # type: ignore[no-untyped-def]
    import modrt

    dev = modrt.device("opencl")
    if not dev.exist:
        raise ImportError(f"no OpenCL device in modrt: {dev.unavailable_reason}")
    return modrt, dev


def _check_ran(values, times: int) -> None:  # type: ignore[no-untyped-def]
    """The kernel really ran: a measured launch that computes nothing is no launch."""
    if not (values == float(times)).all():
        raise RuntimeError(f"add_one did not run {times} time(s): {values[:4]}...")


def modrt_launch(checked: bool = False) -> Run:
    import contextlib

    import numpy as np

    modrt, dev = _modrt_opencl()
    mod = modrt.compile(LAUNCH_SOURCE, "opencl", ["add_one(float32*, int32; blockIdx.x, threadIdx.x)"])
    # Checked mode: the tensor gets guard zones, the function checks them after each launch.
    with modrt.checked() if checked else contextlib.nullcontext():
        a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
        kernel = mod["add_one"]
    kernel(a, N_ELEMENTS, 1, N_ELEMENTS)  # builds the program
    dev.sync()
    _check_ran(a.numpy(), 1)

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            kernel(a, N_ELEMENTS, 1, N_ELEMENTS)
        dev.sync()
        return time.perf_counter() - start

    return run


def _pyopencl_pocl():  # type: ignore[no-untyped-def]
    import pyopencl as cl

    for platform in cl.get_platforms():
        if "Portable Computing Language" in platform.name or "pocl" in platform.name.lower():
            device = platform.get_devices()[0]
            ctx = cl.Context(devices=[device])
            return cl, ctx, cl.CommandQueue(ctx)
    raise ImportError("pyopencl finds no PoCL platform")


def pyopencl_launch() -> Run:
    import numpy as np

    cl, ctx, queue = _pyopencl_pocl()
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(N_ELEMENTS, "float32"))
    kernel = cl.Program(ctx, LAUNCH_SOURCE).build().add_one
    n_arg = np.int32(N_ELEMENTS)
    kernel(queue, (N_ELEMENTS,), (N_ELEMENTS,), a, n_arg)
    queue.finish()
    out = np.empty(N_ELEMENTS, "float32")
    cl.enqueue_copy(queue, out, a)
    _check_ran(out, 1)

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            kernel(queue, (N_ELEMENTS,), (N_ELEMENTS,), a, n_arg)
        queue.finish()
        return time.perf_counter() - start

    return run


def modrt_artifact() -> Run:
    import numpy as np

    modrt, dev = _modrt_opencl()
    signatures = [f"k{i}(float32*, int32; blockIdx.x, threadIdx.x)" for i in range(ARTIFACT_KERNELS)]
    mod = modrt.compile(artifact_source(), "opencl", signatures)
    path = os.path.join(tempfile.mkdtemp(prefix="modrt-bench-"), "kernels.modrt")
    mod.export(path)
    a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
    names = [f"k{i}" for i in range(ARTIFACT_KERNELS)]

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            loaded = modrt.load_module(path)
            for name in names:
                loaded[name](a, N_ELEMENTS, 1, N_ELEMENTS)
            dev.sync()
        return time.perf_counter() - start

    return run


def pyopencl_artifact() -> Run:
    import numpy as np

    cl, ctx, queue = _pyopencl_pocl()
    source = artifact_source()
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(N_ELEMENTS, "float32"))
    n_arg = np.int32(N_ELEMENTS)
    names = [f"k{i}" for i in range(ARTIFACT_KERNELS)]

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            program = cl.Program(ctx, source).build()
            for name in names:
                getattr(program, name)(queue, (N_ELEMENTS,), (N_ELEMENTS,), a, n_arg)
            queue.finish()
        return time.perf_counter() - start

    return run


def floor_nop() -> Run:
    """The ffi-call floor: a bare METH_FASTCALL no-op (floors/nop_ext.c), built
    by the bench into $MODRT_BENCH_FLOORS."""
    floors = os.environ.get("MODRT_BENCH_FLOORS")
    if not floors:
        raise ImportError("MODRT_BENCH_FLOORS is not set (the bench builds nop_ext there)")
    sys.path.insert(0, floors)
    import nop_ext  # type: ignore[import-not-found]

    return timed(nop_ext.nop)


# ---- Vulkan and WebGPU -------------------------------------------------------


def _modrt_device(kind: str):  # type: ignore[no-untyped-def]
    import modrt

    dev = modrt.device(kind)
    if not dev.exist:
        raise ImportError(f"no {kind} device in modrt: {dev.unavailable_reason}")
    return modrt, dev


def modrt_vulkan_dispatch() -> Run:
    """One synchronous dispatch: launch, then wait for it (Device.sync)."""
    import numpy as np

    modrt, dev = _modrt_device("vulkan")
    mod = modrt.compile({"add_one": VULKAN_SOURCE}, "vulkan", ["add_one(float32*, int32; blockIdx.x, threadIdx.x)"])
    a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
    kernel = mod["add_one"]
    kernel(a, N_ELEMENTS, 1, N_ELEMENTS)
    _check_ran(a.numpy(), 1)
    sync = dev.sync

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            kernel(a, N_ELEMENTS, 1, N_ELEMENTS)
            sync()
        return time.perf_counter() - start

    return run


def modrt_webgpu_dispatch() -> Run:
    """The WGSL kernel of wgpu_dispatch through modrt's webgpu runtime, launched
    and waited for (unavailable until that runtime is built and finds an adapter)."""
    import numpy as np

    modrt, dev = _modrt_device("webgpu")
    mod = modrt.compile({"add_one": WGSL_SOURCE}, "webgpu", ["add_one(float32*; blockIdx.x, threadIdx.x)"])
    if mod.is_fallback:
        raise ImportError("modrt's webgpu module is a fallback here (the runtime is not built)")
    a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
    kernel = mod["add_one"]
    kernel(a, 1, N_ELEMENTS)
    _check_ran(a.numpy(), 1)
    sync = dev.sync

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            kernel(a, 1, N_ELEMENTS)
            sync()
        return time.perf_counter() - start

    return run


def _wgpu():  # type: ignore[no-untyped-def]
    if WGPU_ROOT not in sys.path and os.path.isdir(WGPU_ROOT):
        sys.path.append(WGPU_ROOT)
    import wgpu  # type: ignore[import-not-found]

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    if adapter is None:
        raise ImportError("wgpu-py finds no adapter")
    return wgpu, adapter.request_device_sync()


def _wgpu_wait(device) -> Callable[[], None]:  # type: ignore[no-untyped-def]
    """Waits for the work submitted to the device's queue. wgpu-py 0.32's
    `queue.on_submitted_work_done_sync()` fails against the wgpu-native it
    ships (its callback has an older signature), so this is what that call
    does underneath: wgpuDevicePoll with wait=True."""
    try:
        device.queue.on_submitted_work_done_sync()
        return device.queue.on_submitted_work_done_sync
    except TypeError:
        return device._poll_wait


def wgpu_dispatch() -> Run:
    """One synchronous dispatch the WebGPU way: encode a compute pass, submit,
    wait for the queue (WebGPU command buffers cannot be re-submitted)."""
    import numpy as np

    wgpu, device = _wgpu()
    buf = device.create_buffer_with_data(
        data=np.zeros(N_ELEMENTS, "float32"),
        usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST,
    )
    shader = device.create_shader_module(code=WGSL_SOURCE)
    pipeline = device.create_compute_pipeline(layout="auto", compute={"module": shader, "entry_point": "add_one"})
    group = device.create_bind_group(
        layout=pipeline.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": buf}}]
    )
    queue = device.queue
    wait = _wgpu_wait(device)

    def dispatch() -> None:
        encoder = device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(pipeline)
        compute.set_bind_group(0, group)
        compute.dispatch_workgroups(1)
        compute.end()
        queue.submit([encoder.finish()])
        wait()

    dispatch()
    _check_ran(np.frombuffer(queue.read_buffer(buf), "float32"), 1)
    return timed(dispatch)


# ---- bandwidth: one copy of BANDWIDTH_BYTES each way -------------------------


def _modrt_copies(kind: str, direction: str) -> Run:
    import numpy as np

    modrt, dev = _modrt_device(kind)
    count = BANDWIDTH_BYTES[kind] // 4
    host = np.arange(count, dtype="float32")
    t = modrt.empty((count,), "float32", dev)
    t.copyfrom(host)
    if not np.array_equal(t.numpy()[-4:], host[-4:]):
        raise RuntimeError("the copy did not arrive")
    if direction == "h2d":
        return timed(lambda: t.copyfrom(host))
    return timed(t.numpy)


def modrt_opencl_h2d() -> Run:
    return _modrt_copies("opencl", "h2d")


def modrt_opencl_d2h() -> Run:
    return _modrt_copies("opencl", "d2h")


def modrt_vulkan_h2d() -> Run:
    return _modrt_copies("vulkan", "h2d")


def modrt_vulkan_d2h() -> Run:
    return _modrt_copies("vulkan", "d2h")


def _pyopencl_copies(direction: str) -> Run:
    import numpy as np

    cl, ctx, queue = _pyopencl_pocl()
    count = BANDWIDTH_BYTES["opencl"] // 4
    host = np.arange(count, dtype="float32")
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, host.nbytes)
    cl.enqueue_copy(queue, buf, host)
    if direction == "h2d":
        return timed(lambda: cl.enqueue_copy(queue, buf, host, is_blocking=True))

    def d2h() -> None:
        out = np.empty(count, "float32")  # a fresh array, as modrt's Tensor.numpy() gives
        cl.enqueue_copy(queue, out, buf, is_blocking=True)

    return timed(d2h)


def pyopencl_h2d() -> Run:
    return _pyopencl_copies("h2d")


def pyopencl_d2h() -> Run:
    return _pyopencl_copies("d2h")


def _wgpu_copies(direction: str) -> Run:
    import numpy as np

    wgpu, device = _wgpu()
    count = BANDWIDTH_BYTES["vulkan"] // 4
    host = np.arange(count, dtype="float32")
    buf = device.create_buffer(
        size=host.nbytes, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    )
    queue = device.queue
    wait = _wgpu_wait(device)
    queue.write_buffer(buf, 0, host)
    if direction == "h2d":

        def h2d() -> None:
            queue.write_buffer(buf, 0, host)
            wait()

        return timed(h2d)
    return timed(lambda: queue.read_buffer(buf))


def wgpu_h2d() -> Run:
    return _wgpu_copies("h2d")


def wgpu_d2h() -> Run:
    return _wgpu_copies("d2h")


# ---- CUDA (skipped where there is no NVIDIA device) --------------------------

CUDA_EMPTY = 'extern "C" __global__ void empty() {}'


def modrt_cuda_launch() -> Run:
    modrt, dev = _modrt_device("cuda")
    mod = modrt.compile(CUDA_EMPTY, "cuda", ["empty(; blockIdx.x, threadIdx.x)"])
    kernel = mod["empty"]
    kernel(1, 1)
    dev.sync()

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            kernel(1, 1)
        dev.sync()
        return time.perf_counter() - start

    return run


def cupy_launch() -> Run:
    import cupy  # type: ignore[import-not-found]

    kernel = cupy.RawKernel(CUDA_EMPTY, "empty")
    kernel((1,), (1,), ())
    cupy.cuda.Device().synchronize()

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            kernel((1,), (1,), ())
        cupy.cuda.Device().synchronize()
        return time.perf_counter() - start

    return run


def modrt_cuda_h2d() -> Run:
    return _modrt_copies("cuda", "h2d")


def modrt_cuda_d2h() -> Run:
    return _modrt_copies("cuda", "d2h")


def _cupy_copies(direction: str) -> Run:
    import cupy  # type: ignore[import-not-found]
    import numpy as np

    count = BANDWIDTH_BYTES["cuda"] // 4
    host = np.arange(count, dtype="float32")
    dev = cupy.asarray(host)
    if direction == "h2d":
        return timed(lambda: dev.set(host))  # synchronous on the default stream
    return timed(dev.get)


def cupy_h2d() -> Run:
    return _cupy_copies("h2d")


def cupy_d2h() -> Run:
    return _cupy_copies("d2h")


# Dispatches per graph in the graph rows: each repetition is one dispatch.
GRAPH_DISPATCHES = 1000


def _graph_kernel(kind: str):  # type: ignore[no-untyped-def]
    """modrt, the device, add_one on `kind` and its launch (kernel, args)."""
    import numpy as np

    modrt, dev = _modrt_device(kind)
    if kind == "webgpu":  # WGSL's add_one takes no n (see WGSL_SOURCE)
        kernel = modrt.compile({"add_one": WGSL_SOURCE}, kind, ["add_one(float32*; blockIdx.x, threadIdx.x)"])[
            "add_one"
        ]
        a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
        return modrt, dev, kernel, (a, 1, N_ELEMENTS)
    signature = "add_one(float32*, int32; blockIdx.x, threadIdx.x)"
    source = {"opencl": LAUNCH_SOURCE, "vulkan": {"add_one": VULKAN_SOURCE}}[kind]
    kernel = modrt.compile(source, kind, [signature])["add_one"]
    a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
    return modrt, dev, kernel, (a, N_ELEMENTS, 1, N_ELEMENTS)


def _graph_replay(kind: str) -> Run:
    """GRAPH_DISPATCHES launches recorded once, replayed; per dispatch."""
    modrt, dev, kernel, args = _graph_kernel(kind)
    stream = modrt.Stream(dev)
    with stream.capture() as graph:
        for _ in range(GRAPH_DISPATCHES):
            kernel(*args)
    graph.replay()
    stream.synchronize()
    _check_ran(args[0].numpy(), GRAPH_DISPATCHES)

    def run(n: int) -> float:
        replays = max(1, n // GRAPH_DISPATCHES)
        start = time.perf_counter()
        for _ in range(replays):
            graph.replay()
        stream.synchronize()
        return (time.perf_counter() - start) * n / (replays * GRAPH_DISPATCHES)

    return run


def _graph_one_by_one(kind: str) -> Run:
    """The same dispatches launched one by one from Python."""
    modrt, dev, kernel, args = _graph_kernel(kind)
    kernel(*args)
    dev.sync()

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            kernel(*args)
        dev.sync()
        return time.perf_counter() - start

    return run


def modrt_vulkan_graph_replay() -> Run:
    return _graph_replay("vulkan")


def modrt_vulkan_one_by_one() -> Run:
    return _graph_one_by_one("vulkan")


def modrt_webgpu_graph_replay() -> Run:
    return _graph_replay("webgpu")


def modrt_webgpu_one_by_one() -> Run:
    return _graph_one_by_one("webgpu")


def wgpu_graph() -> Run:
    """wgpu-py encoding GRAPH_DISPATCHES dispatches into one compute pass of
    one command buffer, submitted once; per dispatch."""
    import numpy as np

    wgpu, device = _wgpu()
    buf = device.create_buffer_with_data(
        data=np.zeros(N_ELEMENTS, "float32"),
        usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST,
    )
    shader = device.create_shader_module(code=WGSL_SOURCE)
    pipeline = device.create_compute_pipeline(layout="auto", compute={"module": shader, "entry_point": "add_one"})
    group = device.create_bind_group(
        layout=pipeline.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": buf}}]
    )
    wait = _wgpu_wait(device)

    def replay() -> None:
        encoder = device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(pipeline)
        compute.set_bind_group(0, group)
        for _ in range(GRAPH_DISPATCHES):
            compute.dispatch_workgroups(1)
        compute.end()
        device.queue.submit([encoder.finish()])

    replay()
    wait()
    _check_ran(np.frombuffer(device.queue.read_buffer(buf), "float32"), GRAPH_DISPATCHES)

    def run(n: int) -> float:
        replays = max(1, n // GRAPH_DISPATCHES)
        start = time.perf_counter()
        for _ in range(replays):
            replay()
        wait()
        return (time.perf_counter() - start) * n / (replays * GRAPH_DISPATCHES)

    return run


def modrt_opencl_graph_replay() -> Run:
    return _graph_replay("opencl")


def modrt_opencl_one_by_one() -> Run:
    return _graph_one_by_one("opencl")


POOL_ELEMENTS = 1 << 18  # 1 MiB of float32


def modrt_pool_alloc() -> Run:
    """An OpenCL tensor made and dropped: after the first, the pool's block."""
    modrt, dev = _modrt_opencl()
    empty = modrt.empty
    empty((POOL_ELEMENTS,), "float32", dev)
    return timed(lambda: empty((POOL_ELEMENTS,), "float32", dev))


def modrt_driver_alloc() -> Run:
    """The same, with the pool emptied after each: the driver allocates and frees."""
    modrt, dev = _modrt_opencl()
    empty = modrt.empty

    def body() -> None:
        empty((POOL_ELEMENTS,), "float32", dev)
        dev.empty_cache()

    return timed(body)


def _cpu_spin_kernel():  # type: ignore[no-untyped-def]
    import numpy as np

    import modrt

    source = "void work(float* a, int n) { for (int r = 0; r < 64; ++r) for (int i = 0; i < n; ++i) a[i] += 1.0f; }"
    kernel = modrt.compile(source, "cpu", ["work(float32*, int32)"])["work"]
    a = modrt.tensor(np.zeros(4096, dtype="float32"))
    return modrt, modrt.cpu(), kernel, a


def modrt_event_timing() -> Run:
    """One cpu kernel timed with events on its stream (the worker's clock)."""
    modrt, dev, kernel, a = _cpu_spin_kernel()
    stream = dev.default_stream

    def run(n: int) -> float:
        total = 0.0
        for _ in range(n):
            start = stream.record()
            kernel(a, 4096)
            end = stream.record()
            end.synchronize()
            total += end.elapsed_ms(start) / 1e3
        return total

    return run


def modrt_host_timing() -> Run:
    """The same kernel timed on the host around launch + sync."""
    modrt, dev, kernel, a = _cpu_spin_kernel()

    def run(n: int) -> float:
        total = 0.0
        for _ in range(n):
            start = time.perf_counter()
            kernel(a, 4096)
            dev.sync()
            total += time.perf_counter() - start
        return total

    return run


# ---- tinygrad: its MODRT device (modrt_tinygrad) against its own CL device ----


def _tinygrad(device: str):  # type: ignore[no-untyped-def]
    """tinygrad (the toolchain root's), with the MODRT device registered for a MODRT device, and `device` opened."""
    if WGPU_ROOT not in sys.path:
        sys.path.append(WGPU_ROOT)  # the root installs tinygrad beside wgpu-py
    import tinygrad

    if device.startswith("MODRT"):  # the peer's side runs without modrt on its path
        import modrt_tinygrad

        modrt_tinygrad.register()
    try:
        tinygrad.Device[device]
    except Exception as e:  # noqa: BLE001  (tinygrad raises what its runtime raises: RuntimeError, AttributeError, ...)
        raise ImportError(f"tinygrad cannot open {device}: {e}") from None
    return tinygrad


def _tinygrad_launch(device: str) -> Run:
    """One kernel as tinygrad launches it (its Program with its sizes), N times."""
    import numpy as np

    tinygrad = _tinygrad(device)
    from tinygrad.engine import realize

    calls = []
    runtime_of = realize.get_runtime

    def recording(dev: str, ast, cache: bool = True):  # type: ignore[no-untyped-def]
        program = runtime_of(dev, ast, cache)

        def launch(*bufs, **kw):  # type: ignore[no-untyped-def]
            calls.append((program, bufs, kw))
            return program(*bufs, **kw)

        return launch

    realize.get_runtime = recording
    a = tinygrad.Tensor(np.zeros(N_ELEMENTS, dtype="float32"), device=device).realize()
    (a + 1).realize()
    realize.get_runtime = runtime_of
    program, bufs, kw = calls[-1]
    kw = {**kw, "wait": False}
    dev = tinygrad.Device[device]

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            program(*bufs, **kw)
        dev.synchronize()
        return time.perf_counter() - start

    return run


def tinygrad_modrt_launch() -> Run:
    return _tinygrad_launch("MODRT:opencl")


def tinygrad_cl_launch() -> Run:
    return _tinygrad_launch("CL")


def _tinygrad_mlp_step(device: str) -> Run:
    """A jitted SGD step of a 2-layer MLP (64 -> 128 -> 10, batch 32)."""
    import numpy as np

    tinygrad = _tinygrad(device)
    from tinygrad import Tensor, TinyJit, nn
    from tinygrad.helpers import Context

    l1, l2 = nn.Linear(64, 128), nn.Linear(128, 10)
    params = nn.state.get_parameters([l1, l2])
    for p in params:
        p.to_(device)
    opt = nn.optim.SGD(params, lr=0.01)

    @TinyJit
    def step(x: Tensor, y: Tensor) -> Tensor:
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
            opt.step()
        return loss.realize()

    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((32, 64)).astype("float32"), device=device)
    y = Tensor(rng.integers(0, 10, 32).astype("int32"), device=device)
    for _ in range(3):  # the JIT captures on its second call
        step(x, y)
    dev = tinygrad.Device[device]
    dev.synchronize()

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            step(x, y)
        dev.synchronize()
        return time.perf_counter() - start

    return run


def tinygrad_modrt_mlp_step() -> Run:
    return _tinygrad_mlp_step("MODRT:opencl")


def tinygrad_cl_mlp_step() -> Run:
    return _tinygrad_mlp_step("CL")


def _tinygrad_conv_forward(device: str) -> Run:
    """A jitted forward pass of a small conv net on 8 28x28 images."""
    import numpy as np

    tinygrad = _tinygrad(device)
    from tinygrad import Tensor, TinyJit, nn

    layers = [nn.Conv2d(1, 8, 3), nn.Conv2d(8, 16, 3), nn.Linear(16 * 12 * 12, 10)]
    for p in nn.state.get_parameters(layers):
        p.to_(device)

    @TinyJit
    def forward(x: Tensor) -> Tensor:
        h = layers[1](layers[0](x).relu()).relu().max_pool2d()
        return layers[2](h.flatten(1)).realize()

    x = Tensor(np.random.default_rng(0).standard_normal((8, 1, 28, 28)).astype("float32"), device=device)
    for _ in range(3):
        forward(x)
    dev = tinygrad.Device[device]
    dev.synchronize()

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            forward(x)
        dev.synchronize()
        return time.perf_counter() - start

    return run


def tinygrad_modrt_conv_forward() -> Run:
    return _tinygrad_conv_forward("MODRT:opencl")


def tinygrad_cl_conv_forward() -> Run:
    return _tinygrad_conv_forward("CL")


def testing_pid() -> Run:
    """For bench_test: answers with this process's id instead of a time."""
    return lambda n: float(os.getpid())


CASES: dict[str, Callable[[], Run]] = {
    "testing-pid": testing_pid,
    "modrt-nop": modrt_nop,
    "tvm_ffi-nop": tvm_ffi_nop,
    "floor-nop": floor_nop,
    "modrt-launch": modrt_launch,
    "modrt-checked-launch": lambda: modrt_launch(checked=True),
    "pyopencl-launch": pyopencl_launch,
    "modrt-artifact": modrt_artifact,
    "pyopencl-artifact": pyopencl_artifact,
    "modrt-vulkan-dispatch": modrt_vulkan_dispatch,
    "wgpu-dispatch": wgpu_dispatch,
    "modrt-webgpu-dispatch": modrt_webgpu_dispatch,
    "modrt-opencl-h2d": modrt_opencl_h2d,
    "modrt-opencl-d2h": modrt_opencl_d2h,
    "pyopencl-h2d": pyopencl_h2d,
    "pyopencl-d2h": pyopencl_d2h,
    "modrt-vulkan-h2d": modrt_vulkan_h2d,
    "modrt-vulkan-d2h": modrt_vulkan_d2h,
    "wgpu-h2d": wgpu_h2d,
    "wgpu-d2h": wgpu_d2h,
    "modrt-cuda-launch": modrt_cuda_launch,
    "cupy-launch": cupy_launch,
    "modrt-cuda-h2d": modrt_cuda_h2d,
    "modrt-cuda-d2h": modrt_cuda_d2h,
    "cupy-h2d": cupy_h2d,
    "cupy-d2h": cupy_d2h,
    "modrt-vulkan-graph-replay": modrt_vulkan_graph_replay,
    "modrt-vulkan-one-by-one": modrt_vulkan_one_by_one,
    "modrt-webgpu-graph-replay": modrt_webgpu_graph_replay,
    "modrt-webgpu-one-by-one": modrt_webgpu_one_by_one,
    "wgpu-graph": wgpu_graph,
    "modrt-opencl-graph-replay": modrt_opencl_graph_replay,
    "modrt-opencl-one-by-one": modrt_opencl_one_by_one,
    "modrt-pool-alloc": modrt_pool_alloc,
    "modrt-driver-alloc": modrt_driver_alloc,
    "modrt-event-timing": modrt_event_timing,
    "modrt-host-timing": modrt_host_timing,
    "tinygrad-modrt-launch": tinygrad_modrt_launch,
    "tinygrad-cl-launch": tinygrad_cl_launch,
    "tinygrad-modrt-mlp-step": tinygrad_modrt_mlp_step,
    "tinygrad-cl-mlp-step": tinygrad_cl_mlp_step,
    "tinygrad-modrt-conv-forward": tinygrad_modrt_conv_forward,
    "tinygrad-cl-conv-forward": tinygrad_cl_conv_forward,
}


def main() -> None:
    case = sys.argv[1]
    try:
        run = CASES[case]()
    except ImportError as e:
        print(f"unavailable: {e}", flush=True)
        return
    print("ready", flush=True)
    for line in sys.stdin:
        print(repr(run(int(line))), flush=True)


if __name__ == "__main__":
    main()
