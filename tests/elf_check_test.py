"""Every DSO modrt loads passes the core's ELF check before dlopen: real built
DSOs, cut short or with corrupted header bytes (temporary copies), are refused
with a warning naming the file and what is wrong, and import goes on. Without
the check glibc's loader dies on them (SIGBUS on a truncated file, SIGSEGV on
some corrupted headers)."""

import struct
from pathlib import Path

import pytest

import modrt
import modrt._ffi
import modrt_testing

EXTRA_DSO = "backends/extra/libmodrt_runtime_extra.so"
ROOT = Path(modrt._ffi.package_root())


def problem(path) -> str:
    return modrt._ffi.call("elf.file_problem", str(path))


def shipped_dsos() -> list[Path]:
    """The DSOs this build of modrt loads: core, compiler, extra, selected runtimes."""
    sel = modrt._ffi._selection
    rels = [sel.CORE, sel.COMPILER, EXTRA_DSO] + [r for r in sel.RUNTIMES.values() if r]
    return [ROOT / r for r in rels]


def extra_bytes() -> bytes:
    return (ROOT / EXTRA_DSO).read_bytes()


def load_segments(image: bytes) -> list[tuple[int, int, int]]:
    """(index, p_offset, p_filesz) of every PT_LOAD of a 64-bit little-endian ELF image."""
    (phoff,) = struct.unpack_from("<Q", image, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", image, 0x36)
    out = []
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", image, phoff + i * phentsize)
        if p_type == 1:
            out.append((i, p_offset, p_filesz))
    return out


def patched(image: bytes, offset: int, fmt: str, value: int) -> bytes:
    data = bytearray(image)
    struct.pack_into(fmt, data, offset, value)
    return bytes(data)


# Import in a child with one real DSO replaced; the probe checks that import
# survived and that the core and an unrelated backend still work.
PROBE = """
import warnings
warnings.simplefilter("always")
import numpy as np, modrt
m = modrt.compile("void one(int* x) { x[0] = 1; }", "cpu", ["one(int32*)"])
t = modrt.empty((1,), "int32"); m["one"](t)
assert t.numpy()[0] == 1
print("import survived")
"""


def import_with(tmp_path, rel: str, data: bytes, env=None):
    tree = modrt_testing.copy_tree(tmp_path / "tree", replace={rel: data})
    # The structural checks, as for a DSO without a recorded SHA-256.
    modrt_testing.forget_recorded_sha256(tree, rel)
    return modrt_testing.run_python(PROBE, tree=tree, env=env), tree / rel


def test_every_dso_modrt_ships_passes():
    for path in shipped_dsos():
        assert path.is_file(), path
        assert problem(path) == "", path


@pytest.mark.parametrize("where", ["mid-file", "inside-the-last-segment", "after-the-headers"])
def test_extra_dso_cut_short_is_refused_and_import_survives(tmp_path, where):
    image = extra_bytes()
    _, offset, filesz = load_segments(image)[-1]
    cut = {"mid-file": len(image) // 2, "inside-the-last-segment": offset + filesz // 2, "after-the-headers": 4096}[
        where
    ]
    proc, path = import_with(tmp_path, EXTRA_DSO, image[:cut])
    assert proc.returncode == 0, proc.stderr  # was SIGBUS (-7) before the check
    assert "import survived" in proc.stdout
    assert "RuntimeWarning" in proc.stderr and modrt_testing.names_plugin(proc.stderr, path), proc.stderr
    assert "truncated" in proc.stderr, proc.stderr


def test_runtime_dso_cut_short_is_refused(tmp_path):
    """A backend runtime DSO (the extra DSO standing in when this build
    selected none) cut short where OpenCL's runtime lives."""
    selected = [r for r in modrt._ffi._selection.RUNTIMES.values() if r]
    source = ROOT / (selected[0] if selected else EXTRA_DSO)
    image = source.read_bytes()
    rel = "backends/opencl/libmodrt_runtime_opencl.so"
    tree = modrt_testing.copy_tree(tmp_path / "tree", replace={rel: image[: len(image) * 3 // 4]})
    dso = modrt_testing.force_runtime_selected(tree, "opencl")
    modrt_testing.forget_recorded_sha256(tree, rel)
    proc = modrt_testing.run_python(
        PROBE + "print('reason:', modrt.backend.runtime_status('opencl').reason)", tree=tree
    )
    assert proc.returncode == 0, proc.stderr
    assert "import survived" in proc.stdout
    assert modrt_testing.names_plugin(proc.stderr, dso) and "refused before dlopen: truncated" in proc.stderr, (
        proc.stderr
    )
    assert "reason:" in proc.stdout and "truncated" in proc.stdout


def header_corruptions(image: bytes) -> dict[str, tuple[bytes, str]]:
    """Single-field corruptions of real header bytes, each with what the refusal must say."""
    (phoff,) = struct.unpack_from("<Q", image, 0x20)
    (shoff,) = struct.unpack_from("<Q", image, 0x28)
    first_load = load_segments(image)[0][0]
    ph = phoff + first_load * 56
    return {
        "class": (patched(image, 4, "<B", 1), "ELF class 1 does not match"),
        "machine": (patched(image, 0x12, "<H", 40), "built for machine 40"),
        "phoff": (patched(image, 0x20, "<Q", len(image) - 8), "program header table"),
        "phentsize": (patched(image, 0x36, "<H", 32), "program header size 32"),
        "shoff": (patched(image, 0x28, "<Q", len(image) + 4096), "section header table"),
        "shnum": (patched(image, 0x3C, "<H", 0xFFF0), "section header table"),
        "load-filesz": (patched(image, ph + 0x20, "<Q", 1 << 40), "PT_LOAD"),
        "load-offset": (patched(image, ph + 0x08, "<Q", (1 << 62) + 0x1000), "PT_LOAD"),
        "section-offset": (patched(image, shoff + 64 + 0x18, "<Q", 1 << 50), "section 1"),
    }


@pytest.mark.parametrize(
    "field",
    ["class", "machine", "phoff", "phentsize", "shoff", "shnum", "load-filesz", "load-offset", "section-offset"],
)
def test_corrupted_header_field_is_refused_naming_it(tmp_path, field):
    data, reason = header_corruptions(extra_bytes())[field]
    proc, path = import_with(tmp_path, EXTRA_DSO, data)
    assert proc.returncode == 0, proc.stderr
    assert "import survived" in proc.stdout
    assert modrt_testing.names_plugin(proc.stderr, path) and reason in proc.stderr, proc.stderr


def test_dynamic_section_outside_its_segment_is_refused(tmp_path):
    image = extra_bytes()
    (phoff,) = struct.unpack_from("<Q", image, 0x20)
    (phnum,) = struct.unpack_from("<H", image, 0x38)
    dyn = next(phoff + i * 56 for i in range(phnum) if struct.unpack_from("<I", image, phoff + i * 56)[0] == 2)
    (vaddr,) = struct.unpack_from("<Q", image, dyn + 0x10)
    path = tmp_path / "moved_dynamic.so"
    path.write_bytes(patched(image, dyn + 0x10, "<Q", vaddr + (1 << 32)))
    assert "dynamic section" in problem(path)
    with pytest.raises(ImportError, match="refused before dlopen: the dynamic section"):
        modrt._ffi.load_plugin(path)


# Every byte of the ELF header and program header table inverted, one file
# each, each loaded in a process of its own (forked from one that imported
# modrt with autoload off): each is refused or loads, none crashes.
SWEEP = """
import os, sys, modrt, modrt._ffi
refused = loaded = 0
crashed = []
for path in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            modrt._ffi.load_plugin(path)
        except Exception:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        crashed.append(f"{path}: signal {os.WTERMSIG(status)}")
    elif os.WEXITSTATUS(status) == 0:
        loaded += 1
    else:
        refused += 1
print("refused", refused, "loaded", loaded)
print("\\n".join(crashed))
"""


def test_every_header_byte_inverted_never_crashes(tmp_path):
    image = extra_bytes()
    (phoff,) = struct.unpack_from("<Q", image, 0x20)
    (phnum,) = struct.unpack_from("<H", image, 0x38)
    paths = []
    for offset in list(range(64)) + list(range(phoff, phoff + phnum * 56)):
        path = tmp_path / f"flip_{offset}.so"
        data = bytearray(image)
        data[offset] ^= 0xFF
        path.write_bytes(bytes(data))
        paths.append(str(path))
    proc = modrt_testing.run_python(SWEEP, args=paths, env={"MODRT_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    counts, _, crashed = proc.stdout.partition("\n")
    assert crashed.strip() == "", crashed
    refused, loaded = map(int, counts.split()[1::2])
    assert refused + loaded == len(paths)
    assert refused > len(paths) // 2, proc.stdout  # most header bytes matter


def test_damaged_host_module_image_is_refused():
    host = modrt.compile("int answer(void) { return 42; }", "cpu", ["answer()"])
    saved = host.save_to_bytes()
    image = host.inspect_source("so")
    start = saved.index(image)
    cut = saved[: start - 8] + struct.pack("<Q", len(image) // 2) + image[: len(image) // 2]
    with pytest.raises(ValueError, match="host module: its shared object is damaged: truncated"):
        modrt.load_module_from_bytes("so", cut)


def test_damaged_compiler_is_an_import_error_naming_it(tmp_path):
    compiler = modrt._ffi._selection.COMPILER
    data = (ROOT / compiler).read_bytes()
    proc, path = import_with(tmp_path, compiler, data[: len(data) // 2])
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and str(path) in proc.stderr and "truncated" in proc.stderr, proc.stderr
    # Without the compiler modrt runs, and never touches the damaged file.
    proc = modrt_testing.run_python(
        "import modrt; print(modrt.cpu().exist)", tree=path.parents[1], env={"MODRT_RUNTIME_ONLY": "1"}
    )
    assert proc.returncode == 0 and "True" in proc.stdout, proc.stderr
