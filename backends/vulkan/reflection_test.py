"""The Vulkan backend reads each shader's interface from its SPIR-V: kernels
written in the layouts other tools use (several descriptor sets, any binding
numbers, push-constant blocks, specialization constants sizing the
workgroup) run as written on lavapipe, their signatures read from the
kernel; a signature that disagrees with the kernel is refused at compile time."""

import numpy as np
import pytest

import modrt
import shader_testing
from modrt.backend import vulkan as vulkan_hook

dev = shader_testing.device_fixture("vulkan")

# IREE's layout: a fixed workgroup, inputs and outputs in different
# descriptor sets at sparse bindings, dynamic sizes in push constants.
IREE_STYLE = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In0 { float lhs[]; };
layout(set = 0, binding = 1) readonly buffer In1 { float rhs[]; };
layout(set = 1, binding = 3) writeonly buffer Out0 { float result[]; };
layout(push_constant) uniform PushConstants { uint n; float scale; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) result[i] = (lhs[i] + rhs[i]) * pc.scale;
}
"""
# Kompute's layout: the workgroup size from specialization constants 0 and 1,
# a value specialization constant left at its default, one push constant.
KOMPUTE_STYLE = """#version 450
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const float offset = 0.5;
layout(set = 0, binding = 0) buffer buf_in { float in_a[]; };
layout(set = 0, binding = 1) buffer buf_out { float out_a[]; };
layout(push_constant) uniform PushConstants { uint width; } push_const;
void main() {
  uvec2 p = gl_GlobalInvocationID.xy;
  out_a[p.y * push_const.width + p.x] = in_a[p.y * push_const.width + p.x] * 2.0 + offset;
}
"""
# ncnn's layout: the workgroup size from constants 233..235, shape
# parameters in push constants, a feature switch as a specialization constant.
NCNN_STYLE = """#version 450
layout(constant_id = 0) const int relu_slope_enabled = 0;
layout(local_size_x_id = 233) in;
layout(local_size_y_id = 234) in;
layout(local_size_z_id = 235) in;
layout(binding = 0) buffer bottom_top_blob { float bottom_top_blob_data[]; };
layout(push_constant) uniform parameter { int w; int h; int c; int cstep; } p;
void main() {
  int gx = int(gl_GlobalInvocationID.x);
  int gy = int(gl_GlobalInvocationID.y);
  int gz = int(gl_GlobalInvocationID.z);
  if (gx >= p.w || gy >= p.h || gz >= p.c) return;
  int gi = gz * p.cstep + gy * p.w + gx;
  bottom_top_blob_data[gi] = max(bottom_top_blob_data[gi], 0.0);
}
"""
# A uniform block: an argument of its bytes (uniform_block_test.py has the rest).
UNIFORM_BLOCK = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) uniform Params { float alpha; } params;
layout(set = 0, binding = 1) buffer Data { float data[]; };
void main() { data[gl_GlobalInvocationID.x] *= params.alpha; }
"""

IREE_KERNEL = "f(const float32* lhs, const float32* rhs, float32* result, uint32 n, float32 scale; blockIdx.x)"


def signature_of(glsl: str, name: str = "f") -> str:
    spirv = vulkan_hook.glsl_to_spirv(name, glsl)
    return vulkan_hook.kernel_signature(name, vulkan_hook.reflect_spirv(spirv, name))


def test_iree_layout_reads_several_sets_sparse_bindings_and_push_constants(dev):
    sig = signature_of(IREE_STYLE)
    assert sig == "f(const float32* lhs, const float32* rhs, float32* result, uint32 n, float32 scale; blockIdx.x)"
    mod = modrt.compile({"f": IREE_STYLE}, "vulkan", [sig])
    n = 200
    a, b = shader_testing.sample("float32", n, 1), shader_testing.sample("float32", n, 2)
    out = modrt.empty((n,), "float32", dev)
    mod["f"](modrt.tensor(a, dev), modrt.tensor(b, dev), out, n, 0.5, (n + 63) // 64)
    np.testing.assert_allclose(out.numpy(), (a + b) * np.float32(0.5), rtol=1e-6)
    # The kernel's names are keywords.
    out2 = modrt.empty((n,), "float32", dev)
    mod["f"](lhs=modrt.tensor(a, dev), rhs=modrt.tensor(b, dev), result=out2, n=n, scale=2.0, blockIdx_x=4)
    np.testing.assert_allclose(out2.numpy(), (a + b) * np.float32(2.0), rtol=1e-6)


def test_kompute_layout_sizes_a_2d_workgroup_from_specialization_constants(dev):
    info = vulkan_hook.reflect_spirv(vulkan_hook.glsl_to_spirv("f", KOMPUTE_STYLE), "f")
    assert info["size_spec_ids"] == [0, 1, -1]
    assert [(c["id"], c["name"], c["dtype"]) for c in info["spec_constants"]] == [
        (0, "", "uint32"),
        (1, "", "uint32"),
        (2, "offset", "float32"),
    ]
    sig = vulkan_hook.kernel_signature("f", info)
    assert sig == "f(float32* in_a, float32* out_a, uint32 width; blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y)"
    mod = modrt.compile({"f": KOMPUTE_STYLE}, "vulkan", [sig])
    w, h = 32, 12
    x = shader_testing.sample("float32", w * h, 3)
    out = modrt.empty((w * h,), "float32", dev)
    mod["f"](modrt.tensor(x, dev), out, w, w // 8, h // 4, 8, 4)
    np.testing.assert_allclose(out.numpy(), x * 2 + 0.5, rtol=1e-6)


def test_ncnn_layout_sets_the_workgroup_through_constants_233_to_235(dev):
    info = vulkan_hook.reflect_spirv(vulkan_hook.glsl_to_spirv("relu", NCNN_STYLE), "relu")
    assert info["size_spec_ids"] == [233, 234, 235]
    sig = vulkan_hook.kernel_signature("relu", info)
    assert sig == (
        "relu(float32* bottom_top_blob_data, int32 w, int32 h, int32 c, int32 cstep; "
        "blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z)"
    )
    mod = modrt.compile({"relu": NCNN_STYLE}, "vulkan", [sig])
    w, h, c, cstep = 8, 6, 3, 64
    x = shader_testing.sample("float32", c * cstep, 4)
    t = modrt.tensor(x, dev)
    mod["relu"](t, w, h, c, cstep, 2, 3, 3, 4, 2, 1)
    expected = x.copy().reshape(c, cstep)
    expected[:, : w * h] = np.maximum(expected[:, : w * h], 0)
    np.testing.assert_array_equal(t.numpy(), expected.reshape(-1))


def test_a_uniform_block_binds_a_tensor(dev):
    sig = signature_of(UNIFORM_BLOCK)
    assert sig == "f(uniform float32 alpha, float32* data; blockIdx.x)"
    mod = modrt.compile({"f": UNIFORM_BLOCK}, "vulkan", [sig])
    x = shader_testing.sample("float32", 16, 5)
    t = modrt.tensor(x, dev)
    mod["f"](modrt.tensor(np.array([3.0], "float32"), dev), t, 2)
    np.testing.assert_allclose(t.numpy(), x * 3, rtol=1e-6)


def test_spirv_given_directly_declares_its_signatures(dev):
    spirv = vulkan_hook.glsl_to_spirv("f", IREE_STYLE)
    assert vulkan_hook.reflect(spirv) == [
        "main(const float32* lhs, const float32* rhs, float32* result, uint32 n, float32 scale; blockIdx.x)"
    ]
    # GLSL's entry point is main, whatever the function is called; a
    # per-function source's one kernel takes the function's name.
    assert vulkan_hook.reflect(IREE_STYLE) == vulkan_hook.reflect(spirv)
    assert vulkan_hook.reflect(IREE_STYLE, "f") == vulkan_hook.reflect(spirv, "f") == [IREE_KERNEL]


def test_the_signatures_a_shader_declares_compile_it_as_they_are(dev):
    spirv = vulkan_hook.glsl_to_spirv("f", IREE_STYLE)
    for source in (IREE_STYLE, spirv):
        mod = modrt.compile(source, "vulkan", vulkan_hook.reflect(source))
        n = 64
        out = modrt.empty((n,), "float32", dev)
        ones = modrt.tensor(np.ones(n, "float32"), dev)
        mod["main"](lhs=ones, rhs=ones, result=out, n=n, scale=3.0, blockIdx_x=1)
        np.testing.assert_array_equal(out.numpy(), np.full(n, 6.0, "float32"))


def test_a_given_signature_gets_the_kernel_s_names_and_const_markers(dev):
    mod = modrt.compile({"f": IREE_STYLE}, "vulkan", ["f(float32*, float32*, float32*, uint32, float32; blockIdx.x)"])
    n = 64
    out = modrt.empty((n,), "float32", dev)
    ones = modrt.tensor(np.ones(n, "float32"), dev)
    mod["f"](ones, ones, out, n, 1.5, 1)
    np.testing.assert_array_equal(out.numpy(), np.full(n, 3.0, "float32"))
    assert mod.signature("f") == IREE_KERNEL
    mod["f"](lhs=ones, rhs=ones, result=out, n=n, scale=0.5, blockIdx_x=1)
    np.testing.assert_array_equal(out.numpy(), np.ones(n, "float32"))


@pytest.mark.parametrize(
    "given, reason",
    [
        (
            "f(float32*, float32*, float32*, uint32; blockIdx.x)",
            "4 arguments in the signature, 5 in the kernel",
        ),
        (
            "f(float64*, float32*, float32*, uint32, float32; blockIdx.x)",
            "argument 0 ('lhs') has buffer element type float64 in the signature, float32 in the kernel",
        ),
        (
            "f(float32*, float32*, float32*, int32, float32; blockIdx.x)",
            "argument 3 ('n') has scalar type int32 in the signature, uint32 in the kernel",
        ),
        (
            "f(float32*, float32*, float32*, float32, float32; blockIdx.x)",
            "argument 3 ('n') has scalar type float32 in the signature, uint32 in the kernel",
        ),
        (
            "f(float32* a, float32*, float32*, uint32, float32; blockIdx.x)",
            "argument 0 ('a') is named 'a' in the signature, 'lhs' in the kernel",
        ),
        (
            "f(float32*, float32*, float32*, float32*, float32; blockIdx.x)",
            "argument 3 ('n') is a buffer in the signature, a scalar in the kernel",
        ),
        (
            "f(float32*, float32*, float32*, uint32, float32; blockIdx.x, dyn_shared_mem)",
            "dyn_shared_mem sets specialization constant 3 (bytes), which the kernel does not declare",
        ),
        (
            "f(float32*, float32*, const float32*, uint32, float32; blockIdx.x)",
            "argument 2 ('result') is const in the signature, but the kernel may write it",
        ),
    ],
    ids=["count", "buffer-dtype", "scalar-dtype", "scalar-kind", "name", "buffer-for-scalar", "dyn-shared", "const"],
)
def test_a_signature_that_disagrees_with_the_kernel_is_refused_showing_both(given, reason):
    with pytest.raises(modrt.SignatureError) as e:
        modrt.compile({"f": IREE_STYLE}, "vulkan", [given])
    assert e.value.reason == reason
    shown = modrt._codegen.normalize_signature(given)
    if reason.startswith("dyn_shared_mem"):
        # Found by codegen after the front end's check, which completed the
        # given signature with the kernel's names.
        shown = IREE_KERNEL[:-1] + ", dyn_shared_mem)"
    assert str(e.value) == (
        f"the signature does not match the GLSL kernel: {reason}\n  given:  {shown}\n  kernel: {IREE_KERNEL}"
    )


def test_compile_reads_the_signature_from_the_shader():
    """No signature given: modrt.compile reads it from the SPIR-V (GLSL's one
    kernel takes the function's name from a per-function source)."""
    assert modrt.compile({"f": IREE_STYLE}, "vulkan").function_names == ["f"]
    assert modrt.compile({"f": IREE_STYLE}, "vulkan").signature("f") == IREE_KERNEL
    assert modrt.compile(IREE_STYLE, "vulkan", ["f"]).signature("f") == IREE_KERNEL


def test_the_same_checks_hold_without_the_runtime(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    with pytest.raises(modrt.SignatureError, match="has buffer element type int32 in the signature"):
        modrt.compile({"f": IREE_STYLE}, "vulkan", ["f(int32*, float32*, float32*, uint32, float32; blockIdx.x)"])
    assert modrt.compile({"f": IREE_STYLE}, "vulkan", [IREE_KERNEL]).is_fallback


@pytest.mark.parametrize(
    "glsl, message",
    [
        (
            """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 2, r32f) uniform image2D img;
void main() { imageStore(img, ivec2(0), vec4(1)); }
""",
            "f: its shader binds a storage image at set 0 binding 2; "
            "modrt binds storage buffers and uniform blocks only",
        ),
        (
            """#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer X { float x[]; };
layout(push_constant) uniform P { vec4 v; };
void main() { x[0] = v.x; }
""",
            "f: push constant 'v' (offset 0) is a vector of 4 float32; "
            "modrt fills push constants from scalar arguments",
        ),
        (
            """#version 450
layout(local_size_x = 1) in;
struct Pair { float a; int b; };
layout(binding = 0) buffer X { Pair pairs[]; };
void main() { pairs[0].a = 1.0; }
""",
            "f: the element type of a storage buffer 'pairs' (set 0 binding 0) is not one scalar or vector type; "
            "give a signature that names it",
        ),
    ],
    ids=["image", "vector-push-constant", "struct-elements"],
)
def test_interfaces_modrt_cannot_bind_are_named(glsl, message):
    spirv = vulkan_hook.glsl_to_spirv("f", glsl)
    with pytest.raises(ValueError) as e:
        vulkan_hook.kernel_signature("f", vulkan_hook.reflect_spirv(spirv, "f"))
    assert str(e.value) == message


def test_a_buffer_of_structs_takes_the_signature_s_element_type(dev):
    glsl = """#version 450
layout(local_size_x = 1) in;
struct Pair { float a; float b; };
layout(binding = 0) buffer X { Pair pairs[]; };
void main() { pairs[gl_GlobalInvocationID.x].b = pairs[gl_GlobalInvocationID.x].a * 2.0; }
"""
    mod = modrt.compile({"f": glsl}, "vulkan", ["f(float32*; blockIdx.x)"])
    x = np.array([1, 0, 2, 0, 3, 0], "float32")
    t = modrt.tensor(x, dev)
    mod["f"](t, 3)
    np.testing.assert_array_equal(t.numpy(), [1, 2, 2, 4, 3, 6])


def test_a_module_whose_signature_disagrees_with_its_shader_fails_at_launch_naming_both(dev):
    """Bytes made elsewhere skip compile's check: the runtime still refuses them."""
    spirv = vulkan_hook.glsl_to_spirv("f", IREE_STYLE)
    payload = modrt.Payload.create("multi-shader", "spirv", ["f(float32*, float32*; blockIdx.x)"], shaders={"f": spirv})
    mod = modrt.get_global_func("codegen.vulkan.create_module")(payload)
    t = modrt.empty((4,), "float32", dev)
    with pytest.raises(
        ValueError,
        match="f: its signature has 2 buffer arguments, but its shader binds 3 buffers "
        r"\(set 0 binding 0, set 0 binding 1, set 1 binding 3\)",
    ):
        mod["f"](t, t, 1)
    payload = modrt.Payload.create(
        "multi-shader", "spirv", ["f(float32*, float32*, float32*, int32, float32; blockIdx.x)"], shaders={"f": spirv}
    )
    mod = modrt.get_global_func("codegen.vulkan.create_module")(payload)
    with pytest.raises(ValueError, match=r"f: argument 3 is int32, but push constant 'n' \(offset 0\) is uint32"):
        mod["f"](t, t, t, 1, 1.0, 1)
    payload = modrt.Payload.create(
        "multi-shader", "spirv", ["f(float32*, float32*, float32*, uint32; blockIdx.x)"], shaders={"f": spirv}
    )
    mod = modrt.get_global_func("codegen.vulkan.create_module")(payload)
    with pytest.raises(
        ValueError, match="f: its signature has 1 scalar arguments, but its shader's push-constant block has 2 members"
    ):
        mod["f"](t, t, t, 1, 1)


def test_descriptor_sets_beyond_the_device_s_limit_are_named(dev):
    glsl = """#version 450
layout(local_size_x = 1) in;
layout(set = 40, binding = 0) buffer X { float x[]; };
void main() { x[0] = 1.0; }
"""
    mod = modrt.compile({"f": glsl}, "vulkan", ["f(float32*; blockIdx.x)"])
    limit = dev.attr("max_bound_descriptor_sets")
    assert limit < 41  # lavapipe's; the Vulkan minimum is 4
    with pytest.raises(ValueError, match=f"f: its shader uses descriptor sets 0 to 40; the device allows {limit}"):
        mod["f"](modrt.empty((1,), "float32", dev), 1)


@pytest.mark.parametrize(
    "body, axes",
    [
        ("x[gl_GlobalInvocationID.x] = 1.0;", 1),
        ("x[gl_WorkGroupID.y] = 1.0;", 2),
        ("uvec3 g = gl_GlobalInvocationID; x[g.z] = 1.0;", 3),
        ("x[gl_NumWorkGroups.x * gl_GlobalInvocationID.y] = 1.0;", 2),
        ("x[0] = float(f(gl_WorkGroupID));", 3),
    ],
    ids=["x", "y", "z-through-a-copy", "count-and-y", "through-a-call"],
)
def test_the_grid_axes_are_the_ones_the_shader_reads(body, axes):
    glsl = f"""#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer X {{ float x[]; }};
uint f(uvec3 v) {{ return v.z; }}
void main() {{ {body} }}
"""
    assert vulkan_hook.reflect_spirv(vulkan_hook.glsl_to_spirv("f", glsl), "f")["grid_axes"] == axes


# WGSL as a compiler emits it (storage buffers at group 0, a fixed workgroup).
WGSL_KERNEL = """@group(0) @binding(0) var<storage, read_write> data0: array<f32>;
@group(0) @binding(1) var<storage, read> data1: array<f32>;
@group(0) @binding(2) var<storage, read> data2: array<f32>;
@compute @workgroup_size(16)
fn E_4(@builtin(workgroup_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let i = i32(gid.x) * 16 + i32(lid.x);
  data0[i] = data1[i] * data2[i];
}
"""


def test_wgsl_runs_on_vulkan_through_tint(dev):
    if modrt._codegen.find_tool("tint") is None:
        pytest.skip("tint (Debian's dawn-tools) is not installed here: docs/formats/spirv.md, WGSL on Vulkan")
    spirv = vulkan_hook.wgsl_to_spirv("E_4", WGSL_KERNEL)
    assert vulkan_hook.kernel_signature("E_4", vulkan_hook.reflect_spirv(spirv, "E_4")) == (
        "E_4(float32* data0, const float32* data1, const float32* data2; blockIdx.x)"
    )
    # The signature is the WGSL's, as on webgpu (wgsl_interface_test.py).
    assert vulkan_hook.reflect(WGSL_KERNEL) == [
        "E_4(float32* data0, const float32* data1, const float32* data2; blockIdx.x, blockIdx.y, blockIdx.z)"
    ]
    mod = modrt.compile({"E_4": WGSL_KERNEL}, "vulkan", ["E_4(float32*, float32*, float32*; blockIdx.x)"])
    a, b = shader_testing.sample("float32", 64, 6), shader_testing.sample("float32", 64, 7)
    out = modrt.empty((64,), "float32", dev)
    mod["E_4"](out, modrt.tensor(a, dev), modrt.tensor(b, dev), 4)
    np.testing.assert_allclose(out.numpy(), a * b, rtol=1e-6)
    assert mod.inspect_source("wgsl") == f"// function: E_4\n{WGSL_KERNEL}"


WGSL_UNIFORM = """
@group(0) @binding(0) var<uniform> scale: f32;
@group(0) @binding(1) var<storage, read_write> data0: array<f32>;
@compute @workgroup_size(4)
fn scaled(@builtin(global_invocation_id) i: vec3<u32>) { data0[i.x] = data0[i.x] * scale; }
"""


def test_a_wgsl_scalar_uniform_on_vulkan_is_a_scalar_argument(dev):
    if modrt._codegen.find_tool("tint") is None:
        pytest.skip("tint (Debian's dawn-tools) is not installed here: docs/formats/spirv.md, WGSL on Vulkan")
    mod = modrt.compile({"scaled": WGSL_UNIFORM}, "vulkan")
    assert mod.signature("scaled") == "scaled(float32 scale, float32* data0; blockIdx.x, blockIdx.y, blockIdx.z)"
    data = modrt.tensor(np.arange(8, dtype="float32"), dev)
    mod["scaled"](2.5, data, 2, 1, 1)
    np.testing.assert_array_equal(data.numpy(), np.arange(8, dtype="float32") * 2.5)
    with pytest.raises(
        TypeError, match="scaled: argument 'scale' \\(float32\\): argument 0: expected float, got tensor"
    ):
        mod["scaled"](modrt.tensor(np.array([2.5, 0, 0, 0], dtype="float32"), dev), data, 2, 1, 1)


def test_wgsl_tint_refuses_is_a_compile_error_with_tint_s_diagnostic():
    if modrt._codegen.find_tool("tint") is None:
        pytest.skip("tint (Debian's dawn-tools) is not installed here: docs/formats/spirv.md, WGSL on Vulkan")
    with pytest.raises(modrt.CompileError) as e:
        modrt.compile({"k": "@compute @workgroup_size(1) fn k() { let x: i32 = nope; }"}, "vulkan", ["k(; blockIdx.x)"])
    assert str(e.value).startswith("WGSL of k (<k.wgsl>) does not compile [tint]")
    assert "<k.wgsl>:1:51 error: unresolved value 'nope'" in e.value.messages
