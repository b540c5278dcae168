"""CUDA end to end on a real GPU and driver: run by tools/gpu/cuda_e2e.sh (or
`bazel test //backends/cuda:gpu_test --//backends:cuda=on` on a GPU machine
whose driver the test can load). Fails, never skips, when there is no GPU."""

import os
import subprocess
import sys

import numpy as np
import pytest
from cuda_testing import KERNELS, SIGNATURES

import modrt
import modrt_testing

# The corpus of real compilers' kernels (tests/corpus): beside this file where
# tools/gpu/cuda_wheels.sh stages it, at tests/corpus in the tree (and in Bazel's runfiles).
HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = next(
    (d for d in (os.path.join(HERE, "corpus"), os.path.join(HERE, "..", "..", "tests", "corpus")) if os.path.isdir(d)),
    None,
)
if CORPUS is not None and CORPUS not in sys.path:
    sys.path.insert(0, CORPUS)
from corpus_run import case_dir, kernel_source, load, run_case  # noqa: E402 (found through CORPUS)


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


# Real compilers' kernels as emitted (tests/corpus: tinygrad 0.14.0, TVM
# 0.27.0.post1), compiled with no signature (modrt reads it from the kernel;
# NVRTC gets the CUDA header wheels), launched with the sizes their compiler
# chose (the case's manifest), and checked against numpy.
REAL_KERNELS = [
    "tinygrad/elementwise_broadcast",  # a 2-D launch
    "tinygrad/reduce_rows",  # shared memory
    "tinygrad/half_ops",  # cuda_fp16.h
    "tinygrad/symbolic_scale",  # a symbolic length as a scalar
    "tvm/reduce_cols",  # <cuda/std/...> headers, shared memory
    "tvm/symbolic_scale",  # a dynamic length
    "tvm/half_ops",
    "tvm/int32_ops",
]
RNG = np.random.default_rng(26)


@pytest.mark.parametrize("case", REAL_KERNELS)
def test_real_compilers_kernels_run_with_the_signature_read_from_them(dev, case):
    manifest, sources = load(os.path.join(case_dir(*case.split("/"), "cuda"), "manifest.json"))
    target = modrt.target.detect_target_from_device(dev)
    run_case(manifest, {name: modrt.compile(text, target) for name, text in sources.items()}, dev)


def test_arguments_pass_by_the_names_the_kernel_declares(dev):
    mod = modrt.compile(kernel_source("tvm", "reduce_cols", "cuda"), modrt.target.detect_target_from_device(dev))
    a = RNG.standard_normal((128, 16), dtype="float32")
    out = modrt.empty((16,), "float32", dev)
    mod["reduce_cols_kernel"](
        a_red_ptr=out, a_ptr=modrt.tensor(a, dev), blockIdx_x=1, blockIdx_y=1, threadIdx_x=16, threadIdx_y=16
    )
    np.testing.assert_allclose(out.numpy(), a.sum(axis=0), rtol=1e-4, atol=1e-4)


# The native device layer (cuda_device.cc): streams, events with device
# timing, async and device-to-device copies, graphs by stream capture, and a
# kernel that never ends. Each test is short: the whole GPU session is minutes.
STREAM_KERNELS = r"""
// c += a, after spinning `cycles` clock cycles per thread: long enough that a
// reader on another stream without a wait would see c unfinished.
extern "C" __global__ void spin_add(const float* a, float* c, int n, long long cycles) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  long long start = clock64();
  while (clock64() - start < cycles) {}
  if (i < n) c[i] += a[i];
}
// x = x * 2 + k: the order of launches changes the result.
extern "C" __global__ void step(float* x, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 2.0f + k;
}
extern "C" __global__ void spin_forever(volatile int* flag) { while (flag[0] == 0) {} }
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""
STREAM_SIGNATURES = [
    "spin_add(float32*, float32*, int32, int64; blockIdx.x, threadIdx.x)",
    "step(float32*, float32, int32; blockIdx.x, threadIdx.x)",
    "spin_forever(int32*; blockIdx.x, threadIdx.x)",
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
]
N = 1 << 16
BLOCK = 256
GRID = N // BLOCK
SPIN_CYCLES = 2_000_000  # about a millisecond at GPU clocks


@pytest.fixture(scope="module")
def streams_mod(dev):
    return modrt.compile(STREAM_KERNELS, modrt.target.detect_target_from_device(dev), STREAM_SIGNATURES)


def test_two_streams_ordered_by_an_event(dev, streams_mod):
    a = RNG.standard_normal(N, dtype="float32")
    ta, c, d = modrt.tensor(a, dev), modrt.tensor(np.zeros(N, "float32"), dev), modrt.empty((N,), "float32", dev)
    first, second = modrt.Stream(dev), modrt.Stream(dev)
    assert first.native and second.native
    for _ in range(3):
        streams_mod["spin_add"](ta, c, N, SPIN_CYCLES, GRID, BLOCK, stream=first)
    second.wait(first.record())
    streams_mod["vadd"](c, c, d, N, GRID, BLOCK, stream=second)
    np.testing.assert_allclose(d.numpy(stream=second, timeout=60), 6 * a, rtol=1e-5)


def test_elapsed_ms_around_a_spinning_kernel(dev, streams_mod):
    s = modrt.Stream(dev)
    ta, c = modrt.tensor(np.ones(N, "float32"), dev), modrt.tensor(np.zeros(N, "float32"), dev)
    streams_mod["spin_add"](ta, c, N, 1, GRID, BLOCK, stream=s)  # loads the module first
    start = s.record()
    streams_mod["spin_add"](ta, c, N, 10 * SPIN_CYCLES, GRID, BLOCK, stream=s)
    end = s.record()
    end.synchronize(timeout=60)
    ms = end.elapsed_ms(start)
    print(f"\n{10 * SPIN_CYCLES} cycles: {ms:.3f} ms between the events (device time)")
    assert ms > 0.0


def test_async_ranged_copies_on_a_stream(dev):
    s = modrt.Stream(dev)
    t = modrt.tensor(np.zeros(N, "int32"), dev)
    src = np.arange(1000, dtype="int32")
    t.copyfrom(src, offset=4 * 5000, stream=s)  # elements 5000..5999
    part = np.empty(10, "int32")
    t.copyto(part, offset=4 * 5995, stream=s, timeout=60)
    np.testing.assert_array_equal(part, [995, 996, 997, 998, 999, 0, 0, 0, 0, 0])
    whole = t.numpy(stream=s, timeout=60)
    np.testing.assert_array_equal(whole[5000:6000], src)
    assert not whole[:5000].any() and not whole[6000:].any()


def test_device_to_device_copy_after_a_kernel(dev, streams_mod):
    a, b = RNG.standard_normal(N, dtype="float32"), RNG.standard_normal(N, dtype="float32")
    s = modrt.Stream(dev)
    c, copy = modrt.empty((N,), "float32", dev), modrt.empty((N,), "float32", dev)
    streams_mod["vadd"](modrt.tensor(a, dev), modrt.tensor(b, dev), c, N, GRID, BLOCK, stream=s)
    copy.copyfrom(c, stream=s)  # ordered after the launch on `s`
    np.testing.assert_allclose(copy.numpy(stream=s, timeout=60), a + b, rtol=1e-6)


def test_captured_graph_replays_like_the_launches(dev, streams_mod):
    x0 = RNG.standard_normal(N, dtype="float32")
    ks = [float(k) for k in range(1, 9)]
    expected = x0.copy()
    for k in ks:
        expected = expected * 2 + k
    s = modrt.Stream(dev)
    x = modrt.tensor(x0, dev)
    streams_mod["step"](modrt.empty((N,), "float32", dev), 0.0, N, GRID, BLOCK, stream=s)  # loads it
    s.synchronize(timeout=60)
    with s.capture() as g:
        for k in ks:
            streams_mod["step"](x, k, N, GRID, BLOCK)
    assert g.native and len(g) == len(ks)
    np.testing.assert_array_equal(x.numpy(stream=s, timeout=60), x0)  # captured, not run
    g.replay()
    np.testing.assert_allclose(x.numpy(stream=s, timeout=60), expected, rtol=1e-5)
    # Rebound: the same launches on another buffer; the captured one is left alone.
    # (the CUDA graph's parameters are updated in place: cuGraphExecUpdate).
    y = modrt.tensor(x0, dev)
    g.replay({x: y})
    np.testing.assert_allclose(y.numpy(stream=s, timeout=60), expected, rtol=1e-5)
    np.testing.assert_allclose(x.numpy(stream=s, timeout=60), expected, rtol=1e-5)
    # Without bindings the graph runs on the captured buffer again.
    x.copyfrom(x0)
    g.replay()
    np.testing.assert_allclose(x.numpy(stream=s, timeout=60), expected, rtol=1e-5)
    np.testing.assert_allclose(y.numpy(stream=s, timeout=60), expected, rtol=1e-5)


def test_pinned_host_memory_round_trip(dev):
    s = modrt.Stream(dev)
    host = modrt.pinned_empty(N, "float32", device=dev)
    assert host.pinned and "cuMemHostAlloc" in host.pinned_memory
    host[:] = RNG.standard_normal(N, dtype="float32")
    t = modrt.empty((N,), "float32", dev)
    back = modrt.pinned_empty(N, "float32", device=dev)
    t.copyfrom(host, stream=s)  # asynchronous, from the pinned memory itself
    t.copyto(back, stream=s)  # asynchronous, into the pinned memory itself
    s.synchronize(timeout=60)
    np.testing.assert_array_equal(back, host)


def test_a_torch_stream_is_adopted_and_ordered_with_torch_work(dev, streams_mod):
    # PyTorch must be there (the GPU session installs it): an ImportError fails.
    import torch

    c, out = modrt.tensor(np.zeros(N, "float32"), dev), modrt.empty((N,), "float32", dev)
    tc, tout = torch.from_dlpack(c), torch.from_dlpack(out)
    dev.sync(timeout=60)
    torch_stream = torch.cuda.Stream()
    s = modrt.Stream.from_external(dev, torch_stream.cuda_stream)
    assert s.native and s.adopted
    with torch.cuda.stream(torch_stream):
        torch.cuda._sleep(50_000_000)  # keeps the stream busy well past the launch below
        tc.fill_(5.0)
    # On the adopted stream the launch runs after torch's fill; on any other
    # stream it would read c while it is still zero.
    streams_mod["vadd"](c, c, out, N, GRID, BLOCK, stream=s)
    with torch.cuda.stream(torch_stream):
        doubled = tout * 2  # torch work after modrt's launch, on the same stream
    torch_stream.synchronize()
    np.testing.assert_array_equal(doubled.cpu().numpy(), np.full(N, 20.0, "float32"))
    np.testing.assert_array_equal(out.numpy(stream=s, timeout=60), np.full(N, 10.0, "float32"))
    del s
    # The stream is still torch's: modrt did not destroy it.
    with torch.cuda.stream(torch_stream):
        again = tout + 1
    torch_stream.synchronize()
    np.testing.assert_array_equal(again.cpu().numpy(), np.full(N, 11.0, "float32"))


def test_a_cupy_stream_is_adopted(dev, streams_mod):
    import cupy

    cupy_stream = cupy.cuda.Stream(non_blocking=True)
    s = modrt.Stream.from_external(dev, cupy_stream.ptr)
    a = RNG.standard_normal(N, dtype="float32")
    c = modrt.empty((N,), "float32", dev)
    streams_mod["vadd"](modrt.tensor(a, dev), modrt.tensor(a, dev), c, N, GRID, BLOCK, stream=s)
    cupy_stream.synchronize()
    np.testing.assert_allclose(c.numpy(stream=s, timeout=60), 2 * a, rtol=1e-6)


def test_a_never_ending_kernel_times_out_and_the_process_exits(dev):
    code = f"""
import numpy as np, modrt
dev = modrt.device("cuda", 0)
mod = modrt.compile({STREAM_KERNELS!r}, modrt.target.detect_target_from_device(dev), {STREAM_SIGNATURES!r})
flag = modrt.tensor(np.zeros(1, "int32"), dev)
s = modrt.Stream(dev)
mod["spin_forever"](flag, 1, 1, stream=s)
for wait in (lambda: s.synchronize(timeout=0.5), lambda: s.record().synchronize(timeout=0.5)):
    try:
        wait()
        print("RETURNED")
    except TimeoutError as e:
        print("TIMEOUT", e)
print("DONE", flush=True)
"""
    # The guard against a hang of the test itself, not a timed assertion.
    env = dict(os.environ, MODRT_EXIT_TIMEOUT="1")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    lines = proc.stdout.splitlines()
    print(f"\nexit status {proc.returncode}; stderr: {proc.stderr[-300:]}")
    assert lines and lines[-1] == "DONE" and len(lines) == 3, proc.stdout + proc.stderr
    for line in lines[:2]:
        assert line.startswith("TIMEOUT") and "spin_forever (grid [1, 1, 1], block [1, 1, 1])" in line, line
