"""modrt against its peers and the floor: `tools/bazel run //tools/bench -- all`.

Installs the peers (apache-tvm, apache-tvm-ffi, pyopencl, and matplotlib for
the chart) into a venv inside the toolchain root (wgpu-py comes with the root,
CuPy only where it is installed), builds modrt trees with the backend flags on
and off (nested Bazel runs in this workspace), builds the floors (floors/*.c),
measures every row in fresh processes, interleaved, three times, and writes
docs/BENCHMARKS.md and its chart.

    bench all                      every row, then the doc
    bench ffi-call launch          some rows (the doc is written only for `all`
                                   unless --out is given); groups: bandwidth, cuda
    bench ffi-call --python P --modrt-path DIR... --no-install --reps 2 --out D
                                   a smoke run against an existing interpreter
                                   and modrt tree (what bench_test does)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import measure
import report
from measure import Side, Unavailable, median, paired_difference
from report import UNSTABLE, Line
from worker import WGPU_ROOT

HERE = Path(__file__).resolve().parent
VENV = Path("/opt/modrt/bench-venv")
REQUIREMENTS = [
    "apache-tvm==0.27.0.post1",
    "apache-tvm-ffi==0.1.15.post2",
    "pyopencl==2026.1.4",
    "matplotlib==3.11.2",
]
ROWS = [
    "import",
    "autoload",
    "ffi-call",
    "launch",
    "checked-launch",
    "vulkan-dispatch",
    "webgpu-dispatch",
    "opencl-h2d",
    "opencl-d2h",
    "vulkan-h2d",
    "vulkan-d2h",
    "cuda-launch",
    "cuda-h2d",
    "cuda-d2h",
    "artifact",
    "vulkan-graph",
    "webgpu-graph",
    "opencl-graph",
    "pool-alloc",
    "event-timing",
    "build",
    "tinygrad-launch",
    "tinygrad-mlp-step",
    "tinygrad-conv-forward",
]
# Names for several rows at once.
GROUPS = {
    "bandwidth": ["opencl-h2d", "opencl-d2h", "vulkan-h2d", "vulkan-d2h"],
    "cuda": ["cuda-launch", "cuda-h2d", "cuda-d2h"],
    "device-layer": ["vulkan-graph", "webgpu-graph", "opencl-graph", "pool-alloc", "event-timing"],
    "tinygrad": ["tinygrad-launch", "tinygrad-mlp-step", "tinygrad-conv-forward"],
}
# Repeats of every row; a row whose repeats disagree by more than
# report.UNSTABLE is unstable.
REPEATS = 3


def say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


# ---- the peers' venv -------------------------------------------------------


def ensure_venv() -> str:
    """The venv's python, creating the venv and installing REQUIREMENTS once."""
    python = VENV / "bin" / "python"
    marker = VENV / "modrt-bench-requirements.txt"
    wanted = "\n".join(REQUIREMENTS) + "\n"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return str(python)
    say(f"installing {', '.join(REQUIREMENTS)} into {VENV}")
    # System site-packages give the root's numpy, which the peers also use.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(VENV)], check=True)
    env = measure.python_env()
    cert = "/etc/ssl/certs/ca-certificates.crt"
    if os.path.exists(cert):
        env["PIP_CERT"] = cert
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS], check=True, env=env)
    marker.write_text(wanted)
    return str(python)


# ---- nested Bazel ----------------------------------------------------------


def bazel(args: Sequence[str], cwd: Path, output_base: Path | None = None, **kwargs) -> subprocess.CompletedProcess:
    """Bazel as tools/bazel runs it (same output root, so the install base is shared)."""
    cmd = ["bazel"]
    root = os.environ.get("MODRT_BAZEL_OUTPUT_ROOT")
    if root:
        cmd.append(f"--output_user_root={root}")
    if output_base:
        cmd.append(f"--output_base={output_base}")
    return subprocess.run(cmd + list(args), cwd=cwd, env=measure.python_env(), text=True, **kwargs)


@dataclass
class Tree:
    """A modrt tree built with some flags: the import roots to put on PYTHONPATH."""

    flags: str
    paths: list[str]


def build_tree(workspace: Path, configs: Sequence[str], dest: Path) -> Tree:
    """Builds modrt with the first of `configs` that builds ("" = flags off)
    and copies it to `dest`: builds with other flags reuse the same output
    directory, so the tree would not survive the next one."""
    for config in configs:
        flags = [f"--config={config}"] if config else []
        # Optimized, like the peers' release wheels.
        done = bazel(["run", "-c", "opt", *flags, "//tools/bench:modrt_paths"], workspace, capture_output=True)
        if done.returncode == 0:
            where = json.loads(done.stdout)
            shutil.copytree(where["root"], dest, symlinks=False)
            shown = " ".join(flags) or "all backend flags off"
            return Tree(
                flags=f"{shown} (-c opt)",
                paths=[str(dest / os.path.relpath(p, where["root"])) for p in where["paths"]],
            )
        say(f"--config={config} does not build here; trying the next ({done.stderr.strip().splitlines()[-1:]})")
    raise RuntimeError(f"modrt does not build with any of {configs}")


# ---- the run's context -----------------------------------------------------


@dataclass
class Context:
    python: str  # the interpreter every measured side runs in (the venv's)
    on: Tree  # every runtime flag that builds
    off: Tree  # every flag off
    reps: int | None  # rounds per repeat; None: each row's default
    workspace: Path | None
    floors: Floors
    repeats: int = REPEATS

    def rounds(self, default: int) -> int:
        return self.reps or default

    def env(self, tree: Tree | None, **extra: str) -> dict[str, str]:
        return measure.python_env(tree.paths if tree else (), extra)

    def available(self, module: str) -> str | None:
        """None when `module` imports in the venv, else why not."""
        done = subprocess.run(
            [self.python, "-c", f"import {module}"], env=self.env(None), capture_output=True, text=True
        )
        return None if done.returncode == 0 else (done.stderr.strip().splitlines() or ["fails"])[-1]


# ---- floors: C programs and a bare extension, built by the bench -----------

FLOORS_DIR = HERE / "floors"
# wgpu-native as the wgpu wheel ships it (headers and library).
WGPU_RESOURCES = f"{WGPU_ROOT}/wgpu/resources"
# name -> (source, compile and link flags)
C_FLOORS = {
    "opencl_launch": ("opencl_launch.c", ["-lOpenCL"]),
    "vulkan_dispatch": ("vulkan_dispatch.c", ["-lvulkan"]),
    "webgpu_dispatch": (
        "webgpu_dispatch.c",
        [
            f"-I{WGPU_RESOURCES}",
            f"{WGPU_RESOURCES}/libwgpu_native-release.so",
            f"-Wl,-rpath,{WGPU_RESOURCES}",
        ],
    ),
    "cuda_launch": ("cuda_launch.c", ["-ldl"]),
}


@dataclass
class Floors:
    """What build_floors made, in `dir`, and why anything is missing."""

    dir: Path
    missing: dict[str, str]

    def path(self, name: str) -> Path:
        if name in self.missing:
            raise Unavailable(f"floor {name} was not built: {self.missing[name]}")
        return self.dir / name


def build_floors(python: str, dest: Path) -> Floors:
    """Compiles floors/*.c with $CC (default cc), the nop_ext extension against
    `python`'s headers, and the add_one shader to SPIR-V with glslangValidator.
    A floor that does not build is recorded, not fatal."""
    dest.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    missing: dict[str, str] = {}

    def run(name: str, argv: list[str]) -> None:
        try:
            done = subprocess.run(argv, capture_output=True, text=True)
        except OSError as e:
            missing[name] = str(e)
            return
        if done.returncode != 0:
            missing[name] = (done.stderr.strip().splitlines() or [f"{argv[0]} failed"])[-1]

    for name, (source, libs) in C_FLOORS.items():
        run(name, [cc, "-O2", "-o", str(dest / name), str(FLOORS_DIR / source), *libs])
    config = subprocess.run(
        [
            python,
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))",
        ],
        capture_output=True,
        text=True,
    )
    if config.returncode == 0:
        include, suffix = config.stdout.split()
        run(
            "nop_ext",
            [
                cc,
                "-O2",
                "-shared",
                "-fPIC",
                f"-I{include}",
                "-o",
                str(dest / f"nop_ext{suffix}"),
                str(FLOORS_DIR / "nop_ext.c"),
            ],
        )
    else:
        missing["nop_ext"] = "the interpreter does not say where its headers are"
    import worker

    shader = dest / "add_one.comp"
    shader.write_text(worker.VULKAN_SOURCE)
    run("add_one.spv", ["glslangValidator", "-V", "-o", str(dest / "add_one.spv"), str(shader)])
    if "add_one.spv" in missing:
        missing.setdefault("vulkan_dispatch", "no SPIR-V for its shader: " + missing["add_one.spv"])
    for name, why in missing.items():
        say(f"floor {name} not built: {why}")
    return Floors(dest, missing)


# ---- rows: modrt against references, in fresh processes --------------------


@dataclass
class Ref:
    """A reference modrt is compared with: a peer's worker case, or a floor
    (a worker case on the floor's extension, or a C floor program)."""

    label: str
    command: str  # what it times, as shown in the report
    target: str = "report"
    limit: float | None = None
    case: str | None = None  # worker.py case ...
    floor: str | None = None  # ... or a C floor binary
    floor_args: tuple[str, ...] = ()
    of_modrt: bool = False  # a worker case of modrt itself (another way to do the same), run on its tree


@dataclass
class InProcessRow:
    """A row whose sides each time a loop inside one process: modrt's worker
    case against each Ref. Adding a row is adding one of these to ROW_SPECS
    (and its worker cases)."""

    what: str
    unit: str
    n: int  # repetitions per batch
    modrt_case: str
    modrt_command: str
    refs: list[Ref]
    scale: float = 1.0  # per-repetition seconds -> unit
    bytes_per_rep: int | None = None  # set: the unit is GB/s (higher is better)
    note: str = ""


def _sampler_for(
    ctx: Context,
    spec: InProcessRow,
    case: str | None,
    tree: Tree | None,
    floor: str | None = None,
    floor_args: Sequence[str] = (),
) -> Callable[[], float]:
    scale = spec.scale if spec.bytes_per_rep is None else 1.0
    if floor:
        args = [str(ctx.floors.path(floor))] + [a.format(floors=ctx.floors.dir) for a in floor_args]
        sample = measure.c_floor(args, spec.n, scale)
    else:
        sample = measure.fresh_worker(
            ctx.python, case, ctx.env(tree, MODRT_BENCH_FLOORS=str(ctx.floors.dir)), spec.n, scale
        )
    if spec.bytes_per_rep is None:
        return sample
    per_copy = spec.bytes_per_rep
    return lambda: per_copy / sample() / 1e9


def run_in_process_row(ctx: Context, row: str, spec: InProcessRow) -> list[Line]:
    """Probes every side (one that cannot start here is left out, with the
    reason), then measures the rest together: repeats of interleaved rounds,
    each sample a fresh process."""
    env_on = ctx.env(ctx.on, MODRT_BENCH_FLOORS=str(ctx.floors.dir))
    why = measure.probe(ctx.python, spec.modrt_case, env_on)
    if why is not None:
        raise Unavailable(f"modrt cannot run it here: {why}")
    command = f"{spec.modrt_command} (tools/bench/worker.py {spec.modrt_case})"
    sides = [Side("modrt", command, _sampler_for(ctx, spec, spec.modrt_case, ctx.on))]
    missing: dict[str, str] = {}
    for ref in spec.refs:
        try:
            if ref.floor:
                sampler = _sampler_for(ctx, spec, None, None, ref.floor, ref.floor_args)
                sampler()  # a probe: raises Unavailable where it cannot run
            else:
                tree = ctx.on if ref.of_modrt else None
                reason = measure.probe(ctx.python, ref.case, ctx.env(tree, MODRT_BENCH_FLOORS=str(ctx.floors.dir)))
                if reason is not None:
                    raise Unavailable(reason)
                sampler = _sampler_for(ctx, spec, ref.case, tree)
        except Unavailable as e:
            missing[ref.label] = str(e)
            say(f"  {row}: {ref.label} unavailable: {e}")
            continue
        sides.append(Side(ref.label, ref.command, sampler))
    rounds, repeats = ctx.rounds(5), ctx.repeats
    runs = measure.repeat(sides, rounds, repeats)
    lines = []
    for ref in spec.refs:
        shown = ref.command + (
            f" (tools/bench/worker.py {ref.case})"
            if ref.case
            else f" (tools/bench/floors/{C_FLOORS[ref.floor][0]})"
            if ref.floor
            else ""
        )
        line = Line.from_runs(
            id=row,
            what=spec.what,
            command=command,
            unit=spec.unit,
            runs=runs,
            ref=ref.label,
            peer=f"{ref.label}: `{shown}`",
            target=ref.target,
            limit=ref.limit,
            higher_is_better=spec.bytes_per_rep is not None,
        )
        if ref.label in missing:
            line.verdict = f"{ref.label} unavailable ({missing[ref.label]})"
        line.notes.append(
            f"{repeats} repeats of {rounds} rounds; each sample a fresh process (a warm-up batch, then the "
            f"fastest of {measure.BATCHES} batches of {spec.n}); modrt from the tree built with {ctx.on.flags}."
        )
        if spec.note:
            line.notes.append(spec.note)
        lines.append(line.judge())
    return lines


ROW_SPECS: dict[str, InProcessRow] = {
    "ffi-call": InProcessRow(
        what="no-op C++ registry function called from Python",
        unit="ns",
        n=50000,
        scale=1e9,
        modrt_case="modrt-nop",
        modrt_command='modrt.get_global_func("testing.nop")()',
        refs=[
            Ref("floor", "nop_ext.nop(): a bare METH_FASTCALL no-op extension", "<= 1.5x floor", 1.5, case="floor-nop"),
            Ref("tvm_ffi", 'tvm_ffi.get_global_func("testing.nop")()', "<= 0.8x tvm_ffi", 0.8, case="tvm_ffi-nop"),
        ],
    ),
    "launch": InProcessRow(
        what="tiny OpenCL kernel on PoCL, args set + enqueue (finish per batch)",
        unit="us",
        n=2000,
        scale=1e6,
        modrt_case="modrt-launch",
        modrt_command='mod["add_one"](a, 64, 1, 64)',
        refs=[
            Ref("floor", "C: clSetKernelArg x2 + clEnqueueNDRangeKernel", "<= 1.5x floor", 1.5, floor="opencl_launch"),
            Ref(
                "pyopencl",
                "prg.add_one(queue, (64,), (64,), buf, np.int32(64))",
                "<= 0.7x pyopencl",
                0.7,
                case="pyopencl-launch",
            ),
        ],
    ),
    # The cost of checked mode (docs/RELIABILITY.md): the same launch with the
    # tensor's guard zone read back after each launch.
    "checked-launch": InProcessRow(
        what="the launch row's kernel in checked mode (MODRT_CHECK=bounds), guard checked per launch",
        unit="us",
        n=2000,
        scale=1e6,
        modrt_case="modrt-checked-launch",
        modrt_command='with modrt.checked(): mod["add_one"](a, 64, 1, 64)',
        refs=[Ref("unchecked", 'mod["add_one"](a, 64, 1, 64) (the launch row)', case="modrt-launch", of_modrt=True)],
    ),
    "vulkan-dispatch": InProcessRow(
        what="one small dispatch on lavapipe, submitted and waited for",
        unit="us",
        n=300,
        scale=1e6,
        modrt_case="modrt-vulkan-dispatch",
        modrt_command='mod["add_one"](a, 64, 1, 64); dev.sync()',
        refs=[
            Ref(
                "wgpu",
                "encoder + compute pass + dispatch_workgroups(1) + submit + wait",
                "<= 0.5x wgpu",
                0.5,
                case="wgpu-dispatch",
            ),
            Ref(
                "floor",
                "C: vkQueueSubmit of a recorded command buffer + vkWaitForFences",
                "<= 2.0x floor",
                2.0,
                floor="vulkan_dispatch",
                floor_args=("{floors}/add_one.spv",),
            ),
        ],
        note="The same 64-float add_one kernel on every side (GLSL for modrt and the C floor, the equivalent WGSL "
        "for wgpu-py). wgpu waits with wgpuDevicePoll(wait=True): wgpu-py 0.32's "
        "queue.on_submitted_work_done_sync() fails against the wgpu-native it ships.",
    ),
    "webgpu-dispatch": InProcessRow(
        what="one small dispatch through WebGPU (wgpu-native on lavapipe), submitted and waited for",
        unit="us",
        n=300,
        scale=1e6,
        modrt_case="modrt-webgpu-dispatch",
        modrt_command='mod["add_one"](a, 1, 64); dev.sync()',
        refs=[
            Ref(
                "wgpu",
                "encoder + compute pass + dispatch_workgroups(1) + submit + wait",
                "<= 0.5x wgpu",
                0.5,
                case="wgpu-dispatch",
            ),
            Ref(
                "floor",
                "C on wgpu-native: encoder + compute pass + dispatch + submit + wgpuDevicePoll(wait)",
                floor="webgpu_dispatch",
            ),
        ],
        note="The same WGSL kernel on every side.",
    ),
    "opencl-h2d": InProcessRow(
        what="64 MiB host-to-device copy, OpenCL on PoCL (GB/s, higher is better)",
        unit="GB/s",
        n=2,
        bytes_per_rep=64 << 20,
        modrt_case="modrt-opencl-h2d",
        modrt_command="t.copyfrom(host)",
        refs=[Ref("pyopencl", "cl.enqueue_copy(queue, buf, host, is_blocking=True)", case="pyopencl-h2d")],
    ),
    "opencl-d2h": InProcessRow(
        what="64 MiB device-to-host copy, OpenCL on PoCL (GB/s, higher is better)",
        unit="GB/s",
        n=2,
        bytes_per_rep=64 << 20,
        modrt_case="modrt-opencl-d2h",
        modrt_command="t.numpy()",
        refs=[Ref("pyopencl", "cl.enqueue_copy(queue, np.empty(...), buf, is_blocking=True)", case="pyopencl-d2h")],
    ),
    "vulkan-h2d": InProcessRow(
        what="64 MiB host-to-device copy, Vulkan on lavapipe (GB/s, higher is better)",
        unit="GB/s",
        n=2,
        bytes_per_rep=64 << 20,
        modrt_case="modrt-vulkan-h2d",
        modrt_command="t.copyfrom(host)",
        refs=[Ref("wgpu", "queue.write_buffer(buf, 0, host) + wait", case="wgpu-h2d")],
    ),
    "vulkan-d2h": InProcessRow(
        what="64 MiB device-to-host copy, Vulkan on lavapipe (GB/s, higher is better)",
        unit="GB/s",
        n=2,
        bytes_per_rep=64 << 20,
        modrt_case="modrt-vulkan-d2h",
        modrt_command="t.numpy()",
        refs=[Ref("wgpu", "queue.read_buffer(buf)", case="wgpu-d2h")],
    ),
    "cuda-launch": InProcessRow(
        what="empty CUDA kernel, launch (synchronize per batch)",
        unit="us",
        n=5000,
        scale=1e6,
        modrt_case="modrt-cuda-launch",
        modrt_command='mod["empty"](1, 1)',
        refs=[
            Ref("cupy", "cupy.RawKernel(src, 'empty')((1,), (1,), ())", case="cupy-launch"),
            Ref("floor", "C: cuLaunchKernel", floor="cuda_launch"),
        ],
    ),
    "cuda-h2d": InProcessRow(
        what="256 MiB host-to-device copy, CUDA (GB/s, higher is better)",
        unit="GB/s",
        n=2,
        bytes_per_rep=256 << 20,
        modrt_case="modrt-cuda-h2d",
        modrt_command="t.copyfrom(host)",
        refs=[Ref("cupy", "d.set(host)", case="cupy-h2d")],
    ),
    "cuda-d2h": InProcessRow(
        what="256 MiB device-to-host copy, CUDA (GB/s, higher is better)",
        unit="GB/s",
        n=2,
        bytes_per_rep=256 << 20,
        modrt_case="modrt-cuda-d2h",
        modrt_command="t.numpy()",
        refs=[Ref("cupy", "d.get()", case="cupy-d2h")],
    ),
    "vulkan-graph": InProcessRow(
        what="per dispatch: 1,000 small lavapipe dispatches replayed from a modrt.Graph",
        unit="us",
        n=2000,
        scale=1e6,
        modrt_case="modrt-vulkan-graph-replay",
        modrt_command="graph.replay() of 1,000 captured add_one launches; stream.synchronize()",
        refs=[
            Ref(
                "one-by-one",
                'mod["add_one"](a, 64, 1, 64) x1,000 from Python; dev.sync()',
                "<= 0.1x one-by-one",
                0.1,
                case="modrt-vulkan-one-by-one",
                of_modrt=True,
            )
        ],
        note="The graph is the core's recorded list (no Vulkan reusable command buffer yet): a replay "
        "saves Python's call overhead, not the backend's per-dispatch submit.",
    ),
    "webgpu-graph": InProcessRow(
        what="per dispatch: 1,000 small WebGPU dispatches (wgpu-native on lavapipe) replayed from a modrt.Graph",
        unit="us",
        n=2000,
        scale=1e6,
        modrt_case="modrt-webgpu-graph-replay",
        modrt_command="graph.replay() of 1,000 captured add_one launches; stream.synchronize()",
        refs=[
            Ref(
                "one-by-one",
                'mod["add_one"](a, 1, 64) x1,000 from Python; dev.sync()',
                "<= 0.1x one-by-one",
                0.1,
                case="modrt-webgpu-one-by-one",
                of_modrt=True,
            ),
            Ref("wgpu", "1,000 dispatch_workgroups(1) in one compute pass, one submit, wait", case="wgpu-graph"),
        ],
        note="A replay encodes the recorded dispatches into one compute pass of one command buffer, submitted once.",
    ),
    "opencl-graph": InProcessRow(
        what="per dispatch: 1,000 small PoCL launches replayed from a modrt.Graph",
        unit="us",
        n=2000,
        scale=1e6,
        modrt_case="modrt-opencl-graph-replay",
        modrt_command="graph.replay() of 1,000 captured add_one launches; stream.synchronize()",
        refs=[
            Ref(
                "one-by-one",
                'mod["add_one"](a, 64, 1, 64) x1,000 from Python; dev.sync()',
                "<= 0.5x one-by-one",
                0.5,
                case="modrt-opencl-one-by-one",
                of_modrt=True,
            )
        ],
        note="The core's recorded list (no cl_khr_command_buffer).",
    ),
    "pool-alloc": InProcessRow(
        what="1 MiB OpenCL tensor made and dropped, from the pool",
        unit="us",
        n=2000,
        scale=1e6,
        modrt_case="modrt-pool-alloc",
        modrt_command='modrt.empty((262144,), "float32", dev)',
        refs=[
            Ref(
                "driver",
                "the same, then dev.empty_cache(): clCreateBuffer + clReleaseMemObject each time",
                case="modrt-driver-alloc",
                of_modrt=True,
            )
        ],
    ),
    "event-timing": InProcessRow(
        what="one cpu kernel (64 x 4096 float adds) as timed by events (the stream worker's clock)",
        unit="us",
        n=200,
        scale=1e6,
        modrt_case="modrt-event-timing",
        modrt_command="s.record(); kernel(a, 4096); e = s.record(); e.synchronize(); e.elapsed_ms(start)",
        refs=[
            Ref(
                "host",
                "perf_counter around kernel(a, 4096); dev.sync()",
                case="modrt-host-timing",
                of_modrt=True,
            )
        ],
        note="What each method reports as the kernel's time, not its cost: host timing adds the launch, the "
        "hand-off to the worker and the wait. Backend devices have no device timestamps yet (elapsed_ms "
        "refuses there).",
    ),
    "artifact": InProcessRow(
        what="load a .modrt of 100 OpenCL kernels, call each once",
        unit="ms",
        n=1,
        scale=1e3,
        modrt_case="modrt-artifact",
        modrt_command='m = modrt.load_module("kernels.modrt"); m[k](a, 64, 1, 64) for each k',
        refs=[
            Ref(
                "pyopencl",
                "prg = cl.Program(ctx, src).build(); getattr(prg, k)(queue, (64,), (64,), buf, n) for each k",
                case="pyopencl-artifact",
            )
        ],
        note="modrt side: `modrt.load_module(path)` of a file written by `Module.export(path)` (integrity "
        "checks, manifest, then the module), then each kernel once and a device sync. The OpenCL program "
        "is built from source on load by both sides; PoCL's kernel cache and pyopencl's binary cache are "
        "warm after the warm-up batch, so this is the cost of a load on a machine that has run the code before.",
    ),
    "tinygrad-launch": InProcessRow(
        what="one tinygrad kernel (64-float add) launched by tinygrad's Program, OpenCL on PoCL (sync per batch)",
        unit="us",
        n=2000,
        scale=1e6,
        modrt_case="tinygrad-modrt-launch",
        modrt_command="DEV MODRT:opencl: program(*bufs, global_size=..., local_size=...)",
        refs=[
            Ref(
                "tinygrad-CL",
                "tinygrad's own CL device: program(*bufs, global_size=..., local_size=...)",
                "<= 0.5x tinygrad-CL",
                0.5,
                case="tinygrad-cl-launch",
            )
        ],
        note="The same OpenCL C from tinygrad's OpenCL renderer on both sides; the Program is the one "
        "tinygrad's scheduler made for `(a + 1).realize()`, called directly.",
    ),
    "tinygrad-mlp-step": InProcessRow(
        what="jitted SGD step of a 64-128-10 MLP (batch 32) in tinygrad, OpenCL on PoCL",
        unit="ms",
        n=20,
        scale=1e3,
        modrt_case="tinygrad-modrt-mlp-step",
        modrt_command="TinyJit step(x, y) on MODRT:opencl",
        refs=[
            Ref(
                "tinygrad-CL",
                "TinyJit step(x, y) on tinygrad's CL device",
                "<= 0.8x tinygrad-CL",
                0.8,
                case="tinygrad-cl-mlp-step",
            )
        ],
        note="The JIT replays kernel by kernel on both sides (neither device has a graph in tinygrad 0.14 here).",
    ),
    "tinygrad-conv-forward": InProcessRow(
        what="jitted forward pass of a small conv net (2 conv, max-pool, linear; 8x1x28x28) in tinygrad, PoCL",
        unit="ms",
        n=10,
        scale=1e3,
        modrt_case="tinygrad-modrt-conv-forward",
        modrt_command="TinyJit forward(x) on MODRT:opencl",
        refs=[
            Ref(
                "tinygrad-CL",
                "TinyJit forward(x) on tinygrad's CL device",
                "<= 0.8x tinygrad-CL",
                0.8,
                case="tinygrad-cl-conv-forward",
            )
        ],
    ),
}


def _spec_row(row: str) -> Callable[[Context], list[Line]]:
    return lambda ctx: run_in_process_row(ctx, row, ROW_SPECS[row])


# ---- rows measured as whole processes --------------------------------------


def row_import(ctx: Context) -> list[Line]:
    rounds = ctx.rounds(5)
    py = ctx.python
    sides = [
        Side(
            "modrt", 'python -c "import modrt"', measure.process_wall([py, "-c", "import modrt"], ctx.env(ctx.on), 1e3)
        )
    ]
    for module in ("tvm", "tvm_ffi"):
        why = ctx.available(module)
        if why is None:
            sides.append(
                Side(
                    module,
                    f'python -c "import {module}"',
                    measure.process_wall([py, "-c", f"import {module}"], ctx.env(None), 1e3),
                )
            )
        else:
            say(f"import: {module} unavailable: {why}")
    sides.append(Side("python", 'python -c "pass"', measure.process_wall([py, "-c", "pass"], ctx.env(None), 1e3)))
    floor = _dso_floor_code(ctx.on)
    if floor:
        sides.append(Side("floor", "ctypes + the DSOs", measure.process_wall([py, "-c", floor], ctx.env(None), 1e3)))
    runs = measure.repeat(sides, rounds, ctx.repeats)
    lines = []
    what = f"import, {ctx.on.flags}, wall"
    for ref, limit, shown in (
        ("tvm", 0.05, 'python -c "import tvm"'),
        ("tvm_ffi", 0.25, 'python -c "import tvm_ffi"'),
        ("floor", None, "python -c: import ctypes; dlopen of the core, compiler and runtime DSOs (no modrt Python)"),
    ):
        line = Line.from_runs(
            id="import",
            what=what,
            command='python -c "import modrt"',
            unit="ms",
            runs=runs,
            ref=ref,
            peer=f"{ref}: `{shown}`",
            target=f"<= {limit:.2f}x {ref}" if limit else "report",
            limit=limit,
        )
        if ref not in runs[0]:
            line.verdict = f"{ref} unavailable"
        pooled = [v for r in runs for v in r["python"]]
        modrt_pooled = [v for r in runs for v in r["modrt"]]
        line.notes.append(
            f'bare interpreter (`python -c "pass"`): {median(pooled):.1f} ms median; '
            f"modrt's import above it: {paired_difference(modrt_pooled, pooled):.1f} ms. "
            f"{ctx.repeats} repeats of {rounds} rounds; every process is the bench venv's python."
        )
        lines.append(line.judge())
    lines[0].notes.append("Where `import modrt` spends its time: " + _import_profile(ctx))
    return lines


def _import_profile(ctx: Context, runs: int = 3, top: int = 10) -> str:
    """The modules with the largest self time under `python -X importtime -c
    "import modrt"` (per module, the least over `runs` runs)."""
    best: dict[str, int] = {}
    for _ in range(runs):
        done = subprocess.run(
            [ctx.python, "-X", "importtime", "-c", "import modrt"], env=ctx.env(ctx.on), capture_output=True, text=True
        )
        for m in re.finditer(r"import time:\s+(\d+) \|\s+\d+ \|(\s*)(\S+)", done.stderr):
            name, us = m.group(3), int(m.group(1))
            best[name] = min(us, best.get(name, us))
    total = sum(best.values())
    ranked = sorted(best.items(), key=lambda kv: -kv[1])[:top]
    shown = ", ".join(f"{name} {us / 1e3:.1f}" for name, us in ranked)
    return f"{shown} (ms of self time, least of {runs} runs; all modules together: {total / 1e3:.1f} ms)."


def _dso_floor_code(tree: Tree) -> str | None:
    """Code that loads ctypes and the tree's DSOs the way `import modrt` does,
    and nothing else: what an import costs before any of modrt's Python."""
    roots = [Path(p).parent for p in tree.paths if Path(p).name == "python" and (Path(p).parent / "core").is_dir()]
    if not roots:
        return None
    dsos = sorted(str(p) for p in roots[0].glob("core/*.so")) + sorted(str(p) for p in roots[0].glob("backends/*/*.so"))
    core = [d for d in dsos if d.endswith("libmodrt_runtime.so")]
    ordered = core + [d for d in dsos if d not in core]
    return "import ctypes\n" + "".join(f"ctypes.CDLL({d!r}, mode=ctypes.RTLD_GLOBAL)\n" for d in ordered)


# `import modrt` without the autoloader, then the autoloader alone, timed in
# the fresh process: the whole import varies by tens of ms from one process to
# the next on a loaded machine, which would drown a difference of a few ms.
AUTOLOAD_TIMED = """
import os, time
os.environ["MODRT_DEVICE_BACKEND_AUTOLOAD"] = "0"
import modrt
from modrt import backend
del os.environ["MODRT_DEVICE_BACKEND_AUTOLOAD"]
backend._state.autoloaded = False  # run it again, for real this time
t = time.perf_counter()
backend.autoload()
print(time.perf_counter() - t)
"""


def row_autoload(ctx: Context) -> list[Line]:
    rounds = ctx.rounds(9)
    py = ctx.python
    on = measure.process_reported([py, "-c", AUTOLOAD_TIMED], ctx.env(ctx.on), 1e3)
    off = measure.process_reported([py, "-c", AUTOLOAD_TIMED], ctx.env(ctx.off), 1e3)
    # The on tree against itself: how far from zero a difference lands by noise alone.
    runs = measure.repeat(
        [
            Side("runtimes on", "autoload()", on),
            Side("all off", "autoload()", off),
            Side("runtimes on, again", "autoload()", on),
        ],
        rounds,
        ctx.repeats,
    )
    line = Line.from_differences(
        id="autoload",
        what=f"modrt's autoloader in `import modrt`, built with {ctx.on.flags} minus built with all flags off",
        command='python -c "import modrt"',
        unit="ms",
        runs=runs,
        a="runtimes on",
        b="all off",
        target="<= 5 ms",
        limit=5.0,
    )
    pooled = {k: [v for r in runs for v in r[k]] for k in runs[0]}
    control = paired_difference(pooled["runtimes on"], pooled["runtimes on, again"])
    line.notes.append(
        f"Median of {ctx.repeats} x {rounds} paired differences. Each sample is one fresh process that imports "
        f"modrt with MODRT_DEVICE_BACKEND_AUTOLOAD=0 and then times `modrt.backend.autoload()` itself (every "
        f"in-tree hook imported and registered, selected runtime DSOs loaded, entry points scanned). The "
        f"autoloader in the runtimes-on build takes {median(pooled['runtimes on']):.1f} ms in all, most of it "
        f"importing the hooks and their codegen modules, which happens with the flags off too. Control (the "
        f"runtimes-on build against itself, same rounds): {control:+.1f} ms, the noise of this figure."
    )
    return [line.judge()]


def _copy_workspace(src: Path, dest: Path) -> None:
    def ignore(directory: str, names: list[str]) -> list[str]:
        top = Path(directory) == src
        return [n for n in names if n == ".git" or (top and n.startswith("bazel-"))]

    shutil.copytree(src, dest, symlinks=True, ignore=ignore)


def row_build(ctx: Context) -> list[Line]:
    if ctx.workspace is None:
        raise Unavailable("needs the workspace (run through `tools/bazel run`)")
    scratch = Path(tempfile.mkdtemp(prefix="modrt-bench-build-"))
    src, out = scratch / "src", scratch / "output_base"
    flags = ["--config=cpu-runtimes", "--disk_cache=", "--noshow_progress"]
    try:
        _copy_workspace(ctx.workspace, src)
        start = time.perf_counter()
        cold = bazel(["build", "//...", *flags], src, out, capture_output=True)
        cold_s = time.perf_counter() - start
        if cold.returncode != 0:
            raise RuntimeError(f"cold build failed:\n{cold.stderr[-3000:]}")
        touched = src / "backends/opencl/opencl_runtime.cc"
        # A real change to the object code (a comment would leave the .o identical).
        touched.write_text(touched.read_text() + '\nextern "C" int modrt_bench_touched() { return 1; }\n')
        log = scratch / "exec.json"
        start = time.perf_counter()
        inc = bazel(["build", "//...", *flags, f"--execution_log_json_file={log}"], src, out, capture_output=True)
        inc_s = time.perf_counter() - start
        if inc.returncode != 0:
            raise RuntimeError(f"incremental build failed:\n{inc.stderr[-3000:]}")
        spawns = _executed_spawns(log)
    finally:
        bazel(["shutdown"], src if src.exists() else scratch, out, capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    cold_line = Line(
        id="build (cold)",
        what="cold build, fresh output base, no disk cache",
        command="bazel build //... --config=cpu-runtimes --disk_cache=",
        unit="s",
        modrt=cold_s,
        metric="value",
    )
    cold_line.notes.append(f"Bazel: {_processes(cold.stderr)} (copy of the workspace, its own output base and server)")
    # Outside the backend, only actions that take its rebuilt DSO as an input
    # (packaging it, like the wheel) may re-run.
    foreign = sorted({label for label, _, packs in spawns if not label.startswith("//backends/opencl") and not packs})
    inc_line = Line(
        id="build (incremental)",
        what="after editing backends/opencl/opencl_runtime.cc",
        command="bazel build //... --config=cpu-runtimes --disk_cache=",
        unit="s",
        modrt=inc_s,
        target="re-runs only that backend's actions",
        metric="value",
    )
    inc_line.verdict = "met" if spawns and not foreign else f"missed: also re-ran {', '.join(foreign)}"
    inc_line.notes.append(
        "Actions re-run: "
        + (
            "; ".join(
                f"{mnemonic} {label}" + (" (packages the DSO)" if packs else "") for label, mnemonic, packs in spawns
            )
            or "none"
        )
        + f". Bazel: {_processes(inc.stderr)}"
    )
    return [cold_line.judge(), inc_line.judge()]


def _processes(stderr: str) -> str:
    found = re.findall(r"INFO: (\d+ process(?:es)?:[^\n]*)", stderr)
    return found[-1].strip() if found else "no process summary"


def _executed_spawns(log: Path, dso: str = "libmodrt_runtime_opencl.so") -> list[tuple[str, str, bool]]:
    """(target label, mnemonic, whether `dso` is one of its inputs) of each
    spawn in Bazel's JSON execution log (concatenated JSON objects), in order."""
    decoder = json.JSONDecoder()
    text = log.read_text()
    spawns, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return spawns
        entry, pos = decoder.raw_decode(text, pos)
        label = entry.get("targetLabel", "?")
        label = label[1:] if label.startswith("@//") else label
        packs = any(i.get("path", "").endswith("/" + dso) for i in entry.get("inputs", []))
        spawns.append((label, entry.get("mnemonic", "?"), packs and not label.startswith("//backends/")))


ROW_FUNCTIONS: dict[str, Callable[[Context], list[Line]]] = {
    "import": row_import,
    "autoload": row_autoload,
    **{row: _spec_row(row) for row in ROW_SPECS},
    "build": row_build,
}


# ---- main ------------------------------------------------------------------


def _meta(ctx: Context, load_before: str, elapsed: float) -> dict[str, str]:
    def version(module: str) -> str:
        env = ctx.env(None)
        env["PYTHONPATH"] = WGPU_ROOT  # wgpu-py
        done = subprocess.run(
            [ctx.python, "-c", f"import importlib.metadata as m; print(m.version('{module}'))"],
            env=env,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip() or "not installed"

    cpu = "unknown"
    if os.path.exists("/proc/cpuinfo"):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, {cpu}, {platform.system()} {platform.release()}",
        "load average (1 min) before / after the run": f"{load_before} / {_load()}",
        "python": subprocess.run(
            [ctx.python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True
        ).stdout.strip(),
        "peers": ", ".join(f"{m} {version(m)}" for m in ("apache-tvm", "apache-tvm-ffi", "pyopencl", "wgpu", "cupy")),
        "floors": "built here with $CC: "
        + ", ".join(
            f"{name} ({'built' if name not in ctx.floors.missing else 'missing: ' + ctx.floors.missing[name]})"
            for name in ["nop_ext", *C_FLOORS]
        ),
        "method": f"{ctx.repeats} repeats per row, each of interleaved rounds (order rotating) in fresh processes; "
        f"a row whose repeats disagree by more than {UNSTABLE:.0%} is unstable",
        "modrt trees": f"runtimes on: {ctx.on.flags}; off: {ctx.off.flags}",
        "whole run (after Bazel built the bench itself)": f"{elapsed:.0f} s",
    }


def _load() -> str:
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def run_rows(ctx: Context, rows: Sequence[str]) -> list[Line]:
    lines: list[Line] = []
    for row in rows:
        say(f"row {row}")
        try:
            added = ROW_FUNCTIONS[row](ctx)
        except Unavailable as e:
            what = ROW_SPECS[row].what if row in ROW_SPECS else row
            added = [Line(id=row, what=what, command="", unit="", modrt=None, verdict=f"not run here: {e}")]
            say(f"  {row}: not run here: {e}")
        for ln in added:
            ratio = f", modrt/{ln.ref} {ln.ratio:.2f}x" if ln.ratio is not None else ""
            shown = f"{ln.modrt:.2f} {ln.unit}" if ln.modrt is not None else "—"
            say(f"  {ln.id}: {shown}{ratio} -> {ln.verdict}")
        lines += added
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("rows", nargs="*", choices=ROWS + list(GROUPS) + ["all"], help="rows to run, or all")
    parser.add_argument(
        "--reps",
        type=int,
        help="rounds per repeat, one fresh process per side each (default: each row's own, at least 5)",
    )
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"repeats per row (default {REPEATS})")
    parser.add_argument("--python", help="interpreter for every side (default: the bench venv's)")
    parser.add_argument(
        "--modrt-path",
        action="append",
        default=[],
        help="import roots of an existing modrt tree "
        "(used for both the on and off trees; default: nested Bazel builds)",
    )
    parser.add_argument("--no-install", action="store_true", help="do not create or update the venv")
    parser.add_argument("--out", type=Path, help="where BENCHMARKS.md and the chart go (default: docs/ for `all`)")
    parser.add_argument(
        "--render",
        action="store_true",
        help="measure nothing: rewrite OUT/BENCHMARKS.md from "
        "OUT/benchmarks.json and analysis.md (after editing the notes)",
    )
    args = parser.parse_args(argv)
    if not args.rows and not args.render:
        parser.error("name the rows to run, or all")
    if args.render:
        workspace = Path(os.environ.get("BUILD_WORKSPACE_DIRECTORY", "."))
        return render(args.out or workspace / "docs")
    rows = ROWS if "all" in args.rows else list(dict.fromkeys(r for a in args.rows for r in GROUPS.get(a, [a])))
    workspace = Path(os.environ["BUILD_WORKSPACE_DIRECTORY"]) if "BUILD_WORKSPACE_DIRECTORY" in os.environ else None
    out = args.out or (workspace / "docs" if workspace and "all" in args.rows else None)
    started, load_before = time.perf_counter(), _load()

    python = args.python or (str(VENV / "bin" / "python") if args.no_install else ensure_venv())
    trees = Path(tempfile.mkdtemp(prefix="modrt-bench-trees-"))
    try:
        if args.modrt_path:
            on = off = Tree(flags="the given tree", paths=args.modrt_path)
        elif workspace is None:
            parser.error("without --modrt-path, run through `tools/bazel run //tools/bench`")
        else:
            say("building modrt with every runtime flag that builds, and with all flags off")
            on = build_tree(workspace, ["all-runtimes", "cpu-runtimes"], trees / "on")
            off = build_tree(workspace, [""], trees / "off")
        floors = build_floors(python, trees / "floors")
        ctx = Context(
            python=python, on=on, off=off, reps=args.reps, workspace=workspace, floors=floors, repeats=args.repeats
        )
        lines = run_rows(ctx, rows)
    finally:
        shutil.rmtree(trees, ignore_errors=True)

    if out is None:
        return 0
    out.mkdir(parents=True, exist_ok=True)
    meta = _meta(ctx, load_before, time.perf_counter() - started)
    results = out / "benchmarks.json"
    report.dump(results, lines, meta)
    chart = None
    done = subprocess.run(
        [python, str(HERE / "chart.py"), str(results), str(out / "benchmarks.png")],
        env=ctx.env(None),
        capture_output=True,
        text=True,
    )
    if done.returncode == 0:
        chart = "benchmarks.png"
    else:
        say(f"no chart: {(done.stderr.strip().splitlines() or ['chart.py failed'])[-1]}")
    analysis = (HERE / "analysis.md").read_text() if (HERE / "analysis.md").exists() else ""
    doc = report.write(out, lines, meta, analysis, chart)
    say(f"wrote {doc}" + (f" and {out / chart}" if chart else ""))
    return 0


def render(out: Path) -> int:
    """BENCHMARKS.md again from the run recorded in benchmarks.json."""
    import dataclasses

    data = json.loads((out / "benchmarks.json").read_text())
    names = {f.name for f in dataclasses.fields(Line)}
    lines = [Line(**{k: v for k, v in ln.items() if k in names}) for ln in data["lines"]]
    analysis = (HERE / "analysis.md").read_text() if (HERE / "analysis.md").exists() else ""
    chart = "benchmarks.png" if (out / "benchmarks.png").exists() else None
    say(f"wrote {report.write(out, lines, data['meta'], analysis, chart)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
