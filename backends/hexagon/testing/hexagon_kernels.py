"""Hexagon's kernels for the suites every backend shares, which find this
module by its name, `<backend>_kernels` (tests/backend_kernels.py).

- FALLBACK: (source of `scale`, the format to inspect, the text it holds or
  None) for the fallback contract (tests/fallback_contract_test.py): C for
  the DSP.
"""

from __future__ import annotations

_SCALE = "void scale(float* x, float a, int n) { x[0] *= a; }"

FALLBACK = (_SCALE, "c", _SCALE)
