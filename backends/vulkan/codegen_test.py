"""Vulkan codegen and the Vulkan fallback contract (ARCHITECTURE.md section 5), with or without the runtime."""

import pytest

import modrt
from modrt.backend import vulkan as vulkan_hook

SCALE = """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(push_constant) uniform Args { float alpha; int n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < n) x[i] *= alpha; }
"""
SIGNATURE = "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)"
NOT_LINKED = (
    "Vulkan runtime is not linked into this build; cannot launch kernels. Build with "
    "--//backends:vulkan=on, or load this module where libmodrt_runtime_vulkan.so is present."
)


@pytest.fixture
def fallback(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    return modrt.compile({"scale": SCALE}, "vulkan", [SIGNATURE])


def test_fallback_has_the_real_kind(fallback):
    assert fallback.kind == "vulkan"
    assert fallback.is_fallback
    assert fallback.function_names == ["scale"]


def test_fallback_refuses_to_launch_with_the_exact_message(fallback):
    with pytest.raises(modrt.Error) as e:
        fallback.get_function("scale")
    assert str(e.value) == NOT_LINKED


def test_fallback_inspect_source(fallback):
    assert fallback.inspect_source("glsl") == f"// function: scale\n{SCALE}"
    spirv = fallback.inspect_source()
    assert spirv == fallback.inspect_source("spirv") and spirv[:4] == vulkan_hook.SPIRV_MAGIC
    with pytest.raises(ValueError, match="no source of format 'wgsl'.*it holds: spirv, glsl"):
        fallback.inspect_source("wgsl")


def test_the_module_keeps_the_kernel_s_argument_names(fallback):
    # Read from the SPIR-V on the codegen side: no runtime needed.
    assert fallback.signature("scale") == "scale(float32* x, float32 alpha, int32 n; blockIdx.x, threadIdx.x)"


def test_fallback_bytes_are_the_payload_serialization(fallback):
    spirv = fallback.inspect_source("spirv")
    payload = modrt.Payload.create("multi-shader", "spirv", [fallback.signature("scale")], shaders={"scale": spirv})
    assert fallback.save_to_bytes() == payload.save()


def test_spirv_given_directly_is_carried_unchanged(fallback):
    again = modrt.compile({"scale": fallback.inspect_source("spirv")}, "vulkan", [SIGNATURE])
    assert again.is_fallback and again.save_to_bytes() == fallback.save_to_bytes()


def test_without_the_runtime_compile_gives_the_fallback():
    if modrt.backend.runtime_status("vulkan").loaded:
        pytest.skip("the Vulkan runtime is loaded in this build; covered by runtime_test")
    m = modrt.compile({"scale": SCALE}, "vulkan", [SIGNATURE])
    assert m.is_fallback and m.kind == "vulkan"
    status = modrt.backend.runtime_status("vulkan")
    assert not status.selected and "--//backends:vulkan=off" in status.reason
    assert not modrt.device("vulkan").exist
    assert "libmodrt_runtime_vulkan.so is not loaded" in modrt.device("vulkan").unavailable_reason
    assert modrt.get_global_func("module.load_from_bytes.vulkan", allow_missing=True) is None


def test_fallback_bytes_cannot_load_without_the_runtime(fallback):
    if modrt.backend.runtime_status("vulkan").loaded:
        pytest.skip("the Vulkan runtime is loaded in this build; covered by runtime_test")
    with pytest.raises(ValueError, match="libmodrt_runtime_vulkan.so is not loaded"):
        modrt.load_module_from_bytes("vulkan", fallback.save_to_bytes())


def test_unknown_format_is_refused():
    bad = modrt.Payload.create("multi-shader", "wgsl", [SIGNATURE], shaders={"scale": b"x"})
    with pytest.raises(ValueError, match="unknown Vulkan format 'wgsl'"):
        modrt.get_global_func("codegen.vulkan.create_module")(bad)


def test_single_binary_payload_is_refused():
    single = modrt.Payload.create("single-binary", "spirv", [SIGNATURE], code=b"x")
    with pytest.raises(ValueError, match="Vulkan modules are multi-shader"):
        modrt.get_global_func("codegen.vulkan.create_module")(single)


def test_invalid_spirv_given_directly_is_refused(fallback):
    spirv = bytearray(fallback.inspect_source("spirv"))
    del spirv[-4:]  # drops OpFunctionEnd
    with pytest.raises(ValueError, match="SPIR-V of scale is invalid"):
        modrt.compile({"scale": bytes(spirv)}, "vulkan", [SIGNATURE])
