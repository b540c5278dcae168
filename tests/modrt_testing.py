"""Test support: run Python in a fresh process against a copy of the installed
modrt tree in which real files have been removed or replaced."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import modrt._ffi

if TYPE_CHECKING:
    import modrt

# One OpenCL kernel several tests compile: c = a + b over n floats.
VADD_CL = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}"""
VADD_CL_SIGNATURE = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"


def copy_tree(dest: Path, drop: tuple[str, ...] = (), replace: Mapping[str, bytes] | None = None) -> Path:
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


def forget_recorded_sha256(tree: Path, relative: str) -> None:
    """Drops `relative`'s digest from a copied tree's build manifest, so that a
    damaged DSO there reaches the checks after the SHA-256 one (as one found
    through MODRT_LIBRARY_PATH, which has no record, does)."""
    manifest = tree / "python/modrt/_dso_sha256.py"
    lines = [line for line in manifest.read_text().splitlines() if f'"{relative}"' not in line]
    manifest.unlink()
    manifest.write_text("\n".join(lines) + "\n")


def names_plugin(text: str, path: Path) -> bool:
    """Whether `text` names the backend library at `path` as the core does:
    its file name first, then its directory."""
    return f"{path.name} " in text and f"(backend library in {path.parent})" in text


def force_runtime_selected(tree: Path, name: str) -> Path:
    """Marks `name`'s runtime as selected in a copied tree, so a fault in its
    DSO is seen even when this build did not select it. Returns the DSO path."""
    relative = f"backends/{name}/libmodrt_runtime_{name}.so"
    selection = tree / "python/modrt/_selection.py"
    text = selection.read_text().replace(f'"{name}": None', f'"{name}": "{relative}"')
    selection.unlink()
    selection.write_text(text)
    return tree / relative


def run_python(
    code: str, tree: Path | None = None, env: Mapping[str, str] | None = None, args: Sequence[str] = ()
) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter (`args` in its sys.argv[1:]); with
    `tree`, modrt comes from there."""
    full_env = dict(os.environ)
    if tree is not None:
        root = str(modrt._ffi.package_root())
        paths = [p.replace(root, str(tree), 1) for p in sys.path if p.startswith(root)]
        full_env["PYTHONPATH"] = os.pathsep.join(paths)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=full_env, timeout=300
    )


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


def driver_probe(kind: str, extra: str = "") -> str:
    """Python code for a fresh process: with warnings shown, it imports modrt,
    prints whether device `kind` exists (`exist: ...`) and why not (`reason:
    ...`), tries to allocate on it (`alloc: <error>`), runs `extra`, then
    checks that the host backend still works (`host works`)."""
    return f"""
import warnings
warnings.simplefilter("always")
import numpy as np, modrt
assert modrt.backend.runtime_status({kind!r}).loaded
dev = modrt.device({kind!r})
print("exist:", dev.exist)
print("reason:", dev.unavailable_reason)
try:
    modrt.empty((1,), "int32", device=dev)
except ValueError as e:
    print("alloc:", e)
{extra}
h = modrt.compile("void one(int* x) {{ x[0] = 1; }}", "cpu", ["one(int32*)"])
t = modrt.empty((1,), "int32"); h["one"](t)
assert t.numpy()[0] == 1
print("host works")
"""


def run_together(body: Callable[[int], None], threads: int = 16) -> None:
    """Runs body(i) for i in range(threads) on that many threads released at
    once; fails with every exception they raised."""
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            body(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not errors, errors


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", modrt._ffi.DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class ByteOffsetView:
    """A DLPack producer (a legacy capsule) of `count` elements of `base`'s
    memory from byte `offset` on, told by DLTensor.byte_offset, as libraries
    that keep views that way hand them over. It must outlive what is made
    from it (its capsule has no deleter)."""

    def __init__(self, base: modrt.Tensor, offset: int, count: int) -> None:
        self.base = base  # the memory stays alive as long as the view
        src = base._dl()
        self._shape = (ctypes.c_int64 * 1)(count)
        self._managed = _DLManagedTensor()
        view = self._managed.dl_tensor
        view.data, view.device, view.ndim, view.dtype = src.data, src.device, 1, src.dtype
        view.shape = self._shape
        view.byte_offset = src.byte_offset + offset

    def __dlpack__(self) -> object:
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._managed), b"dltensor", None)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.base.__dlpack_device__()
