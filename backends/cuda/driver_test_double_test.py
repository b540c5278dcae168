"""The CUDA runtime against a TEST DOUBLE of the driver (libcuda_test_double.so,
named by MODRT_CUDA_DRIVER_LIBRARY): device attributes, memory and copies, and
the launch marshalling -- the kernel parameter bytes, grid and block from the
launch tags, dynamic shared memory -- as the driver receives them. No kernel
runs; tools/gpu runs the same kernels on a real GPU."""

import struct

import cuda_testing
import numpy as np
import pytest
from corpus_run import kernel_source
from cuda_testing import DriverLog

import modrt
import modrt_testing

KERNELS = (
    cuda_testing.KERNELS
    + r"""
extern "C" __global__ void scalars(float* out, float f, long long i64, double d, char c, short h) {
  out[0] = f + i64 + d + c + h;
}
extern "C" __global__ void tile(float* out, int width) {
  out[(blockIdx.y * blockDim.y + threadIdx.y) * width + blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
"""
)
SIGNATURES = cuda_testing.SIGNATURES + [
    "scalars(float32*, float32, int64, float64, int8, int16)",
    "tile(float32*, int32; blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y)",
]


@pytest.fixture(scope="module")
def dev():
    d = modrt.device("cuda", 0)
    assert d.exist, d.unavailable_reason
    return d


@pytest.fixture
def log():
    driver = DriverLog()
    driver.reset()
    return driver


@pytest.fixture(scope="module")
def mod(dev):
    m = modrt.compile(KERNELS, modrt.target.detect_target_from_device(dev), SIGNATURES)
    assert not m.is_fallback
    return m


def pointer(t: modrt.Tensor) -> str:
    return struct.pack("<Q", t._dl().data).hex()


def test_device_attributes_come_from_the_driver(dev):
    assert dev.name == "modrt CUDA test double"
    assert dev.compute_version == "7.5"
    assert (dev.warp_size, dev.max_threads_per_block, dev.multi_processor_count) == (32, 1024, 40)
    assert dev.max_shared_memory_per_block == 49152
    assert dev.attr("global_memory") == 1 << 30
    assert dev.attr("driver_version") == "12.4"
    assert not modrt.device("cuda", 1).exist
    tgt = modrt.target.detect_target_from_device(dev)
    assert (tgt.kind, tgt.arch, tgt.thread_warp_size) == ("cuda", "sm_75", 32)


def test_memory_and_copies_round_trip(dev):
    x = np.arange(1000, dtype="float32")
    t = modrt.tensor(x, dev)
    assert t.device == dev
    np.testing.assert_array_equal(t.numpy(), x)


def test_vector_add_launch_parameters(dev, mod, log):
    n = 1000
    a, b, c = (modrt.tensor(np.zeros(n, "float32"), dev) for _ in range(3))
    mod["vadd"](a, b, c, n, (n + 63) // 64, 64)
    (loaded,) = log.calls("cuModuleLoadDataEx")
    assert loaded["format"] == "ptx"
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["kernel"] == "vadd"
    assert launch["grid"] == [16, 1, 1] and launch["block"] == [64, 1, 1] and launch["shared"] == 0
    assert launch["params"] == [pointer(a), pointer(b), pointer(c), struct.pack("<i", n).hex()]
    assert launch["stream"] is None and launch["extra"] is None


def test_scalar_parameters_have_their_declared_c_types(dev, mod, log):
    out = modrt.empty((1,), "float32", dev)
    mod["scalars"](out, 1.5, -2, 0.25, -3, 300)
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["params"] == [
        pointer(out),
        struct.pack("<f", 1.5).hex(),
        struct.pack("<q", -2).hex(),
        struct.pack("<d", 0.25).hex(),
        struct.pack("<b", -3).hex(),
        struct.pack("<h", 300).hex(),
    ]
    # No launch tags: one thread in one block.
    assert launch["grid"] == [1, 1, 1] and launch["block"] == [1, 1, 1]


def test_two_dimensional_grid_and_block_follow_the_tags(dev, mod, log):
    out = modrt.empty((64 * 48,), "float32", dev)
    mod["tile"](out, 64, 4, 3, 16, 16)
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["grid"] == [4, 3, 1] and launch["block"] == [16, 16, 1]


def test_dynamic_shared_memory(dev, mod, log):
    x = modrt.tensor(np.arange(256, dtype="int32"), dev)
    out = modrt.empty((4,), "int32", dev)
    mod["block_sum"](x, out, 4, 64, 64 * 4)
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["shared"] == 256 and launch["grid"] == [4, 1, 1] and launch["block"] == [64, 1, 1]
    assert log.calls("cuFuncSetAttribute") == []


def test_dynamic_shared_memory_above_48k_is_opted_in(dev, mod, log):
    x = modrt.tensor(np.zeros(256, dtype="int32"), dev)
    out = modrt.empty((4,), "int32", dev)
    mod["block_sum"](x, out, 4, 64, 60000)
    (opt_in,) = log.calls("cuFuncSetAttribute")
    assert opt_in == {"call": "cuFuncSetAttribute", "kernel": "block_sum", "max_dynamic_shared": 60000}
    assert log.calls("cuLaunchKernel")[0]["shared"] == 60000
    with pytest.raises(
        RuntimeError,
        match="allowing 70000 bytes of dynamic shared memory for block_sum failed: CUDA_ERROR_INVALID_VALUE",
    ):
        mod["block_sum"](x, out, 4, 64, 70000)


def test_launch_errors_from_the_driver_are_clean(dev, mod, log):
    c = modrt.empty((4,), "float32", dev)
    with pytest.raises(RuntimeError, match="CUDA cuLaunchKernel of vadd failed: CUDA_ERROR_INVALID_VALUE"):
        mod["vadd"](c, c, c, 4, 1, 2048)
    with pytest.raises(ValueError, match="lives on cpu, but this kernel runs on cuda"):
        mod["vadd"](modrt.empty((4,), "float32"), c, c, 4, 1, 4)


def test_bad_arguments_and_grids_are_refused_naming_the_cause_before_the_driver(dev, mod, log):
    """A launch goes down once (the core packs, then calls the module's
    launch): what packing refuses, and a grid the driver's unsigned int
    cannot hold, never reach cuLaunchKernel."""
    a, b, c = (modrt.empty((64,), "float32", dev) for _ in range(3))
    with pytest.raises(TypeError, match=r"vadd takes 4 arguments and 2 launch parameters .*got 3 values"):
        mod["vadd"](a, b, c)
    with pytest.raises(TypeError, match="vadd.*argument 'n'.*int32"):
        mod["vadd"](a, b, c, "64", 1, 64)
    with pytest.raises(OverflowError, match="vadd.*int32"):
        mod["vadd"](a, b, c, 1 << 40, 1, 64)
    with pytest.raises(
        ValueError,
        match=r"vadd: blockIdx\.x = 4294967296 exceeds the device's limit of 4294967295 "
        r"\(the driver's unsigned int, cuda\(0\)\)",
    ):
        mod["vadd"](a, b, c, 64, 1 << 32, 64)
    assert log.calls("cuLaunchKernel") == []
    mod["vadd"](a, b, c, 64, 1, 64)
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["params"] == [pointer(a), pointer(b), pointer(c), struct.pack("<i", 64).hex()]


def test_a_kernel_missing_from_the_module_is_named(dev):
    # At compile time, from the source.
    with pytest.raises(ValueError, match=r"source has no kernel 'vsub' \(it defines: vadd, block_sum, scalars, tile\)"):
        modrt.compile(KERNELS, "cuda", ["vsub(float32*; blockIdx.x, threadIdx.x)"])
    # A module made from a payload directly (no codegen to check it): at the launch.
    ptx = modrt.compile(KERNELS, "cuda", SIGNATURES[:1]).inspect_source("ptx")
    payload = modrt.Payload.create(
        "single-binary", "ptx", ["vsub(float32*; blockIdx.x, threadIdx.x)"], code=ptx.encode()
    )
    m = modrt.load_module_from_bytes("cuda", payload.save())
    with pytest.raises(RuntimeError, match="finding kernel 'vsub'.*CUDA_ERROR_NOT_FOUND"):
        m["vsub"](modrt.empty((1,), "float32", dev), 1, 1)


def test_cuda_source_is_compiled_with_nvrtc_when_loaded(dev, log):
    """The receiving end of a cross-compile: fmt "cuda" becomes a cubin for
    this device's sm_75 when the module is first used."""
    payload = modrt.Payload.create("single-binary", "cuda", SIGNATURES[:1], code=KERNELS.encode())
    mod = modrt.load_module_from_bytes("cuda", payload.save())
    a = modrt.empty((8,), "float32", dev)
    mod["vadd"](a, a, a, 8, 1, 8)
    (loaded,) = log.calls("cuModuleLoadDataEx")
    assert loaded["format"] == "elf" and loaded["bytes"] > 0
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["kernel"] == "vadd" and launch["block"] == [8, 1, 1]


def test_cuda_source_that_does_not_compile_fails_at_load_with_the_nvrtc_log(dev):
    """Where NVRTC is present, bad source fails when the module is loaded or
    created, not at its first launch."""
    payload = modrt.Payload.create(
        "single-binary", "cuda", ["broken(float32*)"], code=b'extern "C" __global__ void broken(float* x) { x[0] = y; }'
    )
    nvrtc_log = r"(?s)NVRTC [\d.]+ could not compile.*sm_\d+.*undefined"
    with pytest.raises(RuntimeError, match=nvrtc_log):
        modrt.load_module_from_bytes("cuda", payload.save())
    with pytest.raises(RuntimeError, match=nvrtc_log):
        modrt.get_global_func("module.create.cuda")(payload)


def test_cross_compile_round_trip_across_processes(tmp_path, dev, log):
    path = tmp_path / "vadd.cuda"
    compile_side = f"""
import modrt
m = modrt.compile({KERNELS!r}, "cuda", {SIGNATURES!r})
assert m.is_fallback, "the runtime was forced off"
open({str(path)!r}, "wb").write(m.save_to_bytes())
"""
    proc = modrt_testing.run_python(compile_side, env={"MODRT_COMPILE_FORCE_FALLBACK": "1"})
    assert proc.returncode == 0, proc.stderr
    mod = modrt.load_module_from_bytes("cuda", path.read_bytes())
    assert not mod.is_fallback
    a = modrt.empty((8,), "float32", dev)
    mod["vadd"](a, a, a, 8, 1, 8)
    assert log.calls("cuLaunchKernel")[0]["params"][3] == struct.pack("<i", 8).hex()


def test_without_nvrtc_cuda_source_cannot_be_loaded_and_says_so(tmp_path):
    code = """
import modrt
p = modrt.Payload.create("single-binary", "cuda", ["k(float32*)"], code=b'extern "C" __global__ void k(float* x) {}')
m = modrt.load_module_from_bytes("cuda", p.save())
try:
    m["k"](modrt.empty((1,), "float32", modrt.device("cuda")))
except RuntimeError as e:
    print(e)
"""
    proc = modrt_testing.run_python(code, env={"MODRT_NVRTC_LIBRARY": str(tmp_path / "libnvrtc.so.12")})
    assert proc.returncode == 0, proc.stderr
    assert "needs NVRTC to compile: libnvrtc: cannot load the driver library" in proc.stdout
    assert "MODRT_NVRTC_LIBRARY" in proc.stdout


LOAD_ON_DEVICE = """
import ctypes, json, os
import modrt
p = modrt.Payload.create("single-binary", "cuda", ["k(float32*)"], code=b'extern "C" __global__ void k(float* x) {}')
m = modrt.load_module_from_bytes("cuda", p.save())
try:
    m["k"](modrt.empty((1,), "float32", modrt.device("cuda")))
except (RuntimeError, ValueError) as e:
    print(type(e).__name__, e)
double = ctypes.CDLL(os.path.abspath(os.environ["MODRT_CUDA_DRIVER_LIBRARY"]))
double.modrt_cuda_test_double_log.restype = ctypes.c_char_p
for line in double.modrt_cuda_test_double_log().decode().splitlines():
    if json.loads(line)["call"] == "cuModuleLoadDataEx":
        print("loaded", json.loads(line)["format"])
"""


def test_compile_on_load_has_the_arch_policy_of_codegen():
    """backends/cuda/nvrtc.h, for both: a GPU whose arch this NVRTC lacks gets
    PTX for the newest arch below it (the driver JITs it); one older than every
    arch it supports is refused, naming those."""
    from modrt.backend.cuda import nvrtc

    supported = nvrtc.load().supported_archs()
    missing = next(a for a in range(supported[0], supported[-1]) if a not in supported)
    env = {"MODRT_CUDA_TEST_DOUBLE_COMPUTE_CAPABILITY": f"{missing // 10}.{missing % 10}"}
    proc = modrt_testing.run_python(LOAD_ON_DEVICE, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["loaded ptx"]

    proc = modrt_testing.run_python(LOAD_ON_DEVICE, env={"MODRT_CUDA_TEST_DOUBLE_COMPUTE_CAPABILITY": "3.0"})
    assert proc.returncode == 0, proc.stderr
    assert (
        f"ValueError NVRTC {nvrtc.load().version} cannot compile for sm_30; it supports sm_{supported[0]}"
        in proc.stdout
    )
    assert "loaded" not in proc.stdout


def test_a_real_compilers_kernel_launches_with_the_signature_read_from_it(dev, log):
    """TVM's kernel (tests/corpus: cuda/std headers, a dynamic length): no
    signature given; arguments by the names the kernel declares."""
    source = kernel_source("tvm", "symbolic_scale", "cuda")
    mod = modrt.compile(source, modrt.target.detect_target_from_device(dev))
    a, out = modrt.empty((1000,), "float32", dev), modrt.empty((1000,), "float32", dev)
    mod["symbolic_scale_kernel"](a_ptr=a, out_ptr=out, n=1000, blockIdx_x=1, threadIdx_x=1000)
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["kernel"] == "symbolic_scale_kernel"
    assert launch["grid"] == [1, 1, 1] and launch["block"] == [1000, 1, 1]
    assert len(launch["params"]) == 3 and launch["params"][2] == struct.pack("<i", 1000).hex()


def test_a_cpp_kernel_launches_under_its_plain_name(dev, log):
    source = "__global__ void twice(float* x) { x[threadIdx.x] *= 2; }\n"
    mod = modrt.compile(source, "cuda")
    mod["twice"](modrt.empty((4,), "float32", dev), 1, 4)
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["kernel"] == "twice" and launch["block"] == [4, 1, 1]


def test_a_scalar_filled_from_the_launch_is_passed_to_the_kernel(dev, log):
    """A compiler's extra launch parameter (TVM's packGridDimX in its WGSL is one):
    named in the signature as filled from the launch, the caller does not pass it."""
    source = 'extern "C" __global__ void k(float* x, int grid) { x[blockIdx.x] = grid; }\n'
    mod = modrt.compile(source, "cuda", ["k(float32* x, int32 grid = blockIdx.x; blockIdx.x, threadIdx.x)"])
    mod["k"](modrt.empty((7,), "float32", dev), 7, 1)
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["grid"] == [7, 1, 1] and launch["params"][1] == struct.pack("<i", 7).hex()
