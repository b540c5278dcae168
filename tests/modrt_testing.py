"""Test support: run Python in a fresh process against a copy of the installed
modrt tree in which real files have been removed or replaced."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Optional, Sequence

import modrt._ffi


def copy_tree(dest: Path, drop: tuple[str, ...] = (), replace: Optional[Mapping[str, bytes]] = None) -> Path:
    """Mirrors modrt's runfiles tree under `dest` with symlinks, then deletes
    the `drop` paths and writes `replace` contents (paths relative to the root)."""
    root = modrt._ffi.package_root()
    for dirpath, _, files in os.walk(root, followlinks=True):
        rel = Path(dirpath).relative_to(root)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            os.symlink(os.path.realpath(Path(dirpath, f)), dest / rel / f)
    for rel in drop:
        (dest / rel).unlink()
    for rel, data in (replace or {}).items():
        target = dest / rel
        if target.is_symlink() or target.exists():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest


def force_runtime_selected(tree: Path, name: str) -> Path:
    """Marks `name`'s runtime as selected in a copied tree, so a fault in its
    DSO is seen even when this build did not select it. Returns the DSO path."""
    relative = f"backends/{name}/libmodrt_runtime_{name}.so"
    selection = tree / "python/modrt/_selection.py"
    text = selection.read_text().replace(f'"{name}": None', f'"{name}": "{relative}"')
    selection.unlink()
    selection.write_text(text)
    return tree / relative


def run_python(code: str, tree: Optional[Path] = None, env: Optional[Mapping[str, str]] = None,
               args: Sequence[str] = ()) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter (`args` in its sys.argv[1:]); with
    `tree`, modrt comes from there."""
    full_env = dict(os.environ)
    if tree is not None:
        root = str(modrt._ffi.package_root())
        paths = [p.replace(root, str(tree), 1) for p in sys.path if p.startswith(root)]
        full_env["PYTHONPATH"] = os.pathsep.join(paths)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=full_env, timeout=300)


def current_pythonpath() -> str:
    """This interpreter's import path, for a child that should import the same modrt."""
    return os.pathsep.join(p for p in sys.path if p)


def needed_libraries(path: str | os.PathLike[str]) -> list[str]:
    """The DT_NEEDED entries of a shared object (readelf -d)."""
    dynamic = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]


def dynamic_symbols(path: str | os.PathLike[str], which: str) -> set[str]:
    """Names of a shared object's dynamic symbols: `which` is "--defined-only"
    or "--undefined-only" (nm -D)."""
    out = subprocess.run(["nm", "-D", which, str(path)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def core_symbols_imported_by(path: str | os.PathLike[str]) -> set[str]:
    """The symbols `path` leaves undefined that libmodrt_runtime.so defines:
    what a plugin would import from the core (none, under the C plugin ABI)."""
    core = modrt._ffi.find_library(modrt._ffi._selection.CORE)
    return dynamic_symbols(path, "--undefined-only") & dynamic_symbols(core, "--defined-only")
