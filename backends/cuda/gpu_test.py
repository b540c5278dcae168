"""CUDA end to end on a real GPU and driver: run by tools/gpu/cuda_e2e.sh (or
`bazel test //backends/cuda:gpu_test --//backends:cuda=on` on a GPU machine
whose driver the test can load). Fails, never skips, when there is no GPU."""

import os

import numpy as np
import pytest

import modrt
import modrt_testing

KERNELS = r"""
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void block_sum(const int* x, int* out) {
  extern __shared__ int scratch[];
  scratch[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = scratch[0];
}
"""
SIGNATURES = [
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
    "block_sum(int32*, int32*; blockIdx.x, threadIdx.x, dyn_shared_mem)",
]


@pytest.fixture(scope="module")
def dev():
    d = modrt.device("cuda", 0)
    assert d.exist, d.unavailable_reason
    return d


def vadd_on(mod, dev, n=100_000):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    c = modrt.empty((n,), "float32", dev)
    mod["vadd"](modrt.tensor(a, dev), modrt.tensor(b, dev), c, n, (n + 255) // 256, 256)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)


def test_device_is_described(dev):
    print(
        f"\n{dev}: {dev.name}, compute {dev.compute_version}, {dev.multi_processor_count} SMs, "
        f"driver CUDA {dev.attr('driver_version')}"
    )
    assert dev.warp_size == 32 and dev.max_threads_per_block >= 1024
    assert dev.max_shared_memory_per_block >= 48 * 1024
    tgt = modrt.target.detect_target_from_device(dev)
    assert tgt.arch == "sm_" + dev.compute_version.replace(".", "")


def test_vector_add(dev):
    mod = modrt.compile(KERNELS, modrt.target.detect_target_from_device(dev), SIGNATURES)
    assert not mod.is_fallback and mod.inspect_source().lstrip().startswith("//")  # PTX
    vadd_on(mod, dev)


@pytest.mark.parametrize("block, shared_ints", [(256, 256), (1024, 16384)])
def test_shared_memory_reduction(dev, block, shared_ints):
    """The second case asks for 64 KiB of dynamic shared memory (opt-in)."""
    mod = modrt.compile(KERNELS, modrt.target.detect_target_from_device(dev), SIGNATURES)
    blocks = 8
    x = np.arange(blocks * block, dtype="int32") % 1000
    out = modrt.empty((blocks,), "int32", dev)
    mod["block_sum"](modrt.tensor(x, dev), out, blocks, block, shared_ints * 4)
    np.testing.assert_array_equal(out.numpy(), x.reshape(blocks, block).sum(axis=1))


@pytest.mark.parametrize("nvrtc_on_compile_side", [True, False], ids=["ptx", "cuda-source"])
def test_cross_compiled_module_loaded_from_bytes(tmp_path, dev, nvrtc_on_compile_side):
    """Compiled in another process with the runtime forced off (as on a
    machine without one), saved, then loaded here from bytes."""
    path = tmp_path / "kernels.cuda"
    compile_side = f"""
import modrt
m = modrt.compile({KERNELS!r}, "cuda", {SIGNATURES!r})
assert m.is_fallback
open({str(path)!r}, "wb").write(m.save_to_bytes())
print(m.inspect_source()[:20])
"""
    env = {"MODRT_COMPILE_FORCE_FALLBACK": "1"}
    if not nvrtc_on_compile_side:
        env["PATH"] = str(tmp_path)  # no nvcc either
        compile_side = compile_side.replace(
            "import modrt\n", "import modrt\nfrom modrt.backend.cuda import nvrtc\nnvrtc.find_library = lambda: None\n"
        )
    proc = modrt_testing.run_python(compile_side, env=env)
    assert proc.returncode == 0, proc.stderr
    mod = modrt.load_module_from_bytes("cuda", path.read_bytes())
    assert not mod.is_fallback
    expected_fmt = "ptx" if nvrtc_on_compile_side else "cuda"
    assert mod.save_to_bytes()[8 : 8 + len(expected_fmt)] == expected_fmt.encode()
    vadd_on(mod, dev)


# Real compilers' kernels as emitted (testdata/: tinygrad 0.14.0, TVM
# 0.27.0.post1), compiled with no signature (modrt reads it from the kernel;
# NVRTC gets the CUDA header wheels), launched with the sizes their compiler
# chose, and checked against numpy.
TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")
RNG = np.random.default_rng(26)


def real(name, dev):
    with open(os.path.join(TESTDATA, name)) as f:
        mod = modrt.compile(f.read(), modrt.target.detect_target_from_device(dev))
    (function,) = mod.function_names
    return mod[function]


def test_tinygrad_elementwise_add(dev):
    a, b = RNG.standard_normal(1000, dtype="float32"), RNG.standard_normal(1000, dtype="float32")
    out = modrt.empty((1000,), "float32", dev)
    real("tinygrad_add.cu", dev)(out, modrt.tensor(a, dev), modrt.tensor(b, dev), 125, 2)
    np.testing.assert_allclose(out.numpy(), a + b, rtol=1e-6)


def test_tinygrad_reduction_with_shared_memory(dev):
    x, y = RNG.standard_normal((64, 32), dtype="float32"), RNG.standard_normal(32, dtype="float32")
    out = modrt.empty((64,), "float32", dev)
    real("tinygrad_sum_rows.cu", dev)(out, modrt.tensor(x.ravel(), dev), modrt.tensor(y, dev), 64, 16)
    np.testing.assert_allclose(out.numpy(), (x + y).sum(axis=1), rtol=1e-5)


def test_tinygrad_half_multiply_with_cuda_fp16(dev):
    a, b = RNG.standard_normal(256).astype("float16"), RNG.standard_normal(256).astype("float16")
    out = modrt.empty((256,), "float16", dev)
    real("tinygrad_half_mul.cu", dev)(out, modrt.tensor(a, dev), modrt.tensor(b, dev), 2, 32)
    np.testing.assert_array_equal(out.numpy(), a * b)


def test_tinygrad_symbolic_shape_scalar(dev):
    x = RNG.standard_normal(128, dtype="float32")
    out = modrt.tensor(np.zeros(128, "float32"), dev)
    real("tinygrad_sym_exp2.cu", dev)(out, modrt.tensor(x, dev), 40, 40, 1)
    np.testing.assert_allclose(out.numpy()[:40], np.exp2(x[:40]), rtol=1e-5)
    assert not out.numpy()[40:].any()


def test_tvm_reduction_with_cuda_std_headers(dev):
    m = RNG.standard_normal((64, 128), dtype="float32")
    out = modrt.empty((64,), "float32", dev)
    real("tvm_row_sum.cu", dev)(M_ptr=modrt.tensor(m.ravel(), dev), S_ptr=out, blockIdx_x=1, threadIdx_x=64)
    np.testing.assert_allclose(out.numpy(), m.sum(axis=1), rtol=1e-4)


@pytest.mark.parametrize("name, dtype", [("tvm_add_int_dyn.cu", "int32"), ("tvm_add_half_dyn.cu", "float16")])
def test_tvm_dynamic_length(dev, name, dtype):
    n = 5000
    a, b = RNG.standard_normal(n, dtype="float32"), (RNG.standard_normal(n) * 10).astype(dtype)
    out = modrt.empty((n,), "float32", dev)
    real(name, dev)(modrt.tensor(a, dev), modrt.tensor(b, dev), out, n, (n + 1023) // 1024, 1024)
    np.testing.assert_allclose(out.numpy(), a + b.astype("float32"), rtol=1e-6)
