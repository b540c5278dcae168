"""CUDA as real compilers emit it (docs/formats/cuda.md): tinygrad's and TVM's
kernels (tests/corpus, made by its generators) compile here with NVRTC and the
NVIDIA header wheels, unchanged; the kernel's interface is read from its source
and its PTX, and a signature that disagrees is refused showing both sides.
Launches are the GPU script's (gpu_test.py)."""

import os
import re

import pytest
from corpus_run import kernel_source

import modrt
from modrt.backend import cuda as cuda_hook
from modrt.backend.cuda import nvrtc, reflection
from modrt.target import Target

# Real kernels of the corpus (compiler/case) and the signature modrt reads from each.
REAL_KERNELS = {
    "tinygrad/elementwise_broadcast": [
        "E_4_2_4(float32* data0_32, float32* data1_32, float32* data2_8"
        "; blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y)"
    ],
    "tinygrad/reduce_rows": ["r_16_16_8(float32* data0_16, float32* data1_2048; blockIdx.x, threadIdx.x)"],
    "tinygrad/half_ops": ["E_16_4(float16* data0_64, float16* data1_64; blockIdx.x, threadIdx.x)"],
    "tinygrad/symbolic_scale": ["E_n(float32* data0_64, float32* data1_64, int32 data2_; blockIdx.x, threadIdx.x)"],
    "tvm/reduce_cols": [
        "reduce_cols_kernel(float32* a_ptr, float32* a_red_ptr; blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y)"
    ],
    "tvm/symbolic_scale": ["symbolic_scale_kernel(float32* a_ptr, float32* out_ptr, int32 n; blockIdx.x, threadIdx.x)"],
    "tvm/half_ops": ["half_ops_kernel(float16* a_ptr, float16* out_ptr; blockIdx.x, threadIdx.x)"],
}


def kernel(case: str) -> str:
    """The CUDA kernel of corpus case `compiler/case`."""
    return kernel_source(*case.split("/"), "cuda")


@pytest.fixture(autouse=True)
def _fallback(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")


def test_the_header_wheels_are_found():
    dirs = nvrtc.header_dirs()
    assert any(os.path.isfile(os.path.join(d, "cuda_fp16.h")) for d in dirs), dirs
    assert any(os.path.isfile(os.path.join(d, "cuda", "std", "cstdint")) for d in dirs), dirs


@pytest.mark.parametrize("name", sorted(REAL_KERNELS))
def test_real_kernels_are_reflected_from_their_source(name):
    assert cuda_hook.reflect(kernel(name)) == REAL_KERNELS[name]


@pytest.mark.parametrize("name", sorted(REAL_KERNELS))
def test_real_kernels_compile_unchanged_and_their_entries_match(name):
    source = kernel(name)
    mod = modrt.compile(source, "cuda")
    ptx = mod.inspect_source("ptx")
    assert mod.inspect_source("cuda") == source
    assert [mod.signature(f) for f in mod.function_names] == REAL_KERNELS[name]
    assert [e.name for e in reflection.ptx_entries(ptx)] == mod.function_names


def test_a_signature_that_disagrees_with_the_kernel_is_refused_showing_both_sides():
    with pytest.raises(modrt.SignatureError) as e:
        modrt.compile(kernel("tvm/half_ops"), "cuda", ["half_ops_kernel(float16*, float32*)"])
    assert str(e.value) == (
        "the signature does not match the CUDA C++ kernel: argument 1 ('out_ptr') has buffer element type "
        "float32 in the signature, float16 in the kernel\n"
        "  given:  half_ops_kernel(float16*, float32*)\n"
        "  kernel: half_ops_kernel(float16* a_ptr, float16* out_ptr; blockIdx.x, threadIdx.x)"
    )


def test_a_signature_with_too_few_arguments_is_refused():
    with pytest.raises(modrt.SignatureError, match="2 arguments in the signature, 3 in the kernel"):
        modrt.compile(kernel("tvm/symbolic_scale"), "cuda", ["symbolic_scale_kernel(float32*, float32*)"])


def test_a_signature_naming_no_kernel_of_the_source_is_refused():
    with pytest.raises(ValueError, match=r"the CUDA C\+\+ source has no kernel 'k' \(it defines: reduce_cols_kernel\)"):
        modrt.compile(kernel("tvm/reduce_cols"), "cuda", ["k(float32*, float32*)"])


def test_kernels_a_macro_writes_need_signatures_and_are_found_in_the_ptx():
    source = '#define KERNEL(n) extern "C" __global__ void n(float* x) { x[0] = 1; }\nKERNEL(made)\n'
    assert cuda_hook.reflect(source) is None
    with pytest.raises(ValueError, match="needs function signatures"):
        modrt.compile(source, "cuda")
    mod = modrt.compile(source, "cuda", ["made(float32*; blockIdx.x, threadIdx.x)"])
    assert [e.name for e in reflection.ptx_entries(mod.inspect_source("ptx"))] == ["made"]
    with pytest.raises(
        ValueError, match=r"has no single kernel 'other' \(no such entry point\); its entry points are: made$"
    ):
        modrt.compile(source, "cuda", ["other(float32*; blockIdx.x, threadIdx.x)"])


CPP_KERNEL = "__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n"


def test_a_cpp_kernel_is_found_under_its_plain_name():
    mod = modrt.compile(CPP_KERNEL, "cuda", ["scale(float32*, float32; blockIdx.x, threadIdx.x)"])
    ptx = mod.inspect_source("ptx")
    assert [e.name for e in reflection.ptx_entries(ptx)] == ["scale"]
    assert ".entry _Z5scalePff" not in ptx


def test_overloaded_cpp_kernels_are_refused_naming_the_entry_points():
    source = CPP_KERNEL + "__global__ void scale(int* x, int a) { x[threadIdx.x] *= a; }\n"
    with pytest.raises(ValueError) as e:
        modrt.compile(source, "cuda", ["scale(float32*, float32; blockIdx.x, threadIdx.x)"])
    assert "has no single kernel 'scale' (several C++ kernels are named so" in str(e.value)
    assert "_Z5scalePff (C++ scale), _Z5scalePii (C++ scale)" in str(e.value)


def test_a_missing_entry_is_refused_naming_the_entry_points():
    source = CPP_KERNEL + "__global__ void scale(int* x, int a) { x[threadIdx.x] *= a; }\n"
    with pytest.raises(
        ValueError,
        match=r"has no single kernel 'other' \(no such entry point\); "
        r"its entry points are: _Z5scalePff \(C\+\+ scale\), _Z5scalePii \(C\+\+ scale\)$",
    ):
        modrt.compile(source, "cuda", ["other(float32*, float32)"])


def test_user_options_and_include_dirs_reach_nvrtc(tmp_path):
    (tmp_path / "scale_factor.h").write_text("#define SCALE_FACTOR 3.0f\n")
    source = (
        '#include "scale_factor.h"\n'
        'extern "C" __global__ void k(float* x) { x[threadIdx.x] *= SCALE_FACTOR * OFFSET; }\n'
    )
    tgt = Target("cuda", arch="sm_80", include_dirs=[str(tmp_path)], options=["-DOFFSET=2.0f"])
    ptx = modrt.compile(source, tgt, ["k(float32*; blockIdx.x, threadIdx.x)"]).inspect_source("ptx")
    assert re.search(r"0f40C00000", ptx)  # 6.0f: both reached NVRTC


def test_options_and_include_dirs_are_keywords_of_compile(tmp_path):
    (tmp_path / "offset.h").write_text("#define OFFSET 2.0f\n")
    source = '#include "offset.h"\nextern "C" __global__ void k(float* x) { x[threadIdx.x] *= SCALE * OFFSET; }\n'
    with pytest.raises(modrt.CompileError, match="offset.h"):
        modrt.compile(source, "cuda")
    mod = modrt.compile(source, "cuda", options=["-DSCALE=3.0f"], include_dirs=[tmp_path])
    assert "0f40C00000" in mod.inspect_source("ptx")


def test_a_target_whose_compiler_takes_no_options_refuses_them():
    with pytest.raises(ValueError, match="target 'opencl' takes no compiler options"):
        modrt.compile("__kernel void k(__global float* x) {}", "opencl", options=["-DX"])


def test_a_bad_user_option_is_nvrtcs_error():
    tgt = Target("cuda", options=["--no-such-option"])
    with pytest.raises(modrt.CompileError, match="no-such-option"):
        modrt.compile(CPP_KERNEL, tgt)


PTX = """
//
// Generated by hand for the test
//
.version 8.0
.target sm_75
.address_size 64

.visible .entry scale(
\t.param .u64 scale_param_0,
\t.param .f32 scale_param_1
)
{
\tret;
}
"""


def test_ptx_text_is_a_ptx_module():
    mod = modrt.compile(PTX, "cuda", ["scale(float32* x, float32 a; blockIdx.x, threadIdx.x)"])
    assert mod.inspect_source("ptx").strip() == PTX.strip()
    assert mod.signature("scale") == "scale(float32* x, float32 a; blockIdx.x, threadIdx.x)"
    assert cuda_hook.reflect(PTX) is None


def test_ptx_needs_signatures():
    with pytest.raises(
        ValueError,
        match="compile for target 'cuda' needs function signatures: this source does not declare its interface",
    ):
        modrt.compile(PTX, "cuda")


def test_a_ptx_signature_with_the_wrong_parameter_sizes_is_refused():
    with pytest.raises(modrt.SignatureError) as e:
        modrt.compile(PTX, "cuda", ["scale(float32*, float64)"])
    assert str(e.value) == (
        "the signature does not match the CUDA C++ kernel: the .param sizes of PTX entry 'scale' are [8, 4] "
        "bytes, the signature's [8, 8] (a buffer is a 64-bit pointer; a scalar is as wide as its dtype)\n"
        "  given:  scale(float32*, float64)\n"
        "  kernel: scale(.u64, .f32)"
    )


def test_a_ptx_signature_naming_a_missing_entry_is_refused():
    with pytest.raises(
        ValueError, match=r"PTX has no single kernel 'vadd' \(no such entry point\); its entry points are: scale"
    ):
        modrt.compile(PTX, "cuda", ["vadd(float32*, float32)"])


@pytest.mark.parametrize(
    ("symbol", "plain"),
    [("_Z5scalePff", "scale"), ("_ZN2ns6kernelEPf", "ns::kernel"), ("_Z4gemmIfEvPT_", "gemm"), ("vadd", "vadd")],
)
def test_mangled_names_give_their_function_name(symbol, plain):
    assert reflection.plain_name(symbol) == plain


def test_launch_dimensions_and_dynamic_shared_memory_are_read_from_the_source():
    source = (
        'extern "C" __global__ void t(float* x, const float* __restrict__ y) {\n'
        "  extern __shared__ float tile[];\n"
        "  tile[threadIdx.y] = y[blockIdx.y * blockDim.x + threadIdx.x]; x[0] = tile[0];\n"
        "}\n"
    )
    assert cuda_hook.reflect(source) == [
        "t(float32* x, const float32* y; blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, dyn_shared_mem)"
    ]


def test_a_parameter_type_modrt_does_not_read_needs_a_signature_checked_against_the_ptx():
    source = 'typedef float real;\nextern "C" __global__ void k(real* x, int n) { x[n] = 1; }\n'
    assert cuda_hook.reflect(source) is None
    with pytest.raises(reflection.ReflectionError, match=r"kernel 'k': cannot read the type of parameter 0 `real\* x`"):
        reflection.scan_kernels(source)
    with pytest.raises(ValueError, match="needs function signatures"):
        modrt.compile(source, "cuda")
    mod = modrt.compile(source, "cuda", ["k(float32* x, int32 n; blockIdx.x, threadIdx.x)"])
    assert mod.signature("k") == "k(float32* x, int32 n; blockIdx.x, threadIdx.x)"
    with pytest.raises(modrt.SignatureError, match=r"are \[8, 4\] bytes, the signature's \[8, 8\]"):
        modrt.compile(source, "cuda", ["k(float32* x, int64 n; blockIdx.x, threadIdx.x)"])
