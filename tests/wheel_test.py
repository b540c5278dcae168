"""The wheel, installed into a clean venv and used outside Bazel.

No network here: the venv is made with --system-site-packages (for Debian's
numpy, absl-py and pip) and the wheel is installed with `pip install
--no-index`; modrt itself comes only from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import modrt

WHEELS = sorted(Path(os.environ["TEST_SRCDIR"], "_main", "python").glob("modrt-*.whl"))


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: nothing pointing into Bazel's tree."""
    drop = ("PYTHON", "RUNFILES", "BUILD_", "TEST_", "BAZEL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert len(WHEELS) == 1, WHEELS
    root = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(root)], check=True)
    install = subprocess.run(
        [str(root / "bin" / "python"), "-m", "pip", "install", str(WHEELS[0])],
        capture_output=True, text=True, env=clean_env(), cwd=root,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    return root


def python(venv: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                          env=clean_env(**env), cwd=venv, timeout=300)


def test_import_comes_from_the_wheel(venv: Path) -> None:
    proc = python(venv, "import modrt, modrt._ffi as f; print(modrt.__file__); print(f.find_library(f._selection.CORE))")
    assert proc.returncode == 0, proc.stderr
    module_file, core = proc.stdout.split()
    site = venv / "lib"
    assert module_file.startswith(str(site)) and core.startswith(str(site))
    assert core.endswith("/modrt/lib/libmodrt_runtime.so")


def test_the_extra_dso_ships_and_loads(venv: Path) -> None:
    proc = python(venv, "import numpy as np, modrt\n"
                        "i = modrt.empty((3,), 'int64')\n"
                        "modrt.get_global_func('contrib.sort.argsort')(modrt.tensor(np.array([3., 1., 2.], 'float32')), i)\n"
                        "print(i.numpy().tolist())")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[1, 2, 0]"


def test_modrt_info_outside_bazel(venv: Path) -> None:
    proc = subprocess.run([str(venv / "bin" / "modrt"), "info", "--json"], capture_output=True, text=True,
                          env=clean_env(), cwd=venv, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = {r["backend"]: r for r in json.loads(proc.stdout)}
    assert rows["cpu"]["loaded"] and rows["cpu"]["dso"].startswith(str(venv))
    for name, relative in modrt._selection.RUNTIMES.items():
        if relative:  # selected in this build: shipped in the wheel and loaded from it
            assert rows[name]["loaded"] and rows[name]["dso"].startswith(str(venv)), rows[name]
        else:
            assert not rows[name]["loaded"] and rows[name]["reason"]


def test_compile_export_and_load_outside_bazel(venv: Path) -> None:
    code = """
import numpy as np, modrt
m = modrt.compile("void twice(float* x, int n) { for (int i = 0; i < n; ++i) x[i] *= 2; }", "cpu", ["twice(float32*, int32)"])
m.export("twice.modrt")
x = modrt.tensor(np.arange(4, dtype="float32"))
modrt.load_module("twice.modrt")["twice"](x, 4)
print(x.numpy().tolist())
"""
    proc = python(venv, code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[0.0, 2.0, 4.0, 6.0]"


def test_modrt_library_path_is_searched(venv: Path, tmp_path: Path) -> None:
    (packaged,) = venv.glob("lib/python*/site-packages/modrt/lib/libmodrt_runtime.so")
    extra = tmp_path / "extra"
    extra.mkdir()
    shutil.move(packaged, extra / packaged.name)
    try:
        missing = python(venv, "import modrt")
        assert missing.returncode != 0 and "cannot find libmodrt_runtime.so" in missing.stderr
        found = python(venv, "import modrt, modrt._ffi as f; print(f.find_library(f._selection.CORE))",
                       MODRT_LIBRARY_PATH=str(extra))
        assert found.returncode == 0, found.stderr
        assert found.stdout.strip() == str(extra / "libmodrt_runtime.so")
    finally:
        shutil.move(extra / packaged.name, packaged)


def test_modrt_demo_outside_bazel(venv: Path) -> None:
    proc = subprocess.run([str(venv / "bin" / "modrt"), "demo"], capture_output=True, text=True,
                          env=clean_env(), cwd=venv, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "every real result matches numpy" in proc.stdout


def test_modrt_doctor_checks_the_installed_wheel(venv: Path) -> None:
    def doctor() -> tuple[int, set[tuple[str, str, str]]]:
        proc = subprocess.run([str(venv / "bin" / "modrt"), "doctor", "--json"], capture_output=True, text=True,
                              env=clean_env(), cwd=venv, timeout=300)
        rows = json.loads(proc.stdout)["files"]
        return proc.returncode, {(r["state"], Path(r["path"]).name, r["recorded_in"]) for r in rows}

    code, rows = doctor()
    assert code == 0, rows
    record = next(r[2] for r in rows if r[2].endswith("/RECORD"))
    assert ("ok", "libmodrt_runtime_extra.so", "build") in rows
    assert ("ok", "libmodrt_runtime_extra.so", record) in rows
    (extra,) = venv.glob("lib/python*/site-packages/modrt/lib/libmodrt_runtime_extra.so")
    original = extra.read_bytes()
    try:
        extra.write_bytes(original[: len(original) // 2])  # an interrupted install
        code, rows = doctor()
    finally:
        extra.write_bytes(original)
    assert code == 1
    assert ("modified", "libmodrt_runtime_extra.so", "build") in rows
    assert ("modified", "libmodrt_runtime_extra.so", record) in rows
