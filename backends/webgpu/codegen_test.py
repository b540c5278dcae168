"""WebGPU: WGSL codegen; modules are always the canonical fallback (no native runtime)."""

import pytest

import modrt
from modrt import _selection

ADD = """@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64) fn scale(@builtin(global_invocation_id) i: vec3<u32>) { x[i.x] *= 2.0; }"""
SIG = "scale(float32*; blockIdx.x, threadIdx.x)"


def test_wgsl_module_is_the_fallback_with_its_source():
    mod = modrt.compile(ADD, "webgpu", [SIG])
    assert mod.kind == "webgpu" and mod.is_fallback
    assert mod.inspect_source("wgsl") == ADD
    assert mod.function_names == ["scale"]


def test_one_wgsl_source_per_function():
    sources = {"scale": ADD, "twice": ADD.replace("scale", "twice")}
    mod = modrt.compile(sources, "webgpu", [SIG, SIG.replace("scale", "twice")])
    listing = mod.inspect_source("wgsl")
    assert "// function: scale" in listing and "// function: twice" in listing


def test_no_native_runtime_even_with_the_flag_on():
    status = modrt.backend.runtime_status("webgpu")
    assert not status.selected and not status.loaded
    assert "no native webgpu runtime" in status.reason
    # --//backends:webgpu=on selects nothing to build: the selection says so either way.
    assert _selection.RUNTIMES["webgpu"] is None
    with pytest.raises(ValueError, match="libmodrt_runtime_webgpu.so is not loaded"):
        modrt.load_module_from_bytes("webgpu", modrt.compile(ADD, "webgpu", [SIG]).save_to_bytes())
