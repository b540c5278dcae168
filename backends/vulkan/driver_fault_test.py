"""The Vulkan runtime is loaded but libvulkan.so.1 is hidden (shadowed on
LD_LIBRARY_PATH by an unloadable file): `import modrt` survives without a
warning, the device reports that it does not exist and names the library,
and the host and OpenCL backends keep working. Runs when
--//backends:vulkan=on builds the runtime."""

from __future__ import annotations

import modrt_testing

PROBE = modrt_testing.driver_probe(
    "vulkan",
    extra="""
if modrt.backend.runtime_status("opencl").loaded and modrt.device("opencl").exist:
    m = modrt.compile("__kernel void one(__global int* x) { x[0] = 1; }", "opencl", ["one(int32*; blockIdx.x)"])
    d = modrt.empty((1,), "int32", device=modrt.device("opencl")); m["one"](d, 1)
    assert d.numpy()[0] == 1
    print("opencl works")
""",
)


def test_libvulkan_hidden(tmp_path):
    (tmp_path / "libvulkan.so.1").write_bytes(b"")
    proc = modrt_testing.run_python(PROBE, env={"LD_LIBRARY_PATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "RuntimeWarning" not in proc.stderr, proc.stderr
    assert "exist: False" in proc.stdout, proc.stdout
    reason = proc.stdout.split("reason:", 1)[1].splitlines()[0]
    assert "libvulkan.so.1" in reason, proc.stdout
    assert "alloc: vulkan(0) does not exist" in proc.stdout, proc.stdout
    assert "host works" in proc.stdout
