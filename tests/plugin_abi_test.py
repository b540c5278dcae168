"""The C plugin ABI (docs/C_ABI.md), with real plugins: one built with clang
and libc++ loads into the gcc/libstdc++ core and runs a kernel; one built
against the frozen ABI 1.0 headers loads and runs; no plugin DSO imports a
symbol of libmodrt_runtime.so; a plugin reached through several paths is
initialised once. Refusals (next major, bad tables) are in
autoload_faults_test.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import modrt
import modrt._ffi
import modrt_testing

ROOT = Path(modrt._ffi.package_root())
SCALE_SOURCE = ROOT / "examples/out_of_tree/scale_runtime.cc"

# Loads a scale plugin and runs its kernel: x *= 2.5 on the first 3 of 4 elements.
RUN_SCALE = """
import sys
import numpy as np, modrt
modrt.backend.load_plugin(sys.argv[1])
payload = modrt.Payload.create("single-binary", "factor", ["scale(float32*, int32)"], code=b"2.5")
module = modrt.get_global_func("codegen.scale.create_module")(payload)
x = modrt.tensor(np.arange(4, dtype="float32"))
module["scale"](x, 3)
print(module.kind, module.is_fallback, x.numpy().tolist())
"""


def run_scale(plugin: Path) -> str:
    proc = modrt_testing.run_python(RUN_SCALE.replace("sys.argv[1]", repr(str(plugin))))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_a_clang_libcxx_plugin_runs_in_the_gcc_libstdcxx_core(tmp_path):
    plugin = tmp_path / "libmodrt_runtime_scale.so"
    subprocess.run(
        [
            "clang++",
            "-std=c++17",
            "-stdlib=libc++",
            "-shared",
            "-fPIC",
            "-fvisibility=hidden",
            "-O1",
            f"-I{ROOT / 'core/include'}",
            str(SCALE_SOURCE),
            "-o",
            str(plugin),
        ],
        check=True,
    )
    needed = modrt_testing.needed_libraries(plugin)
    assert "libc++.so.1" in needed and "libstdc++.so.6" not in needed, needed
    core = modrt._ffi.find_library(modrt._ffi._selection.CORE)
    assert "libc++.so.1" not in modrt_testing.needed_libraries(core)
    assert run_scale(plugin) == "scale False [0.0, 2.5, 5.0, 3.0]"


def test_a_plugin_built_against_the_frozen_1_0_headers_runs():
    plugin = ROOT / "tests/abi/frozen_1_0_scale_plugin.so"
    assert run_scale(plugin) == "scale False [0.0, 2.5, 5.0, 3.0]"


# The plugin's own error (a ValueError it raises) and one the core reports to
# it (kernel_args_pack's TypeError) must both reach Python as their class.
RAISE_THROUGH_SCALE = """
import numpy as np, modrt
modrt.backend.load_plugin(PLUGIN)
payload = modrt.Payload.create("single-binary", "factor", ["scale(float32*, int32)"], code=b"2.5")
module = modrt.get_global_func("codegen.scale.create_module")(payload)
x = modrt.tensor(np.arange(4, dtype="float32"))
for call in (lambda: module["scale"](x, 99), lambda: module["scale"](x)):
    try:
        call()
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)
"""


@pytest.mark.parametrize(
    "plugin", ["examples/out_of_tree/libmodrt_runtime_scale.so", "tests/abi/frozen_1_0_scale_plugin.so"]
)
def test_errors_keep_their_class_across_both_abi_minors(plugin):
    """ABI 1.1 plugins report typed errors (set_error with a code); ABI 1.0
    plugins report "Kind: message": both arrive as the same exceptions."""
    proc = modrt_testing.run_python(RAISE_THROUGH_SCALE.replace("PLUGIN", repr(str(ROOT / plugin))))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "ValueError scale: n=99 but the buffer holds 4", lines
    assert lines[1].startswith("TypeError ") and "scale" in lines[1], lines


def plugin_dsos() -> list[Path]:
    """Every plugin DSO of this build: the selected in-tree runtimes, the
    contrib DSO, the test plugins and the out-of-tree example."""
    runtimes = [Path(modrt._ffi.find_library(p)) for p in modrt._ffi._selection.RUNTIMES.values() if p]
    return runtimes + [
        ROOT / "backends/extra/libmodrt_runtime_extra.so",
        ROOT / "examples/out_of_tree/libmodrt_runtime_scale.so",
        ROOT / "tests/abi/frozen_1_0_scale_plugin.so",
        ROOT / "tests/plugins/acme_test_backend.so",
        ROOT / "tests/plugins/good_plugin.so",
        ROOT / "tests/plugins/opaque_module_plugin.so",
    ]


@pytest.mark.parametrize("dso", plugin_dsos(), ids=lambda p: p.name)
def test_no_plugin_imports_a_symbol_of_the_core(dso):
    imported = modrt_testing.core_symbols_imported_by(dso)
    assert not {s for s in imported if s.startswith("_Z")}, f"C++ symbols of the core: {sorted(imported)}"
    assert not imported, f"{dso.name} imports from libmodrt_runtime.so: {sorted(imported)}"
    assert "libmodrt_runtime.so" not in modrt_testing.needed_libraries(dso)
    # One entry point, and no C++ symbol of its own leaks out.
    exported = modrt_testing.dynamic_symbols(dso, "--defined-only")
    assert "modrt_plugin_init" in exported
    assert not {s for s in exported if s.startswith("_ZN5modrt")}, sorted(exported)


def test_the_same_plugin_through_other_paths_initialises_once(tmp_path):
    # good_plugin registers a global; a second init would fail with "already registered".
    original = tmp_path / "plugin.so"
    shutil.copyfile(ROOT / "tests/plugins/good_plugin.so", original)
    symlink = tmp_path / "symlink.so"
    symlink.symlink_to(original)
    hard_link = tmp_path / "hard_link.so"
    os.link(original, hard_link)
    copy = tmp_path / "copy.so"  # another file: initialised, and refused for registering twice
    shutil.copyfile(original, copy)
    code = f"""
import modrt
for path in {[str(original), str(symlink), str(hard_link), str(original)]!r}:
    modrt.backend.load_plugin(path)
print("loaded once")
try:
    modrt.backend.load_plugin({str(copy)!r})
except ImportError as e:
    print(e)
"""
    proc = modrt_testing.run_python(code)
    assert proc.returncode == 0, proc.stderr
    once, copied = proc.stdout.splitlines()
    assert once == "loaded once"
    # The file's name leads (what to act on), its directory follows.
    assert copied.startswith("copy.so ") and f"in {tmp_path})" in copied
    assert "testing.faulty_plugin_loaded' is already registered" in copied
