"""CUDA codegen (NVRTC here) and the CUDA fallback contract (ARCHITECTURE.md
section 5), with or without the runtime."""

import os
import re
import sys
import warnings

import pytest

import modrt
from modrt.backend.cuda import nvrtc

SCALE = (
    'extern "C" __global__ void scale(float* x, float a, int n) {\n'
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n"
)
SIGNATURE = "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)"
# What a module keeps: the given signature with the names the kernel declares.
KEPT = "scale(float32* x, float32 a, int32 n; blockIdx.x, threadIdx.x)"
NOT_LINKED = (
    "CUDA runtime is not linked into this build; cannot launch kernels. Build with "
    "--//backends:cuda=on, or load this module where libmodrt_runtime_cuda.so is present."
)


def runtime_loaded() -> bool:
    return modrt.backend.runtime_status("cuda").loaded


@pytest.fixture
def fallback(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    return modrt.compile(SCALE, "cuda", [SIGNATURE])


@pytest.fixture
def without_nvrtc(monkeypatch, tmp_path):
    """Neither nvcc nor NVRTC: PATH is emptied and the wheel locations are
    taken away (this machine has no system libnvrtc)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("MODRT_NVRTC_LIBRARY", raising=False)
    monkeypatch.setattr(nvrtc, "WHEEL_ROOTS", ())
    kept = [p for p in sys.path if not os.path.isdir(os.path.join(p or ".", "nvidia", "cuda_nvrtc"))]
    monkeypatch.setattr(sys, "path", kept)
    assert nvrtc.find_library() is None


def test_nvrtc_is_found_in_the_toolchain_root():
    found = nvrtc.find_library()
    assert found is not None and "libnvrtc" in found
    compiler = nvrtc.load()
    assert re.fullmatch(r"\d+\.\d+", compiler.version)
    assert 75 in compiler.supported_archs()


def test_cuda_cpp_compiles_to_inspectable_ptx(fallback):
    assert fallback.kind == "cuda"
    ptx = fallback.inspect_source("ptx")
    assert fallback.inspect_source() == ptx
    assert ".visible .entry scale(" in ptx
    assert re.search(r"^\.target sm_75\b", ptx, re.M), ptx[:400]
    # The kernel's parameters as the driver will see them: pointer, float, int.
    params = re.findall(r"\.param \.(\w+) scale_param_\d", ptx)
    assert params == ["u64", "f32", "u32"]
    assert fallback.inspect_source("cuda") == SCALE


def test_target_arch_selects_the_virtual_architecture(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    mod = modrt.compile(SCALE, modrt.target.Target("cuda", arch="sm_86"), [SIGNATURE])
    assert re.search(r"^\.target sm_86\b", mod.inspect_source("ptx"), re.M)


def test_unknown_arch_names_the_supported_ones():
    with pytest.raises(ValueError, match=r"cannot compile for sm_11; it supports sm_\d+"):
        modrt.compile(SCALE, modrt.target.Target("cuda", arch="sm_11"), [SIGNATURE])


def test_an_arch_nvrtc_lacks_gets_ptx_for_the_newest_one_below_it(monkeypatch):
    """The one arch policy (backends/cuda/nvrtc.h), which compile-on-load uses too."""
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    supported = nvrtc.load().supported_archs()
    missing = next(a for a in range(supported[0], supported[-1]) if a not in supported)
    below = max(a for a in supported if a < missing)
    mod = modrt.compile(SCALE, modrt.target.Target("cuda", arch=f"sm_{missing}"), [SIGNATURE])
    assert re.search(rf"^\.target sm_{below}\b", mod.inspect_source("ptx"), re.M)


def test_an_arch_specific_target_is_compiled_only_as_itself(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    supported = nvrtc.load().supported_archs()
    assert 90 in supported
    mod = modrt.compile(SCALE, modrt.target.Target("cuda", arch="sm_90a"), [SIGNATURE])
    assert re.search(r"^\.target sm_90a\b", mod.inspect_source("ptx"), re.M)
    missing = next(a for a in range(supported[0], supported[-1]) if a not in supported)
    with pytest.raises(ValueError, match=rf"cannot compile for sm_{missing}a; it supports sm_\d+"):
        modrt.compile(SCALE, modrt.target.Target("cuda", arch=f"sm_{missing}a"), [SIGNATURE])


def test_compile_errors_carry_the_nvrtc_log():
    with pytest.raises(
        modrt.CompileError,
        match=r"(?s)CUDA C\+\+ of broken \(<broken\.cu>\) does not compile \[NVRTC [\d.]+.*"
        r"<broken\.cu>\(1\): error: identifier \"y\" is undefined",
    ):
        modrt.compile('extern "C" __global__ void broken(float* x) { x[0] = y; }', "cuda", ["broken(float32*)"])


def test_without_nvcc_or_nvrtc_the_source_is_kept_and_codegen_says_so(without_nvrtc, monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    with pytest.warns(modrt.SourceNotCheckedWarning, match="neither nvcc nor NVRTC is installed.*fmt 'cuda'"):
        mod = modrt.compile(SCALE, "cuda", [SIGNATURE])
    assert mod.inspect_source() == SCALE
    payload = modrt.Payload.create("single-binary", "cuda", [KEPT], code=SCALE.encode())
    assert mod.save_to_bytes() == payload.save()


def test_without_nvrtc_a_cpp_kernel_is_refused_not_stored_under_its_plain_name(without_nvrtc):
    source = "__global__ void twice(float* x) { x[threadIdx.x] *= 2; }\n"
    with pytest.raises(ValueError, match=r'kernel\(s\) twice are not extern "C": their C\+\+ names are resolved'):
        modrt.compile(source, "cuda")


def test_without_nvrtc_options_are_refused(without_nvrtc):
    with pytest.raises(ValueError, match="CUDA compiler options were given, but neither nvcc nor NVRTC"):
        modrt.compile(SCALE, "cuda", options=["-DX=1"])


def test_a_named_nvrtc_that_does_not_load_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("MODRT_NVRTC_LIBRARY", str(tmp_path / "libnvrtc.so.12"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="cannot load NVRTC from .*libnvrtc.so.12"):
        modrt.compile(SCALE, "cuda", [SIGNATURE])


def test_fallback_has_the_real_kind_and_refuses_with_the_exact_message(fallback):
    assert fallback.kind == "cuda" and fallback.is_fallback
    with pytest.raises(modrt.Error) as e:
        fallback.get_function("scale")
    assert str(e.value) == NOT_LINKED


def test_fallback_bytes_are_the_payload_serialization(fallback):
    ptx = fallback.inspect_source("ptx").encode()
    assert fallback.signature("scale") == KEPT
    payload = modrt.Payload.create("single-binary", "ptx", [KEPT], code=ptx)
    assert fallback.save_to_bytes() == payload.save()


@pytest.mark.parametrize("fmt", ["ptx", "cubin", "fatbin", "cuda"])
def test_every_cuda_format_makes_a_module(monkeypatch, fmt):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    payload = modrt.Payload.create("single-binary", fmt, [SIGNATURE], code=b"\x7fELF or text")
    mod = modrt.get_global_func("codegen.cuda.create_module")(payload)
    assert mod.kind == "cuda" and mod.is_fallback and mod.save_to_bytes() == payload.save()


def test_unknown_format_is_refused():
    bad = modrt.Payload.create("single-binary", "hsaco", [SIGNATURE], code=b"x")
    with pytest.raises(ValueError, match="unknown CUDA format 'hsaco'"):
        modrt.get_global_func("codegen.cuda.create_module")(bad)


def test_without_the_runtime_compile_gives_the_fallback():
    if runtime_loaded():
        pytest.skip("the CUDA runtime is loaded in this build; covered by runtime_test")
    m = modrt.compile(SCALE, "cuda", [SIGNATURE])
    assert m.is_fallback and m.kind == "cuda"
    assert not modrt.device("cuda").exist
    assert "libmodrt_runtime_cuda.so is not loaded" in modrt.device("cuda").unavailable_reason


def test_fallback_bytes_cannot_load_without_the_runtime(fallback):
    if runtime_loaded():
        pytest.skip("the CUDA runtime is loaded in this build; covered by runtime_test")
    with pytest.raises(ValueError, match="libmodrt_runtime_cuda.so is not loaded"):
        modrt.load_module_from_bytes("cuda", fallback.save_to_bytes())


def scale_ptx() -> str:
    return modrt.compile(SCALE, "cuda", [SIGNATURE]).inspect_source("ptx")


def test_ptx_is_assembled_by_ptxas_at_compile_time():
    from modrt.backend.cuda import ptx_check

    # The nvidia-cuda-nvcc-cu12 wheel's, in the toolchain root (modrt-cuda[ptxas] for users).
    assert ptx_check.find_ptxas(nvrtc.package_roots().split("\n")) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error", modrt.SourceNotCheckedWarning)
        assert modrt.compile(scale_ptx(), "cuda", [SIGNATURE]).signature("scale") == SIGNATURE
    broken = scale_ptx().replace("ret;", "this is not ptx;")
    with pytest.raises(modrt.CompileError) as e:
        modrt.compile(broken, "cuda", [SIGNATURE], filename="scale.ptx")
    message = str(e.value)
    assert message.startswith("PTX of scale (scale.ptx) does not compile [ptxas]; nothing was built"), message
    assert "scale.ptx, line" in message and "syntax error" in message, message


def test_ptx_without_ptxas_is_taken_with_a_source_not_checked_warning(monkeypatch, tmp_path):
    broken = scale_ptx().replace("ret;", "this is not ptx;")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(nvrtc, "package_roots", lambda: "")
    with pytest.warns(
        modrt.SourceNotCheckedWarning,
        match=r"^modrt: PTX source is not checked at compile time: ptxas is not installed here: "
        r"pip install 'modrt-cuda\[ptxas\]'",
    ):
        mod = modrt.compile(broken, "cuda", [SIGNATURE])
    assert mod.kind == "cuda" and mod.inspect_source("ptx") == broken


def test_validate_false_takes_ptx_unchecked_and_says_nothing():
    broken = scale_ptx().replace("ret;", "this is not ptx;")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert modrt.compile(broken, "cuda", [SIGNATURE], validate=False).kind == "cuda"
