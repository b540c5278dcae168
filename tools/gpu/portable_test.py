"""Under --config=portable, every modrt DSO loads on glibc 2.28 and later and
carries its own libstdc++; and the check itself catches a DSO that would not."""

import re
import sys
from pathlib import Path

import pytest
from portability import MAX_GLIBC, glibc_problems

import modrt._ffi

ROOT = Path(modrt._ffi.package_root())
DSOS = [
    "core/libmodrt_runtime.so",
    "packaging/libmodrt_compiler.so",
    "backends/cuda/libmodrt_runtime_cuda.so",
    "backends/rocm/libmodrt_runtime_rocm.so",
    "backends/opencl/libmodrt_runtime_opencl.so",
]


@pytest.mark.parametrize("dso", DSOS)
def test_dso_is_portable(dso):
    path = ROOT / dso
    if not path.exists():
        pytest.skip(f"{dso} is not selected in this build")
    assert glibc_problems(path) == []


def test_the_check_names_what_a_forky_build_would_need():
    # The root's own Python is built against its glibc (2.43), not for 2.28.
    problems = glibc_problems(Path(sys.executable).resolve())
    assert problems and all(re.fullmatch(r"\S+ needs GLIBC_2\.\d+", p) for p in problems), problems
    assert all(tuple(map(int, p.rsplit("_", 1)[1].split("."))) > MAX_GLIBC for p in problems)
