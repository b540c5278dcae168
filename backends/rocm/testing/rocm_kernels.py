"""ROCm's kernels for the suites every backend shares, which find this module
by its name, `<backend>_kernels` (tests/backend_kernels.py).

- CONTRACT: what the runtime contract test (backends/runtime_contract_test.py)
  compiles and expects of this runtime DSO (on a machine with the HIP
  runtime and no AMD GPU): HIP takes CUDA C++.
"""

from __future__ import annotations

SCALE = 'extern "C" __global__ void scale(float* x, float a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }'

CONTRACT = {
    "source": SCALE,
    "signature": "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)",
    "vendor_needed": ("hip", "hsa"),
    "missing_driver": "{path} (the HIP runtime): cannot load the driver library",
    "no_device_reason": r"libamdhip64\.so\.6: hipInit failed: hipErrorNoDevice",
    "driver": "libamdhip64.so.6",
}
