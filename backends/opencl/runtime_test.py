"""The OpenCL runtime on PoCL: real kernels, real devices, real cross-compiles."""

import numpy as np
import pytest

import modrt
import modrt_testing

VADD = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
__kernel void block_sum(__global const int* x, __global int* out, __local int* scratch) {
  int lid = get_local_id(0);
  scratch[lid] = x[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}
"""
SIGNATURES = [
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
    "block_sum(int32*, int32*; blockIdx.x, threadIdx.x, dyn_shared_mem)",
]
DSO = "backends/opencl/libmodrt_runtime_opencl.so"


@pytest.fixture(scope="module")
def dev():
    d = modrt.device("opencl", 0)
    assert d.exist, d.unavailable_reason
    return d


def vadd_on(mod, dev, n=1000):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    c = modrt.empty((n,), "float32", dev)
    block = 64
    mod["vadd"](modrt.tensor(a, dev), modrt.tensor(b, dev), c, n, (n + block - 1) // block, block)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)


def test_runtime_is_loaded_and_device_described(dev):
    assert modrt.backend.runtime_status("opencl").loaded
    assert dev.name
    assert dev.max_threads_per_block >= 1
    assert dev.max_shared_memory_per_block > 0
    tgt = modrt.target.detect_target_from_device(dev)
    assert tgt.kind == "opencl" and tgt.max_threads_per_block == dev.max_threads_per_block


def test_vector_add_matches_numpy(dev):
    mod = modrt.compile(VADD, "opencl", SIGNATURES)
    assert not mod.is_fallback
    vadd_on(mod, dev)


def test_local_memory_reduction(dev):
    mod = modrt.compile(VADD, "opencl", SIGNATURES)
    x = np.arange(256, dtype="int32")
    out = modrt.empty((4,), "int32", dev)
    mod["block_sum"](modrt.tensor(x, dev), out, 4, 64, 64 * 4)
    np.testing.assert_array_equal(out.numpy(), x.reshape(4, 64).sum(axis=1))


def test_real_and_fallback_bytes_are_identical(monkeypatch):
    real = modrt.compile(VADD, "opencl", SIGNATURES)
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = modrt.compile(VADD, "opencl", SIGNATURES)
    assert not real.is_fallback and fallback.is_fallback
    assert real.kind == fallback.kind == "opencl"
    assert real.save_to_bytes() == fallback.save_to_bytes()


def test_load_from_bytes_gives_a_real_module_never_the_fallback(monkeypatch, dev):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = modrt.compile(VADD, "opencl", SIGNATURES)
    loaded = modrt.load_module_from_bytes("opencl", fallback.save_to_bytes())
    assert not loaded.is_fallback
    vadd_on(loaded, dev)


def test_cross_compile_round_trip_across_processes(tmp_path, dev):
    path = tmp_path / "vadd.opencl"
    compile_side = f"""
import modrt
m = modrt.compile({VADD!r}, "opencl", {SIGNATURES!r})
assert m.is_fallback, "the runtime was forced off"
open({str(path)!r}, "wb").write(m.save_to_bytes())
"""
    proc = modrt_testing.run_python(compile_side, env={"MODRT_COMPILE_FORCE_FALLBACK": "1"})
    assert proc.returncode == 0, proc.stderr
    vadd_on(modrt.load_module_from_bytes("opencl", path.read_bytes()), dev)


def test_build_errors_carry_the_build_log(dev):
    mod = modrt.compile("__kernel void broken(__global float* x) { x[0] = y; }", "opencl", ["broken(float32*)"])
    with pytest.raises(RuntimeError, match="OpenCL program build failed"):
        mod["broken"](modrt.empty((1,), "float32", dev))


def test_bad_arguments_are_clean_errors(dev):
    mod = modrt.compile(VADD, "opencl", SIGNATURES)
    c = modrt.empty((4,), "float32", dev)
    with pytest.raises(TypeError, match="vadd takes 4 arguments and 2 launch parameters"):
        mod["vadd"](c, c, c, 4)
    with pytest.raises(ValueError, match="lives on cpu, but this kernel runs on opencl"):
        mod["vadd"](modrt.empty((4,), "float32"), c, c, 4, 1, 4)
    with pytest.raises(ValueError, match="threadIdx.x must be >= 1"):
        mod["vadd"](c, c, c, 4, 1, 0)


def test_without_the_dso_import_works_and_device_is_absent(tmp_path):
    tree = modrt_testing.copy_tree(tmp_path / "tree", drop=(DSO,))
    proc = modrt_testing.run_python(
        "import modrt; d = modrt.device('opencl'); "
        "print(d.exist, modrt.backend.runtime_status('opencl').reason)",
        tree=tree,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("False ") and "libmodrt_runtime_opencl.so is missing" in proc.stdout
    assert proc.stderr == ""  # skipped silently


def test_without_an_icd_the_device_says_why(tmp_path):
    empty_vendors = tmp_path / "vendors"
    empty_vendors.mkdir()
    proc = modrt_testing.run_python(
        "import modrt; d = modrt.device('opencl'); print(d.exist); print(d.unavailable_reason)",
        env={"OCL_ICD_VENDORS": str(empty_vendors)},
    )
    assert proc.returncode == 0, proc.stderr
    exist, reason = proc.stdout.splitlines()
    assert exist == "False" and "no OpenCL platform found" in reason


def test_dso_links_no_part_of_the_core_and_no_driver():
    # The plugin ABI is C: the DSO reaches the core only through the table
    # modrt_plugin_init receives, and loads its driver lazily.
    path = modrt.backend.runtime_status("opencl").path
    needed = modrt_testing.needed_libraries(path)
    assert "libmodrt_runtime.so" not in needed
    assert not any("OpenCL" in n for n in needed), needed
    assert modrt_testing.core_symbols_imported_by(path) == set()
    assert "modrt_plugin_init" in modrt_testing.dynamic_symbols(path, "--defined-only")
