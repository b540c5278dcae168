"""The OpenCL runtime is loaded but its vendor driver is hidden: the ICD
(PoCL) behind an empty OCL_ICD_VENDORS directory, or libOpenCL.so.1 itself
shadowed by an unloadable file. `import modrt` survives without a warning
(a missing driver is not a broken install), the device reports that it does
not exist and why, using it is an error saying the same, and the host
backend keeps working."""

from __future__ import annotations

import modrt_testing

# Loading a module needs no driver.
PROBE = modrt_testing.driver_probe(
    "opencl",
    extra="""
m = modrt.compile("__kernel void one(__global int* x) { x[0] = 1; }", "opencl", ["one(int32*; blockIdx.x)"])
assert not m.is_fallback and m["one"] is not None
""",
)


def check(proc, cause: str) -> None:
    assert proc.returncode == 0, proc.stderr
    assert "RuntimeWarning" not in proc.stderr, proc.stderr
    assert "exist: False" in proc.stdout, proc.stdout
    assert cause in proc.stdout.split("reason:", 1)[1].splitlines()[0], proc.stdout
    assert "alloc: opencl(0) does not exist" in proc.stdout and cause in proc.stdout.split("alloc:", 1)[1]
    assert "host works" in proc.stdout


def test_icd_hidden(tmp_path):
    (tmp_path / "no-vendors").mkdir()
    proc = modrt_testing.run_python(PROBE, env={"OCL_ICD_VENDORS": str(tmp_path / "no-vendors")})
    check(proc, "no OpenCL platform found")


def test_icd_loader_hidden(tmp_path):
    # The dynamic loader takes the first match on LD_LIBRARY_PATH: empty files
    # hide the system's ICD loader under both names the runtime tries.
    for name in ("libOpenCL.so.1", "libOpenCL.so"):
        (tmp_path / name).write_bytes(b"")
    proc = modrt_testing.run_python(PROBE, env={"LD_LIBRARY_PATH": str(tmp_path)})
    check(proc, "libOpenCL.so.1")
