"""Every wheel installs on glibc 2.28 and later: `auditwheel show` (the PyPA
tool, in the toolchain root) reads each wheel's DSOs and says which manylinux
tag they are consistent with; it must be manylinux_2_28 or older, and match the
tag in the file name. The modrt wheel is one abi3 wheel for CPython >= 3.10."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

RUNFILES = Path(os.environ["TEST_SRCDIR"], "_main")
MODRT_WHEELS = sorted(RUNFILES.glob("python/modrt-*.whl"))
BACKEND_WHEELS = sorted(RUNFILES.glob("backends/*/modrt_*.whl"))
OLDEST_GLIBC = (2, 28)


def test_the_wheels_are_here() -> None:
    assert len(MODRT_WHEELS) == 1, MODRT_WHEELS
    assert {w.name.split("-")[0] for w in BACKEND_WHEELS} >= {
        "modrt_opencl",
        "modrt_vulkan",
        "modrt_cuda",
        "modrt_rocm",
        "modrt_hexagon",
        "modrt_webgpu",
    }, BACKEND_WHEELS


def audit(wheel: Path) -> tuple[int, int]:
    """The manylinux (major, minor) auditwheel finds the wheel consistent with."""
    proc = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = " ".join(proc.stdout.split())
    m = re.search(r'consistent with the following platform tag: "manylinux_(\d+)_(\d+)_x86_64"', text)
    assert m, f"auditwheel does not find {wheel.name} manylinux at all:\n{proc.stdout}"
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize("wheel", MODRT_WHEELS + BACKEND_WHEELS, ids=lambda w: w.name)
def test_auditwheel_finds_manylinux_2_28_or_older(wheel: Path) -> None:
    found = audit(wheel)
    assert found <= OLDEST_GLIBC, f"{wheel.name} needs glibc {found[0]}.{found[1]}"
    # The tag the file name claims is one auditwheel confirms.
    assert wheel.name.endswith("-manylinux_2_28_x86_64.whl")
    with zipfile.ZipFile(wheel) as z:
        tags = [
            line.split(": ", 1)[1]
            for name in z.namelist()
            if name.endswith(".dist-info/WHEEL")
            for line in z.read(name).decode().splitlines()
            if line.startswith("Tag: ")
        ]
    assert tags and all(t.endswith("-manylinux_2_28_x86_64") for t in tags), tags


def test_the_modrt_wheel_is_one_abi3_wheel_for_cpython_3_10_and_later() -> None:
    (wheel,) = MODRT_WHEELS
    assert wheel.name == "modrt-1.0.0-cp310-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read("modrt-1.0.0.dist-info/METADATA").decode()
        ext = z.read("modrt/_ffi_ext.abi3.so")
    assert [n for n in names if "_ffi_ext" in n] == ["modrt/_ffi_ext.abi3.so"]
    assert "Requires-Python: >=3.10" in metadata
    # Built for the limited API: it imports none of the version-specific entry
    # points a full-API build of this code would (PyErr_GetRaisedException,
    # 3.12+; PyUnicode_AsUTF8, limited only from 3.13; PyVectorcall_Call).
    for symbol in (b"PyErr_GetRaisedException", b"PyUnicode_AsUTF8\0", b"PyVectorcall_Call"):
        assert symbol not in ext, symbol
