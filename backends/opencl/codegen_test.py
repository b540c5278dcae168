"""OpenCL codegen and the OpenCL fallback contract (ARCHITECTURE.md section 5), with or without the runtime."""

import pytest

import modrt

KERNEL = """
__kernel void scale(__global float* x, float alpha, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] *= alpha;
}
"""
SIGNATURE = "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)"
NOT_LINKED = (
    "OpenCL runtime is not linked into this build; cannot launch kernels. Build with "
    "--//backends:opencl=on, or load this module where libmodrt_runtime_opencl.so is present."
)


@pytest.fixture
def fallback(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    return modrt.compile(KERNEL, "opencl", [SIGNATURE])


def test_fallback_has_the_real_kind(fallback):
    assert fallback.kind == "opencl"
    assert fallback.is_fallback


def test_fallback_refuses_to_launch_with_the_exact_message(fallback):
    with pytest.raises(modrt.Error) as e:
        fallback.get_function("scale")
    assert str(e.value) == NOT_LINKED


def test_fallback_inspect_source(fallback):
    assert fallback.inspect_source() == KERNEL
    assert fallback.inspect_source("cl") == KERNEL
    with pytest.raises(ValueError, match="no source of format 'ptx'"):
        fallback.inspect_source("ptx")


def test_fallback_bytes_are_the_payload_serialization(fallback):
    # The module keeps the given signature with the names the kernel declares.
    kept = "scale(float32* x, float32 alpha, int32 n; blockIdx.x, threadIdx.x)"
    assert fallback.signature("scale") == kept
    payload = modrt.Payload.create("single-binary", "cl", [kept], code=KERNEL.encode())
    assert fallback.save_to_bytes() == payload.save()


def test_without_the_runtime_compile_gives_the_fallback():
    if modrt.backend.runtime_status("opencl").loaded:
        pytest.skip("the OpenCL runtime is loaded in this build; covered by runtime_test")
    m = modrt.compile(KERNEL, "opencl", [SIGNATURE])
    assert m.is_fallback and m.kind == "opencl"
    status = modrt.backend.runtime_status("opencl")
    assert not status.selected and "--//backends:opencl=off" in status.reason
    assert not modrt.device("opencl").exist
    assert "libmodrt_runtime_opencl.so is not loaded" in modrt.device("opencl").unavailable_reason


def test_fallback_bytes_cannot_load_without_the_runtime(fallback):
    if modrt.backend.runtime_status("opencl").loaded:
        pytest.skip("the OpenCL runtime is loaded in this build; covered by runtime_test")
    with pytest.raises(ValueError, match="libmodrt_runtime_opencl.so is not loaded"):
        modrt.load_module_from_bytes("opencl", fallback.save_to_bytes())


def test_unknown_format_is_refused(monkeypatch):
    bad = modrt.Payload.create("single-binary", "ptx", [SIGNATURE], code=b"x")
    with pytest.raises(ValueError, match="unknown OpenCL format 'ptx'"):
        modrt.get_global_func("codegen.opencl.create_module")(bad)
