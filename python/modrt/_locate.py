"""Where modrt's DSOs are found. Needs only `os`: `modrt doctor` loads this
file on its own, without importing modrt (which would load the DSOs it checks)."""

from __future__ import annotations

import os

# Paths are strings here: pathlib costs milliseconds of import time.
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# Where wheels may be installed outside sys.path (pip --target): the
# toolchain root installs them (wgpu, NVIDIA's) under /opt/modrt/pip.
WHEEL_ROOTS: tuple[str, ...] = ("/opt/modrt/pip",)


def package_root() -> str:
    """Root of the tree modrt was imported from (runfiles repository, or site-packages)."""
    return os.path.dirname(os.path.dirname(PACKAGE_DIR))


def missing(path: str, action: str = "") -> str:
    """Why a runtime file is not there, its name first: the one thing to act
    on, kept when `modrt info` shortens the line."""
    directory, name = os.path.split(path)
    return f"{name} is missing (from {directory}{'; ' + action if action else ''})"


def find_library(relative: str) -> str | None:
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


class RuntimeCopy:
    """One copy of a backend's runtime DSO that modrt found, and where it came from."""

    __slots__ = ("origin", "path", "problem", "state")

    def __init__(self, origin: str, path: str, problem: str = "") -> None:
        self.origin = origin  # "MODRT_LIBRARY_PATH", "wheel modrt-opencl 1.0.0", "modrt lib/", "build"
        self.path = path
        self.problem = problem  # why it cannot be used (an incompatible or broken wheel); "" if usable
        self.state = "skipped: " + problem if problem else "found"  # set by the loader

    def as_dict(self) -> dict:
        return {"origin": self.origin, "path": self.path, "state": self.state}

    def __repr__(self) -> str:
        return f"RuntimeCopy({self.origin!r}, {self.path!r}, state={self.state!r})"


def _read_runtime_txt(path: str) -> dict:
    info = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, sep, value = line.strip().partition("=")
            if sep and not key.startswith("#"):
                info[key] = value
    return info


def backend_wheel_dirs(name: str, sys_path: list) -> list:
    """The modrt_<name>/ directories (installed modrt-<name> wheels) on sys.path, in order."""
    found, seen = [], set()
    for entry in sys_path:
        if not isinstance(entry, str):
            continue
        d = os.path.join(entry or ".", f"modrt_{name}")
        if not os.path.isfile(os.path.join(d, "runtime.txt")):
            continue
        key = os.path.realpath(d)
        if key not in seen:
            seen.add(key)
            found.append(d)
    return found


def runtime_copies(name: str, built: str | None, plugin_abi: tuple, modrt_version: str, sys_path: list) -> list:
    """Every copy of backend `name`'s runtime DSO, in the order modrt prefers them:

    1. MODRT_LIBRARY_PATH, each directory in order;
    2. installed backend wheels (modrt_<name>/ on sys.path, in sys.path order);
    3. the package's own lib/ (a modrt wheel built with the runtime selected);
    4. the build tree (`built`: where Bazel put it, when the flags selected it).

    A wheel built for another plugin ABI major, or whose DSO is missing, is
    listed with its problem; it is never loaded.
    """
    dso = f"libmodrt_runtime_{name}.so"
    copies = []
    for d in os.environ.get("MODRT_LIBRARY_PATH", "").split(os.pathsep):
        if d and os.path.isfile(os.path.join(d, dso)):
            copies.append(RuntimeCopy("MODRT_LIBRARY_PATH", os.path.join(d, dso)))
    for d in backend_wheel_dirs(name, sys_path):
        try:
            info = _read_runtime_txt(os.path.join(d, "runtime.txt"))
        except OSError as e:
            copies.append(RuntimeCopy(f"wheel modrt-{name}", os.path.join(d, dso), f"cannot read runtime.txt: {e}"))
            continue
        dist = f"{info.get('distribution', 'modrt-' + name)} {info.get('version', '?')}"
        path = os.path.join(d, info.get("dso", dso))
        problem = ""
        built_for = info.get("plugin_abi", "?")
        if built_for.split(".")[0] != str(plugin_abi[0]):
            problem = (
                f"{dist} was built for modrt plugin ABI {built_for}, but this modrt {modrt_version} "
                f"has plugin ABI {plugin_abi[0]}.{plugin_abi[1]}; install a {info.get('distribution')} "
                f"built for modrt {plugin_abi[0]}.x"
            )
        elif not os.path.isfile(path):
            problem = missing(path, f"reinstall {info.get('distribution', 'modrt-' + name)}")
        copies.append(RuntimeCopy(f"wheel {dist}", path, problem))
    packaged = os.path.join(PACKAGE_DIR, "lib", dso)
    if os.path.isfile(packaged):
        copies.append(RuntimeCopy("modrt lib/", packaged))
    if built is not None:
        path = os.path.join(package_root(), built)
        if os.path.exists(path):
            copies.append(RuntimeCopy("build", path))
    unique, seen = [], set()
    for c in copies:  # one file reached twice (a symlink, a directory named twice) is one copy
        key = os.path.realpath(c.path)
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique
