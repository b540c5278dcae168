"""16 Python threads first-calling get_function on one lazily realized OpenCL
module (the runtime builds its program on first launch) and launching
kernels at once, each checking its own results."""

from __future__ import annotations

import threading

import numpy as np

import modrt

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
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            fill = module.get_function("fill")
            out = modrt.empty((256,), "int32", dev)
            for k in range(5):
                fill(out, i * 1000 + k, 256, 4, 64)
                np.testing.assert_array_equal(out.numpy(), np.arange(256) + i * 1000 + k)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
