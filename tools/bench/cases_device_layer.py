"""Worker cases of the device layer: recorded launches (graphs), the pooled allocator, event timing."""

from __future__ import annotations

import time

from worker_common import (
    LAUNCH_SOURCE,
    N_ELEMENTS,
    VULKAN_SOURCE,
    WGSL_SOURCE,
    Run,
    check_ran,
    modrt_device,
    modrt_opencl,
    timed,
)

GRAPH_DISPATCHES = 1000


def _graph_kernel(kind: str):  # type: ignore[no-untyped-def]
    """modrt, the device, add_one on `kind` and its launch (kernel, args)."""
    import numpy as np

    modrt, dev = modrt_device(kind)
    if kind == "webgpu":  # WGSL's add_one takes no n (see WGSL_SOURCE)
        signature = "add_one(float32*; blockIdx.x, threadIdx.x)"
        kernel = modrt.compile({"add_one": WGSL_SOURCE}, kind, [signature])["add_one"]
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
    check_ran(args[0].numpy(), GRAPH_DISPATCHES)

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


def modrt_opencl_graph_replay() -> Run:
    return _graph_replay("opencl")


def modrt_opencl_one_by_one() -> Run:
    return _graph_one_by_one("opencl")


POOL_ELEMENTS = 1 << 18  # 1 MiB of float32


def modrt_pool_alloc() -> Run:
    """An OpenCL tensor made and dropped: after the first, the pool's block."""
    modrt, dev = modrt_opencl()
    empty = modrt.empty
    empty((POOL_ELEMENTS,), "float32", dev)
    return timed(lambda: empty((POOL_ELEMENTS,), "float32", dev))


def modrt_driver_alloc() -> Run:
    """The same, with the pool emptied after each: the driver allocates and frees."""
    modrt, dev = modrt_opencl()
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
