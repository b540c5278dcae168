"""Worker cases: FFI calls, OpenCL launches on PoCL and artifacts, and the bare-extension floor."""

from __future__ import annotations

import os
import sys
import tempfile
import time

from worker_common import (
    ARTIFACT_KERNELS,
    LAUNCH_SOURCE,
    N_ELEMENTS,
    Run,
    artifact_source,
    check_ran,
    modrt_opencl,
    pyopencl_pocl,
    timed,
)


def modrt_nop() -> Run:
    import modrt
    import modrt_test_hooks  # testing.nop lives in libmodrt_testing.so (//tests/hooks)

    modrt_test_hooks.load()
    return timed(modrt.get_global_func("testing.nop"))


def tvm_ffi_nop() -> Run:
    import tvm_ffi

    return timed(tvm_ffi.get_global_func("testing.nop"))


def modrt_launch(checked: bool = False) -> Run:
    import contextlib

    import numpy as np

    modrt, dev = modrt_opencl()
    mod = modrt.compile(LAUNCH_SOURCE, "opencl", ["add_one(float32*, int32; blockIdx.x, threadIdx.x)"])
    # Checked mode: the tensor gets guard zones, the function checks them after each launch.
    with modrt.checked() if checked else contextlib.nullcontext():
        a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
        kernel = mod["add_one"]
    kernel(a, N_ELEMENTS, 1, N_ELEMENTS)  # builds the program
    dev.sync()
    check_ran(a.numpy(), 1)

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            kernel(a, N_ELEMENTS, 1, N_ELEMENTS)
        dev.sync()
        return time.perf_counter() - start

    return run


def pyopencl_launch() -> Run:
    import numpy as np

    cl, ctx, queue = pyopencl_pocl()
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(N_ELEMENTS, "float32"))
    kernel = cl.Program(ctx, LAUNCH_SOURCE).build().add_one
    n_arg = np.int32(N_ELEMENTS)
    kernel(queue, (N_ELEMENTS,), (N_ELEMENTS,), a, n_arg)
    queue.finish()
    out = np.empty(N_ELEMENTS, "float32")
    cl.enqueue_copy(queue, out, a)
    check_ran(out, 1)

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            kernel(queue, (N_ELEMENTS,), (N_ELEMENTS,), a, n_arg)
        queue.finish()
        return time.perf_counter() - start

    return run


def modrt_artifact() -> Run:
    import numpy as np

    modrt, dev = modrt_opencl()
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

    cl, ctx, queue = pyopencl_pocl()
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
