"""Where modrt's DSOs are found. Needs only `os`: `modrt doctor` loads this
file on its own, without importing modrt (which would load the DSOs it checks)."""

from __future__ import annotations

import os

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# Paths are strings here: pathlib costs milliseconds of import time.
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def package_root() -> str:
    """Root of the tree modrt was imported from (runfiles repository, or site-packages)."""
    return os.path.dirname(os.path.dirname(PACKAGE_DIR))


def find_library(relative: str) -> Optional[str]:
    """Where a DSO named by its repository-relative path lies: MODRT_LIBRARY_PATH
    directories first, then the package's own lib/ (wheels), then the build tree."""
    name = os.path.basename(relative)
    for d in os.environ.get("MODRT_LIBRARY_PATH", "").split(os.pathsep):
        if d and os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    packaged = os.path.join(PACKAGE_DIR, "lib", name)
    if os.path.isfile(packaged):
        return packaged
    built = os.path.join(package_root(), relative)
    return built if os.path.exists(built) else None
