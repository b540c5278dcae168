"""modrt demo: one kernel on every backend, compiled, exported, reloaded, checked.

usage: modrt demo [--n=4096] [--block=64] [--keep=DIR] [--verbose]

For the host and every backend modrt knows (in-tree, and out-of-tree ones
loaded from entry points), compiles c = a + b: a real module where the
backend's runtime is loaded here, its fallback otherwise. Exports each to a
.modrt file, then, in a fresh process, loads every file and runs it on every
device of its kind that exists here, checking the result against numpy.
Prints a table; exits 1 if any real module fails to load or gives a wrong
result (fallback modules are expected to be refused where their runtime is
absent). The table fits 100 columns: long reasons are shortened, and
--verbose prints them in full, wrapped. Source that could not be checked at
compile time (Metal off macOS) is listed under the table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings
from typing import Any

from . import _common
from ._demo_kernels import demo_kernel
from ._flags import FLAGS, define


def define_flags() -> None:
    from absl import flags

    define(flags.DEFINE_integer, "n", 4096, "Elements per vector.", lower_bound=1)
    define(flags.DEFINE_integer, "block", 64, "Threads per block on devices.", lower_bound=1)
    define(flags.DEFINE_string, "keep", None, "Write the .modrt files to this directory and keep them.")
    define(flags.DEFINE_bool, "verbose", False, "Print every reason in full (wrapped), not shortened.")


class Progress:
    """`[stage i/N] what` on stderr: one line rewritten in place on a
    terminal, a line per step otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()

    def step(self, stage: str, done: int, total: int, what: str) -> None:
        line = f"[{stage} {done}/{total}] {what}"
        if self.tty:
            sys.stderr.write("\r\033[K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def targets(modrt: Any) -> list[str]:
    """The host, every in-tree backend, then every other loaded backend."""
    names = ["cpu"] + modrt.backend.in_tree()
    return names + [n for n in modrt.backend.loaded() if n not in names]


def compile_all(modrt: Any, names: list[str], out_dir: str, progress: Progress) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(names, 1):
        progress.step("compile", i, len(names), name)
        row: dict[str, Any] = {"target": name}
        rows[name] = row
        kernel = demo_kernel(modrt, name)
        if kernel is None:
            row["module"] = "-"
            row["result"] = "no demo kernel: an out-of-tree backend"
            continue
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                module = modrt.compile(kernel.source, name, [kernel.signature])
        except Exception as e:  # noqa: BLE001 - a missing compiler is a row, not a crash
            row["module"] = "-"
            row["result"] = f"not compiled: {str(e).strip().splitlines()[0]}"
            continue
        row["notes"] = [str(w.message).removeprefix("modrt: ") for w in caught]
        row["module"] = "fallback" if module.is_fallback else "real"
        path = os.path.join(out_dir, f"{name}.modrt")
        module.export(path)
        entry = modrt.artifact.read_manifest(path).modules[0]
        row["artifact"] = f"{entry.fmt}, {_common.human_size(os.path.getsize(path))}"
        row["path"] = path
        row["launched"] = kernel.launched
    return rows


def run_fresh(rows: dict[str, dict[str, Any]], out_dir: str, progress: Progress) -> None:
    """Loads and runs every artifact in a new interpreter; fills the rows."""
    exported = [r for r in rows.values() if "path" in r]
    plan = {
        "n": FLAGS.n,
        "block": FLAGS.block,
        "artifacts": [{"target": r["target"], "path": r["path"], "launched": r["launched"]} for r in exported],
    }
    plan_path = os.path.join(out_dir, "plan.json")
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    proc = subprocess.Popen(
        [sys.executable, "-m", "modrt_cli._demo_child", plan_path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    loads = 0
    for line in proc.stdout:
        event = json.loads(line)
        row = rows[event["target"]]
        if event["event"] == "load":
            loads += 1
            progress.step("load", loads, len(exported), f"{event['target']}, in a fresh process")
            row["loaded"] = event["loaded"]
            row["load_error"] = event.get("error", "")
        else:
            progress.step("run", loads, len(exported), f"{event['target']} on {event['device'] or 'no device'}")
            row.setdefault("runs", []).append(event)
    stderr = proc.stderr.read() if proc.stderr else ""
    if proc.wait() != 0:
        raise RuntimeError(f"the fresh process failed (exit {proc.returncode}):\n{stderr}")


def table_rows(modrt: Any, rows: dict[str, dict[str, Any]]) -> tuple[list[list[str]], bool]:
    """Table lines, and whether every real result is right."""
    lines: list[list[str]] = []
    all_right = True
    for row in rows.values():
        base = [row["target"], row["module"], row.get("artifact", "-")]
        if "path" not in row:
            lines.append(base + ["-", "-", row["result"]])
            continue
        real = row["module"] == "real"
        if not row.get("loaded"):
            why = row.get("load_error", "not loaded")
            if real:
                all_right = False
                lines.append(base + ["FAILED", "-", why])
            else:
                # The refusal names the DSO and the flag; the table says why it is absent.
                status = modrt.backend.runtime_status(row["target"])
                lines.append(base + ["refused", "-", f"fallback; {status.reason or why}"])
            continue
        for run in row.get("runs", []):
            if run["ok"] is None:
                result = f"not run: {run['error']}"
            elif run["ok"]:
                result = f"matches numpy (max error {run['max_error']:.1e})"
            else:
                all_right = False
                error = run.get("error") or f"max error {run['max_error']:.3g}"
                result = f"WRONG: {error}"
            lines.append(base + ["yes", run["device"] or "-", result])
    return lines, all_right


def main(argv: list[str]) -> int:
    if argv:
        return _common.fail(f"demo takes no arguments, got {argv}", 2)
    modrt = _common.import_modrt()
    names = targets(modrt)
    progress = Progress()
    with tempfile.TemporaryDirectory(prefix="modrt-demo-") as tmp:
        out_dir = FLAGS.keep or tmp
        os.makedirs(out_dir, exist_ok=True)
        rows = compile_all(modrt, names, out_dir, progress)
        try:
            run_fresh(rows, out_dir, progress)
        finally:
            progress.finish()
    lines, all_right = table_rows(modrt, rows)
    print(
        f"c = a + b, {FLAGS.n} float32 elements: compiled here, exported to .modrt,\nloaded and run in a fresh process"
    )
    table, shortened = _common.fitted_table(
        ["target", "module", "artifact", "loaded", "device", "result"], lines, flexible=(4, 5), verbose=FLAGS.verbose
    )
    print(table)
    notes = [f"{r['target']}: {note}" for r in rows.values() for note in r.get("notes", [])]
    if notes:
        print()
        for note in notes:
            print(_common.wrapped(note))
    if shortened:
        print("(long reasons are shortened; --verbose prints them in full)")
    real = sum(1 for r in rows.values() for run in r.get("runs", []) if run["ok"] is not None)
    print(
        f"\n{real} real run{'s' if real != 1 else ''}; "
        + ("every real result matches numpy" if all_right else "SOME REAL RESULT IS WRONG OR FAILED")
    )
    return 0 if all_right else 1
