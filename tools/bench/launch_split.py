"""Where a modrt launch's time goes beyond its floor's driver calls, measured in
one process with every part interleaved batch by batch (so machine load hits
all parts alike) and each part's best batch kept:

  python loop       `for _ in range(n): pass`
  kernel lookup     `mod["add_one"]` (the bench looks the kernel up once)
  crossing          `testing.nop(a, 64, 1, 64)`: Python -> _ffi_ext -> the core's
                    registry with the launch's four arguments, no launch
  modrt launch      `kernel(a, 64, 1, 64)` (the launch row)
  ext launch        floors/opencl_launch_ext.c: the same driver calls from a bare
                    METH_FASTCALL extension that converts the same four arguments
  C loop            the same driver calls in a C loop (the C floor, in process),
                    and with the range given in 3 dimensions as modrt's plugin does,
                    also on a queue with profiling enabled as modrt's queues are

`tools/bazel run --config=all-runtimes -c opt //tools/bench:launch_split -- [BATCHES [N]]`
(N launches per OpenCL batch, 2000 as in the launch row).
With the vulkan and webgpu runtimes built it also splits their dispatch rows
into the launch call and Device.sync."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from worker_common import LAUNCH_SOURCE, N_ELEMENTS, VULKAN_SOURCE, WGSL_SOURCE, check_ran

HERE = Path(__file__).resolve().parent
FLOORS = HERE / "floors"
N = 2000
PERIOD_US = 50
SAMPLED_SECONDS = 6.0
TOP_SYMBOLS = 25


def build_exts(dest: str) -> None:
    """opencl_launch_ext and ip_sampler against this interpreter's headers, into dest."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    include = sysconfig.get_paths()["include"]
    cc = os.environ.get("CC", "cc")
    for source, libs in ((FLOORS / "opencl_launch_ext.c", ["-lOpenCL"]), (HERE / "ip_sampler.c", [])):
        out = os.path.join(dest, f"{source.stem}{suffix}")
        subprocess.run([cc, "-O2", "-shared", "-fPIC", f"-I{include}", "-o", out, str(source), *libs], check=True)
    sys.path.insert(0, dest)


def sampled(title: str, body: Callable[[int], None], n: int, seconds: float) -> None:
    """Where body(n)'s CPU time on this thread goes, per call, by shared object
    and by symbol: ip_sampler.c's samples of the thread's CPU clock (taken at
    the kernel's timer ticks, so a share of samples is a share of the thread's
    CPU time) scaled to the thread's CPU time per call (time.thread_time, which
    machine load does not inflate the way it does wall time)."""
    import ip_sampler  # type: ignore[import-not-found]

    body(n)
    calls = 0
    ip_sampler.start(PERIOD_US)
    cpu_start, wall_start = time.thread_time(), time.perf_counter()
    while time.perf_counter() - wall_start < seconds:
        body(n)
        calls += n
    cpu = time.thread_time() - cpu_start
    counts = ip_sampler.stop()
    total = max(1, sum(counts.values()))
    us_per_sample = cpu / total / calls * 1e6
    print(f"\n{title}: this thread's CPU time per call {cpu / calls * 1e6:.3f} us")
    by_object: dict[str, int] = {}
    for (obj, _), c in counts.items():
        by_object[os.path.basename(obj)] = by_object.get(os.path.basename(obj), 0) + c
    print(f"  by object, us per call ({total} samples, {calls} calls):")
    for obj, c in sorted(by_object.items(), key=lambda kv: -kv[1]):
        print(f"    {obj:<44} {c * us_per_sample:8.3f}  {100 * c / total:5.1f}%")
    print("  top symbols (a hidden symbol is '?'):")
    for (obj, sym), c in sorted(counts.items(), key=lambda kv: -kv[1])[:TOP_SYMBOLS]:
        print(f"    {os.path.basename(obj)[:28]:<28} {sym[:56]:<56} {c * us_per_sample:8.3f}")


def timed(body: Callable[[int], None]) -> Callable[[int], tuple[float, float]]:
    """body(n) as (wall, this thread's CPU) seconds per call."""

    def run(n: int) -> tuple[float, float]:
        cpu, start = time.thread_time(), time.perf_counter()
        body(n)
        return (time.perf_counter() - start) / n, (time.thread_time() - cpu) / n

    return run


Timings = dict[str, list[tuple[float, float]]]


def interleave(parts: dict[str, Callable[[int], tuple[float, float]]], batches: int, n: int) -> Timings:
    seconds: Timings = {name: [] for name in parts}
    for run in parts.values():  # warm-up
        run(n)
    for _ in range(batches):
        for name, run in parts.items():
            seconds[name].append(run(n))
    return seconds


def show(title: str, seconds: Timings) -> None:
    batches = len(next(iter(seconds.values())))
    print(f"\n{title}: us per call over {batches} interleaved batches")
    print(f"  {'':<34} {'wall best':>9} {'median':>8} {'thread CPU median':>18}")
    for name, values in seconds.items():
        walls = sorted(w for w, _ in values)
        cpus = sorted(c for _, c in values)
        print(f"  {name:<34} {walls[0] * 1e6:9.3f} {walls[batches // 2] * 1e6:8.3f} {cpus[batches // 2] * 1e6:18.3f}")


def opencl_parts(modrt, nop) -> dict[str, Callable[[int], None]]:  # type: ignore[no-untyped-def]
    import numpy as np
    import opencl_launch_ext as ext  # type: ignore[import-not-found]

    dev = modrt.device("opencl")
    mod = modrt.compile(LAUNCH_SOURCE, "opencl", ["add_one(float32*, int32; blockIdx.x, threadIdx.x)"])
    a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
    kernel = mod["add_one"]
    kernel(a, N_ELEMENTS, 1, N_ELEMENTS)
    dev.sync()
    check_ran(a.numpy(), 1)
    ext.setup()

    def python_loop(n: int) -> None:
        for _ in range(n):
            pass

    def lookup(n: int) -> None:
        for _ in range(n):
            mod["add_one"]

    def crossing(n: int) -> None:
        for _ in range(n):
            nop(a, N_ELEMENTS, 1, N_ELEMENTS)

    def modrt_launch(n: int) -> None:
        for _ in range(n):
            kernel(a, N_ELEMENTS, 1, N_ELEMENTS)
        dev.sync()

    def ext_launch(n: int) -> None:
        launch = ext.launch
        for _ in range(n):
            launch(a, N_ELEMENTS, 1, N_ELEMENTS)
        ext.finish()

    def c_loop(n: int) -> None:
        ext.loop(n)
        ext.finish()

    def c_loop_3d(n: int) -> None:
        ext.loop(n, 3)
        ext.finish()

    def c_loop_profiled(n: int) -> None:
        ext.loop(n, 3, True)
        ext.finish()

    return {
        "python loop": python_loop,
        'kernel lookup mod["add_one"]': lookup,
        "crossing testing.nop(a, 64, 1, 64)": crossing,
        "modrt launch kernel(a, 64, 1, 64)": modrt_launch,
        "ext launch (bare extension floor)": ext_launch,
        "C loop (the C floor)": c_loop,
        "C loop, work_dim 3 (as modrt's)": c_loop_3d,
        "C loop, 3 dims, profiling queue": c_loop_profiled,
    }


def dispatch_parts(modrt, kind: str) -> dict[str, Callable[[int], None]]:  # type: ignore[no-untyped-def]
    import numpy as np

    dev = modrt.device(kind)
    if not dev.exist:
        return {}
    if kind == "vulkan":
        mod = modrt.compile({"add_one": VULKAN_SOURCE}, kind, ["add_one(float32*, int32; blockIdx.x, threadIdx.x)"])
        a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
        args: tuple = (a, N_ELEMENTS, 1, N_ELEMENTS)
    else:
        mod = modrt.compile({"add_one": WGSL_SOURCE}, kind, ["add_one(float32*; blockIdx.x, threadIdx.x)"])
        a = modrt.tensor(np.zeros(N_ELEMENTS, dtype="float32"), dev)
        args = (a, 1, N_ELEMENTS)
    kernel = mod["add_one"]
    kernel(*args)
    dev.sync()
    check_ran(a.numpy(), 1)
    sync = dev.sync

    def dispatch_and_sync(n: int) -> None:
        for _ in range(n):
            kernel(*args)
            sync()

    def dispatches_then_sync(n: int) -> None:
        for _ in range(n):
            kernel(*args)
        sync()

    def sync_only(n: int) -> None:
        for _ in range(n):
            sync()

    return {
        f"{kind}: launch + sync (the row)": dispatch_and_sync,
        f"{kind}: launches, one sync": dispatches_then_sync,
        f"{kind}: sync with nothing queued": sync_only,
    }


def main() -> None:
    batches = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    n = int(sys.argv[2]) if len(sys.argv) > 2 else N
    import modrt
    import modrt_test_hooks

    modrt_test_hooks.load()
    nop = modrt.get_global_func("testing.nop")
    with tempfile.TemporaryDirectory() as tmp:
        build_exts(tmp)
        parts = opencl_parts(modrt, nop)
        show("opencl launch (PoCL)", interleave({k: timed(v) for k, v in parts.items()}, batches, n))
        for name in (
            "modrt launch kernel(a, 64, 1, 64)",
            "ext launch (bare extension floor)",
            "C loop, 3 dims, profiling queue",
        ):
            sampled(name, parts[name], n, SAMPLED_SECONDS)
        for kind in ("vulkan", "webgpu"):
            parts = dispatch_parts(modrt, kind)
            if parts:
                show(f"{kind} dispatch", interleave({k: timed(v) for k, v in parts.items()}, batches, 300))
                name = f"{kind}: launch + sync (the row)"
                sampled(name, parts[name], 300, SAMPLED_SECONDS)


if __name__ == "__main__":
    main()
