"""WGSL as real compilers emit it, run unchanged: modrt reads the kernel's
interface from its declarations (any group and binding numbers, several
uniforms, uniform structs), infers the signature when none is given, checks a
given one, and binds what the shader declares. The real kernels are the
corpus's (tests/corpus, made by tinygrad 0.14.0 and TVM 0.27.0; there
corpus_webgpu_test runs every one of them against numpy); here, what a user
relies on beyond running them: names, signatures a user writes, uniforms."""

import signal

import numpy as np
import pytest
from corpus_run import kernel_source

import modrt
import modrt_testing
from modrt._codegen import parse_signature

GRID = "blockIdx.x, blockIdx.y, blockIdx.z"


def kernel(case: str) -> str:
    """The WGSL kernel of corpus case `compiler/case`."""
    return kernel_source(*case.split("/"), "wgsl")


@pytest.fixture(scope="module")
def dev():
    d = modrt.device("webgpu")
    if not d.exist:
        pytest.fail(f"webgpu(0) must exist here: {d.unavailable_reason}")
    return d


def rng_floats(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def test_tinygrad_signature_is_read_from_the_kernel():
    mod = modrt.compile(kernel("tinygrad/symbolic_scale"), "webgpu")
    assert mod.signature("E_n") == f"E_n(float32 INFINITY, float32* data0_64, float32* data1_64, int32 data2_; {GRID})"


def test_tinygrad_values_pass_by_the_names_the_kernel_declares(dev):
    """INFINITY, the output and input in tinygrad's buffer order, the
    symbolic length after, the grid in workgroups: each by its name."""
    mod = modrt.compile(kernel("tinygrad/symbolic_scale"), "webgpu")
    a, n = rng_floats(64), 37
    out = modrt.tensor(np.zeros(64, "float32"), dev)
    values = [float("inf"), out, modrt.tensor(a, dev), n]
    names = [arg.name for arg in parse_signature(mod.signature("E_n"))[1]]
    mod["E_n"](**dict(zip(names, values)), blockIdx_x=n, blockIdx_y=1, blockIdx_z=1)
    np.testing.assert_allclose(out.numpy()[:n], 2 * a[:n])
    assert not out.numpy()[n:].any()


def test_tinygrad_uint8_packed_in_atomic_words(dev):
    """tinygrad packs uint8 into array<atomic<u32>>: a signature may say uint8
    for those buffers (the kernel's own element type is uint32)."""
    wgsl = kernel("tinygrad/uint8_wrap")
    assert modrt.compile(wgsl, "webgpu").signature("E_16_4") == (
        f"E_16_4(float32 INFINITY, uint32* data0_64, uint32* data1_64, uint32* data2_64; {GRID})"
    )
    signature = f"E_16_4(float32 INFINITY, uint8* data0_64, uint8* data1_64, uint8* data2_64; {GRID})"
    mod = modrt.compile(wgsl, "webgpu", [signature])
    rng = np.random.default_rng(12)
    a, b = rng.integers(0, 256, 64).astype("uint8"), rng.integers(0, 256, 64).astype("uint8")
    out = modrt.empty((64,), "uint8", dev)
    mod["E_16_4"](float("inf"), out, modrt.tensor(a, dev), modrt.tensor(b, dev), 1, 1, 1)
    np.testing.assert_array_equal(out.numpy(), a + b)  # wraps at 256


TVM_SCALE_SIGNATURE = (
    "symbolic_scale_kernel(const float32* a_ptr, float32* out_ptr, int32 n, "
    "uint32 packGridDimX = blockIdx.x; blockIdx.x)"
)


def test_tvm_fills_its_grid_size_from_the_launch(dev):
    """TVM's PODArgs uniform struct: n and packGridDimX, the latter named in
    the signature and filled from blockIdx.x."""
    n = 1000
    a = rng_floats(n)
    mod = modrt.compile(kernel("tvm/symbolic_scale"), "webgpu", [TVM_SCALE_SIGNATURE])
    assert mod.signature("symbolic_scale_kernel") == TVM_SCALE_SIGNATURE
    out = modrt.empty((n,), "float32", dev)
    mod["symbolic_scale_kernel"](modrt.tensor(a, dev), out, n, (n + 255) // 256)
    np.testing.assert_array_equal(out.numpy(), 2 * a)


def test_tvm_without_a_signature(dev):
    n = 100
    mod = modrt.compile(kernel("tvm/symbolic_scale"), "webgpu")
    assert mod.signature("symbolic_scale_kernel") == (
        f"symbolic_scale_kernel(const float32* a_ptr, float32* out_ptr, int32 n, uint32 packGridDimX; {GRID})"
    )
    a = rng_floats(n)
    out = modrt.empty((n,), "float32", dev)
    grid = (n + 255) // 256
    mod["symbolic_scale_kernel"](
        out_ptr=out, a_ptr=modrt.tensor(a, dev), n=n, packGridDimX=grid, blockIdx_x=grid, blockIdx_y=1, blockIdx_z=1
    )
    np.testing.assert_array_equal(out.numpy(), 2 * a)


# Any groups and binding numbers, a scalar uniform in one group and a uniform
# struct in another, declared out of order: the arguments follow (group, binding).
LAYOUT = """
struct Scale { factor: f32, @align(8) count: u32, bias: f32 }
@group(1) @binding(7) var<uniform> scale: Scale;
@group(1) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read> values: array<vec4<f32>>;
@group(0) @binding(0) var<uniform> offset: i32;
@compute @workgroup_size(4) fn apply(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i < scale.count) {
    out[i] = (values[i / 4u][i % 4u] + f32(offset)) * scale.factor + scale.bias;
  }
}
"""


def test_layout_is_the_shaders_own(dev):
    mod = modrt.compile(LAYOUT, "webgpu")
    assert mod.signature("apply") == (
        f"apply(int32 offset, const float32* values, float32* out, float32 factor, uint32 count, float32 bias; {GRID})"
    )
    values = rng_floats(16)
    out = modrt.tensor(np.zeros(16, "float32"), dev)
    mod["apply"](3, modrt.tensor(values, dev), out, 2.0, 14, 0.5, 4, 1, 1)
    expected = np.zeros(16, "float32")
    expected[:14] = (values[:14] + 3) * 2 + 0.5
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    # Each launch sees its own scalars.
    mod["apply"](-1, modrt.tensor(values, dev), out, 1.0, 16, 0.0, 4, 1, 1)
    np.testing.assert_allclose(out.numpy(), values - 1, rtol=1e-6)


def test_float64_over_f32_is_refused_at_compile_time():
    wgsl = kernel("tinygrad/int32_ops").replace("array<i32>", "array<f32>")
    with pytest.raises(modrt.SignatureError) as e:
        modrt.compile(wgsl, "webgpu", [f"E_16_4(float32, float64*, float32*, float32*; {GRID})"])
    assert str(e.value) == (
        "the signature does not match the WGSL kernel: argument 1 ('data0_64') has buffer element type float64 "
        "in the signature, float32 in the kernel\n"
        f"  given:  E_16_4(float32, float64*, float32*, float32*; {GRID})\n"
        f"  kernel: E_16_4(float32 INFINITY, float32* data0_64, float32* data1_64, float32* data2_64; {GRID})"
    )


def test_uniform_members_that_are_not_scalars_are_refused():
    wgsl = (
        "struct P { v: vec4<f32> }\n@group(0) @binding(0) var<uniform> p: P;\n"
        "@compute @workgroup_size(1) fn f() { _ = p; }"
    )
    with pytest.raises(ValueError, match=r"member 'v' of struct P is a vec4<f32>; modrt fills uniforms with scalars"):
        modrt.compile(wgsl, "webgpu")


# Aliasing and wgpu validation errors, each in a child process: a Python
# exception, never a signal.
ALIAS = """
import numpy as np, modrt
d = modrt.device("webgpu")
both = '''@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(1) fn twice(@builtin(global_invocation_id) i: vec3<u32>) { x[i.x] = x[i.x] + y[i.x]; }'''
t = modrt.tensor(np.arange(4, dtype="float32"), d)
modrt.compile(both, "webgpu")["twice"](t, t, 4, 1, 1)
assert (t.numpy() == 2 * np.arange(4)).all(), t.numpy()
vadd = '''@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(1) fn vadd(@builtin(global_invocation_id) i: vec3<u32>) { c[i.x] = a[i.x] + b[i.x]; }'''
m = modrt.compile(vadd, "webgpu")
b = modrt.tensor(np.ones(4, dtype="float32"), d)
try:
    m["vadd"](t, b, t, 4, 1, 1)
except ValueError as e:
    print(e)
m["vadd"](t, b, modrt.tensor(np.zeros(4, dtype="float32"), d), 4, 1, 1)  # still usable
d.sync()
print("alive")
"""


def test_aliased_buffers_in_a_child_process():
    proc = modrt_testing.run_python(ALIAS)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    first, last = proc.stdout.strip().splitlines()
    assert first == (
        "vadd: arguments 0 ('a') and 2 ('c') are the same buffer, which the shader reads as 'a' "
        "(var<storage, read>) and writes as 'c' (read_write); WebGPU cannot bind one buffer both ways "
        "in a dispatch: pass a copy for 'a'"
    )
    assert last == "alive"


# A fixed-size array needs 256 bytes; wgpu would refuse a 4-byte tensor at
# dispatch (an invalid batch, which wgpu-native's submission aborts on).
TOO_SMALL = """
import numpy as np, modrt
d = modrt.device("webgpu")
wgsl = '''@group(0) @binding(0) var<storage, read_write> x: array<f32, 64>;
@compute @workgroup_size(1) fn f() { x[0] = 1.0; }'''
m = modrt.compile(wgsl, "webgpu")
try:
    m["f"](modrt.empty((1,), "float32", d), 1, 1, 1)
except ValueError as e:
    print(type(e).__name__, e)
m["f"](modrt.empty((64,), "float32", d), 1, 1, 1)
vec4 = '''@group(0) @binding(0) var<storage, read_write> v: array<vec4<f32>>;
@compute @workgroup_size(1) fn g() { v[0] = vec4<f32>(1.0); }'''
try:
    modrt.compile(vec4, "webgpu")["g"](modrt.empty((1,), "float32", d), 1, 1, 1)
except ValueError as e:
    print(type(e).__name__, e)
d.sync()
print("alive")
"""


def test_wgpu_validation_errors_are_exceptions_in_a_child_process():
    proc = modrt_testing.run_python(TOO_SMALL)
    assert proc.returncode not in (-signal.SIGABRT, -signal.SIGSEGV), proc.stderr
    assert proc.returncode == 0, proc.stderr
    first, second, last = proc.stdout.strip().splitlines()
    assert first == "ValueError f: argument 0 ('x') holds 4 bytes; the shader's x: array<f32,64> needs 256"
    assert second == "ValueError g: argument 0 ('v') holds 4 bytes; the shader's v: array<vec4<f32>> needs 16"
    assert last == "alive"


def test_argument_count_mismatch_shows_both_signatures():
    wgsl = (
        "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n"
        "@compute @workgroup_size(1) fn f() { x[0] = 1.0; }"
    )
    with pytest.raises(modrt.SignatureError) as e:
        modrt.compile(wgsl, "webgpu", ["f(float32*, int64; blockIdx.x)"])
    assert str(e.value) == (
        "the signature does not match the WGSL kernel: 2 arguments in the signature, 1 in the kernel\n"
        "  given:  f(float32*, int64; blockIdx.x)\n"
        f"  kernel: f(float32* x; {GRID})"
    )
