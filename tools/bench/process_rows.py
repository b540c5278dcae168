"""The rows that time whole processes (rows.toml marks them `runs =
"process"`): import, autoload, and the incremental build."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import measure
from context import Context, Tree, bazel, say
from measure import Side, Unavailable, median, paired_difference
from report import Line


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
