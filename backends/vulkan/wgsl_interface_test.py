"""One WGSL kernel, one interface: the same WGSL source compiled for webgpu
and for vulkan (through tint) has the same signature and takes the same call.
tint drops the bindings an entry point does not use and lowers each uniform
to a block of vec4<u32>; the vulkan module carries its WGSL and binds by the
WGSL's declarations, so an unused binding is accepted and ignored and a
scalar uniform is a Python scalar on both (docs/formats/spirv.md, "WGSL on
Vulkan"). tinygrad's and TVM's kernels as emitted (tests/corpus) run on both
in corpus_vulkan_test and corpus_webgpu_test; here, what a user relies on
beyond running them."""

import glob
import os

import numpy as np
import pytest
from corpus_run import kernel_source

import modrt
from modrt._codegen import find_tool

TARGETS = ("webgpu", "vulkan")
GRID = "blockIdx.x, blockIdx.y, blockIdx.z"
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "corpus")

if find_tool("tint") is None:
    pytest.skip("tint (Debian's dawn-tools) is not installed here: docs/formats/spirv.md", allow_module_level=True)


@pytest.fixture(scope="module")
def devices():
    found = {t: modrt.device(t) for t in TARGETS}
    for t, d in found.items():
        if not d.exist:
            pytest.fail(f"{t}(0) must exist here: {d.unavailable_reason}")
    return found


# tinygrad's layout, with bindings the entry point does not use: INFINITY
# (no inf computed) and an input buffer; two scalar uniforms after the buffers.
UNUSED_BINDINGS = """
@group(0) @binding(0) var<uniform> INFINITY: f32;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> unused_in: array<f32>;
@group(0) @binding(3) var<storage, read> x: array<f32>;
@group(0) @binding(4) var<uniform> n: i32;
@group(0) @binding(5) var<uniform> scale: f32;
@compute @workgroup_size(8)
fn k(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = i32(g.x);
  if (i < n) { out[i] = x[i] * scale; }
}
"""
UNUSED_SIGNATURE = (
    f"k(float32 INFINITY, float32* out, const float32* unused_in, const float32* x, int32 n, float32 scale; {GRID})"
)


def wgsl_corpus() -> list[str]:
    return sorted(glob.glob(os.path.join(CORPUS, "*", "*", "wgsl", "*.wgsl")))


@pytest.mark.parametrize("path", wgsl_corpus(), ids=lambda p: "/".join(p.split(os.sep)[-4:-2]))
def test_every_corpus_kernel_has_one_signature_on_both(path):
    with open(path) as f:
        source = f.read()
    if "enable f16;" in source and not modrt.device("webgpu").attr("supports_float16"):
        pytest.skip("the WebGPU adapter here has no shader-f16")
    webgpu, vulkan = modrt.compile(source, "webgpu"), modrt.compile(source, "vulkan")
    assert vulkan.function_names == webgpu.function_names
    for name in webgpu.function_names:
        assert vulkan.signature(name) == webgpu.signature(name)


def test_unused_bindings_are_kept_and_ignored(devices):
    x = np.arange(16, dtype="float32")
    results = {}
    for target, dev in devices.items():
        mod = modrt.compile(UNUSED_BINDINGS, target)
        assert mod.signature("k") == UNUSED_SIGNATURE
        out = modrt.tensor(np.zeros(16, "float32"), dev)
        ignored = modrt.tensor(np.full(4, 7, "float32"), dev)
        mod["k"](float("inf"), out, ignored, modrt.tensor(x, dev), 10, 1.5, 2, 1, 1)
        results[target] = out.numpy()
    expected = np.where(np.arange(16) < 10, x * 1.5, 0).astype("float32")
    for target, got in results.items():
        np.testing.assert_array_equal(got, expected, err_msg=target)


def test_tinygrad_kernel_by_keyword_alike(devices):
    """tinygrad's E_n as emitted: INFINITY, buffers, the symbolic length, by name."""
    source = kernel_source("tinygrad", "symbolic_scale", "wgsl")
    a, n = np.linspace(-1, 1, 64, dtype="float32"), 37
    for target, dev in devices.items():
        mod = modrt.compile(source, target)
        assert (
            mod.signature("E_n") == f"E_n(float32 INFINITY, float32* data0_64, float32* data1_64, int32 data2_; {GRID})"
        )
        out = modrt.tensor(np.zeros(64, "float32"), dev)
        mod["E_n"](
            INFINITY=float("inf"),
            data0_64=out,
            data1_64=modrt.tensor(a, dev),
            data2_=n,
            blockIdx_x=n,
            blockIdx_y=1,
            blockIdx_z=1,
        )
        np.testing.assert_allclose(out.numpy()[:n], 2 * a[:n], err_msg=target)
        assert not out.numpy()[n:].any(), target


TVM_SCALE_SIGNATURE = (
    "symbolic_scale_kernel(const float32* a_ptr, float32* out_ptr, int32 n, "
    "uint32 packGridDimX = blockIdx.x; blockIdx.x)"
)


def test_tvm_uniform_struct_members_are_scalars_alike(devices):
    """TVM's PODArgs uniform struct (n, packGridDimX): one scalar per member on
    both, packGridDimX filled from the launch; no block packed by hand."""
    source = kernel_source("tvm", "symbolic_scale", "wgsl")
    n = 1000
    a = np.random.default_rng(3).standard_normal(n).astype("float32")
    for target, dev in devices.items():
        mod = modrt.compile(source, target, [TVM_SCALE_SIGNATURE])
        assert mod.signature("symbolic_scale_kernel") == TVM_SCALE_SIGNATURE
        out = modrt.empty((n,), "float32", dev)
        mod["symbolic_scale_kernel"](modrt.tensor(a, dev), out, n, (n + 255) // 256)
        np.testing.assert_array_equal(out.numpy(), 2 * a, err_msg=target)


def refusal(target: str, dev, call) -> str:
    mod = modrt.compile(UNUSED_BINDINGS, target)
    out, x = modrt.empty((16,), "float32", dev), modrt.empty((16,), "float32", dev)
    with pytest.raises((TypeError, ValueError, OverflowError)) as e:
        call(mod["k"], out, x, dev)
    return f"{type(e.value).__name__}: {e.value}"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda k, out, x, dev: k(modrt.tensor(np.ones(4, "float32"), dev), out, x, x, 10, 1.5, 2, 1, 1),
            "TypeError: k: argument 'INFINITY' (float32): argument 0: expected float, got tensor",
        ),
        (
            lambda k, out, x, dev: k(1.0, out, x, modrt.empty((16,), "int32", dev), 10, 1.5, 2, 1, 1),
            "TypeError: k: argument 3 must be a tensor of float32, got a tensor of int32",
        ),
        (
            lambda k, out, x, dev: k(1.0, out, x, x, 10, 1.5, 2),
            "TypeError: k takes 6 arguments and 3 launch parameters",
        ),
        (
            lambda k, out, x, dev: k(1.0, out, x, x, 2**31, 1.5, 2, 1, 1),
            "OverflowError: k: argument 'n' (int32) must be in [-2147483648, 2147483647], got 2147483648",
        ),
    ],
    ids=["tensor-for-scalar", "buffer-dtype", "too-few", "scalar-range"],
)
def test_wrong_calls_are_refused_alike(devices, call, message):
    got = {target: refusal(target, dev, call) for target, dev in devices.items()}
    assert got["webgpu"].startswith(message), got
    assert got["vulkan"] == got["webgpu"]


SCALED = """
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@group(1) @binding(3) var<uniform> scale: f32;
@compute @workgroup_size(4)
fn scaled(@builtin(global_invocation_id) i: vec3<u32>) { data[i.x] = data[i.x] * scale; }
"""


def test_vulkan_launches_in_flight_each_keep_their_scalars(devices):
    """50 launches queued without a wait, each with its own scale: a uniform's
    memory is the launch slot's, written when the slot is taken."""
    dev = devices["vulkan"]
    mod = modrt.compile(SCALED, "vulkan")
    assert mod.signature("scaled") == f"scaled(float32* data, float32 scale; {GRID})"
    outs = [modrt.tensor(np.ones(8, "float32"), dev) for _ in range(50)]
    for i, out in enumerate(outs):
        mod["scaled"](out, float(i), 2, 1, 1)
    for i, out in enumerate(outs):
        np.testing.assert_array_equal(out.numpy(), np.full(8, i, "float32"))


def test_vulkan_graph_replays_each_launch_with_its_scalars(devices):
    dev = devices["vulkan"]
    mod = modrt.compile(SCALED, "vulkan")
    data = modrt.tensor(np.ones(8, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        for scale in (2.0, 3.0, 0.5):
            mod["scaled"](data, scale, 2, 1, 1, stream=s)
    g.replay()
    g.replay()
    np.testing.assert_array_equal(data.numpy(stream=s, timeout=60), np.full(8, 9.0, "float32"))


def test_vulkan_bytes_loaded_back_bind_by_their_wgsl(devices):
    """The SPIR-V carries its WGSL: a module loaded from bytes (an artifact's
    receiving end) binds as the compiled one did."""
    dev = devices["vulkan"]
    loaded = modrt.load_module_from_bytes("vulkan", modrt.compile(UNUSED_BINDINGS, "vulkan").save_to_bytes())
    assert loaded.signature("k") == UNUSED_SIGNATURE
    out = modrt.tensor(np.zeros(4, "float32"), dev)
    x = modrt.tensor(np.arange(4, dtype="float32"), dev)
    loaded["k"](0.0, out, x, x, 4, -2.0, 1, 1, 1)
    np.testing.assert_array_equal(out.numpy(), np.arange(4, dtype="float32") * -2)


OVERRIDDEN_SIZE = """
override block_x: u32 = 8;
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(block_x)
fn ones(@builtin(global_invocation_id) i: vec3<u32>) { data[i.x] = 1.0; }
"""


def test_an_override_workgroup_size_on_vulkan_is_its_default(devices):
    """tint fixes override constants at their defaults: the same signature on
    both, the default size runs on vulkan, another is refused naming why."""
    sigs = {t: modrt.compile(OVERRIDDEN_SIZE, t).signature("ones") for t in TARGETS}
    assert sigs["vulkan"] == sigs["webgpu"] == f"ones(float32* data; {GRID}, threadIdx.x)"
    dev = devices["vulkan"]
    mod = modrt.compile(OVERRIDDEN_SIZE, "vulkan")
    data = modrt.tensor(np.zeros(16, "float32"), dev)
    mod["ones"](data, 2, 1, 1, 8)
    np.testing.assert_array_equal(data.numpy(), np.ones(16, "float32"))
    with pytest.raises(
        ValueError, match=r"ones: its WGSL workgroup size compiled for Vulkan is \(8, 1, 1\), but threadIdx.x = 4"
    ):
        mod["ones"](data, 4, 1, 1, 4)
