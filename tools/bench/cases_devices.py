"""Worker cases: Vulkan and WebGPU dispatches, host<->device copies, and CUDA."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from worker_common import (
    BANDWIDTH_BYTES,
    N_ELEMENTS,
    VULKAN_SOURCE,
    WGPU_ROOT,
    WGSL_SOURCE,
    Run,
    check_ran,
    modrt_device,
    pyopencl_pocl,
    timed,
)

# ---- Vulkan and WebGPU -------------------------------------------------------


def modrt_vulkan_dispatch() -> Run:
    """One synchronous dispatch: launch, then wait for it (Device.sync)."""
    import numpy as np

    modrt, dev = modrt_device("vulkan")
    mod = modrt.compile({"add_one": VULKAN_SOURCE}, "vulkan", ["add_one(float32*, int32; blockIdx.x, threadIdx.x)"])
    a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
    kernel = mod["add_one"]
    kernel(a, N_ELEMENTS, 1, N_ELEMENTS)
    check_ran(a.numpy(), 1)
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

    modrt, dev = modrt_device("webgpu")
    mod = modrt.compile({"add_one": WGSL_SOURCE}, "webgpu", ["add_one(float32*; blockIdx.x, threadIdx.x)"])
    if mod.is_fallback:
        raise ImportError("modrt's webgpu module is a fallback here (the runtime is not built)")
    a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
    kernel = mod["add_one"]
    kernel(a, 1, N_ELEMENTS)
    check_ran(a.numpy(), 1)
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


def _wgpu_add_one():  # type: ignore[no-untyped-def]
    """wgpu-py's device with WGSL_SOURCE's add_one ready to dispatch: its
    buffer of N_ELEMENTS zeros, pipeline and bind group."""
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
    return device, buf, pipeline, group


def wgpu_dispatch() -> Run:
    """One synchronous dispatch the WebGPU way: encode a compute pass, submit,
    wait for the queue (WebGPU command buffers cannot be re-submitted)."""
    import numpy as np

    device, buf, pipeline, group = _wgpu_add_one()
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
    check_ran(np.frombuffer(queue.read_buffer(buf), "float32"), 1)
    return timed(dispatch)


# ---- bandwidth: one copy of BANDWIDTH_BYTES each way -------------------------


def _modrt_copies(kind: str, direction: str) -> Run:
    import numpy as np

    modrt, dev = modrt_device(kind)
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

    cl, ctx, queue = pyopencl_pocl()
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
    modrt, dev = modrt_device("cuda")
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


def _modrt_stream_h2d(kind: str, pinned: bool) -> Run:
    """Host-to-device copies on a stream, waited for: from pinned memory
    (modrt.pinned_empty, copied in place) or from a pageable array (staged)."""
    import numpy as np

    modrt, dev = modrt_device(kind)
    count = BANDWIDTH_BYTES[kind] // 4
    host = modrt.pinned_empty(count, "float32", device=dev) if pinned else np.empty(count, "float32")
    if pinned and not host.pinned:
        raise RuntimeError(f"{kind} has no pinned memory: {host.pinned_memory}")
    host[:] = np.arange(count, dtype="float32")
    t = modrt.empty((count,), "float32", dev)
    s = modrt.Stream(dev)

    def copy() -> None:
        t.copyfrom(host, stream=s)
        s.synchronize()

    copy()
    if not np.array_equal(t.numpy()[-4:], host[-4:]):
        raise RuntimeError("the copy did not arrive")
    return timed(copy)


def modrt_cuda_pinned_h2d() -> Run:
    return _modrt_stream_h2d("cuda", pinned=True)


def modrt_cuda_pageable_h2d() -> Run:
    return _modrt_stream_h2d("cuda", pinned=False)


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


def wgpu_graph() -> Run:
    """wgpu-py encoding 1,000 dispatches into one compute pass of one command
    buffer, submitted once; per dispatch (the webgpu-graph row's peer)."""
    import numpy as np

    dispatches = 1000
    device, buf, pipeline, group = _wgpu_add_one()
    wait = _wgpu_wait(device)

    def replay() -> None:
        encoder = device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(pipeline)
        compute.set_bind_group(0, group)
        for _ in range(dispatches):
            compute.dispatch_workgroups(1)
        compute.end()
        device.queue.submit([encoder.finish()])

    replay()
    wait()
    check_ran(np.frombuffer(device.queue.read_buffer(buf), "float32"), dispatches)

    def run(n: int) -> float:
        replays = max(1, n // dispatches)
        start = time.perf_counter()
        for _ in range(replays):
            replay()
        wait()
        return (time.perf_counter() - start) * n / (replays * dispatches)

    return run
