"""The CUDA runtime DSO on a machine without the CUDA driver (this one): it
loads, registers its loader and device API, makes real modules without a
device, and says why the device does not exist."""


import pytest

import modrt
import modrt_testing

SCALE = 'extern "C" __global__ void scale(float* x, float a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }'
SIGNATURE = "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)"
DSO = "backends/cuda/libmodrt_runtime_cuda.so"


def test_runtime_is_loaded_and_registers_loader_and_device_api():
    assert modrt.backend.runtime_status("cuda").loaded
    for name in ("module.create.cuda", "module.load_from_bytes.cuda", "device_api.cuda"):
        assert modrt.get_global_func(name, allow_missing=True) is not None, name


def test_without_the_driver_the_device_does_not_exist_and_says_why():
    dev = modrt.device("cuda")
    assert not dev.exist
    assert "libcuda.so.1" in dev.unavailable_reason
    assert "cannot open shared object file" in dev.unavailable_reason
    report = {r.name: r for r in modrt.backend.report()}["cuda"]
    assert report.loaded and not report.driver_found and "libcuda.so.1" in report.reason
    with pytest.raises(ValueError, match="cuda\\(0\\) does not exist \\(libcuda.so.1"):
        modrt.target.detect_target_from_device(dev)
    with pytest.raises(ValueError, match="cuda\\(0\\) does not exist: libcuda.so.1"):
        modrt.empty((4,), "float32", dev)


def test_a_driver_library_that_is_not_there_is_named(tmp_path):
    missing = tmp_path / "libcuda.so.1"
    proc = modrt_testing.run_python(
        "import modrt; print(modrt.device('cuda').unavailable_reason)",
        env={"MODRT_CUDA_DRIVER_LIBRARY": str(missing)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{missing} (the CUDA driver): cannot load the driver library")


def test_real_modules_are_made_without_a_device_and_save_the_fallback_bytes(monkeypatch):
    real = modrt.compile(SCALE, "cuda", [SIGNATURE])
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = modrt.compile(SCALE, "cuda", [SIGNATURE])
    assert not real.is_fallback and fallback.is_fallback
    assert real.kind == fallback.kind == "cuda"
    assert real.save_to_bytes() == fallback.save_to_bytes()
    assert real.inspect_source("ptx") == fallback.inspect_source("ptx")


def test_load_from_bytes_gives_the_real_module_never_the_fallback(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = modrt.compile(SCALE, "cuda", [SIGNATURE])
    loaded = modrt.load_module_from_bytes("cuda", fallback.save_to_bytes())
    assert not loaded.is_fallback and loaded.kind == "cuda"
    assert loaded.save_to_bytes() == fallback.save_to_bytes()


def test_launching_without_a_driver_is_a_clear_error():
    mod = modrt.compile('extern "C" __global__ void nop(int n) {}', "cuda", ["nop(int32; blockIdx.x, threadIdx.x)"])
    with pytest.raises(ValueError, match="cuda\\(0\\) does not exist: libcuda.so.1"):
        mod["nop"](1, 1, 1)


def test_dso_links_no_part_of_the_core_and_no_cuda_library():
    # The plugin ABI is C: the DSO reaches the core only through the table
    # modrt_plugin_init receives, and loads the driver and NVRTC lazily.
    path = modrt.backend.runtime_status("cuda").path
    needed = modrt_testing.needed_libraries(path)
    assert "libmodrt_runtime.so" not in needed
    assert not any("cuda" in n or "nvrtc" in n for n in needed), needed
    assert modrt_testing.core_symbols_imported_by(path) == set()
    assert "modrt_plugin_init" in modrt_testing.dynamic_symbols(path, "--defined-only")


def test_without_the_dso_import_works_and_device_is_absent(tmp_path):
    tree = modrt_testing.copy_tree(tmp_path / "tree", drop=(DSO,))
    proc = modrt_testing.run_python(
        "import modrt; d = modrt.device('cuda'); "
        "print(d.exist, modrt.backend.runtime_status('cuda').reason)",
        tree=tree,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("False ") and "libmodrt_runtime_cuda.so is missing" in proc.stdout
    assert proc.stderr == ""
