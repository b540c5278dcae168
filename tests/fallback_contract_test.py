"""The fallback contract (ARCHITECTURE.md section 5) for every in-tree backend
whose runtime is not loaded: same kind, payload bytes, inspectable, refuses to
launch with the exact message, never loadable as a real module."""

import importlib

import pytest
from backend_kernels import having

import modrt
from modrt import _selection

SIG = "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)"
# Each backend's FALLBACK (backends/<x>/testing/<x>_kernels.py): (source of
# scale, declaring what SIG says, the format to inspect, the text it holds).
CASES = having("FALLBACK")
GLSL = CASES["vulkan"][0]
WGSL = CASES["webgpu"][0]


@pytest.fixture(params=sorted(CASES))
def case(request, monkeypatch):
    name = request.param
    if modrt.backend.runtime_status(name).loaded:
        pytest.skip(f"the {name} runtime is loaded in this build")
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    source, inspect_fmt, inspect_text = CASES[name]
    return name, source, inspect_fmt, inspect_text


def test_fallback_kind_bytes_and_refusal(case):
    name, source, inspect_fmt, inspect_text = case
    mod = modrt.compile(source, name, [SIG])
    assert mod.kind == name and mod.is_fallback
    hook = importlib.import_module(f"modrt.backend.{name}")
    # The module keeps SIG as checked against the kernel (with the names the kernel declares).
    expected = hook.codegen(source, [mod.signature("scale")], modrt.target.Target(name)).save()
    assert mod.save_to_bytes() == expected
    with pytest.raises(modrt.Error) as e:
        mod.get_function("scale")
    display_name = _selection.IDENTITIES[name]["display_name"]
    assert str(e.value) == (
        f"{display_name} runtime is not linked into this build; cannot launch kernels. Build with "
        f"--//backends:{name}=on, or load this module where libmodrt_runtime_{name}.so is present."
    )
    with pytest.raises(ValueError, match=f"libmodrt_runtime_{name}.so is not loaded"):
        modrt.load_module_from_bytes(name, mod.save_to_bytes())
    if inspect_fmt:
        text = mod.inspect_source(inspect_fmt)
        assert (inspect_text or "scale" if name != "vulkan" else "gl_GlobalInvocationID") in text


def test_vulkan_glsl_becomes_real_spirv():
    mod = modrt.compile(GLSL, "vulkan", [SIG])
    spirv = mod.inspect_source("spirv")
    assert isinstance(spirv, bytes) and spirv[:4] == (0x07230203).to_bytes(4, "little")
    # SPIR-V given as bytes is carried unchanged.
    again = modrt.compile({"scale": spirv}, "vulkan", [SIG])
    assert again.save_to_bytes() == mod.save_to_bytes()


def test_bad_glsl_is_a_clear_error():
    with pytest.raises(
        modrt.CompileError,
        match=r"(?s)GLSL of scale \(<scale\.comp>\) does not compile.*"
        r"<scale\.comp>:2: 'nope' : undeclared identifier",
    ):
        modrt.compile("#version 450\nvoid main() { nope; }", "vulkan", [SIG])


def test_rocm_without_hipcc_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # hides the toolchain root's hipcc
    with pytest.raises(ValueError, match="ROCm has no source JIT"):
        modrt.compile("__global__ void scale(float* x) {}", "rocm", [SIG])


def test_rocm_fallback_from_a_code_object_payload(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")  # whether or not the runtime is loaded
    payload = modrt.Payload.create("single-binary", "hsaco", [SIG], code=b"\x7fELF-code-object")
    mod = modrt.get_global_func("codegen.rocm.create_module")(payload)
    assert mod.kind == "rocm" and mod.is_fallback and mod.save_to_bytes() == payload.save()


def test_per_function_sources_must_match_signatures():
    with pytest.raises(ValueError, match="missing \\['scale'\\]"):
        modrt.compile({"other": WGSL}, "webgpu", [SIG])


def test_wrong_payload_shape_is_refused():
    single = modrt.Payload.create("single-binary", "wgsl", [SIG], code=b"x")
    with pytest.raises(ValueError, match="WebGPU modules are multi-shader"):
        modrt.get_global_func("codegen.webgpu.create_module")(single)


def test_unknown_target_names_the_known_ones():
    with pytest.raises(ValueError, match="no codegen for target 'tpu'; known targets: cpu, cuda"):
        modrt.compile("x", "tpu", [SIG])


def test_target_detection_errors():
    with pytest.raises(ValueError, match="no target detector for device type 'tpu'; supported: cpu"):
        modrt.target.detect_target_from_device("tpu")
    with pytest.raises(ValueError, match="cuda\\(0\\) does not exist .*libmodrt_runtime_cuda.so"):
        modrt.target.detect_target_from_device(modrt.device("cuda"))
    assert modrt.target.detect_target_from_device(modrt.cpu()).kind == "cpu"
