"""WebGPU: WGSL codegen and the fallback module, with or without the runtime."""

import pytest

import modrt
from modrt import _selection

ADD = """@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64) fn scale(@builtin(global_invocation_id) i: vec3<u32>) { x[i.x] *= 2.0; }"""
SIG = "scale(float32*; blockIdx.x, threadIdx.x)"
NOT_LINKED = (
    "WebGPU runtime is not linked into this build; cannot launch kernels. Build with "
    "--//backends:webgpu=on, or load this module where libmodrt_runtime_webgpu.so is present."
)


@pytest.fixture
def force_fallback(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")


def test_wgsl_fallback_module_keeps_its_source(force_fallback):
    mod = modrt.compile(ADD, "webgpu", [SIG])
    assert mod.kind == "webgpu" and mod.is_fallback
    assert mod.inspect_source("wgsl") == ADD
    assert mod.function_names == ["scale"]
    with pytest.raises(modrt.Error) as e:
        mod.get_function("scale")
    assert str(e.value) == NOT_LINKED


def test_fallback_bytes_are_the_payload_serialization(force_fallback):
    """The signature kept is the given one with the kernel's names (read by
    libmodrt_compiler.so's scanner: no runtime needed)."""
    mod = modrt.compile(ADD, "webgpu", [SIG])
    assert mod.signature("scale") == "scale(float32* x; blockIdx.x, threadIdx.x)"
    payload = modrt.Payload.create("multi-shader", "wgsl", [mod.signature("scale")], shaders={"scale": ADD.encode()})
    assert mod.save_to_bytes() == payload.save()


def test_the_signature_is_inferred_without_the_runtime(force_fallback):
    mod = modrt.compile(ADD, "webgpu")
    assert mod.is_fallback
    assert mod.signature("scale") == "scale(float32* x; blockIdx.x, blockIdx.y, blockIdx.z)"


def test_real_and_fallback_modules_save_the_same_bytes(monkeypatch):
    real = modrt.compile(ADD, "webgpu").save_to_bytes()
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    assert modrt.compile(ADD, "webgpu").save_to_bytes() == real


def test_one_wgsl_source_per_function(force_fallback):
    sources = {"scale": ADD, "twice": ADD.replace("scale", "twice")}
    mod = modrt.compile(sources, "webgpu", [SIG, SIG.replace("scale", "twice")])
    listing = mod.inspect_source("wgsl")
    assert "// function: scale" in listing and "// function: twice" in listing


def test_the_runtime_follows_the_selection():
    """WebGPU's modrt_backend() declares a runtime; the flag decides whether it is here."""
    assert "webgpu" in _selection.HAS_RUNTIME
    status = modrt.backend.runtime_status("webgpu")
    if _selection.RUNTIMES["webgpu"] is None:
        assert not status.selected and not status.loaded
        # ... then names where a runtime could still come from (a wheel, MODRT_LIBRARY_PATH).
        assert status.reason.startswith("not selected in this build (--//backends:webgpu=off)")
        assert modrt.compile(ADD, "webgpu", [SIG]).is_fallback
        with pytest.raises(ValueError, match="libmodrt_runtime_webgpu.so is not loaded"):
            modrt.load_module_from_bytes("webgpu", modrt.compile(ADD, "webgpu", [SIG]).save_to_bytes())
    else:
        assert status.selected and status.loaded, status
        assert not modrt.compile(ADD, "webgpu", [SIG]).is_fallback
