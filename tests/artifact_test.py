"""`.modrt` artifacts: export, manifest, load in a fresh process, and every
refusal on a real file made bad (truncated, corrupted, tampered, wrong
version, kind without a runtime)."""

from __future__ import annotations

import hashlib
import json
import re
import struct
from pathlib import Path

import pytest

import modrt
import modrt_testing
from modrt_testing import run_python

C_SOURCE = "void inc(int* x, int n) { for (int i = 0; i < n; ++i) x[i] += 1; }"
CL_SOURCE = modrt_testing.VADD_CL
CL_SIGNATURE = modrt_testing.VADD_CL_SIGNATURE
MAGIC = b"MODRTART"


def opencl_runtime_loaded() -> bool:
    return modrt.backend.runtime_status("opencl").loaded


@pytest.fixture()
def artifact(tmp_path: Path) -> Path:
    host = modrt.compile(C_SOURCE, "cpu", ["inc(int32*, int32)"])
    modrt.compile(CL_SOURCE, "opencl", [CL_SIGNATURE], host=host)
    path = tmp_path / "vadd.modrt"
    host.export(path)
    return path


def split(data: bytes) -> tuple[int, bytes, list[bytes]]:
    """(version, manifest, module sections) of an artifact, read per the layout
    in core/internal/modrt/core/artifact.h, so tests can rewrite files consistently."""
    assert data[:8] == MAGIC
    (version,) = struct.unpack_from("<H", data, 8)
    pos = 10
    fields = []
    while pos < len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        fields.append(data[pos + 8 : pos + 8 + n])
        pos += 8 + n
    manifest, digest, *modules = fields
    assert digest == hashlib.sha256(manifest).digest()
    return version, manifest, modules


def join(version: int, manifest: bytes, modules: list[bytes]) -> bytes:
    def s(b: bytes) -> bytes:
        return struct.pack("<Q", len(b)) + b

    body = s(manifest) + s(hashlib.sha256(manifest).digest()) + b"".join(s(m) for m in modules)
    return MAGIC + struct.pack("<H", version) + body


def str_field(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def test_manifest_describes_every_module(artifact: Path) -> None:
    manifest = modrt.artifact.read_manifest(artifact)
    # Version 2: the OpenCL module keeps the names and const markers its kernel declares.
    assert manifest.format_version == 2
    host, cl = manifest.modules
    assert (host.kind, host.parent, host.shape, host.fmt) == ("so", None, "single-binary", "so")
    assert [f.signature for f in host.functions] == ["inc(int32*, int32)"]
    assert host.sources["c"] == C_SOURCE
    assert (cl.kind, cl.parent, cl.fmt) == ("opencl", 0, "cl")
    assert [f.signature for f in cl.functions] == [
        "vadd(const float32* a, const float32* b, float32* c, int32 n; blockIdx.x, threadIdx.x)"
    ]
    _, _, sections = split(artifact.read_bytes())
    for entry, section in zip(manifest.modules, sections):
        assert entry.size == len(section)
        assert entry.sha256 == hashlib.sha256(section).hexdigest()


def test_manifest_reads_with_no_runtime_loaded(artifact: Path) -> None:
    code = f"""
import json, modrt
m = modrt.artifact.read_manifest({str(artifact)!r})
maps = open("/proc/self/maps").read()
print(json.dumps({{"kinds": [e.kind for e in m.modules],
                   "runtime_dsos": sorted({{l.split("/")[-1] for l in maps.splitlines() if "libmodrt_runtime_" in l}}),
                   "compiler": "libmodrt_compiler.so" in maps}}))
"""
    proc = run_python(code, env={"MODRT_RUNTIME_ONLY": "1", "MODRT_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out == {"kinds": ["so", "opencl"], "runtime_dsos": [], "compiler": False}


def test_host_module_round_trips_in_a_fresh_process(tmp_path: Path) -> None:
    path = tmp_path / "inc.modrt"
    modrt.compile(C_SOURCE, "cpu", ["inc(int32*, int32)"]).export(path)
    code = f"""
import numpy as np, modrt
m = modrt.load_module({str(path)!r})
x = modrt.tensor(np.arange(5, dtype="int32"))
m["inc"](x, 5)
print(m.kind, m.is_fallback, x.numpy().tolist())
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["so", "False", "[1,", "2,", "3,", "4,", "5]"]


def test_device_import_loads_where_its_runtime_is(artifact: Path) -> None:
    code = f"""
import numpy as np, modrt
m = modrt.load_module({str(artifact)!r})
(cl,) = m.imports
dev = modrt.device("opencl")
a = np.arange(64, dtype="float32")
c = modrt.empty((64,), "float32", dev)
m["vadd"](modrt.tensor(a, dev), modrt.tensor(a, dev), c, 64, 1, 64)
print(cl.kind, cl.is_fallback, bool(np.array_equal(c.numpy(), 2 * a)))
"""
    proc = run_python(code)
    if opencl_runtime_loaded():
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["opencl", "False", "True"]
    else:
        # The refusal names the module, the kind, the DSO and the flag.
        assert proc.returncode != 0
        assert "module 1 (opencl)" in proc.stderr
        assert "libmodrt_runtime_opencl.so" in proc.stderr
        assert "--//backends:opencl=on" in proc.stderr


def test_kind_without_runtime_is_refused_naming_kind_dso_and_flag(tmp_path: Path) -> None:
    host = modrt.compile(C_SOURCE, "cpu", ["inc(int32*, int32)"])
    modrt.compile("kernel void k(device float* x [[buffer(0)]]) {}", "metal", ["k(float32*)"], host=host)
    path = tmp_path / "metal.modrt"
    host.export(path)
    assert [m.kind for m in modrt.artifact.read_manifest(path).modules] == ["so", "metal"]
    with pytest.raises(ValueError) as e:
        modrt.load_module(path)
    message = str(e.value)
    assert str(path) in message
    assert "module 1 (metal)" in message
    assert "libmodrt_runtime_metal.so" in message
    assert "--//backends:metal=on" in message


@pytest.mark.parametrize("keep", ["magic", "header", "manifest", "last module"])
def test_truncated_file_is_refused(artifact: Path, keep: str) -> None:
    data = artifact.read_bytes()
    cut = {"magic": 5, "header": 12, "manifest": 60, "last module": len(data) - 7}[keep]
    artifact.write_bytes(data[:cut])
    expected = {
        "magic": "not a modrt artifact",
        "header": "truncated modrt artifact: manifest",
        "manifest": "truncated modrt artifact: manifest",
        "last module": "module 1 (opencl): truncated modrt artifact",
    }[keep]
    with pytest.raises(ValueError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        modrt.load_module(artifact)
    with pytest.raises(ValueError, match="truncated|not a modrt artifact"):
        modrt.artifact.read_manifest(artifact)


@pytest.mark.parametrize("module", [0, 1])
def test_corrupted_module_bytes_are_refused_naming_the_module(artifact: Path, module: int) -> None:
    data = bytearray(artifact.read_bytes())
    version, manifest, sections = split(bytes(data))
    section = bytearray(sections[module])
    section[len(section) // 2] ^= 0x40
    sections[module] = bytes(section)
    artifact.write_bytes(join(version, manifest, sections))
    label = ["module 0 (so)", "module 1 (opencl)"][module]
    with pytest.raises(ValueError, match=re.escape(label) + ": SHA-256 mismatch"):
        modrt.load_module(artifact)


def test_edited_manifest_is_refused(artifact: Path) -> None:
    data = bytearray(artifact.read_bytes())
    # A byte inside the manifest (the opencl kind string), hash left as it was.
    at = data.index(b"opencl")
    data[at] = ord("O")
    artifact.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="manifest's SHA-256 does not match"):
        modrt.load_module(artifact)


def test_tampered_manifest_with_fresh_hash_is_refused(artifact: Path) -> None:
    # The manifest rewritten to claim another fmt, its own hash recomputed: the
    # module's bytes still say "cl", so the lie is caught.
    version, manifest, sections = split(artifact.read_bytes())
    tampered = manifest.replace(str_field(b"cl"), str_field(b"xclbin"), 1)
    assert tampered != manifest
    artifact.write_bytes(join(version, tampered, sections))
    with pytest.raises(ValueError, match=r"module 1 \(opencl\): the manifest says fmt 'xclbin', its bytes hold 'cl'"):
        modrt.load_module(artifact)


def test_tampered_module_with_matching_hash_is_refused(artifact: Path) -> None:
    # The kernel's bytes and their hash both replaced: the signature the
    # manifest lists no longer matches what the bytes declare.
    version, manifest, sections = split(artifact.read_bytes())
    other = modrt.compile(
        CL_SOURCE.replace("int n", "long n"),
        "opencl",
        ["vadd(float32*, float32*, float32*, int64; blockIdx.x, threadIdx.x)"],
    )
    new = other.save_to_bytes()
    old = sections[1]
    tampered = manifest.replace(
        struct.pack("<Q", len(old)) + str_field(hashlib.sha256(old).digest()),
        struct.pack("<Q", len(new)) + str_field(hashlib.sha256(new).digest()),
    )
    assert tampered != manifest
    artifact.write_bytes(join(version, tampered, [sections[0], new]))
    with pytest.raises(ValueError, match=r"module 1 \(opencl\): the manifest lists functions"):
        modrt.load_module(artifact)


def test_unknown_format_version_is_refused(artifact: Path) -> None:
    _, manifest, sections = split(artifact.read_bytes())
    artifact.write_bytes(join(7, manifest, sections))
    with pytest.raises(ValueError, match="format version 7 is not supported"):
        modrt.load_module(artifact)


def test_trailing_bytes_are_refused(artifact: Path) -> None:
    artifact.write_bytes(artifact.read_bytes() + b"extra")
    with pytest.raises(ValueError, match="unexpected trailing bytes"):
        modrt.load_module(artifact)


def test_not_an_artifact(tmp_path: Path) -> None:
    path = tmp_path / "x.modrt"
    path.write_bytes(b"\x7fELF" + bytes(100))
    with pytest.raises(ValueError, match="not a modrt artifact"):
        modrt.load_module(path)
    with pytest.raises(FileNotFoundError):
        modrt.load_module(tmp_path / "missing.modrt")


def test_fallback_and_real_modules_export_identical_files(tmp_path: Path) -> None:
    here = tmp_path / "here.modrt"
    forced = tmp_path / "forced.modrt"
    module = modrt.compile(CL_SOURCE, "opencl", [CL_SIGNATURE])
    module.export(here)
    assert split(here.read_bytes())[2] == [module.save_to_bytes()]
    proc = run_python(
        f"import modrt; m = modrt.compile({CL_SOURCE!r}, 'opencl', [{CL_SIGNATURE!r}]); "
        f"assert m.is_fallback; m.export({str(forced)!r})",
        env={"MODRT_COMPILE_FORCE_FALLBACK": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert forced.read_bytes() == here.read_bytes()


def test_module_not_built_on_a_payload_is_exported_as_opaque(tmp_path: Path) -> None:
    modrt.backend.load_plugin(Path(modrt._ffi.package_root(), "tests", "plugins", "opaque_module_plugin.so"))
    host = modrt.compile(C_SOURCE, "cpu", ["inc(int32*, int32)"])
    host.import_module(modrt.get_global_func("testing.opaque_module")("hello from an opaque module"))
    path = tmp_path / "opaque.modrt"
    host.export(path)
    _, opaque = modrt.artifact.read_manifest(path).modules
    assert (opaque.kind, opaque.parent, opaque.shape, opaque.fmt) == ("opaque_test", 0, "opaque", "")
    assert opaque.functions == (modrt.artifact.FunctionEntry("echo", None),)
    assert modrt.load_module(path)["echo"]() == "hello from an opaque module"

    version, manifest, sections = split(path.read_bytes())
    sections[1] = sections[1].replace(b"hello", b"jello")
    path.write_bytes(join(version, manifest, sections))
    with pytest.raises(ValueError, match=r"module 1 \(opaque_test\): SHA-256 mismatch"):
        modrt.load_module(path)
