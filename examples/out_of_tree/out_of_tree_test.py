"""The out-of-tree backend example, found through a real entry point: a
dist-info directory on the path declaring `modrt.backends`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from modrt_testing import run_python

LIBRARY_DIR = Path(os.environ["TEST_SRCDIR"], "_main", "examples", "out_of_tree")
MODRT_BINARY = Path(os.environ["TEST_SRCDIR"], "_main", "tools", "modrt")


@pytest.fixture()
def installed(tmp_path: Path) -> dict[str, str]:
    """The environment of a process in which modrt-scale is installed."""
    dist = tmp_path / "site" / "modrt_scale-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: modrt-scale\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[modrt.backends]\nscale = modrt_scale:register\n")
    return {
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), os.environ["PYTHONPATH"]]),
        "MODRT_LIBRARY_PATH": str(LIBRARY_DIR),
    }


def test_entry_point_loads_compiles_runs_and_exports(installed: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "scale.modrt"
    code = f"""
import json, numpy as np, modrt
m = modrt.compile("2.5", "scale", ["scale(float32*, int32)"])
x = modrt.tensor(np.arange(4, dtype="float32"))
m["scale"](x, 4)
m.export({str(path)!r})
entry = modrt.artifact.read_manifest({str(path)!r}).modules[0]
print(json.dumps({{"loaded": modrt.backend.loaded().get("scale"), "x": x.numpy().tolist(),
                  "manifest": [entry.kind, entry.shape, entry.fmt, entry.functions[0].signature]}}))
"""
    proc = run_python(code, env=installed)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["loaded"] == "entry point scale (modrt_scale:register)"
    assert out["x"] == [0.0, 2.5, 5.0, 7.5]
    assert out["manifest"] == ["scale", "single-binary", "factor", "scale(float32*, int32)"]

    again = run_python(
        f"""
import numpy as np, modrt
x = modrt.tensor(np.ones(3, dtype="float32"))
modrt.load_module({str(path)!r})["scale"](x, 3)
print(x.numpy().tolist())
""",
        env=installed,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "[2.5, 2.5, 2.5]"

    # Without the backend installed, the artifact's kind has no loader.
    absent = run_python(f"import modrt; modrt.load_module({str(path)!r})")
    assert absent.returncode != 0
    assert "module 0 (scale): cannot load a module of kind 'scale'" in absent.stderr


def test_bad_code_and_signatures_are_refused(installed: dict[str, str]) -> None:
    code = """
import modrt
for source, sig in [("two", "scale(float32*, int32)"), ("2", "scale(float32*, float32*)")]:
    try:
        modrt.compile(source, "scale", [sig])
    except ValueError as e:
        print(e)
"""
    proc = run_python(code, env=installed)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "a scale module's code is a number, got 'two'",
        "scale functions take (float32*, int32), got scale(float32*, float32*)",
    ]


def test_cli_lists_the_out_of_tree_backend(installed: dict[str, str]) -> None:
    env = {**os.environ, **installed}
    info = subprocess.run([str(MODRT_BINARY), "info", "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert info.returncode == 0, info.stderr
    rows = {r["backend"]: r for r in json.loads(info.stdout)}
    assert rows["scale"]["loaded"] and rows["scale"]["dso"] == "entry point scale (modrt_scale:register)"
    demo = subprocess.run([str(MODRT_BINARY), "demo"], capture_output=True, text=True, env=env, timeout=600)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    (row,) = [line for line in demo.stdout.splitlines() if line.startswith("scale ")]
    assert "no demo kernel: an out-of-tree backend" in row
