"""Artifact faults beyond artifact_test.py's single cases: a file truncated at
every section boundary, a bit flipped at every byte, a kind nothing knows,
and a fmt its kind does not know. Each is refused with a ValueError naming the
cause, and the process (and every backend) keeps working afterwards."""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest

import modrt
from modrt import artifact

C_SOURCE = "void inc(int* x, int n) { for (int i = 0; i < n; ++i) x[i] += 1; }"
CL_SOURCE = "__kernel void one(__global int* x) { x[0] = 1; }"
MAGIC = b"MODRTART"


@pytest.fixture(scope="module")
def good() -> bytes:
    host = modrt.compile(C_SOURCE, "cpu", ["inc(int32*, int32)"])
    modrt.compile(CL_SOURCE, "opencl", ["one(int32*; blockIdx.x)"], host=host)
    return artifact.save(host)


def u64(n: int) -> bytes:
    return struct.pack("<Q", n)


def field(b: bytes) -> bytes:
    return u64(len(b)) + b


def sections(data: bytes) -> list[tuple[str, int, int]]:
    """(name, start, end) of every section in file order: magic, version, then
    a length and a body for the manifest, its digest and each module."""
    out = [("magic", 0, 8), ("version", 8, 10)]
    pos = 10
    names = ["manifest", "manifest SHA-256"]
    i = 0
    while pos < len(data):
        name = names[i] if i < len(names) else f"module {i - len(names)}"
        (n,) = struct.unpack_from("<Q", data, pos)
        out.append((f"{name} length", pos, pos + 8))
        out.append((name, pos + 8, pos + 8 + n))
        pos += 8 + n
        i += 1
    assert pos == len(data)
    return out


def rebuild(manifest: bytes, modules: list[bytes]) -> bytes:
    # Format version 2, as `good` is written: its OpenCL module keeps the
    # argument name its kernel declares.
    return (
        MAGIC
        + struct.pack("<H", 2)
        + field(manifest)
        + field(hashlib.sha256(manifest).digest())
        + b"".join(field(m) for m in modules)
    )


def parts(data: bytes) -> tuple[bytes, list[bytes]]:
    secs = {name: data[a:b] for name, a, b in sections(data)}
    modules = [
        secs[f"module {i}"] for i in range(sum(1 for n in secs if n.startswith("module ") and "length" not in n))
    ]
    return secs["manifest"], modules


def still_works() -> None:
    m = modrt.compile(C_SOURCE, "cpu", ["inc(int32*, int32)"])
    x = modrt.tensor(np.zeros(4, dtype="int32"))
    m["inc"](x, 4)
    assert list(x.numpy()) == [1, 1, 1, 1]
    webgpu = modrt.compile("@compute @workgroup_size(1) fn one() {}", "webgpu", ["one()"])
    assert webgpu.is_fallback != modrt.backend.runtime_status("webgpu").loaded  # real where its runtime is


def test_truncated_at_every_section_boundary(good: bytes) -> None:
    boundaries = sorted({end for _, _, end in sections(good)} | {start for _, start, _ in sections(good)})
    boundaries.remove(len(good))
    # The empty file, then after the magic, the version, and each length and
    # body of the manifest, its digest and the two modules (but the last).
    assert len(boundaries) == 10
    for cut in boundaries:
        with pytest.raises(ValueError, match="truncated|not a modrt artifact") as e:
            artifact.load_from_bytes(good[:cut])
        assert "truncated" in str(e.value) or cut < 8, (cut, str(e.value))
        with pytest.raises(ValueError, match="truncated|not a modrt artifact"):
            artifact.manifest_from_bytes(good[:cut])
    still_works()


def test_a_bit_flipped_anywhere_is_refused(good: bytes) -> None:
    # Every byte of the file, one bit each: structure, the manifest's hash or
    # the module's hash catches every single one.
    causes: dict[str, int] = {}
    for at in range(len(good)):
        bad = bytearray(good)
        bad[at] ^= 1 << (at % 8)
        with pytest.raises(ValueError) as e:
            artifact.load_from_bytes(bytes(bad))
        message = str(e.value)
        cause = next(
            (
                c
                for c in (
                    "not a modrt artifact",
                    "format version",
                    "truncated",
                    "trailing bytes",
                    "manifest's SHA-256 does not match",
                    "SHA-256 mismatch",
                    "SHA-256 digest is 32",
                    "claims",
                    "the manifest says",
                )
                if c in message
            ),
            None,
        )
        assert cause, (at, message)
        causes[cause] = causes.get(cause, 0) + 1
    assert {
        "not a modrt artifact",
        "format version",
        "manifest's SHA-256 does not match",
        "SHA-256 mismatch",
    } <= causes.keys(), causes
    still_works()


def test_kind_unknown_is_refused_naming_the_kind(good: bytes) -> None:
    manifest, modules = parts(good)
    renamed = manifest.replace(field(b"opencl"), field(b"quantum"), 1)
    assert renamed != manifest
    bad = rebuild(renamed, modules)
    # The manifest reads (an out-of-tree kind may be anything); loading names
    # the module and the kind nothing here can load.
    assert [m.kind for m in artifact.manifest_from_bytes(bad).modules] == ["so", "quantum"]
    with pytest.raises(
        ValueError,
        match=r"module 1 \(quantum\): cannot load a module of kind 'quantum': "
        r"no loader 'module.load_from_bytes.quantum' is registered",
    ):
        artifact.load_from_bytes(bad)
    still_works()


def test_fmt_unknown_for_its_kind_is_refused(good: bytes) -> None:
    # The OpenCL module rewritten, bytes, manifest and hashes consistent, to
    # claim fmt "spirv", which is Vulkan's.
    manifest, modules = parts(good)
    old = modules[1]
    new = old.replace(field(b"cl"), field(b"spirv"), 1)
    assert new != old
    rewritten = manifest.replace(field(b"cl"), field(b"spirv"), 1).replace(
        u64(len(old)) + field(hashlib.sha256(old).digest()), u64(len(new)) + field(hashlib.sha256(new).digest())
    )
    bad = rebuild(rewritten, [modules[0], new])
    expected = r"module 1 \(opencl\): unknown OpenCL format 'spirv' \(known: cl, xclbin, awsxclbin, aocx\)"
    with pytest.raises(ValueError, match=expected):
        artifact.manifest_from_bytes(bad)
    with pytest.raises(ValueError, match=expected):
        artifact.load_from_bytes(bad)
    still_works()
