"""HIP codegen through hipcc (a real code object here) and the ROCm fallback
contract (ARCHITECTURE.md section 5), with or without the runtime."""

import pytest

import modrt

SCALE = """#include <hip/hip_runtime.h>
extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""
SIGNATURE = "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)"
NOT_LINKED = (
    "ROCm runtime is not linked into this build; cannot launch kernels. Build with "
    "--//backends:rocm=on, or load this module where libmodrt_runtime_rocm.so is present."
)
# hipcc --genco writes a clang offload bundle holding one code object per arch.
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def runtime_loaded() -> bool:
    return modrt.backend.runtime_status("rocm").loaded


@pytest.fixture(scope="module")
def code_object() -> bytes:
    payload = modrt.backend.rocm.codegen(SCALE, [SIGNATURE], modrt.target.Target("rocm"))
    return modrt.get_global_func("codegen.rocm.create_module")(payload).inspect_source("hsaco")


@pytest.fixture
def fallback(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    return modrt.compile(SCALE, "rocm", [SIGNATURE])


def test_hipcc_makes_a_real_code_object_for_the_default_arch(code_object):
    assert isinstance(code_object, bytes) and code_object.startswith(BUNDLE_MAGIC)
    assert b"amdgcn-amd-amdhsa--gfx90a" in code_object
    assert b"\x7fELF" in code_object and b"scale" in code_object


def test_target_mcpu_selects_the_gfx_arch(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    mod = modrt.compile(SCALE, modrt.target.Target("rocm", mcpu="gfx1100"), [SIGNATURE])
    hsaco = mod.inspect_source("hsaco")
    assert b"amdgcn-amd-amdhsa--gfx1100" in hsaco and b"gfx90a" not in hsaco
    assert mod.inspect_source("hip") == SCALE


def test_hip_that_does_not_compile_is_a_clear_error():
    with pytest.raises(
        modrt.CompileError,
        match=r"(?s)HIP of broken \(<broken\.hip>\) does not compile \[hipcc\].*"
        r"<broken\.hip>:1:54: error: use of undeclared identifier 'y'",
    ):
        modrt.compile('extern "C" __global__ void broken(float* x) { x[0] = y; }', "rocm", ["broken(float32*)"])


def test_fallback_has_the_real_kind_and_refuses_with_the_exact_message(fallback):
    assert fallback.kind == "rocm" and fallback.is_fallback
    with pytest.raises(modrt.Error) as e:
        fallback.get_function("scale")
    assert str(e.value) == NOT_LINKED


def test_fallback_bytes_are_the_payload_serialization(fallback, code_object):
    payload = modrt.Payload.create("single-binary", "hsaco", [SIGNATURE], code=fallback.inspect_source("hsaco"))
    assert fallback.save_to_bytes() == payload.save()
    # hipcc is deterministic: the same source gives the same code object.
    assert fallback.inspect_source("hsaco") == code_object


def test_unknown_format_is_refused():
    bad = modrt.Payload.create("single-binary", "ptx", [SIGNATURE], code=b"x")
    with pytest.raises(ValueError, match="unknown ROCm format 'ptx'"):
        modrt.get_global_func("codegen.rocm.create_module")(bad)


def test_without_the_runtime_compile_gives_the_fallback():
    if runtime_loaded():
        pytest.skip("the ROCm runtime is loaded in this build; covered by runtime_test")
    m = modrt.compile(SCALE, "rocm", [SIGNATURE])
    assert m.is_fallback and m.kind == "rocm"
    assert "libmodrt_runtime_rocm.so is not loaded" in modrt.device("rocm").unavailable_reason


def test_fallback_bytes_cannot_load_without_the_runtime(fallback):
    if runtime_loaded():
        pytest.skip("the ROCm runtime is loaded in this build; covered by runtime_test")
    with pytest.raises(ValueError, match="libmodrt_runtime_rocm.so is not loaded"):
        modrt.load_module_from_bytes("rocm", fallback.save_to_bytes())


def test_options_and_include_dirs_reach_hipcc(monkeypatch, tmp_path):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    (tmp_path / "factor.h").write_text("#define FACTOR 3.0f\n")
    source = '#include "factor.h"\nextern "C" __global__ void k(float* x) { x[threadIdx.x] *= FACTOR * OFFSET; }\n'
    with pytest.raises(modrt.CompileError, match="factor.h' file not found"):
        modrt.compile(source, "rocm", ["k(float32*; blockIdx.x, threadIdx.x)"])
    mod = modrt.compile(
        source,
        "rocm",
        ["k(float32*; blockIdx.x, threadIdx.x)"],
        options=["-DOFFSET=2.0f"],
        include_dirs=[str(tmp_path)],
    )
    assert mod.inspect_source("hsaco").startswith(BUNDLE_MAGIC)
