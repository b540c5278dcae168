"""CUDA's kernels for the suites every backend shares, which find this module
by its name, `<backend>_kernels` (tests/backend_kernels.py).

- CONTRACT: what the runtime contract test (backends/runtime_contract_test.py)
  compiles and expects of this runtime DSO (on a machine with the driver
  library and no device, or without the driver);
- FALLBACK: (source of `scale`, the format to inspect, the text it holds or
  None) for the fallback contract (tests/fallback_contract_test.py).
"""

from __future__ import annotations

SCALE = 'extern "C" __global__ void scale(float* x, float a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }'

CONTRACT = {
    "source": SCALE,
    "signature": "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)",
    "vendor_needed": ("cuda", "nvrtc"),
    "missing_driver": "{path} (the CUDA driver): cannot load the driver library",
    "inspect_formats": ("ptx",),
    "no_device_reason": r"libcuda\.so\.1 \(the CUDA driver\): .*cannot open shared object file",
    "driver": "libcuda.so.1",
}

FALLBACK = (SCALE, "cuda", SCALE)
