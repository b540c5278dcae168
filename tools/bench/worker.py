"""One side of an in-process comparison, run in its own interpreter.

`python worker.py CASE` sets the case up, prints `ready` (or `unavailable:
REASON` when a package it needs is missing), then answers each line `N` on
stdin with the seconds that N repetitions took. The driver (measure.Worker)
alternates batches between the sides, so both stay warm and share whatever
load the machine has at that moment.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Callable

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


def modrt_launch() -> Run:
    import numpy as np

    modrt, dev = _modrt_opencl()
    mod = modrt.compile(LAUNCH_SOURCE, "opencl", ["add_one(float32*, int32; blockIdx.x, threadIdx.x)"])
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


CASES: dict[str, Callable[[], Run]] = {
    "modrt-nop": modrt_nop,
    "tvm_ffi-nop": tvm_ffi_nop,
    "modrt-launch": modrt_launch,
    "pyopencl-launch": pyopencl_launch,
    "modrt-artifact": modrt_artifact,
    "pyopencl-artifact": pyopencl_artifact,
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
