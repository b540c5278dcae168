"""Finds each backend's kernels for the suites every backend shares: the
module `<backend>_kernels` in backends/<backend>/testing/ (the backend's
:testing target, which modrt_backend() defines; //tests:support depends on
every backend's). A suite takes the backends whose module has what it runs
(DEVICE_LAYER, RELIABILITY, CONTRACT, FALLBACK), so adding a backend adds its
cases to every suite with no list here to edit."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import modrt


def kernels_of(backend: str) -> ModuleType | None:
    """backends/<backend>/testing/<backend>_kernels.py, or None without one."""
    name = f"{backend}_kernels"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name:
            raise
        return None


def having(field: str) -> dict[str, Any]:
    """{backend: its module's `field`} for every in-tree backend that has it,
    in modrt's order of backends."""
    found = {}
    for backend in modrt.backend.in_tree():
        module = kernels_of(backend)
        if module is not None and hasattr(module, field):
            found[backend] = getattr(module, field)
    return found
