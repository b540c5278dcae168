"""`.modrt` artifact files: a module tree with a manifest.

The container is parsed and verified once, in the core (core/src/artifact.cc);
this module only reads files and shapes the manifest. Reading a manifest needs
libmodrt_runtime.so alone, no backend runtime.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Optional, Union

from ._ffi import call
from .runtime import Module

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class FunctionEntry:
    name: str
    signature: Optional[str]  # None for opaque (non-payload) modules


@dataclass(frozen=True)
class ModuleEntry:
    index: int
    kind: str
    parent: Optional[int]  # the importing module; None for the root
    shape: str  # "single-binary", "multi-shader" or "opaque"
    fmt: str
    functions: tuple[FunctionEntry, ...]
    size: int
    sha256: str
    sources: dict[str, str]


@dataclass(frozen=True)
class Manifest:
    format_version: int
    modules: tuple[ModuleEntry, ...]

    @classmethod
    def from_json(cls, text: str) -> "Manifest":
        raw = json.loads(text)
        modules = tuple(
            ModuleEntry(
                index=m["index"],
                kind=m["kind"],
                parent=m["parent"],
                shape=m["shape"],
                fmt=m["fmt"],
                functions=tuple(FunctionEntry(f["name"], f["signature"]) for f in m["functions"]),
                size=m["size"],
                sha256=m["sha256"],
                sources=dict(m["sources"]),
            )
            for m in raw["modules"]
        )
        return cls(raw["format_version"], modules)


def _read(path: PathLike) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def save(module: Module) -> bytes:
    """The artifact bytes of `module` and, depth-first, its imports."""
    return call("artifact.save", module)


def export(module: Module, path: PathLike) -> None:
    data = save(module)
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # never leaves a half-written artifact behind


def manifest_from_bytes(data: bytes) -> Manifest:
    """The verified manifest (every integrity check runs first)."""
    return Manifest.from_json(call("artifact.manifest", data))


def read_manifest(path: PathLike) -> Manifest:
    return manifest_from_bytes(_read(path))


def load_from_bytes(data: bytes) -> Module:
    return call("artifact.load", data)


def load_module(path: PathLike) -> Module:
    """Loads an artifact written by `Module.export`: integrity first, then a
    real module for every entry (a kind with no runtime here is refused)."""
    data = _read(path)
    try:
        return load_from_bytes(data)
    except Exception as e:
        # The path belongs in the message; the exception class stays the same.
        e.args = (f"{os.fspath(path)}: {e}",) + e.args[1:]
        raise
