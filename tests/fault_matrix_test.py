"""Fault matrix: one real fault per test, each in a fresh interpreter. For
every fault `import modrt` survives, the error or warning names the cause, and
unrelated backends keep working.

Broken runtime DSOs (empty, garbage, wrong ABI, unresolved symbol) are in
autoload_faults_test.py; vendor drivers hidden from a loaded runtime are in
backends/opencl/driver_fault_test.py and backends/vulkan/driver_fault_test.py.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import modrt_testing

OPENCL_DSO = "backends/opencl/libmodrt_runtime_opencl.so"
OPENCL_HOOK = "backends/opencl/python/modrt/backend/opencl/__init__.py"
OPENCL_KERNEL = """
OPENCL = "__kernel void one(__global int* x) { x[0] = 1; }"
"""

# Appended to every probe: the core and the backends the fault does not touch
# still work (a host module runs, WebGPU and Vulkan codegen still answer).
UNRELATED_STILL_WORK = """
import numpy as np
m = modrt.compile("void one(int* x) { x[0] = 1; }", "cpu", ["one(int32*)"])
t = modrt.empty((1,), "int32"); m["one"](t)
assert t.numpy()[0] == 1
w = modrt.compile("@compute @workgroup_size(1) fn one() {}", "webgpu", ["one()"])
assert w.kind == "webgpu" and w.is_fallback != modrt.backend.runtime_status("webgpu").loaded
assert modrt.backend.is_loaded("vulkan")
print("unrelated backends work")
"""


def probe(body: str) -> str:
    return (
        "import warnings\nwarnings.simplefilter('always')\nimport modrt\n"
        + textwrap.dedent(OPENCL_KERNEL)
        + textwrap.dedent(body)
        + UNRELATED_STILL_WORK
    )


def assert_survived(proc) -> None:
    assert proc.returncode == 0, proc.stderr
    assert "unrelated backends work" in proc.stdout, proc.stdout + proc.stderr


def test_runtime_dso_missing(tmp_path):
    tree = modrt_testing.copy_tree(tmp_path / "tree")
    dso = modrt_testing.force_runtime_selected(tree, "opencl")
    dso.unlink(missing_ok=True)
    proc = modrt_testing.run_python(
        probe(
            """
            status = modrt.backend.runtime_status("opencl")
            assert not status.loaded and "is missing" in status.reason, status
            fallback = modrt.compile(OPENCL, "opencl", ["one(int32*; blockIdx.x)"])
            assert fallback.is_fallback
            try:
                fallback["one"]
            except RuntimeError as e:
                print("get_function:", e)
            try:
                modrt.load_module_from_bytes("opencl", fallback.save_to_bytes())
            except ValueError as e:
                print("load:", e)
            """
        ),
        tree=tree,
    )
    assert_survived(proc)
    # Absent is not broken: skipped without a warning.
    assert "RuntimeWarning" not in proc.stderr, proc.stderr
    assert "get_function: OpenCL runtime is not linked into this build" in proc.stdout
    assert "load: cannot load a module of kind 'opencl'" in proc.stdout
    assert "libmodrt_runtime_opencl.so is not loaded" in proc.stdout
    assert "--//backends:opencl=on" in proc.stdout


def test_hook_raising(tmp_path):
    tree = modrt_testing.copy_tree(
        tmp_path / "tree",
        replace={OPENCL_HOOK: b"def register_backend():\n    raise RuntimeError('opencl hook exploded')\n"},
    )
    proc = modrt_testing.run_python(
        probe(
            """
            print("failure:", modrt.backend.failures()["opencl"])
            assert not modrt.backend.is_loaded("opencl")
            try:
                modrt.compile(OPENCL, "opencl", ["one(int32*; blockIdx.x)"])
            except ValueError as e:
                print("compile:", e)
            """
        ),
        tree=tree,
    )
    assert_survived(proc)
    assert "RuntimeWarning: modrt: backend hook opencl failed: opencl hook exploded" in proc.stderr
    assert "failure: hook: RuntimeError: opencl hook exploded" in proc.stdout
    assert "compile: no codegen for target 'opencl'" in proc.stdout


def write_distribution(site: Path, entry_points: str, modules: dict[str, str]) -> Path:
    """An installed distribution declaring `modrt.backends` entry points."""
    info = site / "faulty_modrt_backend-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: faulty-modrt-backend\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[modrt.backends]\n" + entry_points)
    for name, text in modules.items():
        (site / f"{name}.py").write_text(text)
    return site


def run_with_distribution(tmp_path, entry_points: str, modules: dict[str, str], body: str):
    tree = modrt_testing.copy_tree(tmp_path / "tree")
    site = write_distribution(tmp_path / "site", entry_points, modules)
    code = f"import sys\nsys.path.insert(0, {str(site)!r})\n" + probe(body)
    return modrt_testing.run_python(code, tree=tree)


def test_entry_point_raising(tmp_path):
    proc = run_with_distribution(
        tmp_path,
        "boom = boom_backend:register\n",
        {"boom_backend": "def register():\n    raise RuntimeError('boom backend cannot start')\n"},
        """
        print("failure:", modrt.backend.failures()["boom"])
        assert "boom" not in modrt.backend.loaded()
        assert modrt.backend.is_loaded("opencl")
        """,
    )
    assert_survived(proc)
    assert "RuntimeWarning: modrt: backend entry point boom (boom_backend:register) failed" in proc.stderr
    assert "failure: entry point boom (boom_backend:register): RuntimeError: boom backend cannot start" in proc.stdout


def test_entry_point_naming_a_missing_module(tmp_path):
    proc = run_with_distribution(
        tmp_path,
        "ghost = no_such_modrt_backend_module:register\n",
        {},
        """
        print("failure:", modrt.backend.failures()["ghost"])
        assert modrt.backend.is_loaded("opencl")
        """,
    )
    assert_survived(proc)
    assert "RuntimeWarning: modrt: backend entry point ghost" in proc.stderr
    assert "ModuleNotFoundError: No module named 'no_such_modrt_backend_module'" in proc.stdout


def test_autoload_disabled_leaves_backends_to_explicit_load():
    # autoload_faults_test checks that nothing loads; here, what a user then
    # sees, and that loading by hand still works.
    code = probe(
        """
        assert modrt.backend.loaded() == {}
        try:
            modrt.compile(OPENCL, "opencl", ["one(int32*; blockIdx.x)"])
        except ValueError as e:
            print("compile:", e)
        for name in modrt.backend.in_tree():
            modrt.backend.load(name)
        m = modrt.compile(OPENCL, "opencl", ["one(int32*; blockIdx.x)"])
        print("after load:", m.kind)
        """
    )
    proc = modrt_testing.run_python(code, env={"MODRT_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert_survived(proc)
    assert "compile: no codegen for target 'opencl'" in proc.stdout
    assert "after load: opencl" in proc.stdout


def _dynamic_section(image: bytes) -> tuple[int, int]:
    """(file offset, size) of the PT_DYNAMIC segment of a 64-bit ELF image."""
    import struct

    (phoff,) = struct.unpack_from("<Q", image, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", image, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", image, phoff + i * phentsize)
        if p_type == 2:  # PT_DYNAMIC
            return p_offset, p_filesz
    raise AssertionError("no PT_DYNAMIC segment")


def test_bit_flipped_runtime_dso_is_refused_by_its_recorded_sha256_never_a_signal(tmp_path):
    """One flipped bit at a time, all over libmodrt_runtime_opencl.so and
    densely in its dynamic section (where a flip passed the structural ELF
    check and crashed import): each copy is refused before dlopen, naming the
    file and both digests, and import goes on."""
    import modrt._ffi

    if not modrt._selection.RUNTIMES.get("opencl"):
        import pytest

        pytest.skip("the OpenCL runtime is not in this build, so no digest is recorded for it")
    image = (Path(modrt._ffi.package_root()) / OPENCL_DSO).read_bytes()
    dynamic, size = _dynamic_section(image)
    offsets = sorted({*range(64, len(image), len(image) // 40), *range(dynamic, dynamic + size, max(1, size // 24))})
    code = (
        "import warnings\nwarnings.simplefilter('always')\nimport modrt\n"
        "print('opencl loaded:', modrt.backend.runtime_status('opencl').loaded)\n"
    )
    signals = []
    for offset in offsets:
        flipped = bytearray(image)
        flipped[offset] ^= 0x10
        tree = modrt_testing.copy_tree(tmp_path / f"flip{offset}", replace={OPENCL_DSO: bytes(flipped)})
        proc = modrt_testing.run_python(code, tree=tree, env={"MODRT_CACHE_DIR": str(tmp_path / "cache")})
        if proc.returncode != 0:
            signals.append((offset, proc.returncode, proc.stderr[-500:]))
            continue
        assert "opencl loaded: False" in proc.stdout, (offset, proc.stdout, proc.stderr)
        assert "libmodrt_runtime_opencl.so does not match the SHA-256 recorded for it" in proc.stderr, proc.stderr
    assert not signals, signals
    # The intact file loads, and is remembered as verified.
    tree = modrt_testing.copy_tree(tmp_path / "intact")
    proc = modrt_testing.run_python(code, tree=tree, env={"MODRT_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0 and "opencl loaded: True" in proc.stdout, proc.stderr
    verified = [line.split()[-1] for line in (tmp_path / "cache" / "verified-dsos-1").read_text().splitlines()]
    assert str(tree / OPENCL_DSO) in verified, verified
