"""`modrt doctor` checks every DSO modrt would load against the SHA-256 the
build recorded (and a wheel's RECORD): real files changed, removed or added in
a copy of the tree are reported as modified, missing or unexpected, with a
non-zero exit status."""

import base64
import hashlib
import json
from pathlib import Path

import modrt
import modrt._ffi
import modrt_testing

ROOT = Path(modrt._ffi.package_root())
EXTRA = "backends/extra/libmodrt_runtime_extra.so"
DOCTOR = "import sys, modrt_cli; modrt_cli.run(['doctor', '--json'] + sys.argv[1:])"


def doctor(tree: Path | None = None):
    proc = modrt_testing.run_python(DOCTOR, tree=tree)
    return proc, json.loads(proc.stdout) if proc.stdout.startswith("{") else None


def states(report) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for row in report["files"]:
        out.setdefault(row["state"], set()).add(row["path"])
    return out


def test_the_build_as_it_is_passes_and_every_dso_is_checked():
    proc, report = doctor()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["ok"]
    checked = {Path(p).name for p in states(report)["ok"]}
    sel = modrt._ffi._selection
    expected = {Path(sel.CORE).name, Path(sel.COMPILER).name, Path(EXTRA).name, "_ffi_ext.abi3.so"}
    expected |= {Path(r).name for r in sel.RUNTIMES.values() if r}
    assert expected <= checked, checked


def test_modified_missing_and_unexpected_are_reported(tmp_path):
    extra = (ROOT / EXTRA).read_bytes()
    flipped = bytearray(extra)
    flipped[len(flipped) // 2] ^= 0x01
    tree = modrt_testing.copy_tree(
        tmp_path / "tree",
        drop=(modrt._ffi._selection.COMPILER,),
        replace={EXTRA: bytes(flipped), "python/modrt/lib/libmodrt_runtime_stray.so": extra},
    )
    proc, report = doctor(tree)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert not report["ok"]
    found = states(report)
    assert str(tree / EXTRA) in found["modified"]
    assert modrt._ffi._selection.COMPILER in found["missing"]
    assert str(tree / "python/modrt/lib/libmodrt_runtime_stray.so") in found["unexpected"]
    assert str(tree / modrt._ffi._selection.CORE) in found["ok"]
    assert "not as built" in proc.stderr


def record_digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def test_an_installed_wheels_record_is_checked_too(tmp_path):
    """RECORD as a wheel install leaves it (beside the package directory)."""
    ext = (ROOT / "python/modrt/_ffi_ext.abi3.so").read_bytes()
    tree = modrt_testing.copy_tree(tmp_path / "tree")
    info = tree / "python" / "modrt-1.0.0.dist-info"
    info.mkdir()
    (info / "RECORD").write_text(
        f"modrt/_ffi_ext.abi3.so,{record_digest(ext)},{len(ext)}\n"
        f"modrt/lib/libmodrt_runtime_gone.so,{record_digest(b'x')},1\n"
        f"modrt/lib/libmodrt_runtime_changed.so,{record_digest(b'as installed')},12\n"
        "modrt-1.0.0.dist-info/RECORD,,\n"
    )
    (tree / "python/modrt/lib").mkdir(exist_ok=True)
    (tree / "python/modrt/lib/libmodrt_runtime_changed.so").write_bytes(b"changed since")
    proc, report = doctor(tree)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = {(r["state"], Path(r["path"]).name, r["recorded_in"]) for r in report["files"]}
    assert ("ok", "_ffi_ext.abi3.so", "modrt-1.0.0.dist-info/RECORD") in rows
    assert ("missing", "libmodrt_runtime_gone.so", "modrt-1.0.0.dist-info/RECORD") in rows
    assert ("modified", "libmodrt_runtime_changed.so", "modrt-1.0.0.dist-info/RECORD") in rows
    # Listed in RECORD, so not "unexpected" in lib/.
    assert not any(r[0] == "unexpected" for r in rows), rows


def test_doctor_runs_where_import_modrt_cannot(tmp_path):
    """A core cut short: modrt cannot be imported, doctor still reports it."""
    core = modrt._ffi._selection.CORE
    data = (ROOT / core).read_bytes()
    tree = modrt_testing.copy_tree(tmp_path / "tree", replace={core: data[: len(data) // 2]})
    proc, report = doctor(tree)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert str(tree / core) in states(report)["modified"]
