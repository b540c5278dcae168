"""Namespace-package paths without importing pkgutil (which costs milliseconds at import)."""

from __future__ import annotations

import os
import sys


def extend_path(path: list[str], name: str) -> list[str]:
    """`path` plus the portion of package `name` in every sys.path directory,
    as pkgutil.extend_path does for plain directories."""
    parts = name.split(".")
    result = list(path)
    for entry in sys.path:
        if not isinstance(entry, str) or not entry:
            continue
        portion = os.path.join(entry, *parts)
        if portion not in result and os.path.isdir(portion):
            result.append(portion)
    return result
