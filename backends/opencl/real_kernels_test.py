"""OpenCL C as real compilers emit it (docs/formats/opencl.md): modrt reads the
interface of tinygrad's and TVM's kernels (tests/corpus, where
corpus_opencl_test runs every one of them on PoCL against numpy), passes
arguments by the names a kernel declares, and refuses a signature that
disagrees with the kernel, showing both sides."""

import numpy as np
import pytest
from corpus_run import kernel_source

import modrt
from modrt.backend import opencl as opencl_hook
from modrt.backend.opencl import reflection


def kernel(case: str) -> str:
    """The OpenCL C kernel of corpus case `compiler/case`."""
    return kernel_source(*case.split("/"), "opencl")


@pytest.fixture(scope="module")
def dev():
    d = modrt.device("opencl", 0)
    assert d.exist, d.unavailable_reason
    return d


# What modrt reads from real kernels of the corpus (compiler/case).
REFLECTED = {
    "tinygrad/elementwise_broadcast": "E_4_2_4(float32* data0_32, float32* data1_32, float32* data2_8"
    "; blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y)",
    "tinygrad/half_ops": "E_16_4(uint16* data0_64, uint16* data1_64; blockIdx.x, threadIdx.x)",
    "tinygrad/symbolic_scale": "E_n(float32* data0_64, float32* data1_64, int32 data2_; blockIdx.x, threadIdx.x)",
    "tvm/symbolic_scale": "symbolic_scale_kernel(float32* a_ptr, float32* out_ptr, int32 n; blockIdx.x, threadIdx.x)",
    "tvm/int32_ops": "int32_ops_kernel(int32* T_maximum_ptr, int32* a_ptr, int32* b_ptr; blockIdx.x, threadIdx.x)",
}


@pytest.mark.parametrize("case", sorted(REFLECTED))
def test_real_kernels_are_reflected(case):
    assert opencl_hook.reflect(kernel(case)) == [REFLECTED[case]]


ADDRESS_SPACES = """
typedef float real;
__kernel void k(__global real* restrict out, const __global half* in, __constant float* table,
                const int n, uint m, float4 v, __local float* scratch) {
  out[get_global_id(1)] = table[0] + scratch[get_local_id(0)];
}
"""


def test_address_spaces_const_typedefs_vectors_and_a_trailing_local_pointer():
    assert opencl_hook.reflect(ADDRESS_SPACES) == [
        "k(float32* out, const float16* in, const float32* table, int32 n, uint32 m, float32x4 v; "
        "blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, dyn_shared_mem)"
    ]


def test_a_local_pointer_that_is_not_last_is_refused():
    source = "__kernel void k(__local float* a, __global float* out) { out[0] = a[0]; }"
    with pytest.raises(reflection.ReflectionError) as e:
        opencl_hook.reflect(source)
    assert str(e.value) == (
        "kernel 'k': __local pointer parameter(s) a: modrt sizes one __local pointer, the last parameter, as the "
        "launch's dynamic shared memory (dyn_shared_mem); declare other work-group arrays inside the kernel"
    )


def test_an_image_parameter_is_refused_naming_it():
    source = "__kernel void k(read_only image2d_t img, __global float* out) { out[0] = 1.0f; }"
    with pytest.raises(
        reflection.ReflectionError, match=r"kernel 'k': parameter 0 \(img: .*\) is not one modrt passes"
    ):
        opencl_hook.reflect(source)


def test_a_dimension_that_is_not_a_literal_means_three():
    source = "__kernel void k(__global int* o, int d) { o[0] = get_global_id(d); }"
    assert opencl_hook.reflect(source) == [
        "k(int32* o, int32 d; blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z)"
    ]


def test_the_module_keeps_the_kernels_signature():
    mod = modrt.compile(kernel("tvm/symbolic_scale"), "opencl")
    assert mod.signature("symbolic_scale_kernel") == REFLECTED["tvm/symbolic_scale"]


def test_arguments_pass_by_the_names_the_kernel_declares(dev):
    mod = modrt.compile(kernel("tvm/reduce_cols"), "opencl")
    a = np.random.default_rng(26).standard_normal((128, 16), dtype="float32")
    out = modrt.empty((16,), "float32", dev)
    mod["reduce_cols_kernel"](
        a_red_ptr=out, a_ptr=modrt.tensor(a, dev), blockIdx_x=1, blockIdx_y=1, threadIdx_x=16, threadIdx_y=16
    )
    np.testing.assert_allclose(out.numpy(), a.sum(axis=0), rtol=1e-4, atol=1e-4)


def test_a_wrong_element_type_is_refused_showing_both_sides():
    with pytest.raises(modrt.SignatureError) as e:
        modrt.compile(kernel("tvm/int32_ops"), "opencl", ["int32_ops_kernel(int32*, float32*, int32*)"])
    assert str(e.value) == (
        "the signature does not match the OpenCL C kernel: argument 1 ('a_ptr') has buffer element type "
        "float32 in the signature, int32 in the kernel\n"
        "  given:  int32_ops_kernel(int32*, float32*, int32*)\n"
        "  kernel: " + REFLECTED["tvm/int32_ops"]
    )


def test_a_scalar_given_as_a_buffer_is_refused():
    with pytest.raises(
        modrt.SignatureError, match=r"argument 2 \('n'\) is a buffer in the signature, a scalar in the kernel"
    ):
        modrt.compile(kernel("tvm/symbolic_scale"), "opencl", ["symbolic_scale_kernel(float32*, float32*, int32*)"])


def test_a_wrong_argument_count_is_refused():
    with pytest.raises(modrt.SignatureError, match="3 arguments in the signature, 2 in the kernel"):
        modrt.compile(kernel("tvm/reduce_cols"), "opencl", ["reduce_cols_kernel(float32*, float32*, int32)"])


def test_a_wrong_name_is_refused():
    with pytest.raises(
        modrt.SignatureError, match=r"argument 0 \('A'\) is named 'A' in the signature, 'a_ptr' in the kernel"
    ):
        modrt.compile(kernel("tvm/reduce_cols"), "opencl", ["reduce_cols_kernel(float32* A, float32*)"])


def test_const_on_a_buffer_the_kernel_writes_is_refused():
    with pytest.raises(
        modrt.SignatureError,
        match=r"argument 1 \('a_red_ptr'\) is const in the signature, but the kernel may write it",
    ):
        modrt.compile(kernel("tvm/reduce_cols"), "opencl", ["reduce_cols_kernel(float32*, const float32*)"])


def test_a_missing_dyn_shared_mem_tag_is_refused():
    source = "__kernel void k(__global float* out, __local float* s) { out[0] = s[0]; }"
    with pytest.raises(
        modrt.SignatureError, match="the kernel takes dynamic shared memory; the signature has no dyn_shared_mem"
    ):
        modrt.compile(source, "opencl", ["k(float32*; blockIdx.x, threadIdx.x)"])


def test_a_kernel_the_source_lacks_is_refused_naming_those_it_has():
    with pytest.raises(ValueError, match=r"the OpenCL C source has no kernel 'k' \(it defines: reduce_cols_kernel\)"):
        modrt.compile(kernel("tvm/reduce_cols"), "opencl", ["k(float32*, float32*)"])


def test_source_that_does_not_parse_is_a_compile_error():
    with pytest.raises(modrt.CompileError, match=r"<k.cl>:1:\d+: error"):
        modrt.compile("__kernel void k(__global float* x) { x[0] = y; }", "opencl")
