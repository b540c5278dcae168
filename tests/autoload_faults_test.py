"""A runtime DSO that is present but broken gives a warning naming the file and
the reason; `import modrt` and unrelated backends keep working."""

import re
from pathlib import Path

import pytest

import modrt
import modrt._ffi
import modrt_testing

OPENCL_DSO = "backends/opencl/libmodrt_runtime_opencl.so"
PLUGINS = Path(modrt._ffi.package_root(), "tests", "plugins")

# After the import, a host module still compiles and runs (the core is
# intact) and an unrelated backend's codegen still answers.
PROBE = """
import warnings
warnings.simplefilter("always")
import numpy as np, modrt
m = modrt.compile("void one(int* x) { x[0] = 1; }", "cpu", ["one(int32*)"])
t = modrt.empty((1,), "int32"); m["one"](t)
assert t.numpy()[0] == 1
w = modrt.compile("@compute @workgroup_size(1) fn one() {}", "webgpu", ["one()"])
assert w.kind == "webgpu" and w.is_fallback != modrt.backend.runtime_status("webgpu").loaded
print("opencl loaded:", modrt.backend.runtime_status("opencl").loaded)
print("opencl reason:", modrt.backend.runtime_status("opencl").reason)
"""


def run_with_opencl_dso(tmp_path, data: bytes):
    tree = modrt_testing.copy_tree(tmp_path / "tree", replace={OPENCL_DSO: data})
    # The fault must be seen even when this build did not select OpenCL.
    dso = modrt_testing.force_runtime_selected(tree, "opencl")
    # The checks after the SHA-256 one, as for a DSO without a recorded digest.
    modrt_testing.forget_recorded_sha256(tree, OPENCL_DSO)
    return modrt_testing.run_python(PROBE, tree=tree), dso


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("empty", b"", "is empty"),
        ("garbage", b"this is not an ELF object\n" * 64, "not an ELF file"),
        (
            "next major",
            (PLUGINS / "next_major_plugin.so").read_bytes(),
            r"built for modrt plugin ABI 2\.0, but this libmodrt_runtime\.so implements plugin ABI 1\.\d+",
        ),
        (
            "unresolved symbol",
            (PLUGINS / "unresolved_symbol_plugin.so").read_bytes(),
            "undefined symbol: modrt_test_symbol_that_nothing_defines",
        ),
        (
            "no entry point",
            (PLUGINS / "no_entry_point_plugin.so").read_bytes(),
            "is not a modrt plugin: it does not export modrt_plugin_init",
        ),
        ("null table", (PLUGINS / "null_table_plugin.so").read_bytes(), "returned no plugin table"),
        (
            "small table",
            (PLUGINS / "small_table_plugin.so").read_bytes(),
            r"its plugin table is \d+ bytes, smaller than plugin ABI 1\.0's \d+",
        ),
        (
            "null register",
            (PLUGINS / "null_register_plugin.so").read_bytes(),
            "its plugin table has no register_plugin function",
        ),
    ],
    ids=[
        "empty",
        "garbage",
        "next-major",
        "unresolved-symbol",
        "no-entry-point",
        "null-table",
        "small-table",
        "null-register",
    ],
)
def test_broken_runtime_dso_warns_and_import_survives(tmp_path, name, data, reason):
    proc, path = run_with_opencl_dso(tmp_path, data)
    assert proc.returncode == 0, proc.stderr
    assert "opencl loaded: False" in proc.stdout
    # The file's name first, then where it is (a shortened line keeps the name).
    assert "RuntimeWarning" in proc.stderr and modrt_testing.names_plugin(proc.stderr, path), proc.stderr
    assert re.search(reason, proc.stderr), proc.stderr
    assert re.search(reason, proc.stdout), proc.stdout


@pytest.mark.parametrize("plugin", ["good_plugin.so", "newer_minor_plugin.so", "grown_table_plugin.so"])
def test_a_good_plugin_in_the_same_place_loads(tmp_path, plugin):
    # A plugin built for a newer minor of the same major loads, also with a
    # larger table than this core knows (docs/C_ABI.md).
    proc, _ = run_with_opencl_dso(tmp_path, (PLUGINS / plugin).read_bytes())
    assert proc.returncode == 0, proc.stderr
    assert "opencl loaded: True" in proc.stdout
    assert "RuntimeWarning" not in proc.stderr


def test_loading_a_plugin_twice_is_idempotent():
    path = PLUGINS / "good_plugin.so"
    modrt._ffi.load_plugin(path)
    modrt._ffi.load_plugin(path)
    assert modrt.get_global_func("testing.faulty_plugin_loaded", allow_missing=True) is not None


def test_missing_plugin_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        modrt._ffi.load_plugin(tmp_path / "nope.so")


def test_autoload_disabled_loads_no_backend():
    proc = modrt_testing.run_python(
        "import modrt; print(modrt.backend.loaded(), modrt.backend.runtime_status('opencl').loaded)",
        env={"MODRT_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "{} False"
