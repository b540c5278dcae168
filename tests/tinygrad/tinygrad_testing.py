"""tinygrad for the tests: the toolchain root's copy, and the MODRT device made importable."""

from __future__ import annotations

import importlib.util
import os
import sys

# Where the toolchain root installs tinygrad (tools/toolchain/pip-requirements.txt).
TINYGRAD_ROOTS: tuple[str, ...] = ("/opt/modrt/pip",)


def setup() -> None:
    """Imports tinygrad (from the root if not installed) and registers MODRT."""
    if importlib.util.find_spec("tinygrad") is None:
        sys.path.extend(r for r in TINYGRAD_ROOTS if os.path.isdir(r))
    import modrt_tinygrad

    modrt_tinygrad.register()
