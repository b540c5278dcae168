"""tinygrad's public API on a MODRT device (MODRT_TINYGRAD_DEVICE), compared with numpy.

Elementwise, reductions, matmul, conv, softmax, dtypes, symbolic shapes, the
JIT, movement ops, copies between devices; each case renders kernels with
tinygrad's renderer for the backend, compiles and launches them through modrt.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
import tinygrad_testing

import modrt

tinygrad_testing.setup()

from modrt_tinygrad.graph import graph_runners  # noqa: E402
from tinygrad import Device, Tensor, TinyJit, Variable, dtypes  # noqa: E402
from tinygrad.helpers import Context  # noqa: E402
from tinygrad.uop.ops import UOp  # noqa: E402

DEVICE = os.environ["MODRT_TINYGRAD_DEVICE"]

RNG = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def on(a: np.ndarray) -> Tensor:
    return Tensor(a, device=DEVICE)


def close(got: Tensor, want: np.ndarray, tol: float = 1e-4) -> None:
    assert got.device == DEVICE and type(Device[DEVICE]).__name__ == "ModrtDevice"
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
    "maximum": (Tensor.maximum, np.maximum),
    "minimum": (Tensor.minimum, np.minimum),
    "pow": (lambda a, b: a.abs() ** b, lambda a, b: np.abs(a) ** b),
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_with_broadcast(op: str) -> None:
    ours, theirs = BINARY[op]
    a, b = rand(4, 5), rand(1, 5)
    close(ours(on(a), on(b)), theirs(a, b), 1e-3)


UNARY = {
    "neg": (Tensor.neg, np.negative),
    "exp": (Tensor.exp, np.exp),
    "log": (lambda t: t.abs().log(), lambda a: np.log(np.abs(a))),
    "sqrt": (lambda t: t.abs().sqrt(), lambda a: np.sqrt(np.abs(a))),
    "sin": (Tensor.sin, np.sin),
    "cos": (Tensor.cos, np.cos),
    "tanh": (Tensor.tanh, np.tanh),
    "relu": (Tensor.relu, lambda a: np.maximum(a, 0)),
    "sigmoid": (Tensor.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    "abs": (Tensor.abs, np.abs),
    "floor": (Tensor.floor, np.floor),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op: str) -> None:
    ours, theirs = UNARY[op]
    a = rand(3, 7)
    close(ours(on(a)), theirs(a), 1e-3)


def test_where_and_comparisons() -> None:
    a, b = rand(6, 6), rand(6, 6)
    close((on(a) < on(b)).where(on(a), on(b)), np.where(a < b, a, b))
    assert ((on(a) == on(a)).numpy()).all()


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_reductions(axis: int | None) -> None:
    a = rand(17, 9)
    close(on(a).sum(axis=axis), a.sum(axis=axis), 1e-3)
    close(on(a).max(axis=axis), a.max(axis=axis))
    close(on(a).mean(axis=axis), a.mean(axis=axis), 1e-4)


def test_argmax_and_cumsum() -> None:
    a = rand(5, 33)
    np.testing.assert_array_equal(on(a).argmax(axis=1).numpy(), a.argmax(axis=1))
    close(on(a).cumsum(axis=1), a.cumsum(axis=1), 1e-3)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 13, 5), (64, 64, 64), (33, 100, 17)])
def test_matmul(m: int, k: int, n: int) -> None:
    a, b = rand(m, k), rand(k, n)
    close(on(a) @ on(b), a @ b, 1e-3)


def conv2d_reference(x: np.ndarray, w: np.ndarray, padding: int) -> np.ndarray:
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    n, _, h, wd = x.shape
    cout, _, kh, kw = w.shape
    out = np.zeros((n, cout, h - kh + 1, wd - kw + 1), np.float32)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + out.shape[2], j : j + out.shape[3]]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


@pytest.mark.parametrize("padding", [0, 1])
def test_conv2d(padding: int) -> None:
    x, w = rand(2, 3, 8, 8), rand(4, 3, 3, 3)
    close(on(x).conv2d(on(w), padding=padding), conv2d_reference(x, w, padding), 1e-3)


def test_softmax_and_log_softmax() -> None:
    a = rand(4, 10)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    close(on(a).softmax(axis=1), want, 1e-5)
    close(on(a).log_softmax(axis=1), np.log(want), 1e-4)


def test_movement_ops() -> None:
    a = rand(2, 3, 4)
    close(on(a).permute(2, 0, 1), a.transpose(2, 0, 1))
    close(on(a).reshape(6, 4).T, a.reshape(6, 4).T)
    close(on(a)[:, 1:, ::2], a[:, 1:, ::2])
    close(on(a).pad(((1, 0), None, (0, 2))), np.pad(a, ((1, 0), (0, 0), (0, 2))))
    close(on(a).reshape(1, 2, 3, 4).expand(2, 2, 3, 4), np.broadcast_to(a, (2, 2, 3, 4)))
    close(Tensor.cat(on(a), on(a), dim=1), np.concatenate([a, a], axis=1))


def test_gather_by_index() -> None:
    a = rand(10, 4)
    idx = np.array([3, 0, 9, 3], dtype=np.int32)
    close(on(a)[Tensor(idx, device=DEVICE)], a[idx])


@pytest.mark.parametrize(
    "dtype,np_dtype",
    [
        (dtypes.int32, np.int32),
        (dtypes.uint8, np.uint8),
        (dtypes.int16, np.int16),
        (dtypes.float16, np.float16),
    ],
)
def test_dtypes(dtype: object, np_dtype: type) -> None:
    a = np.arange(1, 41, dtype=np_dtype).reshape(5, 8)
    t = Tensor(a, device=DEVICE)
    assert t.dtype == dtype
    got = (t + t).numpy()
    assert got.dtype == np_dtype
    np.testing.assert_array_equal(got, a + a)
    np.testing.assert_array_equal(t.sum(axis=1).numpy(), a.sum(axis=1, dtype=t.sum(axis=1).numpy().dtype))


def test_a_wgsl_device_declares_shader_f16_as_its_adapter_has_it() -> None:
    renderer = Device[DEVICE].renderer
    if "WGSL" not in type(renderer).__name__:
        pytest.skip(f"{DEVICE} does not render WGSL")
    dev = Device[DEVICE].modrt_device
    # webgpu asks its adapter (wgpu-native's shader-f16 feature); vulkan's WGSL goes through tint and declares none.
    has_f16 = bool(dev.attr("supports_float16")) if dev.kind == "webgpu" else False
    assert (dtypes.half in renderer.supported_dtypes()) == has_f16
    if has_f16:
        a = np.linspace(-4, 4, 40, dtype=np.float16).reshape(5, 8)
        got = (Tensor(a, device=DEVICE) * 3 + 1).numpy()
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, a * np.float16(3) + np.float16(1))


@pytest.mark.parametrize("n", [1, 3, 6])
def test_small_dtypes_of_odd_length(n: int) -> None:
    """Buffers of a few bytes (WGSL on webgpu and vulkan: packed into whole 32-bit words)."""
    a = (np.arange(n) - 2).astype(np.int8)
    t = Tensor(a, device=DEVICE)
    np.testing.assert_array_equal((t * 3).numpy(), a * 3)
    np.testing.assert_array_equal((t > 0).numpy(), a > 0)
    np.testing.assert_array_equal(t.cast(dtypes.int16).numpy(), a.astype(np.int16))


def test_casts_and_bool() -> None:
    a = rand(4, 4) * 10
    np.testing.assert_array_equal(on(a).cast(dtypes.int32).numpy(), a.astype(np.int32))
    np.testing.assert_array_equal((on(a) > 0).numpy(), a > 0)
    np.testing.assert_array_equal((on(a) > 0).cast(dtypes.float32).numpy(), (a > 0).astype(np.float32))


def test_symbolic_shapes() -> None:
    a = rand(10, 8)
    t = on(a)
    for n in (2, 5, 10):
        v = Variable("n", 1, 10).bind(n)
        got = t[:v].sum(axis=0)
        close(got, a[:n].sum(axis=0), 1e-4)


def test_jit_replays_with_new_inputs() -> None:
    @TinyJit
    def step(x: Tensor, w: Tensor) -> Tensor:
        return (x @ w).relu().sum(axis=1).realize()

    w = rand(8, 8)
    for _ in range(4):
        x = rand(3, 8)
        close(step(on(x), on(w)), np.maximum(x @ w, 0).sum(axis=1), 1e-3)


def test_jit_replays_through_one_modrt_graph() -> None:
    """After capture, each call replays the kernels as one modrt.Graph, with
    this call's input buffers bound in place of the captured ones."""

    @TinyJit
    def step(x: Tensor, y: Tensor) -> Tensor:
        z = (x * y + 1).contiguous()
        return (z - z.max(axis=1, keepdim=True)).exp().sum(axis=1).realize()

    calls = 5
    for _ in range(calls):
        x, y = rand(4, 16), rand(4, 16)
        z = x * y + 1
        close(step(on(x), on(y)), np.exp(z - z.max(axis=1, keepdims=True)).sum(axis=1), 1e-4)
    (runner,) = graph_runners(step)
    assert len(runner.calls) >= 2
    # Call 1 runs eagerly, call 2 captures and replays, calls 3.. replay.
    assert (runner.captures, runner.replays) == (1, calls - 1)
    if DEVICE == "MODRT:vulkan":  # the backend records the batch itself (a Vulkan command buffer)
        assert runner.graph.native, runner.graph.why_not_native


def test_cpu_kernels_split_over_threads_as_on_tinygrads_cpu() -> None:
    """tinygrad splits a large enough CPU kernel over NUM_CPU_THREADS threads
    (its core_id); on MODRT:cpu each part runs on a thread of its own, eager
    and replayed in a graph, with the same results. Four threads whatever the
    machine's core count, so the split is there to check everywhere."""
    if DEVICE != "MODRT:cpu":
        pytest.skip(f"{DEVICE} is not MODRT:cpu")
    a, b = rand(512, 1024), rand(1024, 64)
    with Context(NUM_CPU_THREADS=4):

        @TinyJit
        def step(x: Tensor, w: Tensor) -> tuple[Tensor, Tensor]:
            return (x * 2 + 1).realize(), (x @ w).realize()

        for _ in range(3):
            scaled, product = step(on(a), on(b))
            close(scaled, a * 2 + 1)
            close(product, a @ b, 1e-3)
    (runner,) = graph_runners(step)
    threads = [program.name for program in runner.runtimes if program.threaded]
    assert threads, [program.name for program in runner.runtimes]
    assert runner.replays == 2


def test_cpu_kernels_compile_in_tinygrads_compile_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """MODRT:cpu compiles tinygrad's C where tinygrad's own CPU device does:
    in tinygrad's compile step, for a schedule of several kernels in its
    worker processes, several at once. The process that runs the kernels
    compiles none of them: making a Program loads its compiled module."""
    if DEVICE != "MODRT:cpu":
        pytest.skip(f"{DEVICE} compiles when tinygrad makes the Program, in the process that has the device")
    from tinygrad.engine.worker import get_worker_pool

    if get_worker_pool() is None:
        pytest.skip("tinygrad has no worker processes here (PARALLEL=0): it compiles in this process")

    def compile_here(*args: object, **kwargs: object) -> None:
        raise AssertionError("a MODRT:cpu kernel was compiled in the process that runs it")

    monkeypatch.setattr(modrt, "compile", compile_here)
    a, b = rand(7, 11), rand(11, 13)  # shapes of their own: kernels no other case compiled
    product, column_sums = on(a) @ on(b), (on(a) * 3).sum(axis=0)
    Tensor.realize(product, column_sums)
    close(product, a @ b, 1e-4)
    close(column_sums, (a * 3).sum(axis=0), 1e-4)


def test_a_cpu_kernel_is_refused_by_name_on_another_renderers_backend() -> None:
    """tinygrad renders (and MODRT:cpu compiles) a kernel of a tensor sharded
    over several devices once, for its first device; a device of a backend
    that runs another language says so instead of running it."""
    if DEVICE != "MODRT:cpu":
        pytest.skip(f"{DEVICE} is not MODRT:cpu")
    if not modrt.device("opencl").exist:
        pytest.skip("modrt has no opencl device here")
    x = on(np.ones((4, 4), np.float32)).shard((DEVICE, "MODRT:opencl"), axis=0)
    with pytest.raises(ValueError, match="is C and modrt opencl runs OpenCL C"):
        (x * 2).realize()


def test_a_jitted_step_with_a_changing_variable_replays_its_one_recording() -> None:
    """A decode-like step reads a cache up to a position that changes every
    call (symbolic sizes and loop bounds, as a KV cache's start_pos): it is
    recorded once and every later call replays that recording with this
    call's values (Graph.replay's scalars), equal to tinygrad's CPU device."""

    def jitted():
        @TinyJit
        def step(cache: Tensor, q: Tensor, n: UOp) -> tuple[Tensor, Tensor]:
            keys = cache[:n]  # (n, 8): the positions so far
            weights = (keys @ q).softmax()
            return (weights @ keys).realize(), (keys * keys).sum(axis=0).realize()

        return step

    cache, q = rand(16, 8), rand(8)
    ours, reference = jitted(), jitted()
    positions = (3, 5, 3, 7, 16, 1, 9)
    for n in positions:
        var = Variable("n", 1, 16)
        got = ours(on(cache), on(q), var.bind(n))
        want = reference(Tensor(cache, device="CPU"), Tensor(q, device="CPU"), var.bind(n))
        for g, w in zip(got, want):
            close(g, w.numpy(), 1e-4)
    (runner,) = graph_runners(ours)
    assert runner.variable_launches, "the batch's kernels take the variable"
    # Captured at call 2 (n=5), replayed at every call after with its own n.
    assert (runner.captures, runner.replays) == (1, len(positions) - 1)


def test_a_gradient_step() -> None:
    x, w = rand(5, 3), rand(3, 2)
    tw = Tensor(w, device=DEVICE)  # backward fills .grad of every float tensor it reaches
    loss = (on(x) @ tw).square().mean()
    loss.backward()
    grad = 2 * x.T @ (x @ w) / (x @ w).size
    close(tw.grad, grad, 1e-4)


@pytest.mark.parametrize("other", ["cpu", "opencl"])
def test_copies_between_devices(other: str) -> None:
    """To another modrt backend (or another tinygrad device on the same one) and back."""
    if not modrt.device(other).exist:
        pytest.skip(f"modrt has no {other} device here")
    if other == "cpu" and "CC" not in os.environ and shutil.which("clang") is None:
        pytest.skip("MODRT:cpu compiles tinygrad's C with clang (its vector extensions), which is not installed here")
    a = rand(3, 5)
    there = on(a).to(f"MODRT:{other}")
    close((there * 2).to(DEVICE), a * 2)
    odd = np.arange(5, dtype=np.int8)  # 5 bytes: whole 32-bit words on webgpu and vulkan (WGSL), not elsewhere
    np.testing.assert_array_equal(Tensor(odd, device=DEVICE).to(f"MODRT:{other}").to(DEVICE).numpy(), odd)


def test_beam_search_times_kernels_on_this_device() -> None:
    """BEAM compiles candidates with this device's renderer and times them
    (Program wait=True) on the device its target names: this one."""
    a = rand(64)
    with Context(BEAM=1, IGNORE_BEAM_CACHE=1):
        close(on(a).exp() + 1, np.exp(a) + 1, 1e-4)
