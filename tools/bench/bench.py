"""modrt against its peers: `tools/bazel run //tools/bench -- all`.

Installs the peers (apache-tvm, apache-tvm-ffi, pyopencl, and matplotlib for
the chart) into a venv inside the toolchain root, builds modrt trees with the
backend flags on and off (nested Bazel runs in this workspace), runs each
comparison interleaved, and writes docs/BENCHMARKS.md and its chart.

    bench all                      every row, then the doc
    bench ffi-call launch          some rows (the doc is written only for `all`
                                   unless --out is given)
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
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import measure
from measure import Side, Unavailable, Worker, interleave, median, paired_difference, paired_ratio
from report import Line

HERE = Path(__file__).resolve().parent
VENV = Path("/opt/modrt/bench-venv")
REQUIREMENTS = [
    "apache-tvm==0.27.0.post1",
    "apache-tvm-ffi==0.1.15.post2",
    "pyopencl==2026.1.4",
    "matplotlib==3.11.2",
]
ROWS = ["import", "autoload", "ffi-call", "launch", "artifact", "build"]


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


def bazel(args: Sequence[str], cwd: Path, output_base: Optional[Path] = None, **kwargs) -> subprocess.CompletedProcess:
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
    reps: Optional[int]  # rounds per row; None: each row's default
    workspace: Optional[Path]

    def rounds(self, default: int) -> int:
        return self.reps or default

    def env(self, tree: Optional[Tree], **extra: str) -> dict[str, str]:
        return measure.python_env(tree.paths if tree else (), extra)

    def available(self, module: str) -> Optional[str]:
        """None when `module` imports in the venv, else why not."""
        done = subprocess.run([self.python, "-c", f"import {module}"], env=self.env(None), capture_output=True, text=True)
        return None if done.returncode == 0 else (done.stderr.strip().splitlines() or ["fails"])[-1]


def _warm_and_interleave(sides: list[Side], rounds: int) -> dict[str, list[float]]:
    interleave(sides, 1)  # warm-up round, discarded
    return interleave(sides, rounds)


def _compare(ctx: Context, row: str, what: str, unit: str, n: int, scale: float, cases: tuple[str, str],
             commands: tuple[str, str], rounds: int, target: str, limit: Optional[float]) -> list[Line]:
    """An in-process comparison of modrt (cases[0]) with one peer (cases[1]);
    `commands` are what each side times, as shown in the report."""
    modrt_case, peer_case = cases
    peer_label = peer_case.split("-")[0]
    peer_command = f"{commands[1]} (tools/bench/worker.py {peer_case})"
    workers: list[Worker] = []
    try:
        modrt_worker = Worker(ctx.python, modrt_case, ctx.env(ctx.on))
        workers.append(modrt_worker)
        command = f"{commands[0]} (tools/bench/worker.py {modrt_case})"
        try:
            peer_worker: Optional[Worker] = Worker(ctx.python, peer_case, ctx.env(None))
            workers.append(peer_worker)
        except Unavailable as e:
            peer_worker = None
            missing = str(e)
        sides = [Side("modrt", command, modrt_worker.per_unit(n, scale))]
        if peer_worker:
            sides.append(Side(peer_label, peer_command, peer_worker.per_unit(n, scale)))
        samples = _warm_and_interleave(sides, rounds)
    finally:
        for w in workers:
            w.close()
    line = Line(id=row, what=what, command=command, unit=unit, modrt=median(samples["modrt"]),
                peer=f"{peer_label}: `{peer_command}`", target=target, limit=limit, samples=samples)
    line.notes.append(f"{rounds} rounds of {n} repetitions per side; modrt from the tree built with {ctx.on.flags}.")
    if peer_worker:
        line.peer_value = median(samples[peer_label])
        line.ratio = paired_ratio(samples["modrt"], samples[peer_label])
    else:
        line.verdict = f"peer unavailable ({missing})"
    return [line.judge()]


# ---- rows ------------------------------------------------------------------


def row_import(ctx: Context) -> list[Line]:
    rounds = ctx.rounds(8)
    py = ctx.python
    sides = [Side("modrt", 'python -c "import modrt"', measure.process_wall([py, "-c", "import modrt"], ctx.env(ctx.on), 1e3))]
    peers = []
    for module in ("tvm", "tvm_ffi"):
        why = ctx.available(module)
        if why is None:
            peers.append(module)
            sides.append(Side(module, f'python -c "import {module}"', measure.process_wall([py, "-c", f"import {module}"], ctx.env(None), 1e3)))
        else:
            say(f"import: {module} unavailable: {why}")
    sides.append(Side("python", 'python -c "pass"', measure.process_wall([py, "-c", "pass"], ctx.env(None), 1e3)))
    floor = _dso_floor_code(ctx.on)
    if floor:
        sides.append(Side("floor", "ctypes + the DSOs", measure.process_wall([py, "-c", floor], ctx.env(None), 1e3)))
    samples = _warm_and_interleave(sides, rounds)
    lines = []
    for module, limit in (("tvm", 0.05), ("tvm_ffi", 0.25)):
        line = Line(id="import", what=f"import, {ctx.on.flags}, wall", command='python -c "import modrt"', unit="ms",
                    modrt=median(samples["modrt"]), peer=f'{module}: `python -c "import {module}"`',
                    target=f"<= {limit:.2f}x {module}", limit=limit)
        if module in samples:
            line.peer_value = median(samples[module])
            line.ratio = paired_ratio(samples["modrt"], samples[module])
            line.samples = {"modrt": samples["modrt"], module: samples[module]}
        else:
            line.verdict = f"peer unavailable"
        line.notes.append(
            f"bare interpreter (`python -c \"pass\"`): {median(samples['python']):.1f} ms median; "
            f"modrt's import above it: {paired_difference(samples['modrt'], samples['python']):.1f} ms. "
            f"{rounds} rounds; every process is the bench venv's python."
        )
        if "floor" in samples and module in samples:
            line.notes.append(
                f"floor (`import ctypes` and dlopen of the core, compiler and runtime DSOs, no modrt Python): "
                f"{median(samples['floor']):.1f} ms, {paired_ratio(samples['floor'], samples[module]):.2f}x "
                f"{module}."
            )
        lines.append(line.judge())
    lines[0].notes.append("Where `import modrt` spends its time: " + _import_profile(ctx))
    return lines


def _import_profile(ctx: Context, runs: int = 3, top: int = 10) -> str:
    """The modules with the largest self time under `python -X importtime -c
    "import modrt"` (per module, the least over `runs` runs)."""
    best: dict[str, int] = {}
    for _ in range(runs):
        done = subprocess.run([ctx.python, "-X", "importtime", "-c", "import modrt"], env=ctx.env(ctx.on),
                              capture_output=True, text=True)
        for m in re.finditer(r"import time:\s+(\d+) \|\s+\d+ \|(\s*)(\S+)", done.stderr):
            name, us = m.group(3), int(m.group(1))
            best[name] = min(us, best.get(name, us))
    total = sum(best.values())
    ranked = sorted(best.items(), key=lambda kv: -kv[1])[:top]
    shown = ", ".join(f"{name} {us / 1e3:.1f}" for name, us in ranked)
    return f"{shown} (ms of self time, least of {runs} runs; all modules together: {total / 1e3:.1f} ms)."


def _dso_floor_code(tree: Tree) -> Optional[str]:
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
    rounds = ctx.rounds(25)
    py = ctx.python
    on = measure.process_reported([py, "-c", AUTOLOAD_TIMED], ctx.env(ctx.on), 1e3)
    off = measure.process_reported([py, "-c", AUTOLOAD_TIMED], ctx.env(ctx.off), 1e3)
    # The on tree against itself: how far from zero a difference lands by noise alone.
    samples = _warm_and_interleave(
        [Side("runtimes on", "autoload()", on), Side("all off", "autoload()", off), Side("runtimes on, again", "autoload()", on)],
        rounds,
    )
    diff = paired_difference(samples["runtimes on"], samples["all off"])
    control = paired_difference(samples["runtimes on"], samples["runtimes on, again"])
    line = Line(id="autoload", what=f"modrt's autoloader in `import modrt`, built with {ctx.on.flags} minus built "
                f"with all flags off", command='python -c "import modrt"', unit="ms", modrt=diff,
                target="<= 5 ms", limit=5.0, metric="value", samples=samples)
    line.notes.append(
        f"Median of {rounds} paired differences. Each sample is one fresh process that imports modrt with "
        f"MODRT_DEVICE_BACKEND_AUTOLOAD=0 and then times `modrt.backend.autoload()` itself (every in-tree hook "
        f"imported and registered, selected runtime DSOs loaded, entry points scanned). The autoloader in "
        f"the runtimes-on build takes {median(samples['runtimes on']):.1f} ms in all, most of it importing "
        f"the hooks and their codegen modules, which happens with the flags off too. Control (the "
        f"runtimes-on build against itself, same rounds): {control:+.1f} ms, the noise of this figure."
    )
    return [line.judge()]


def row_ffi_call(ctx: Context) -> list[Line]:
    return _compare(ctx, "ffi-call", "no-op C++ registry function called from Python", "ns", 50000, 1e9,
                    ("modrt-nop", "tvm_ffi-nop"),
                    ('modrt.get_global_func("testing.nop")()', 'tvm_ffi.get_global_func("testing.nop")()'),
                    ctx.rounds(15), "<= 1.0x tvm_ffi", 1.0)


def row_launch(ctx: Context) -> list[Line]:
    return _compare(ctx, "launch", "tiny OpenCL kernel on PoCL, args set + enqueue (finish per batch)", "us", 2000,
                    1e6, ("modrt-launch", "pyopencl-launch"),
                    ('mod["add_one"](a, 64, 1, 64)', "prg.add_one(queue, (64,), (64,), buf, np.int32(64))"),
                    ctx.rounds(10), "<= 0.7x pyopencl", 0.7)


def row_artifact(ctx: Context) -> list[Line]:
    lines = _compare(ctx, "artifact", "load a .modrt of 100 OpenCL kernels, call each once", "ms", 1, 1e3,
                     ("modrt-artifact", "pyopencl-artifact"),
                     ('m = modrt.load_module("kernels.modrt"); m[k](a, 64, 1, 64) for each k',
                      "prg = cl.Program(ctx, src).build(); getattr(prg, k)(queue, (64,), (64,), buf, n) for each k"),
                     ctx.rounds(5), "report", None)
    lines[0].notes.append(
        "modrt side: `modrt.load_module(path)` of a file written by `Module.export(path)` (integrity "
        "checks, manifest, then the module), then each kernel once and a device sync. The OpenCL program "
        "is built from source on load by both sides; "
        "PoCL's kernel cache and pyopencl's binary cache are warm after the warm-up round, so this is "
        "the cost of a load on a machine that has run the code before."
    )
    return lines


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
    cold_line = Line(id="build (cold)", what="cold build, fresh output base, no disk cache",
                     command="bazel build //... --config=cpu-runtimes --disk_cache=", unit="s", modrt=cold_s,
                     metric="value")
    cold_line.notes.append(f"Bazel: {_processes(cold.stderr)} (copy of the workspace, its own output base and server)")
    # Outside the backend, only actions that take its rebuilt DSO as an input
    # (packaging it, like the wheel) may re-run.
    foreign = sorted({label for label, _, packs in spawns if not label.startswith("//backends/opencl") and not packs})
    inc_line = Line(id="build (incremental)", what="after editing backends/opencl/opencl_runtime.cc",
                    command="bazel build //... --config=cpu-runtimes --disk_cache=", unit="s", modrt=inc_s,
                    target="re-runs only that backend's actions", metric="value")
    inc_line.verdict = "met" if spawns and not foreign else f"missed: also re-ran {', '.join(foreign)}"
    inc_line.notes.append(
        "Actions re-run: "
        + ("; ".join(f"{mnemonic} {label}" + (" (packages the DSO)" if packs else "") for label, mnemonic, packs in spawns)
           or "none")
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
    "ffi-call": row_ffi_call,
    "launch": row_launch,
    "artifact": row_artifact,
    "build": row_build,
}


# ---- main ------------------------------------------------------------------


def _meta(ctx: Context, load_before: str, elapsed: float) -> dict[str, str]:
    def version(module: str) -> str:
        done = subprocess.run([ctx.python, "-c", f"import importlib.metadata as m; print(m.version('{module}'))"],
                              env=ctx.env(None), capture_output=True, text=True)
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
        "python": subprocess.run([ctx.python, "-c", "import sys; print(sys.version.split()[0])"],
                                 capture_output=True, text=True).stdout.strip(),
        "peers": ", ".join(f"{m} {version(m)}" for m in ("apache-tvm", "apache-tvm-ffi", "pyopencl")),
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
            added = [Line(id=row, what=row, command="", unit="", modrt=None, verdict=f"not run: {e}")]
        for ln in added:
            ratio = f", modrt/peer {ln.ratio:.2f}x" if ln.ratio is not None else ""
            shown = f"{ln.modrt:.2f} {ln.unit}" if ln.modrt is not None else "—"
            say(f"  {ln.id}: {shown}{ratio} -> {ln.verdict}")
        lines += added
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows", nargs="+", choices=ROWS + ["all"], help="rows to run, or all")
    parser.add_argument("--reps", type=int, help="rounds per row (default: each row's own)")
    parser.add_argument("--python", help="interpreter for every side (default: the bench venv's)")
    parser.add_argument("--modrt-path", action="append", default=[], help="import roots of an existing modrt tree "
                        "(used for both the on and off trees; default: nested Bazel builds)")
    parser.add_argument("--no-install", action="store_true", help="do not create or update the venv")
    parser.add_argument("--out", type=Path, help="where BENCHMARKS.md and the chart go (default: docs/ for `all`)")
    args = parser.parse_args(argv)
    rows = ROWS if "all" in args.rows else list(dict.fromkeys(args.rows))
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
        ctx = Context(python=python, on=on, off=off, reps=args.reps, workspace=workspace)
        lines = run_rows(ctx, rows)
    finally:
        shutil.rmtree(trees, ignore_errors=True)

    if out is None:
        return 0
    out.mkdir(parents=True, exist_ok=True)
    meta = _meta(ctx, load_before, time.perf_counter() - started)
    results = out / "benchmarks.json"
    import report

    report.dump(results, lines, meta)
    chart = None
    done = subprocess.run([python, str(HERE / "chart.py"), str(results), str(out / "benchmarks.png")],
                          env=ctx.env(None), capture_output=True, text=True)
    if done.returncode == 0:
        chart = "benchmarks.png"
    else:
        say(f"no chart: {(done.stderr.strip().splitlines() or ['chart.py failed'])[-1]}")
    analysis = (HERE / "analysis.md").read_text() if (HERE / "analysis.md").exists() else ""
    doc = report.write(out, lines, meta, analysis, chart)
    say(f"wrote {doc}" + (f" and {out / chart}" if chart else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
