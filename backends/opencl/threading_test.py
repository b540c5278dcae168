"""16 Python threads first-calling get_function on one lazily realized OpenCL
module (the runtime builds its program on first launch) and launching
kernels at once, each checking its own results."""

from __future__ import annotations

import numpy as np

import modrt
import modrt_testing

THREADS = 16
SOURCE = """
__kernel void fill(__global int* out, int value, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = value + i;
}
"""


def test_first_calls_and_launches_from_16_threads():
    dev = modrt.device("opencl")
    assert dev.exist, dev.unavailable_reason
    module = modrt.compile(SOURCE, "opencl", ["fill(int32*, int32, int32; blockIdx.x, threadIdx.x)"])
    assert not module.is_fallback

    def run(i: int) -> None:
        fill = module.get_function("fill")
        out = modrt.empty((256,), "int32", dev)
        for k in range(5):
            fill(out, i * 1000 + k, 256, 4, 64)
            np.testing.assert_array_equal(out.numpy(), np.arange(256) + i * 1000 + k)

    modrt_testing.run_together(run, THREADS)
