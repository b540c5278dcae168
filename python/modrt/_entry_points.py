"""Whether an installed distribution may declare an entry-point group, found
without importing importlib.metadata (the autoloader asks at every `import modrt`)."""

from __future__ import annotations

import os
import sys


def some_distribution_declares(group: str) -> bool:
    """A cheap scan of the sys.path directories' *.dist-info / *.egg-info
    entry_points.txt files (and *.egg/EGG-INFO), so that importlib.metadata
    (milliseconds to import) is imported only when some distribution may
    declare `group`. What it cannot scan cheaply (a zip file on sys.path, a
    meta-path finder that finds distributions of its own) counts as "may":
    it never hides a distribution that declares `group`."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and callable(getattr(finder, "find_distributions", None)):
            return True
    for entry in sys.path:
        if not isinstance(entry, str):
            return True
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:
            return True  # a zip file (or some other importable file)
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                path = os.path.join(entry, name, "entry_points.txt")
            elif name.endswith(".egg"):
                if os.path.isfile(os.path.join(entry, name)):
                    return True  # a zipped egg
                path = os.path.join(entry, name, "EGG-INFO", "entry_points.txt")
            else:
                continue
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    if group in f.read():
                        return True
            except OSError:
                continue
    return False
