"""Compiles one vector-add kernel for the host and for OpenCL, runs it where a
device exists, and checks it against numpy.

    tools/bazel run --config=cpu-runtimes //tools:python -- examples/quickstart.py
"""

import sys

import numpy as np

import modrt

C_SOURCE = """
void vadd(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
"""
OPENCL_SOURCE = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""


def main() -> int:
    n = 4096
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    ok = True
    cases = [
        ("cpu", C_SOURCE, "vadd(float32*, float32*, float32*, int32)", ()),
        ("opencl", OPENCL_SOURCE, "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)", (n // 64, 64)),
    ]
    for kind, source, signature, launch in cases:
        module = modrt.compile(source, kind, [signature])
        dev = modrt.device(kind)
        if module.is_fallback or not dev.exist:
            reason = dev.unavailable_reason or "runtime not loaded"
            print(
                f"{kind:8s} compiled ({len(module.save_to_bytes())} bytes, "
                f"fallback={module.is_fallback}); not run: {reason}"
            )
            continue
        c = modrt.empty((n,), "float32", dev)
        module["vadd"](modrt.tensor(a, dev), modrt.tensor(b, dev), c, n, *launch)
        good = np.allclose(c.numpy(), a + b)
        ok &= good
        print(f"{kind:8s} ran on {dev.name}: {'matches numpy' if good else 'WRONG RESULT'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
