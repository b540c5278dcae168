"""The contract every runtime DSO keeps, one test file for every backend: each
backend's BUILD.bazel runs it as `:runtime_contract_test` with
MODRT_CONTRACT_BACKEND naming the backend, when its runtime is built.

The DSO loads and registers its loader and device API; real modules are made
without a device and save the fallback's bytes; bytes load as the real
module, never the fallback; it links no part of the core and no vendor
library; without it `import modrt` works and the device is absent; its
MODRT_<X>_DRIVER_LIBRARY names the driver it loads. Where this machine has
the driver but no device (CUDA, ROCm), the device says why, and using it is
an error saying the same."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import pytest
from backend_kernels import kernels_of

import modrt
import modrt_testing

CUDA_NOP = 'extern "C" __global__ void nop(int n) {}'


@dataclass(frozen=True)
class Contract:
    source: object  # what modrt.compile takes for this backend
    signature: str
    vendor_needed: tuple[str, ...]  # substrings no DT_NEEDED entry may have (lowercase)
    missing_driver: str  # reason when MODRT_<X>_DRIVER_LIBRARY names a missing file; {path} is it
    inspect_formats: tuple[str, ...] = ()
    # Where this machine has the driver but no device (CUDA, ROCm): a regex the
    # whole unavailable_reason matches from its start, and the library it names.
    no_device_reason: str | None = None
    driver: str | None = None


BACKEND = os.environ["MODRT_CONTRACT_BACKEND"]
# What this backend's runtime keeps: CONTRACT of backends/<x>/testing/<x>_kernels.py.
CONTRACT = Contract(**kernels_of(BACKEND).CONTRACT)
DSO = f"backends/{BACKEND}/libmodrt_runtime_{BACKEND}.so"
needs_no_device = pytest.mark.skipif(CONTRACT.no_device_reason is None, reason=f"{BACKEND} has a device here")


def compile_scale() -> modrt.Module:
    return modrt.compile(CONTRACT.source, BACKEND, [CONTRACT.signature])


def test_runtime_is_loaded_and_registers_loader_and_device_api():
    assert modrt.backend.runtime_status(BACKEND).loaded
    for name in (f"module.create.{BACKEND}", f"module.load_from_bytes.{BACKEND}", f"device_api.{BACKEND}"):
        assert modrt.get_global_func(name, allow_missing=True) is not None, name


def test_real_modules_are_made_without_a_device_and_save_the_fallback_bytes(monkeypatch):
    real = compile_scale()
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = compile_scale()
    assert not real.is_fallback and fallback.is_fallback
    assert real.kind == fallback.kind == BACKEND
    assert real.save_to_bytes() == fallback.save_to_bytes()
    for fmt in CONTRACT.inspect_formats:
        assert real.inspect_source(fmt) == fallback.inspect_source(fmt)


def test_load_from_bytes_gives_the_real_module_never_the_fallback(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = compile_scale()
    loaded = modrt.load_module_from_bytes(BACKEND, fallback.save_to_bytes())
    assert not loaded.is_fallback and loaded.kind == BACKEND
    assert loaded.save_to_bytes() == fallback.save_to_bytes()


def test_dso_links_no_part_of_the_core_and_no_vendor_library():
    # The plugin ABI is C: the DSO reaches the core only through the table
    # modrt_plugin_init receives, and loads its driver lazily.
    path = modrt.backend.runtime_status(BACKEND).path
    needed = modrt_testing.needed_libraries(path)
    assert "libmodrt_runtime.so" not in needed
    assert not any(v in n.lower() for n in needed for v in CONTRACT.vendor_needed), needed
    assert modrt_testing.core_symbols_imported_by(path) == set()
    # Its one entry point is all it exports (backends/plugin_exports.lds): no
    # std:: template instance another DSO's standard library could bind to.
    assert modrt_testing.dynamic_symbols(path, "--defined-only") == {"modrt_plugin_init"}


def test_without_the_dso_import_works_and_device_is_absent(tmp_path):
    tree = modrt_testing.copy_tree(tmp_path / "tree", drop=(DSO,))
    proc = modrt_testing.run_python(
        f"import modrt; d = modrt.device({BACKEND!r}); "
        f"print(d.exist, modrt.backend.runtime_status({BACKEND!r}).reason)",
        tree=tree,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("False ") and f"libmodrt_runtime_{BACKEND}.so is missing" in proc.stdout
    assert proc.stderr == ""  # skipped silently


def test_a_driver_library_that_is_not_there_is_named(tmp_path):
    missing = tmp_path / "libdriver_missing.so"
    variable = f"MODRT_{BACKEND.upper()}_DRIVER_LIBRARY"
    proc = modrt_testing.run_python(
        f"import modrt; d = modrt.device({BACKEND!r}); print(d.exist); print(d.unavailable_reason)",
        env={variable: str(missing)},
    )
    assert proc.returncode == 0, proc.stderr
    exist, reason = proc.stdout.splitlines()[:2]
    assert exist == "False"
    assert reason.startswith(CONTRACT.missing_driver.format(path=missing)), reason


@needs_no_device
def test_without_a_device_the_device_does_not_exist_and_says_why():
    dev = modrt.device(BACKEND)
    assert not dev.exist
    assert re.match(CONTRACT.no_device_reason, dev.unavailable_reason), dev.unavailable_reason
    report = {r.name: r for r in modrt.backend.report()}[BACKEND]
    assert report.loaded and not report.driver_found and CONTRACT.driver in report.reason
    with pytest.raises(ValueError, match=re.escape(f"{BACKEND}(0) does not exist ({CONTRACT.driver}")):
        modrt.target.detect_target_from_device(dev)
    with pytest.raises(ValueError, match=re.escape(f"{BACKEND}(0) does not exist: {CONTRACT.driver}")):
        modrt.empty((4,), "float32", dev)


@needs_no_device
def test_launching_without_a_device_is_a_clear_error():
    # CUDA and ROCm (HIP) both take this CUDA C++ kernel.
    mod = modrt.compile(CUDA_NOP, BACKEND, ["nop(int32; blockIdx.x, threadIdx.x)"])
    with pytest.raises(ValueError, match=re.escape(f"{BACKEND}(0) does not exist: {CONTRACT.driver}")):
        mod["nop"](1, 1, 1)
