"""modrt-scale: an out-of-tree modrt backend, found through the `modrt.backends`
entry-point group.

Its distribution declares, in entry_points.txt:

    [modrt.backends]
    scale = modrt_scale:register
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import modrt
from modrt import backend

LIBRARY = "libmodrt_runtime_scale.so"


def find_library() -> Path:
    """Next to this package, else in a MODRT_LIBRARY_PATH directory."""
    dirs = [Path(__file__).parent] + [Path(d) for d in os.environ.get("MODRT_LIBRARY_PATH", "").split(os.pathsep) if d]
    for d in dirs:
        if (d / LIBRARY).is_file():
            return d / LIBRARY
    raise FileNotFoundError(f"{LIBRARY} is in none of: {', '.join(map(str, dirs))}")


def codegen(source: str | bytes, functions: Sequence[str], target: modrt.target.Target) -> modrt.Payload:
    """The "source" of a scale module is its factor, e.g. "2.5"."""
    text = source.decode() if isinstance(source, bytes) else source
    return modrt.Payload.create(
        "single-binary", "factor", functions, code=text.strip().encode(), sources={"factor": text}
    )


def register() -> None:
    """The entry point: load the runtime DSO (which declares the backend's
    identity), then register the codegen: the same call an in-tree hook makes."""
    backend.register("scale", runtime=find_library(), codegen=codegen)
