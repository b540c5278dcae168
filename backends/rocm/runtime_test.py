"""The ROCm runtime DSO here: the HIP runtime (libamdhip64.so.6) is installed
but there is no AMD GPU. The DSO loads, registers its loader and device API,
makes real modules without a device, and says why the device does not exist."""


import pytest

import modrt
import modrt_testing

SCALE = 'extern "C" __global__ void scale(float* x, float a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }'
SIGNATURE = "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)"
DSO = "backends/rocm/libmodrt_runtime_rocm.so"


def test_runtime_is_loaded_and_registers_loader_and_device_api():
    assert modrt.backend.runtime_status("rocm").loaded
    for name in ("module.create.rocm", "module.load_from_bytes.rocm", "device_api.rocm"):
        assert modrt.get_global_func(name, allow_missing=True) is not None, name


def test_without_a_gpu_the_device_does_not_exist_and_says_why():
    dev = modrt.device("rocm")
    assert not dev.exist
    assert dev.unavailable_reason.startswith("libamdhip64.so.6: hipInit failed: hipErrorNoDevice")
    with pytest.raises(ValueError, match="rocm\\(0\\) does not exist \\(libamdhip64.so.6"):
        modrt.target.detect_target_from_device(dev)
    with pytest.raises(ValueError, match="rocm\\(0\\) does not exist: libamdhip64.so.6"):
        modrt.empty((4,), "float32", dev)


def test_without_the_hip_runtime_the_reason_names_it(tmp_path):
    missing = tmp_path / "libamdhip64.so.6"
    proc = modrt_testing.run_python(
        "import modrt; d = modrt.device('rocm'); print(d.exist); print(d.unavailable_reason)",
        env={"MODRT_ROCM_DRIVER_LIBRARY": str(missing)},
    )
    assert proc.returncode == 0, proc.stderr
    exist, reason = proc.stdout.splitlines()
    assert exist == "False"
    assert reason.startswith(f"{missing} (the HIP runtime): cannot load the driver library")


def test_real_modules_are_made_without_a_device_and_save_the_fallback_bytes(monkeypatch):
    real = modrt.compile(SCALE, "rocm", [SIGNATURE])
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = modrt.compile(SCALE, "rocm", [SIGNATURE])
    assert not real.is_fallback and fallback.is_fallback
    assert real.kind == fallback.kind == "rocm"
    assert real.save_to_bytes() == fallback.save_to_bytes()


def test_load_from_bytes_gives_the_real_module_never_the_fallback(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = modrt.compile(SCALE, "rocm", [SIGNATURE])
    loaded = modrt.load_module_from_bytes("rocm", fallback.save_to_bytes())
    assert not loaded.is_fallback and loaded.kind == "rocm"
    assert loaded.save_to_bytes() == fallback.save_to_bytes()


def test_launching_without_a_gpu_is_a_clear_error():
    mod = modrt.compile('extern "C" __global__ void nop(int n) {}', "rocm", ["nop(int32; blockIdx.x, threadIdx.x)"])
    with pytest.raises(ValueError, match="rocm\\(0\\) does not exist: libamdhip64.so.6"):
        mod["nop"](1, 1, 1)


def test_dso_links_no_part_of_the_core_and_no_hip_library():
    # The plugin ABI is C: the DSO reaches the core only through the table
    # modrt_plugin_init receives, and loads its driver lazily.
    path = modrt.backend.runtime_status("rocm").path
    needed = modrt_testing.needed_libraries(path)
    assert "libmodrt_runtime.so" not in needed
    assert not any("hip" in n or "hsa" in n for n in needed), needed
    assert modrt_testing.core_symbols_imported_by(path) == set()
    assert "modrt_plugin_init" in modrt_testing.dynamic_symbols(path, "--defined-only")


def test_without_the_dso_import_works_and_device_is_absent(tmp_path):
    tree = modrt_testing.copy_tree(tmp_path / "tree", drop=(DSO,))
    proc = modrt_testing.run_python(
        "import modrt; d = modrt.device('rocm'); "
        "print(d.exist, modrt.backend.runtime_status('rocm').reason)",
        tree=tree,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("False ") and "libmodrt_runtime_rocm.so is missing" in proc.stdout
    assert proc.stderr == ""
