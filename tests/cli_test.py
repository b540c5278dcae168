"""The `modrt` command line, run as users run it: the //tools:modrt binary."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import modrt
import modrt_testing
from modrt_cli import demo
from modrt_testing import copy_tree, run_python

BINARY = Path(os.environ["TEST_SRCDIR"], "_main", "tools", "modrt")
COMMANDS = ["info", "compile", "inspect", "run", "demo", "doctor", "keygen", "sign"]
C_SOURCE = (
    "void vadd(const float* a, const float* b, float* c, int n) { for (int i = 0; i < n; ++i) c[i] = a[i] + b[i]; }\n"
)
C_SIGNATURE = "vadd(float32*, float32*, float32*, int32)"
CL_SOURCE = modrt_testing.VADD_CL
CL_SIGNATURE = modrt_testing.VADD_CL_SIGNATURE
# What an OpenCL module keeps: the given signature with the names and const its kernel declares.
CL_KEPT = "vadd(const float32* a, const float32* b, float32* c, int32 n; blockIdx.x, threadIdx.x)"


def opencl_loaded() -> bool:
    return modrt.backend.runtime_status("opencl").loaded


def modrt_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BINARY), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture()
def c_file(tmp_path: Path) -> Path:
    path = tmp_path / "vadd.c"
    path.write_text(C_SOURCE)
    return path


def test_overview_lists_every_command() -> None:
    proc = modrt_cli("--help")
    assert proc.returncode == 0
    for command in COMMANDS:
        assert f"  {command} " in proc.stdout
    assert modrt_cli().returncode == 2
    unknown = modrt_cli("frobnicate")
    assert unknown.returncode == 2 and "unknown command 'frobnicate'" in unknown.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str) -> None:
    proc = modrt_cli(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert f"usage: modrt {command}" in proc.stdout
    assert f"modrt {command}:" in proc.stdout  # its own flags are listed


def test_info_reports_every_backend_with_reasons() -> None:
    proc = modrt_cli("info", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["backend"]: r for r in json.loads(proc.stdout)}
    assert list(rows) == ["cpu"] + modrt.backend.in_tree()
    assert rows["cpu"]["loaded"] and rows["cpu"]["devices"][0]["target"] == "Target('cpu')"
    for row in rows.values():
        if not (row["selected"] and row["dso_found"] and row["loaded"] and row["driver_found"]):
            assert row["reason"], f"{row['backend']} says no without a reason"
    opencl = rows["opencl"]
    if opencl_loaded():
        assert opencl["driver_found"] and opencl["devices"], opencl
        device = opencl["devices"][0]
        assert device["name"] and device["max_threads_per_block"] > 0
        assert device["target"].startswith("Target('opencl'")
    else:
        assert not opencl["selected"] and "--//backends:opencl=off" in opencl["reason"]
    text = modrt_cli("info")
    assert text.returncode == 0
    header = text.stdout.splitlines()[0].split()
    assert header[:2] == ["backend", "selected"]
    assert "why not" in text.stdout


def squeeze(text: str) -> str:
    return "".join(text.split())


def table_lines(text: str) -> list[str]:
    """The lines of `modrt info` but the numbered paths of runtimes found more
    than once, which are printed whole whatever their length."""
    return [line for line in text.splitlines() if not re.match(r"^ *\d+  /", line)]


def test_info_fits_100_columns_and_verbose_shows_every_reason_in_full() -> None:
    reasons = [r["reason"] for r in json.loads(modrt_cli("info", "--json").stdout) if r["reason"]]
    assert reasons
    short, full = modrt_cli("info"), modrt_cli("info", "--verbose")
    assert short.returncode == 0 and full.returncode == 0, short.stderr + full.stderr
    for proc in (short, full):
        assert max(len(line) for line in table_lines(proc.stdout)) <= 100, proc.stdout
    for reason in reasons:
        assert squeeze(reason) in squeeze(full.stdout), reason
    if any(len(r) > 60 for r in reasons):  # too long for its column: shortened, and said so
        assert "..." in short.stdout and "--verbose prints them in full" in short.stdout
    assert "--verbose prints them" not in full.stdout


def test_fitted_table_shortens_or_wraps_long_cells() -> None:
    from modrt_cli import _common

    reason = "runtime not selected: " + " ".join(f"word{i}" for i in range(60)) + " /a/very/long/path/" + "x" * 120
    rows = [["cuda", "fallback", reason], ["cpu", "real", "-"]]
    short, shortened = _common.fitted_table(["target", "module", "result"], rows, flexible=(2,))
    assert shortened and len(short.splitlines()) == 4
    assert max(map(len, short.splitlines())) == 100 and short.splitlines()[2].endswith("...")
    full, shortened = _common.fitted_table(["target", "module", "result"], rows, flexible=(2,), verbose=True)
    assert not shortened and len(full.splitlines()) > 4
    assert max(map(len, full.splitlines())) <= 100
    assert squeeze(reason) in squeeze(full)
    assert full.splitlines()[-1].split() == ["cpu", "real", "-"]  # rows stay whole, in order


# Device names as drivers report them on machines CI never sees: long (PoCL on
# a Xeon), short, wide (CJK), combining marks, and none at all.
SYNTHETIC_DEVICE_NAMES = [
    "cpu-skylake-avx512-Intel(R) Xeon(R) Processor @ 2.10GHz with a very long marketing suffix " * 2,
    "x",
    "\u8ba1\u7b97\u8bbe\u5907\u96f6\u53f7\uff08\u5f88\u957f\u7684\u540d\u5b57\uff09" * 4,
    "Ge\u0301ne\u0301rique-\u00e9\u00e8\u00ea-device",
    "",
]


def synthetic_info_rows(names: list[str], devices_per_backend: int) -> list[dict]:
    """`modrt info --json`-shaped rows for three backends whose devices carry `names`."""
    rows = []
    for backend in ("cpu", "opencl", "an-out-of-tree-backend-with-a-long-name"):
        devices = [
            {
                "device": f"{backend}({i})",
                "name": names[i % len(names)],
                "max_threads_per_block": 1024 * (i + 1),
                "compute_version": "9.9" * (i % 3),
                "target": f"Target(kind={backend}, attrs={{'device_name': {names[i % len(names)]!r}}})",
            }
            for i in range(devices_per_backend)
        ]
        rows.append(
            {
                "backend": backend,
                "selected": None if "tree" in backend else True,
                "dso": "/opt/" + "deep/" * 40 + "libmodrt_runtime_x.so",
                "dso_found": True,
                "loaded": bool(devices),
                "driver_found": True,
                "devices": devices,
                "reason": "" if devices else "no driver: " + "libOpenCL.so.1 not found in any of " + "/lib:" * 50,
                "origin": "MODRT_LIBRARY_PATH" if devices else "",
                "copies": [
                    {"origin": "modrt-opencl wheel " * 5, "state": "skipped: " + "wrong ABI " * 20, "path": "/p/" * 60},
                    {"origin": "build", "state": "loaded", "path": "/b"},
                ],
            }
        )
    return rows


@pytest.mark.parametrize("devices_per_backend", [0, 1, 7, 200])
@pytest.mark.parametrize("verbose", [False, True])
def test_info_fits_100_columns_whatever_the_device_names_and_counts(devices_per_backend: int, verbose: bool) -> None:
    from modrt_cli import _common, info

    rows = synthetic_info_rows(SYNTHETIC_DEVICE_NAMES, devices_per_backend)
    text = info.render(rows, verbose=verbose)
    assert max(_common.display_width(line) for line in table_lines(text)) <= 100, text
    for copy in rows[0]["copies"]:  # paths are whole, one a line
        assert f"  {copy['path']}\n" in text + "\n"
    devices = [d for r in rows for d in r["devices"]]
    # Every device has its row, whatever its name.
    assert text.count("Target(kind=") == len(devices)
    if verbose:  # and, verbose, every label, name, reason and target in full
        for d in devices:
            for what in ("device", "name", "target"):
                assert squeeze(d[what]) in squeeze(text), what
        for r in rows:
            assert squeeze(r["reason"]) in squeeze(text)
        assert "shortened" not in text
    else:
        assert "--verbose prints them in full" in text


def test_fitted_table_lines_up_wide_and_combining_characters() -> None:
    from modrt_cli import _common

    rows = [["\u8ba1\u7b97", "a"], ["e\u0301e\u0301", "b"], ["ab", "c"]]
    lines = _common.fitted_table(["name", "x"], rows, flexible=(0,))[0].splitlines()
    # The second column starts at the same display column on every row.
    starts = {_common.display_width(line[: line.rindex(" ") + 1]) for line in lines[2:]}
    assert starts == {6}, lines


def test_fitted_table_refuses_columns_it_does_not_have() -> None:
    from modrt_cli import _common

    with pytest.raises(ValueError, match="flexible columns \\[5\\]"):
        _common.fitted_table(["a", "b"], [["1", "2"]], flexible=(5,))
    with pytest.raises(ValueError, match="every row needs 2 cells"):
        _common.fitted_table(["a", "b"], [["1"]], flexible=(1,))


def test_compile_writes_an_artifact_and_says_real_or_fallback(tmp_path: Path, c_file: Path) -> None:
    proc = modrt_cli("compile", "--target=cpu", f"--function={C_SIGNATURE}", str(c_file))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {tmp_path / 'vadd.modrt'}: so module" in proc.stdout and "real" in proc.stdout
    (entry,) = modrt.artifact.read_manifest(tmp_path / "vadd.modrt").modules
    assert [f.signature for f in entry.functions] == [C_SIGNATURE]

    cl = tmp_path / "vadd.cl"
    cl.write_text(CL_SOURCE)
    proc = modrt_cli(
        "compile", "--target=opencl", f"--function={CL_SIGNATURE}", f"--output={tmp_path / 'k.modrt'}", str(cl)
    )
    assert proc.returncode == 0, proc.stderr
    assert ("real (runtime loaded here)" in proc.stdout) == opencl_loaded()
    forced = modrt_cli(
        "compile",
        "--target=opencl",
        "--force_fallback",
        f"--function={CL_SIGNATURE}",
        f"--output={tmp_path / 'f.modrt'}",
        str(cl),
    )
    assert forced.returncode == 0, forced.stderr
    assert "fallback (MODRT_COMPILE_FORCE_FALLBACK=1)" in forced.stdout
    assert (tmp_path / "f.modrt").read_bytes() == (tmp_path / "k.modrt").read_bytes()


def test_compile_reads_signatures_from_the_kernel_without_function_or_from_a_bare_name(tmp_path: Path) -> None:
    cl = tmp_path / "vadd.cl"
    cl.write_text(CL_SOURCE)
    for how in ([], ["--function=vadd"]):
        out = tmp_path / f"vadd{len(how)}.modrt"
        proc = modrt_cli("compile", "--target=opencl", *how, f"--output={out}", str(cl))
        assert proc.returncode == 0, proc.stderr
        assert f"  {CL_KEPT}" in proc.stdout.splitlines()
        (entry,) = modrt.artifact.read_manifest(out).modules
        assert [f.signature for f in entry.functions] == [CL_KEPT]
    help_text = squeeze(modrt_cli("compile", "--help").stdout)
    assert squeeze("a bare kernel name") in help_text
    assert squeeze("omitted: every kernel the source declares") in help_text


def test_compile_errors_are_messages(tmp_path: Path, c_file: Path) -> None:
    bad = tmp_path / "bad.c"
    bad.write_text("void vadd( {")
    proc = modrt_cli("compile", "--target=cpu", f"--function={C_SIGNATURE}", str(bad))
    assert proc.returncode == 1 and proc.stderr.startswith("modrt: ") and "Traceback" not in proc.stderr
    proc = modrt_cli("compile", "--target=nonesuch", f"--function={C_SIGNATURE}", str(c_file))
    assert proc.returncode == 1 and "no codegen for target 'nonesuch'" in proc.stderr
    assert modrt_cli("compile", str(c_file)).returncode == 2


def test_inspect_shows_manifest_and_sources(tmp_path: Path, c_file: Path) -> None:
    host = modrt.compile(C_SOURCE, "cpu", [C_SIGNATURE])
    modrt.compile(CL_SOURCE, "opencl", [CL_SIGNATURE], host=host)
    path = tmp_path / "tree.modrt"
    host.export(path)
    proc = modrt_cli("inspect", "--sources", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "format version 2, 2 modules" in proc.stdout
    assert C_SIGNATURE in proc.stdout and CL_KEPT in proc.stdout
    assert "==== module 1 (opencl), source format cl ====" in proc.stdout
    assert "get_global_id(0)" in proc.stdout
    manifest = json.loads(modrt_cli("inspect", "--json", str(path)).stdout)
    assert [m["kind"] for m in manifest["modules"]] == ["so", "opencl"]
    assert modrt_cli("inspect", "--format=c", str(path)).stdout.strip().endswith(C_SOURCE.strip())
    missing = modrt_cli("inspect", "--format=glsl", str(path))
    assert missing.returncode == 1 and "it holds: c, cl" in missing.stderr

    data = bytearray(path.read_bytes())
    data[-10] ^= 1
    path.write_bytes(bytes(data))
    damaged = modrt_cli("inspect", str(path))
    assert damaged.returncode == 1
    assert "module 1 (opencl): SHA-256 mismatch" in damaged.stderr


def test_inspect_needs_no_runtime(tmp_path: Path) -> None:
    # In a tree without the compiler and without any backend runtime DSO,
    # where `import modrt` alone would fail, inspect still works.
    path = tmp_path / "k.modrt"
    modrt.compile(CL_SOURCE, "opencl", [CL_SIGNATURE]).export(path)
    drop = (modrt._selection.COMPILER,) + tuple(p for p in modrt._selection.RUNTIMES.values() if p)
    tree = copy_tree(tmp_path / "tree", drop=drop)
    assert run_python("import modrt", tree=tree).returncode != 0
    code = f"import sys; sys.argv = ['modrt', 'inspect', {str(path)!r}]; import modrt_cli; modrt_cli.run()"
    proc = run_python(code, tree=tree)
    assert proc.returncode == 0, proc.stderr
    assert "opencl" in proc.stdout and CL_KEPT in proc.stdout


def test_run_with_npy_inputs_saves_outputs(tmp_path: Path, c_file: Path) -> None:
    assert modrt_cli("compile", "--target=cpu", f"--function={C_SIGNATURE}", str(c_file)).returncode == 0
    a = np.arange(10, dtype="float32")
    b = np.full(10, 0.5, dtype="float32")
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    proc = modrt_cli(
        "run", "--function=vadd", "--save=out", "vadd.modrt", "--", "a.npy", "b.npy", "10", "10", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "arg 2: float32[10] saved to out/arg2.npy" in proc.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "arg2.npy"), a + b)


def test_run_with_random_inputs_and_timing(tmp_path: Path, c_file: Path) -> None:
    assert modrt_cli("compile", "--target=cpu", f"--function={C_SIGNATURE}", str(c_file)).returncode == 0
    proc = modrt_cli(
        "run",
        "--function=vadd",
        "--outputs=0,1,2",
        "--save=out",
        "--time",
        "--repeat=3",
        "vadd.modrt",
        "--",
        "256",
        "256",
        "256",
        "256",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "vadd on cpu(0): 3 calls" in proc.stdout
    a, b, c = (np.load(tmp_path / "out" / f"arg{i}.npy") for i in range(3))
    np.testing.assert_array_equal(c, a + b)
    printed = modrt_cli("run", "--function=vadd", "vadd.modrt", "--", "4", "4", "4", "4", cwd=tmp_path)
    assert printed.returncode == 0 and "arg 2: float32[4]\n[" in printed.stdout


def test_run_on_opencl_where_it_exists(tmp_path: Path) -> None:
    path = tmp_path / "k.modrt"
    modrt.compile(CL_SOURCE, "opencl", [CL_SIGNATURE]).export(path)
    proc = modrt_cli(
        "run",
        "--function=vadd",
        "--outputs=0,1,2",
        "--save=out",
        str(path),
        "--",
        "128",
        "128",
        "128",
        "128",
        "2",
        "64",
        cwd=tmp_path,
    )
    if opencl_loaded():
        assert proc.returncode == 0, proc.stderr
        a, b, c = (np.load(tmp_path / "out" / f"arg{i}.npy") for i in range(3))
        np.testing.assert_array_equal(c, a + b)
    else:
        assert proc.returncode == 1
        assert "opencl" in proc.stderr and "Traceback" not in proc.stderr


def test_run_refuses_bad_arguments(tmp_path: Path, c_file: Path) -> None:
    assert modrt_cli("compile", "--target=cpu", f"--function={C_SIGNATURE}", str(c_file)).returncode == 0
    few = modrt_cli("run", "--function=vadd", "vadd.modrt", "--", "4", "4", cwd=tmp_path)
    assert few.returncode == 1 and "takes 4 arguments and 0 launch parameters, got 2 values" in few.stderr
    missing = modrt_cli("run", "--function=vsub", "vadd.modrt", "--", "4", cwd=tmp_path)
    assert missing.returncode == 1 and "no function 'vsub'" in missing.stderr
    shape = modrt_cli("run", "--function=vadd", "vadd.modrt", "--", "4", "four", "4", "4", cwd=tmp_path)
    assert shape.returncode == 1 and "'four' is neither a .npy file nor a shape" in shape.stderr


def test_demo_runs_every_real_module_and_lists_every_backend(tmp_path: Path) -> None:
    proc = modrt_cli("demo", f"--keep={tmp_path}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {
        line.split()[0]: line
        for line in proc.stdout.splitlines()[2:]
        if line and line.split()[0] in ["cpu"] + modrt.backend.in_tree()
    }
    assert sorted(rows) == sorted(["cpu"] + modrt.backend.in_tree())
    assert "real" in rows["cpu"] and "matches numpy" in rows["cpu"]
    if opencl_loaded():
        assert "real" in rows["opencl"] and "matches numpy" in rows["opencl"]
    for name in modrt.backend.in_tree():
        if not modrt.backend.runtime_status(name).loaded:
            assert rows[name].split()[1] == "fallback" and "refused" in rows[name]
        elif modrt.device(name).exist:  # e.g. vulkan and webgpu on lavapipe
            assert rows[name].split()[1] == "real" and "matches numpy" in rows[name], rows[name]
    # the table fits 100 columns; unchecked sources are said under it
    assert max(len(line) for line in proc.stdout.splitlines()) <= 100
    assert "metal: Metal Shading Language source is not checked at compile time" in proc.stdout
    # the exported files are real artifacts; the progress went to stderr
    assert modrt.artifact.read_manifest(tmp_path / "cpu.modrt").modules[0].kind == "so"
    assert "[compile 1/" in proc.stderr and "[load 1/" in proc.stderr


def test_demo_fails_on_a_wrong_or_unloadable_real_result() -> None:
    rows = {
        "cpu": {
            "target": "cpu",
            "module": "real",
            "artifact": "so",
            "path": "x",
            "loaded": True,
            "runs": [{"device": "cpu(0)", "ok": False, "max_error": 1.0}],
        },
    }
    lines, all_right = demo.table_rows(modrt, rows)
    assert not all_right and "WRONG" in lines[0][-1]
    rows = {
        "opencl": {
            "target": "opencl",
            "module": "real",
            "artifact": "cl",
            "path": "x",
            "loaded": False,
            "load_error": "boom",
        }
    }
    lines, all_right = demo.table_rows(modrt, rows)
    assert not all_right and lines[0][3] == "FAILED"


def test_doctor_finds_this_build_as_built() -> None:
    proc = modrt_cli("doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "libmodrt_runtime.so" in proc.stdout and "; no problems" in proc.stdout


@pytest.mark.parametrize("fault", ["removed", "empty"])
def test_info_short_reason_leads_with_the_file_to_act_on(tmp_path: Path, fault: str) -> None:
    """A runtime DSO removed or damaged: the shortened 100-column line still
    names the file (the path, which a deep install makes long, comes after)."""
    dso = "backends/opencl/libmodrt_runtime_opencl.so"
    deep = tmp_path / ("a-long-directory-name-" * 6) / "tree"
    # A build without OpenCL has no such file to remove.
    present = os.path.exists(os.path.join(modrt._ffi.package_root(), dso))
    drop = (dso,) if fault == "removed" and present else ()
    tree = copy_tree(deep, drop=drop, replace={dso: b""} if fault == "empty" else None)
    # Selected, so that a build without OpenCL sees the fault too.
    modrt_testing.force_runtime_selected(tree, "opencl")
    code = "import sys; sys.argv = ['modrt', 'info']; import modrt_cli; modrt_cli.run()"
    proc = run_python(code, tree=tree)
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.startswith("opencl "))
    assert len(row) <= 100, row
    assert "  libmodrt_runtime_opencl.so " in row, proc.stdout
