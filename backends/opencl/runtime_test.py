"""The OpenCL runtime on PoCL: real kernels, real devices, real cross-compiles."""

import numpy as np
import pytest
from opencl_kernels import BLOCK_SUM, DEVICE_LAYER

import modrt
import modrt_testing

# The device-layer tests' OpenCL kernels (vadd, slow_add, spin) and block_sum;
# the module here declares vadd and block_sum.
VADD = DEVICE_LAYER[0] + BLOCK_SUM[0]
SIGNATURES = [DEVICE_LAYER[1][0], BLOCK_SUM[1]]


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
    # validate=False: source for a newer compiler is built only when first used.
    mod = modrt.compile(
        "__kernel void broken(__global float* x) { x[0] = y; }", "opencl", ["broken(float32*)"], validate=False
    )
    with pytest.raises(RuntimeError, match="(?s)OpenCL program build failed on .*CL_BUILD_PROGRAM_FAILURE.*'y'"):
        mod["broken"](modrt.empty((1,), "float32", dev))


def test_compile_builds_on_the_device_too(dev, monkeypatch):
    # Without clang's front end (hidden here) the build on the device still
    # refuses the kernel at compile time, with the driver's log.
    from modrt.backend.opencl import source_check

    monkeypatch.setattr(source_check, "find_clang", lambda: None)
    with pytest.warns(modrt.SourceNotCheckedWarning, match="clang is not installed"):
        with pytest.raises(modrt.CompileError, match=r"(?s)\[OpenCL build on .*\].*'y'"):
            modrt.compile("__kernel void broken(__global float* x) { x[0] = y; }", "opencl", ["broken(float32*)"])
    with pytest.warns(modrt.SourceNotCheckedWarning):
        with pytest.raises(modrt.CompileError, match="no kernel 'other' in the built program"):
            modrt.compile(VADD, "opencl", SIGNATURES + ["other(float32*)"])


def test_check_build_reports_the_log_and_missing_kernels(dev):
    check_build = modrt.get_global_func("opencl.check_build")
    assert check_build(0, VADD, "vadd") == ""
    assert "CL_BUILD_PROGRAM_FAILURE" in check_build(0, "__kernel void k(__global float* x) { x[0] = y; }", "k")
    assert "no kernel 'nope'" in check_build(0, VADD, "vadd nope")


def test_bad_arguments_are_clean_errors(dev):
    mod = modrt.compile(VADD, "opencl", SIGNATURES)
    c = modrt.empty((4,), "float32", dev)
    with pytest.raises(TypeError, match="vadd takes 4 arguments and 2 launch parameters"):
        mod["vadd"](c, c, c, 4)
    with pytest.raises(ValueError, match="lives on cpu, but this kernel runs on opencl"):
        mod["vadd"](modrt.empty((4,), "float32"), c, c, 4, 1, 4)
    with pytest.raises(ValueError, match="threadIdx.x must be >= 1"):
        mod["vadd"](c, c, c, 4, 1, 0)
    # OpenCL's buffers are handles (its identity's addressable_buffers is False).
    producer = modrt_testing.ByteOffsetView(modrt.empty((8,), "float32", dev), offset=16, count=4)
    with pytest.raises(ValueError, match="argument 0 has a byte offset, which this device's buffers cannot express"):
        mod["vadd"](modrt.from_dlpack(producer), c, c, 4, 1, 4)


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
