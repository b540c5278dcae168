"""modrt as a tinygrad device: `pip install modrt[tinygrad]`, then `DEV=MODRT:opencl`.

Importing this package imports neither tinygrad nor the device; tinygrad does
that when a MODRT device is first used (modrt_tinygrad.device).
"""

from __future__ import annotations

import os

# tinygrad 0.14.0 is the version this device is written and tested against.
TINYGRAD_VERSION = "0.14.0"

# The wheel installs overlay/tinygrad/runtime/ops_modrt.py into tinygrad's own
# runtime package; a source tree (Bazel, a checkout) has it here instead.
OVERLAY_RUNTIME_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "overlay", "tinygrad", "runtime")


def register() -> None:
    """Makes `tinygrad.runtime.ops_modrt` importable from a source tree.

    An installed `modrt-tinygrad` wheel needs no call: it puts that module in
    tinygrad's runtime directory. Running from a checkout (Bazel targets,
    PYTHONPATH) there is no such file, so this adds the overlay directory to
    the runtime package's path, where tinygrad's device lookup finds it."""
    import tinygrad.runtime

    if OVERLAY_RUNTIME_DIR not in tinygrad.runtime.__path__:
        tinygrad.runtime.__path__.append(OVERLAY_RUNTIME_DIR)
