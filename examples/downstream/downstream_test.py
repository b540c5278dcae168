"""A project outside modrt's repository loads its own backend plugin next to
modrt's in-tree backends: OpenCL's runtime (selected from this project's
.bazelrc) and CUDA's fallback."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import modrt
import modrt_example_backend

VADD = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}"""


def test_the_out_of_tree_backend_came_through_its_entry_point():
    assert modrt.backend.loaded()["example"].startswith("entry point example"), modrt.backend.loaded()
    assert "example" not in modrt.backend.failures()


def test_in_tree_backends_are_loaded_beside_it():
    assert modrt.backend.is_loaded("opencl") and modrt.backend.is_loaded("cuda")
    opencl = modrt.backend.runtime_status("opencl")
    assert opencl.selected and opencl.loaded, opencl.reason
    # The DSO modrt loaded is the @modrt//backends/opencl:runtime this test depends on.
    assert Path(opencl.path).samefile(os.environ["OPENCL_RUNTIME"])
    assert not modrt.backend.runtime_status("cuda").selected


def test_the_plugin_computes_on_modrt_tensors():
    x = np.arange(8, dtype="float32")
    y = modrt.tensor(np.ones(8, dtype="float32"))
    modrt_example_backend.axpy(2.0, modrt.tensor(x), y)
    np.testing.assert_array_equal(y.numpy(), 2.0 * x + 1.0)


def test_the_plugin_reports_bad_arguments_as_exceptions():
    y = modrt.tensor(np.zeros(4, dtype="float32"))
    with pytest.raises(TypeError, match="x must be float32, not int32"):
        modrt_example_backend.axpy(1.0, modrt.tensor(np.zeros(4, dtype="int32")), y)
    with pytest.raises(ValueError, match="x and y differ in size"):
        modrt_example_backend.axpy(1.0, modrt.tensor(np.zeros(5, dtype="float32")), y)


def test_an_opencl_kernel_feeds_the_plugin():
    dev = modrt.device("opencl")
    assert dev.exist, dev.unavailable_reason
    mod = modrt.compile(VADD, "opencl", ["vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"])
    assert not mod.is_fallback
    a = np.linspace(0, 1, 256, dtype="float32")
    c = modrt.empty((256,), "float32", dev)
    mod["vadd"](modrt.tensor(a, dev), modrt.tensor(a, dev), c, 256, 4, 64)
    y = modrt.tensor(c.numpy())
    modrt_example_backend.axpy(-1.0, modrt.tensor(a), y)
    np.testing.assert_allclose(y.numpy(), a)


def test_cuda_compiles_to_its_fallback():
    mod = modrt.compile(
        'extern "C" __global__ void k(float* x) { x[0] = 1; }', "cuda", ["k(float32*; blockIdx.x, threadIdx.x)"]
    )
    assert mod.kind == "cuda" and mod.is_fallback
    with pytest.raises(RuntimeError, match="CUDA runtime is not linked into this build"):
        mod["k"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
