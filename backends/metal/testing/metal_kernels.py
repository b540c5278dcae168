"""Metal's kernels for the suites every backend shares, which find this module
by its name, `<backend>_kernels` (tests/backend_kernels.py).

- FALLBACK: (source of `scale`, the format to inspect, the text it holds or
  None) for the fallback contract (tests/fallback_contract_test.py).
"""

from __future__ import annotations

FALLBACK = (
    "kernel void scale(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] *= 2.0; }",
    "metal",
    None,
)
