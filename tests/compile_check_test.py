"""Kernel source is checked when modrt.compile runs, whatever runtime is loaded:
OpenCL C by clang's OpenCL front end, WGSL by naga (wgpu-native on lavapipe),
GLSL/CUDA/HIP by their compilers; Metal is said to be unchecked. The same
checks hold with the runtimes off and on (`--config=all-runtimes`)."""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

import pytest

import modrt
from modrt.backend.opencl import source_check as opencl_check
from modrt.backend.webgpu import source_check as wgsl_check

BINARY = Path(os.environ["TEST_SRCDIR"], "_main", "tools", "modrt")

CL_GOOD = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define N 4
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n,
                   __local float* scratch) {
  int i = get_global_id(0);
  float4 v = vload4(0, a);
  double d = sqrt((double)a[i]);
  scratch[get_local_id(0)] = v.x;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_add((__global int*)c, 1);
  if (i < n) c[i] = a[i] + b[i] + (float)d + native_exp(a[i]) + mad(a[i], b[i], 1.0f) * N;
}"""
CL_SIG = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x, dyn_shared_mem)"
# Line 3, column 27: a missing ';'.
CL_SYNTAX = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0)
  if (i < n) c[i] = a[i] + b[i];
}"""
# Line 2: an undeclared identifier and a builtin called with the wrong arguments.
CL_SEMANTIC = """__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  c[get_global_id(0)] = a[0] + undeclared_thing;
}"""
CL_SIG4 = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"

WGSL_GOOD = """@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64) fn scale(@builtin(global_invocation_id) i: vec3<u32>) { x[i.x] *= 2.0; }"""
WGSL_SIG = "scale(float32*; blockIdx.x, threadIdx.x)"
WGSL_UNKNOWN = """@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) i: vec3<u32>) { x[i.x] *= factor; }"""
WGSL_TYPE = """@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) i: vec3<u32>) { let k: i32 = 1u; x[i.x] *= 2.0; }"""


def modrt_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(BINARY), *args], capture_output=True, text=True, cwd=cwd, timeout=600)


# ------------------------------------------------------------------ OpenCL C


def test_valid_opencl_c_with_builtins_macros_and_extensions_compiles():
    mod = modrt.compile(CL_GOOD, "opencl", [CL_SIG])
    assert mod.kind == "opencl" and mod.inspect_source("cl") == CL_GOOD


def test_opencl_syntax_error_is_a_compile_error_with_line_and_column():
    with pytest.raises(modrt.CompileError) as info:
        modrt.compile(CL_SYNTAX, "opencl", [CL_SIG4], filename="kernels/vadd.cl")
    e = info.value
    assert isinstance(e, ValueError)  # callers catching ValueError keep working
    assert e.target == "opencl" and e.functions == ["vadd"] and e.filename == "kernels/vadd.cl"
    assert "kernels/vadd.cl:3:27: error: expected ';' at end of declaration" in str(e)
    assert "OpenCL C of vadd (kernels/vadd.cl) does not compile [clang -x cl -cl-std=CL1.2]" in str(e)


def test_opencl_semantic_errors_are_found_without_a_filename():
    with pytest.raises(
        modrt.CompileError, match=r"<vadd\.cl>:2:32: error: use of undeclared identifier 'undeclared_thing'"
    ):
        modrt.compile(CL_SEMANTIC, "opencl", [CL_SIG4])


def test_opencl_signature_without_a_kernel_is_refused():
    # Found when the kernels are read from the source (backends/opencl reflection).
    with pytest.raises(ValueError, match=r"the OpenCL C source has no kernel 'vmul' \(it defines: vadd\)"):
        modrt.compile(CL_GOOD, "opencl", [CL_SIG, CL_SIG4.replace("vadd", "vmul")])


def test_opencl_kernels_made_by_macros_are_found():
    src = "#define K(name) __kernel void name(__global float* x) { x[0] = 1; }\nK(one)\nK(two)\n"
    mod = modrt.compile(src, "opencl", ["one(float32*)", "two(float32*)"])
    assert mod.function_names == ["one", "two"]


def test_validate_false_keeps_broken_source_for_a_newer_compiler():
    mod = modrt.compile(CL_SYNTAX, "opencl", [CL_SIG4], validate=False)
    assert mod.inspect_source("cl") == CL_SYNTAX
    # The switch is per call: the next compile checks again.
    with pytest.raises(modrt.CompileError):
        modrt.compile(CL_SYNTAX, "opencl", [CL_SIG4])


def test_a_compile_error_leaves_no_module_in_the_host():
    host = modrt.compile("void h(int* x) { x[0] = 1; }", "cpu", ["h(int32*)"])
    with pytest.raises(modrt.CompileError):
        modrt.compile(CL_SYNTAX, "opencl", [CL_SIG4], host=host)
    assert host.imports == []


# ---------------------------------------------------------------------- WGSL


def test_valid_wgsl_compiles_with_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mod = modrt.compile(WGSL_GOOD, "webgpu", [WGSL_SIG])
    assert mod.inspect_source("wgsl") == WGSL_GOOD


def test_wgsl_unknown_identifier_names_function_line_and_column():
    with pytest.raises(modrt.CompileError) as info:
        modrt.compile(WGSL_UNKNOWN, "webgpu", [WGSL_SIG], filename="scale.wgsl")
    text = str(info.value)
    assert "WGSL of scale (scale.wgsl) does not compile [naga (wgpu-native)]" in text
    assert "scale.wgsl:3:67: error: no definition in scope for identifier: `factor`" in text
    assert "┌─ scale.wgsl:3:67" in text  # naga's own report follows, with the source line


def test_wgsl_type_error_and_missing_entry_point(monkeypatch):
    with pytest.raises(
        modrt.CompileError, match=r"<scale\.wgsl>:3:\d+: error: the type of `k` is expected to be `i32`"
    ):
        modrt.compile(WGSL_TYPE, "webgpu", [WGSL_SIG])
    # The WebGPU runtime's rule: the @compute function named like the function, else the only one.
    other = WGSL_GOOD.replace("fn scale", "fn other")
    two = WGSL_GOOD + "\n" + other.splitlines()[1]
    sigs = [WGSL_SIG, WGSL_SIG.replace("scale", "twice")]
    # Checked here for a cross-compile; where the WebGPU runtime makes the module, it says so itself.
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    assert modrt.compile({"scale": WGSL_GOOD, "twice": WGSL_GOOD}, "webgpu", sigs).function_names == ["scale", "twice"]
    assert modrt.compile({"scale": two, "twice": two.replace("fn other", "fn twice")}, "webgpu", sigs)
    with pytest.raises(modrt.CompileError, match="no @compute entry point 'twice', and not exactly one"):
        modrt.compile({"scale": WGSL_GOOD, "twice": two}, "webgpu", sigs)


def test_wgsl_per_function_file_names():
    sources = {"scale": WGSL_GOOD, "twice": WGSL_UNKNOWN.replace("fn scale", "fn twice")}
    with pytest.raises(modrt.CompileError, match=r"twice\.wgsl:3:\d+: error") as info:
        modrt.compile(
            sources,
            "webgpu",
            [WGSL_SIG, WGSL_SIG.replace("scale", "twice")],
            filename={"scale": "scale.wgsl", "twice": "twice.wgsl"},
        )
    assert info.value.functions == ["twice"]


def test_wgsl_validate_false(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")  # a real WebGPU module would be refused by wgpu
    assert modrt.compile(WGSL_UNKNOWN, "webgpu", [WGSL_SIG], validate=False).inspect_source("wgsl") == WGSL_UNKNOWN


# -------------------------------------------------------- Metal, GLSL, tools


def test_metal_is_compiled_with_a_warning_that_it_was_not_checked():
    with pytest.warns(modrt.SourceNotCheckedWarning, match="only on macOS"):
        mod = modrt.compile("kernel void k(device float* x [[buffer(0)]]) { x[0] = 1; }", "metal", ["k(float32*)"])
    assert mod.kind == "metal"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        modrt.compile("not even msl", "metal", ["k(float32*)"], validate=False)


def test_glsl_errors_are_compile_errors_naming_the_file():
    with pytest.raises(modrt.CompileError) as info:
        modrt.compile(
            "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { y = 1; }\n",
            "vulkan",
            ["scale(float32*)"],
            filename="scale.comp",
        )
    assert info.value.tool == "glslangValidator" or info.value.tool == "glslang"
    assert "scale.comp:3: 'y' : undeclared identifier" in str(info.value)


def test_without_clang_the_source_is_compiled_with_a_warning(monkeypatch):
    monkeypatch.setattr(opencl_check, "find_clang", lambda: None)
    if modrt.device("opencl").exist:
        pytest.skip("with an OpenCL device here the device build checks instead (runtime_test covers it)")
    with pytest.warns(modrt.SourceNotCheckedWarning, match="clang is not installed"):
        modrt.compile(CL_SYNTAX, "opencl", [CL_SIG4])


def test_without_wgpu_the_source_is_compiled_with_a_warning(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")  # a real WebGPU module would be refused by wgpu
    monkeypatch.setitem(wgsl_check._WGPU, "device", None)
    monkeypatch.setitem(wgsl_check._WGPU, "why", "no adapter (a test double for a machine without one)")
    with pytest.warns(modrt.SourceNotCheckedWarning, match="WGSL source is not checked.*no adapter"):
        # Valid source: where the WebGPU runtime is loaded it builds the shader at creation.
        modrt.compile(WGSL_GOOD, "webgpu", [WGSL_SIG])


# ----------------------------------------------------------- the command line


def test_cli_reports_the_error_and_writes_nothing(tmp_path):
    (tmp_path / "vadd.cl").write_text(CL_SYNTAX)
    proc = modrt_cli("compile", "--target=opencl", f"--function={CL_SIG4}", "vadd.cl", cwd=tmp_path)
    assert proc.returncode == 1
    assert "vadd.cl:3:27: error: expected ';' at end of declaration" in proc.stderr
    assert not (tmp_path / "vadd.modrt").exists()


def test_cli_no_validate_writes_the_artifact(tmp_path):
    (tmp_path / "vadd.cl").write_text(CL_SYNTAX)
    proc = modrt_cli("compile", "--target=opencl", f"--function={CL_SIG4}", "--no-validate", "vadd.cl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "source not checked (--no-validate)" in proc.stdout
    assert modrt.artifact.read_manifest(str(tmp_path / "vadd.modrt")).modules[0].kind == "opencl"


def test_cli_wgsl_error_names_the_file(tmp_path):
    (tmp_path / "scale.wgsl").write_text(WGSL_UNKNOWN)
    proc = modrt_cli("compile", "--target=webgpu", f"--function={WGSL_SIG}", "scale.wgsl", cwd=tmp_path)
    assert proc.returncode == 1
    assert "scale.wgsl:3:67: error: no definition in scope for identifier: `factor`" in proc.stderr
    assert not (tmp_path / "scale.modrt").exists()


def test_cli_says_metal_is_not_checked(tmp_path):
    (tmp_path / "k.metal").write_text("kernel void k(device float* x [[buffer(0)]]) { x[0] = 1; }")
    proc = modrt_cli("compile", "--target=metal", "--function=k(float32*)", "k.metal", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "note: Metal Shading Language source is not checked at compile time" in proc.stdout
    assert "only on macOS" in proc.stdout


def test_opencl_warnings_are_shown_in_full_at_compile_time():
    # PoCL's compiler prints only "1 warning generated." when it builds at
    # load; the compile-time check shows the warning itself, once.
    source = '#warning "this kernel is slow"\n__kernel void k(__global int* x) { x[0] = 1; }\n'
    with pytest.warns(modrt.CompileWarning) as caught:
        mod = modrt.compile(source, "opencl", ["k(int32*; blockIdx.x, threadIdx.x)"], filename="slow.cl")
    (warning,) = [w for w in caught if issubclass(w.category, modrt.CompileWarning)]
    message = str(warning.message)
    assert message.startswith("modrt: OpenCL C of k (slow.cl) compiles with warnings [clang -x cl"), message
    assert 'slow.cl:1:2: warning: "this kernel is slow"' in message, message
    assert mod.kind == "opencl"
    with warnings.catch_warnings():
        warnings.simplefilter("error", modrt.CompileWarning)
        modrt.compile(
            source.replace('#warning "this kernel is slow"\n', ""), "opencl", ["k(int32*; blockIdx.x, threadIdx.x)"]
        )
