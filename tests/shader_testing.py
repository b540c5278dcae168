"""Test support shared by the shader runtimes' tests (Vulkan, WebGPU): each
writes the same four kernels in its own shading language, and KernelTests
tests them the same way for both.

The kernels, for an element type T: vadd(a, b, c, n) sets c = a + b;
axpy(x, y, alpha, n, beta) sets y = alpha * x + y + beta; block_sum(x, partial)
sums each workgroup's slice of x into partial, in workgroup memory sized at
launch from dyn_shared_mem; block_sum_fixed does the same with a fixed
workgroup of 64.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

import numpy as np
import pytest

import modrt
import modrt_testing

DTYPES = ("float32", "int32")


def signatures(dtype: str) -> list[str]:
    return [
        f"vadd({dtype}*, {dtype}*, {dtype}*, int32; blockIdx.x, threadIdx.x)",
        f"axpy({dtype}*, {dtype}*, {dtype}, int32, {dtype}; blockIdx.x, threadIdx.x)",
        f"block_sum({dtype}*, {dtype}*; blockIdx.x, threadIdx.x, dyn_shared_mem)",
        f"block_sum_fixed({dtype}*, {dtype}*; blockIdx.x, threadIdx.x)",
    ]


def sample(dtype: str, n: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        return rng.integers(-1000, 1000, n).astype("int32")
    return rng.standard_normal(n).astype("float32")


class Kernels:
    """The test kernels of runtime `kind`; `sources(dtype)` gives their
    per-function source for an element type."""

    def __init__(self, kind: str, sources: Callable[[str], dict[str, str]]) -> None:
        self.kind = kind
        self.sources = sources
        self._bytes = functools.cache(lambda dtype: self.compile(dtype).save_to_bytes())

    def compile(self, dtype: str = "float32"):
        return modrt.compile(self.sources(dtype), self.kind, signatures(dtype))

    def load(self, dtype: str = "float32"):
        """A fresh real module of the test kernels (compiled once per dtype)."""
        return modrt.load_module_from_bytes(self.kind, self._bytes(dtype))


def device_fixture(kind: str):
    """A module-scoped `dev` fixture: device 0 of `kind`, which must exist."""

    @pytest.fixture(scope="module")
    def dev():
        d = modrt.device(kind, 0)
        assert d.exist, d.unavailable_reason
        return d

    return dev


def vadd_on(mod, dev, dtype: str = "float32", n: int = 1000) -> None:
    a, b = sample(dtype, n, 1), sample(dtype, n, 2)
    c = modrt.empty((n,), dtype, dev)
    block = 64
    mod["vadd"](modrt.tensor(a, dev), modrt.tensor(b, dev), c, n, (n + block - 1) // block, block)
    np.testing.assert_array_equal(c.numpy(), a + b)


class KernelTests:
    """The tests every shader runtime passes the same way. A runtime's test
    module collects them with a subclass named Test... that sets the class
    attributes below, next to a `dev` fixture (device_fixture)."""

    kernels: Kernels
    hook: types.ModuleType  # the runtime's Python hook: pipelines_created(module)
    pipelines_at_load: int  # pipelines a freshly loaded module of the kernels has

    def test_runtime_is_loaded_and_registers_its_loader_and_device_api(self, dev):
        kind = self.kernels.kind
        status = modrt.backend.runtime_status(kind)
        assert status.loaded and status.path.endswith(f"libmodrt_runtime_{kind}.so")
        for name in (f"module.create.{kind}", f"module.load_from_bytes.{kind}", f"device_api.{kind}"):
            assert modrt.get_global_func(name, allow_missing=True) is not None, name

    @pytest.mark.parametrize("dtype", DTYPES)
    def test_vector_add_matches_numpy(self, dev, dtype):
        mod = self.kernels.compile(dtype)
        assert not mod.is_fallback and mod.kind == self.kernels.kind
        vadd_on(mod, dev, dtype)

    @pytest.mark.parametrize("dtype", DTYPES)
    def test_scalars_reach_the_kernel_in_argument_order(self, dev, dtype):
        """alpha, n and beta: Vulkan push constants, one WebGPU uniform block."""
        mod = self.kernels.load(dtype)
        n = 300
        x, y = sample(dtype, n, 3), sample(dtype, n, 4)
        alpha, beta = (3, -5) if dtype == "int32" else (2.5, 0.25)
        out = modrt.tensor(y, dev)
        mod["axpy"](modrt.tensor(x, dev), out, alpha, n, beta, (n + 31) // 32, 32)
        expected = (np.asarray(alpha, dtype) * x + y + np.asarray(beta, dtype)).astype(dtype)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)

    @pytest.mark.parametrize("dtype", DTYPES)
    @pytest.mark.parametrize("block", [64, 128])
    def test_workgroup_memory_sized_at_launch(self, dev, dtype, block):
        """A reduction in shared memory sized from dyn_shared_mem."""
        mod = self.kernels.load(dtype)
        groups = 8
        x = sample(dtype, groups * block, 5)
        partial = modrt.empty((groups,), dtype, dev)
        mod["block_sum"](modrt.tensor(x, dev), partial, groups, block, block * 4)
        np.testing.assert_allclose(partial.numpy(), x.reshape(groups, block).sum(axis=1), rtol=1e-5, atol=1e-5)

    @pytest.mark.parametrize("dtype", DTYPES)
    def test_reduction_with_a_fixed_workgroup(self, dev, dtype):
        mod = self.kernels.load(dtype)
        x = sample(dtype, 256, 6)
        partial = modrt.empty((4,), dtype, dev)
        mod["block_sum_fixed"](modrt.tensor(x, dev), partial, 4, 64)
        np.testing.assert_allclose(partial.numpy(), x.reshape(4, 64).sum(axis=1), rtol=1e-5, atol=1e-5)

    def test_many_launches_reuse_one_pipeline(self, dev):
        mod = self.kernels.load()
        at_load = self.pipelines_at_load
        assert self.hook.pipelines_created(mod) == at_load
        n = 256
        x = modrt.tensor(np.ones(n, "float32"), dev)
        y = modrt.tensor(np.zeros(n, "float32"), dev)
        for _ in range(50):
            mod["axpy"](x, y, 1.0, n, 0.0, n // 64, 64)
        np.testing.assert_array_equal(y.numpy(), np.full(n, 50, "float32"))  # in launch order
        assert self.hook.pipelines_created(mod) == at_load + 1
        # Another workgroup size is another specialisation (Vulkan specialization
        # constants, WebGPU override values): one more pipeline, then reused.
        for _ in range(5):
            mod["axpy"](x, y, 1.0, n, 0.0, n // 128, 128)
        assert self.hook.pipelines_created(mod) == at_load + 2
        np.testing.assert_array_equal(y.numpy(), np.full(n, 55, "float32"))

    def test_concurrent_first_launches_create_each_pipeline_once(self, dev):
        mod = self.kernels.load()
        n, threads = 512, 8
        a, b = sample("float32", n, 1), sample("float32", n, 2)
        ta, tb = modrt.tensor(a, dev), modrt.tensor(b, dev)
        outs = [modrt.empty((n,), "float32", dev) for _ in range(threads)]
        ys = [modrt.tensor(np.zeros(n, "float32"), dev) for _ in range(threads)]

        def work(i):
            for _ in range(10):
                mod["vadd"](ta, tb, outs[i], n, n // 64, 64)
                mod["axpy"](ta, ys[i], float(i + 1), n, 0.0, n // 64, 64)  # scalars differ per thread

        modrt_testing.run_together(work, threads)
        assert self.hook.pipelines_created(mod) == self.pipelines_at_load + 2  # vadd and axpy once each
        for i in range(threads):
            np.testing.assert_array_equal(outs[i].numpy(), a + b)
            np.testing.assert_allclose(ys[i].numpy(), 10 * (i + 1) * a, rtol=1e-5)

    def test_the_pipeline_counter_needs_a_real_module(self, monkeypatch):
        kind = self.kernels.kind
        monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
        with pytest.raises(TypeError, match=f"pipelines_created takes a real {kind} module"):
            self.hook.pipelines_created(self.kernels.compile())

    def real_and_fallback(self, monkeypatch):
        """A real and a fallback module of the kernels, checked to save the same bytes."""
        real = self.kernels.compile()
        monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
        fallback = self.kernels.compile()
        assert not real.is_fallback and fallback.is_fallback
        assert real.kind == fallback.kind == self.kernels.kind
        assert real.save_to_bytes() == fallback.save_to_bytes()
        return real, fallback

    def test_real_and_fallback_bytes_are_identical(self, monkeypatch):
        self.real_and_fallback(monkeypatch)

    def test_load_from_bytes_gives_a_real_module_never_the_fallback(self, monkeypatch, dev):
        monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
        fallback = self.kernels.compile()
        loaded = modrt.load_module_from_bytes(self.kernels.kind, fallback.save_to_bytes())
        assert not loaded.is_fallback and loaded.kind == self.kernels.kind
        vadd_on(loaded, dev)

    @pytest.mark.parametrize("how", ["forced", "runtime-absent"])
    def test_cross_compile_round_trip_across_processes(self, tmp_path, dev, how):
        """Compile where the runtime is forced off (or its DSO is not there at all),
        save, then load and run here, where it is on."""
        kind = self.kernels.kind
        path = tmp_path / f"kernels.{kind}"
        compile_side = f"""
import modrt
m = modrt.compile({self.kernels.sources("int32")!r}, {kind!r}, {signatures("int32")!r})
assert m.is_fallback, "the runtime is off on the compile side"
open({str(path)!r}, "wb").write(m.save_to_bytes())
"""
        if how == "forced":
            proc = modrt_testing.run_python(compile_side, env={"MODRT_COMPILE_FORCE_FALLBACK": "1"})
        else:
            dso = f"backends/{kind}/libmodrt_runtime_{kind}.so"
            proc = modrt_testing.run_python(compile_side, tree=modrt_testing.copy_tree(tmp_path / "tree", drop=(dso,)))
        assert proc.returncode == 0, proc.stderr
        loaded = modrt.load_module_from_bytes(kind, path.read_bytes())
        assert not loaded.is_fallback
        vadd_on(loaded, dev, "int32")
        x = sample("int32", 128, 9)
        partial = modrt.empty((2,), "int32", dev)
        loaded["block_sum"](modrt.tensor(x, dev), partial, 2, 64, 256)
        np.testing.assert_array_equal(partial.numpy(), x.reshape(2, 64).sum(axis=1))
