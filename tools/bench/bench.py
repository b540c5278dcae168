"""modrt against its peers and the floor: `tools/bazel run //tools/bench -- all`.

Installs the peers (apache-tvm, apache-tvm-ffi, pyopencl, dawn-python for
tinygrad's WEBGPU device, and matplotlib for the chart) into a venv inside the
toolchain root (wgpu-py comes with the root, CuPy only where it is installed),
builds modrt trees with the backend flags on
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
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import distributed_rows
import process_rows
import report
from context import C_FLOORS, HERE, REPEATS, VENV, Context, Tree, build_floors, build_tree, ensure_venv, say
from measure import Unavailable
from report import UNSTABLE, Line
from rows import Table
from worker_common import WGPU_ROOT

TABLE = Table()
# How each row is measured: process rows in code, the rest from rows.toml.
ROW_FUNCTIONS: dict[str, Callable[[Context], list[Line]]] = {
    "import": process_rows.row_import,
    "autoload": process_rows.row_autoload,
    "build": process_rows.row_build,
    "distributed-allreduce": distributed_rows.row_allreduce,
    "distributed-launch": distributed_rows.row_launch,
    **{row: TABLE.runner(row) for row in TABLE.specs},
}
ROWS = TABLE.order
GROUPS = TABLE.groups
if set(ROWS) != set(ROW_FUNCTIONS):
    raise ValueError(f"rows.toml and bench.py disagree on the rows: {sorted(set(ROWS) ^ set(ROW_FUNCTIONS))}")


# Prints the version of the distribution named argv[1], or of any distribution
# named argv[1]-* (CuPy ships as cupy-cuda12x, cupy-cuda13x, ...), or of the
# module of that name when it imports without metadata.
_VERSION_PROBE = """
import importlib, importlib.metadata as m, sys
name = sys.argv[1]
found = sorted(
    f"{d.metadata['Name']} {d.version}"
    for d in m.distributions()
    if (d.metadata["Name"] or "").lower() == name or (d.metadata["Name"] or "").lower().startswith(name + "-")
)
if found:
    print(", ".join(dict.fromkeys(found)))
else:
    try:
        print(f"{name} {importlib.import_module(name).__version__} (no package metadata)")
    except Exception:
        pass
"""


def _command(rows: Sequence[str]) -> str:
    """The command line that ran these rows, as the report names it."""
    return "tools/bazel run --config=all-runtimes -c opt //tools/bench -- " + " ".join(rows)


def _meta(ctx: Context, command: str, load_before: str, elapsed: float) -> dict[str, str]:
    def version(name: str) -> str:
        env = ctx.env(None)
        env["PYTHONPATH"] = WGPU_ROOT  # wgpu-py, IREE
        done = subprocess.run([ctx.python, "-c", _VERSION_PROBE, name], env=env, capture_output=True, text=True)
        return done.stdout.strip() or f"{name} not installed"

    cpu = "unknown"
    if os.path.exists("/proc/cpuinfo"):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "command": command,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, {cpu}, {platform.system()} {platform.release()}",
        "load average (1 min) before / after the run": f"{load_before} / {_load()}",
        "python": subprocess.run(
            [ctx.python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True
        ).stdout.strip(),
        "peers": "; ".join(
            version(m) for m in ("apache-tvm", "apache-tvm-ffi", "pyopencl", "wgpu", "cupy", "iree-base-runtime")
        ),
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
            what = TABLE.specs[row].what if row in TABLE.specs else row
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
    meta = _meta(ctx, _command(args.rows), load_before, time.perf_counter() - started)
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
