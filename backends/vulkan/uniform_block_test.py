"""A GLSL or SPIR-V kernel's uniform block is an argument of its bytes
("uniform uint32x4 p" in the signature): it takes a tensor of any element
type holding exactly those bytes, or a numpy array (anything with the buffer
protocol or __array__) of that size, staged into a tensor of the launch's
own, so launches in flight and a graph's launches each keep their values
(docs/formats/spirv.md, "Uniform blocks")."""

import struct

import numpy as np
import pytest

import modrt
import shader_testing
from modrt.backend import vulkan as vulkan_hook

dev = shader_testing.device_fixture("vulkan")

# One std140 block of four words: an unsigned count and two floats, then padding.
GLSL_BLOCK = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) uniform Params { uint n; float scale; float bias; uint unused; } p;
layout(set = 0, binding = 1) buffer Data { float data[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < p.n) data[i] = data[i] * p.scale + p.bias;
}
"""
SIGNATURE = "f(uniform uint32x4 p, float32* data; blockIdx.x)"
PARAMS = np.dtype([("n", "<u4"), ("scale", "<f4"), ("bias", "<f4"), ("unused", "<u4")])


def params(n: int, scale: float, bias: float = 0.0) -> np.ndarray:
    """The block's 16 bytes as numpy makes them: one record of PARAMS."""
    return np.array([(n, scale, bias, 0)], PARAMS)


def compiled(form: str) -> modrt.Module:
    """The kernel as GLSL, or as SPIR-V given directly."""
    source = GLSL_BLOCK if form == "glsl" else vulkan_hook.glsl_to_spirv("f", GLSL_BLOCK)
    return modrt.compile({"f": source}, "vulkan")


FORMS = pytest.mark.parametrize("form", ["glsl", "spirv"])


def block_signature(block: str) -> str:
    glsl = f"""#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform {block};
layout(set = 0, binding = 1) buffer Out {{ float out_[]; }};
void main() {{ out_[0] = 1.0; }}
"""
    spirv = vulkan_hook.glsl_to_spirv("f", glsl)
    return vulkan_hook.kernel_signature("f", vulkan_hook.reflect_spirv(spirv, "f"))


@pytest.mark.parametrize(
    "block, argument",
    [
        ("Params { uint n; float scale; float bias; uint unused; } p", "uniform uint32x4 p"),
        ("V { uvec4 v; }", "uniform uint32x4 v"),
        ("A { float alpha; }", "uniform float32 alpha"),
        ("U { uint n; float s; }", "uniform uint32x2 U"),
        # std140: each array element and matrix column 16 bytes apart.
        ("W { vec4 w[2]; float k; } params", "uniform uint32x9 params"),
        ("M { mat4 m; float k; } params", "uniform uint32x17 params"),
        ("H { float h[3]; }", "uniform float32x12 h"),
    ],
)
def test_the_signature_declares_a_block_by_its_bytes(block, argument):
    assert block_signature(block) == f"f({argument}, float32* out_; blockIdx.x)"


@FORMS
def test_the_kernel_declares_its_block(form):
    assert compiled(form).signature("f") == SIGNATURE


@FORMS
def test_a_numpy_array_fills_the_block(dev, form):
    mod = compiled(form)
    x = np.arange(16, dtype="float32")
    data = modrt.tensor(x, dev)
    mod["f"](params(12, 2.0, 1.0), data, 2)
    np.testing.assert_array_equal(data.numpy(), np.concatenate([x[:12] * 2 + 1, x[12:]]))
    # Plain words, the floats' bits written in place; bytes as they are.
    words = np.array([16, 0, 0, 0], "uint32")
    words[1:3] = np.array([0.5, -1.0], "float32").view("uint32")
    data = modrt.tensor(x, dev)
    mod["f"](words, data, 2)
    np.testing.assert_array_equal(data.numpy(), x * 0.5 - 1)
    mod["f"](params(8, 2.0, 1.0).tobytes(), data, 2)
    np.testing.assert_array_equal(data.numpy(), np.concatenate([x[:8] - 1, x[8:] * 0.5 - 1]))


def test_a_tensor_of_any_element_type_holding_the_bytes_fills_the_block(dev):
    mod = compiled("glsl")
    block = params(8, 3.0, 0.5)
    for view in ("float32", "uint32", "uint8", "int16"):
        data = modrt.tensor(np.ones(8, "float32"), dev)
        mod["f"](modrt.tensor(block.view(view), dev), data, 1)
        np.testing.assert_array_equal(data.numpy(), np.full(8, 3.5, "float32"))
    data = modrt.tensor(np.ones(8, "float32"), dev)
    mod["f"](modrt.tensor(block.view("uint32"), dev).view("uint32x4"), data, 1)
    np.testing.assert_array_equal(data.numpy(), np.full(8, 3.5, "float32"))


@pytest.mark.parametrize(
    "value, error, message",
    [
        (
            np.zeros(2, "uint32"),
            ValueError,
            "f: argument 'p' is a uniform block of 16 bytes, got an array of 8 bytes",
        ),
        (
            np.array([8, 2.0, 0, 0]),  # float64: 32 bytes
            ValueError,
            "f: argument 'p' is a uniform block of 16 bytes, got an array of 32 bytes",
        ),
        (
            "tensor of 3 float32",
            ValueError,
            "f: argument 'p' is a uniform block of 16 bytes, got a tensor of 12 bytes (float32)",
        ),
        (
            2.0,
            TypeError,
            "f: argument 'p' is a uniform block of 16 bytes: pass a tensor or an array of 16 bytes, got float",
        ),
    ],
    ids=["array-too-small", "float64-array", "tensor-too-small", "float"],
)
def test_a_block_of_other_bytes_is_refused_naming_both_sizes(dev, value, error, message):
    if isinstance(value, str):
        value = modrt.tensor(np.zeros(3, "float32"), dev)
    data = modrt.tensor(np.ones(8, "float32"), dev)
    with pytest.raises(error) as e:
        compiled("glsl")["f"](value, data, 1)
    assert str(e.value) == message
    np.testing.assert_array_equal(data.numpy(), np.ones(8, "float32"))


def test_an_array_for_a_storage_buffer_says_how_to_pass_it(dev):
    with pytest.raises(TypeError) as e:
        compiled("glsl")["f"](params(8, 1.0), np.ones(8, "float32"), 1)
    assert str(e.value) == (
        "f: argument 1 must be a tensor of float32, got bytes (an array passes as its bytes to a "
        "uniform block only; modrt.tensor(array, device) copies one to the device)"
    )


@FORMS
def test_launches_in_flight_each_keep_their_block(dev, form):
    """50 launches queued without a wait, each with its own numpy block, on
    the default stream and on another: each block is staged into a tensor of
    its own, written on the launch's stream before it."""
    mod = compiled(form)
    outs = [modrt.tensor(np.ones(8, "float32"), dev) for _ in range(50)]
    other = modrt.Stream(dev)
    for i, out in enumerate(outs):
        mod["f"](params(8, float(i), 0.25), out, 1, stream=other if i % 2 else None)
    for i, out in enumerate(outs):
        np.testing.assert_array_equal(out.numpy(), np.full(8, i + 0.25, "float32"))


@FORMS
def test_a_graph_replays_each_launch_with_its_block(dev, form):
    mod = compiled(form)
    data = modrt.tensor(np.ones(8, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        for scale in (2.0, 3.0, 0.5):
            block = params(8, scale)
            mod["f"](block, data, 1, stream=s)
            block["scale"] = 100.0  # the launch has its own copy
    g.replay()
    g.replay()
    np.testing.assert_array_equal(data.numpy(stream=s, timeout=60), np.full(8, 9.0, "float32"))


def test_saved_bytes_keep_the_block_as_the_fallbacks_do(dev, monkeypatch, tmp_path):
    real = compiled("glsl")
    assert not real.is_fallback
    loaded = modrt.load_module_from_bytes("vulkan", real.save_to_bytes())
    assert loaded.signature("f") == SIGNATURE
    data = modrt.tensor(np.ones(8, "float32"), dev)
    loaded["f"](params(8, 4.0), data, 1)
    np.testing.assert_array_equal(data.numpy(), np.full(8, 4.0, "float32"))
    # An artifact holding a uniform block is format version 3.
    path = tmp_path / "f.modrt"
    real.export(str(path))
    assert modrt.artifact.read_manifest(str(path)).format_version == 3
    assert modrt.load_module(str(path)).signature("f") == SIGNATURE
    older = bytearray(path.read_bytes())
    older[8:10] = struct.pack("<H", 2)
    path.write_bytes(bytes(older))
    with pytest.raises(ValueError, match="a version 2 file whose signatures need version 3"):
        modrt.load_module(str(path))
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = compiled("glsl")
    assert fallback.is_fallback
    assert fallback.save_to_bytes() == real.save_to_bytes()


@pytest.mark.parametrize(
    "given, reason",
    [
        (
            "f(const uint32x4* p, float32* data; blockIdx.x)",
            "is a buffer in the signature, a uniform block in the kernel",
        ),
        (
            "f(uniform uint32x2 p, float32* data; blockIdx.x)",
            "is a uniform block of 8 bytes in the signature, 16 in the kernel",
        ),
        ("f(uint32 p, float32* data; blockIdx.x)", "is a scalar in the signature, a uniform block in the kernel"),
    ],
)
def test_a_given_signature_is_checked_against_the_block(given, reason):
    with pytest.raises(modrt.SignatureError, match=f"argument 0 \\('p'\\) {reason}"):
        modrt.compile({"f": GLSL_BLOCK}, "vulkan", [given])


def test_a_given_signature_may_name_the_blocks_bytes_another_way(dev):
    """Any element type of the block's size: the block is bytes."""
    mod = modrt.compile({"f": GLSL_BLOCK}, "vulkan", ["f(uniform float32x4, float32*; blockIdx.x)"])
    assert mod.signature("f") == "f(uniform float32x4 p, float32* data; blockIdx.x)"
    data = modrt.tensor(np.ones(8, "float32"), dev)
    mod["f"](p=params(8, 2.0), data=data, blockIdx_x=1)
    np.testing.assert_array_equal(data.numpy(), np.full(8, 2.0, "float32"))
