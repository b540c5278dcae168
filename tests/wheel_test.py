"""The wheels, installed into clean venvs and used outside Bazel: modrt, and
the backend wheels (modrt-opencl, modrt-vulkan, ...) that `import modrt` finds
by presence.

No network here: the venv is made with --system-site-packages (for Debian's
numpy, absl-py and pip) and the wheels are installed with `pip install
--no-index`; modrt itself comes only from the wheels.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import modrt

RUNFILES = Path(os.environ["TEST_SRCDIR"], "_main")
WHEELS = sorted((RUNFILES / "python").glob("modrt-*.whl"))
BACKEND_WHEELS = {w.name.split("-")[0].removeprefix("modrt_"): w for w in RUNFILES.glob("backends/*/modrt_*.whl")}


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: nothing pointing into Bazel's tree."""
    drop = ("PYTHON", "RUNFILES", "BUILD_", "TEST_", "BAZEL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    env.update(extra)
    return env


def make_venv(root: Path, *wheels: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(root)], check=True)
    if wheels:
        install = pip(root, "install", *map(str, wheels))
        assert install.returncode == 0, install.stdout + install.stderr
    return root


def run_in(venv: Path, program: str, *args: str, timeout: int = 300, **env: str) -> subprocess.CompletedProcess:
    """Runs the venv's bin/`program` in the venv, in a user's environment plus `env`."""
    return subprocess.run(
        [str(venv / "bin" / program), *args],
        capture_output=True,
        text=True,
        env=clean_env(**env),
        cwd=venv,
        timeout=timeout,
    )


def pip(venv: Path, *args: str) -> subprocess.CompletedProcess:
    return run_in(venv, "python", "-m", "pip", *args)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert len(WHEELS) == 1, WHEELS
    return make_venv(tmp_path_factory.mktemp("venv") / "venv", WHEELS[0])


def python(venv: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    return run_in(venv, "python", "-c", code, **env)


def info(venv: Path, **env: str) -> dict[str, dict]:
    """`modrt info --json`, which must succeed, as rows by backend."""
    proc = run_in(venv, "modrt", "info", "--json", **env)
    assert proc.returncode == 0, proc.stderr
    return {r["backend"]: r for r in json.loads(proc.stdout)}


def doctor(venv: Path) -> tuple[subprocess.CompletedProcess, set[tuple[str, str, str]]]:
    """`modrt doctor --json` and its file rows as (state, file name, recorded in)."""
    proc = run_in(venv, "modrt", "doctor", "--json")
    rows = json.loads(proc.stdout)["files"]
    return proc, {(r["state"], Path(r["path"]).name, r["recorded_in"]) for r in rows}


def test_import_comes_from_the_wheel(venv: Path) -> None:
    proc = python(
        venv, "import modrt, modrt._ffi as f; print(modrt.__file__); print(f.find_library(f._selection.CORE))"
    )
    assert proc.returncode == 0, proc.stderr
    module_file, core = proc.stdout.split()
    site = venv / "lib"
    assert module_file.startswith(str(site)) and core.startswith(str(site))
    assert core.endswith("/modrt/lib/libmodrt_runtime.so")


def test_the_extra_dso_ships_and_loads(venv: Path) -> None:
    proc = python(
        venv,
        "import numpy as np, modrt\n"
        "i = modrt.empty((3,), 'int64')\n"
        "modrt.get_global_func('contrib.sort.argsort')(modrt.tensor(np.array([3., 1., 2.], 'float32')), i)\n"
        "print(i.numpy().tolist())",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[1, 2, 0]"


def test_modrt_info_outside_bazel(venv: Path) -> None:
    rows = info(venv)
    assert rows["cpu"]["loaded"] and rows["cpu"]["dso"].startswith(str(venv))
    for name, relative in modrt._selection.RUNTIMES.items():
        if relative:  # selected in this build: shipped in the wheel and loaded from it
            assert rows[name]["loaded"] and rows[name]["dso"].startswith(str(venv)), rows[name]
        else:
            assert not rows[name]["loaded"] and rows[name]["reason"]


def test_compile_export_and_load_outside_bazel(venv: Path) -> None:
    code = """
import numpy as np, modrt
m = modrt.compile("void twice(float* x, int n) { for (int i = 0; i < n; ++i) x[i] *= 2; }", "cpu",
                  ["twice(float32*, int32)"])
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
        found = python(
            venv,
            "import modrt, modrt._ffi as f; print(f.find_library(f._selection.CORE))",
            MODRT_LIBRARY_PATH=str(extra),
        )
        assert found.returncode == 0, found.stderr
        assert found.stdout.strip() == str(extra / "libmodrt_runtime.so")
    finally:
        shutil.move(extra / packaged.name, packaged)


def test_modrt_demo_outside_bazel(venv: Path) -> None:
    proc = run_in(venv, "modrt", "demo", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "every real result matches numpy" in proc.stdout


def test_modrt_doctor_checks_the_installed_wheel(venv: Path) -> None:
    proc, rows = doctor(venv)
    assert proc.returncode == 0, rows
    record = next(r[2] for r in rows if r[2].endswith("/RECORD"))
    assert ("ok", "libmodrt_runtime_extra.so", "build") in rows
    assert ("ok", "libmodrt_runtime_extra.so", record) in rows
    (extra,) = venv.glob("lib/python*/site-packages/modrt/lib/libmodrt_runtime_extra.so")
    original = extra.read_bytes()
    try:
        extra.write_bytes(original[: len(original) // 2])  # an interrupted install
        proc, rows = doctor(venv)
    finally:
        extra.write_bytes(original)
    assert proc.returncode == 1
    assert ("modified", "libmodrt_runtime_extra.so", "build") in rows
    assert ("modified", "libmodrt_runtime_extra.so", record) in rows


# ---- backend wheels ----------------------------------------------------------

OPENCL_VADD = """
import numpy as np, modrt
src = '__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {' \\
      ' int i = get_global_id(0); if (i < n) c[i] = a[i] + b[i]; }'
mod = modrt.compile(src, "opencl", ["vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"])
dev = modrt.device("opencl")
a = np.arange(256, dtype="float32")
c = modrt.empty((256,), "float32", dev)
mod["vadd"](modrt.tensor(a, dev), modrt.tensor(a, dev), c, 256, 4, 64)
assert (c.numpy() == a + a).all()
print(modrt.backend.runtime_status("opencl").origin)
"""


def site_packages(venv: Path) -> Path:
    (site,) = venv.glob("lib/python*/site-packages")
    return site


@pytest.fixture(scope="module")
def backend_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """modrt (bundling whatever runtimes the flags selected) plus modrt-opencl and modrt-vulkan."""
    return make_venv(
        tmp_path_factory.mktemp("bvenv") / "venv", WHEELS[0], BACKEND_WHEELS["opencl"], BACKEND_WHEELS["vulkan"]
    )


def test_every_backend_wheel_requires_modrt_of_the_plugin_abi_major() -> None:
    assert set(BACKEND_WHEELS) >= {"opencl", "vulkan", "cuda", "rocm", "hexagon"}
    major = modrt._version.PLUGIN_ABI[0]
    for name, wheel in BACKEND_WHEELS.items():
        with zipfile.ZipFile(wheel) as z:
            metadata = z.read(f"modrt_{name}-{modrt.__version__}.dist-info/METADATA").decode()
            assert f"modrt_{name}/libmodrt_runtime_{name}.so" in z.namelist()
        assert f"Name: modrt-{name}" in metadata
        assert f"Requires-Dist: modrt<{major + 1},>={major}" in metadata.splitlines()


def test_a_backend_wheel_alone_is_refused_by_its_requirement(tmp_path: Path) -> None:
    root = make_venv(tmp_path / "venv")
    proc = pip(root, "install", str(BACKEND_WHEELS["opencl"]))
    assert proc.returncode != 0
    assert "modrt<2,>=1" in proc.stdout + proc.stderr


def test_backend_wheels_load_their_runtimes_and_run(backend_venv: Path) -> None:
    rows = info(backend_venv)
    site = site_packages(backend_venv)
    for name in ("opencl", "vulkan"):
        assert rows[name]["loaded"], rows[name]
        # The wheel's copy comes before modrt's own lib/ (where a build with the flags on bundles one too).
        assert rows[name]["origin"] == f"wheel modrt-{name} {modrt.__version__}", rows[name]
        assert rows[name]["dso"] == str(site / f"modrt_{name}" / f"libmodrt_runtime_{name}.so")
        assert rows[name]["copies"][0]["state"] == "loaded"
    proc = python(backend_venv, OPENCL_VADD)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"wheel modrt-opencl {modrt.__version__}"
    # `modrt doctor` checks the backend wheels' DSOs against their RECORDs too.
    checked, rows = doctor(backend_venv)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for name in ("opencl", "vulkan"):
        assert ("ok", f"libmodrt_runtime_{name}.so", f"modrt_{name}-{modrt.__version__}.dist-info/RECORD") in rows


def test_two_copies_the_first_in_order_loads_and_info_names_both(backend_venv: Path, tmp_path: Path) -> None:
    site = site_packages(backend_venv)
    mine = tmp_path / "libmodrt_runtime_opencl.so"
    shutil.copy(site / "modrt_opencl" / "libmodrt_runtime_opencl.so", mine)
    rows = info(backend_venv, MODRT_LIBRARY_PATH=str(tmp_path))
    copies = rows["opencl"]["copies"]
    assert rows["opencl"]["loaded"] and rows["opencl"]["origin"] == "MODRT_LIBRARY_PATH"
    assert copies[0] == {"origin": "MODRT_LIBRARY_PATH", "path": str(mine), "state": "loaded"}
    assert copies[1]["origin"] == f"wheel modrt-opencl {modrt.__version__}"
    assert copies[1]["state"] == "not loaded: the copy from MODRT_LIBRARY_PATH was loaded first"
    table = run_in(backend_venv, "modrt", "info", MODRT_LIBRARY_PATH=str(tmp_path))
    assert table.returncode == 0, table.stderr
    # The copies table numbers the copies; their paths follow it whole, one a line.
    path_lines = [line.split(None, 1) for line in table.stdout.splitlines() if line.strip()[:1].isdigit()]
    paths = [parts[1] for parts in path_lines if len(parts) == 2]
    assert str(mine) in paths, table.stdout
    assert any(p.startswith(str(site / "modrt_opencl")) for p in paths), table.stdout


def rewrite_wheel(wheel: Path, out_dir: Path, version: str, edit: dict[str, callable]) -> Path:
    """A copy of `wheel` as version `version`, each file in `edit` passed through
    its function, with a RECORD that matches."""
    name, old_version, rest = wheel.name.split("-", 2)
    entries: dict[str, bytes] = {}
    with zipfile.ZipFile(wheel) as z:
        for item in z.namelist():
            entries[item.replace(f"{name}-{old_version}.dist-info", f"{name}-{version}.dist-info")] = z.read(item)
    for path, fn in edit.items():
        entries[path] = fn(entries[path])
    record = f"{name}-{version}.dist-info/RECORD"
    lines = []
    for path, data in entries.items():
        if path != record:
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            lines.append(f"{path},sha256={digest},{len(data)}")
    entries[record] = ("\n".join(lines + [f"{record},,"]) + "\n").encode()
    out = out_dir / f"{name}-{version}-{rest}"
    with zipfile.ZipFile(out, "w") as z:
        for path, data in entries.items():
            z.writestr(path, data)
    return out


def test_a_backend_wheel_for_another_modrt_major_is_refused_then_skipped_with_a_warning(tmp_path: Path) -> None:
    major = modrt._version.PLUGIN_ABI[0]
    other = f"{major + 1}.0.0"
    wheel = rewrite_wheel(
        BACKEND_WHEELS["opencl"],
        tmp_path,
        other,
        {
            f"modrt_opencl-{other}.dist-info/METADATA": lambda b: (
                b.decode()
                .replace(f"modrt<{major + 1},>={major}", f"modrt<{major + 2},>={major + 1}")
                .replace(f"Version: {modrt.__version__}", f"Version: {other}")
                .encode()
            ),
            "modrt_opencl/runtime.txt": lambda b: (
                b.decode()
                .replace(f"plugin_abi={major}.", f"plugin_abi={major + 1}.")
                .replace(f"version={modrt.__version__}", f"version={other}")
                .encode()
            ),
        },
    )
    root = make_venv(tmp_path / "venv", WHEELS[0])
    refused = pip(root, "install", str(wheel))
    assert refused.returncode != 0 and f"modrt<{major + 2},>={major + 1}" in refused.stdout + refused.stderr
    forced = pip(root, "install", "--no-deps", str(wheel))
    assert forced.returncode == 0, forced.stdout + forced.stderr
    proc = python(
        root,
        "import modrt; s = modrt.backend.runtime_status('opencl'); "
        "print(s.loaded, s.origin or '-', s.copies[0].state.split(':')[0], sep='|')",
    )
    assert proc.returncode == 0, proc.stderr
    # Skipped; the copy modrt's own lib/ has when this build selected OpenCL loads instead.
    bundled = bool(modrt._selection.RUNTIMES["opencl"])
    assert proc.stdout.strip().split("|") == [str(bundled), "modrt lib/" if bundled else "-", "skipped"]
    assert (
        f"modrt-opencl {other} was built for modrt plugin ABI {major + 1}.{modrt._version.PLUGIN_ABI[1]}" in proc.stderr
    )
    assert f"this modrt {modrt.__version__} has plugin ABI {major}.{modrt._version.PLUGIN_ABI[1]}" in proc.stderr


def test_a_damaged_or_missing_dso_in_a_backend_wheel_is_a_warning_naming_it(backend_venv: Path) -> None:
    dso = site_packages(backend_venv) / "modrt_opencl" / "libmodrt_runtime_opencl.so"
    original = dso.read_bytes()
    code = "import modrt; print(modrt.backend.runtime_status('opencl').loaded)"
    try:
        dso.write_bytes(original[: len(original) // 3])  # an interrupted install
        cut = python(backend_venv, code)
        dso.unlink()
        gone = python(backend_venv, code)
    finally:
        dso.write_bytes(original)
    for proc in (cut, gone):
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == ("False" if not modrt._selection.RUNTIMES["opencl"] else "True")
        # The file's name first, then where it is.
        assert (
            f"(backend library in {dso.parent})" in proc.stderr
            or f"{dso.name} is missing (from {dso.parent}" in proc.stderr
            # The cut file, refused by the digest the wheel's RECORD holds for it.
            or (f"{dso.name} does not match the SHA-256 recorded for it in" in proc.stderr and str(dso) in proc.stderr)
        )
        assert "RuntimeWarning" in proc.stderr
    assert f"{dso.name} is missing (from {dso.parent}; reinstall modrt-opencl)" in gone.stderr


def test_uninstalling_a_backend_wheel_removes_its_runtime(tmp_path: Path) -> None:
    root = make_venv(tmp_path / "venv", WHEELS[0], BACKEND_WHEELS["vulkan"])
    assert info(root)["vulkan"]["origin"] == f"wheel modrt-vulkan {modrt.__version__}"
    proc = pip(root, "uninstall", "-y", "modrt-vulkan")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (site_packages(root) / "modrt_vulkan").exists()
    after = python(root, "import modrt; print(modrt.backend.runtime_status('vulkan').origin or '-')")
    assert after.returncode == 0 and "Warning" not in after.stderr, after.stderr
    expected = "-" if not modrt._selection.RUNTIMES["vulkan"] else "modrt lib/"
    assert after.stdout.strip() == expected
