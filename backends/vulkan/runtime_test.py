"""The Vulkan runtime on Mesa's lavapipe: real shaders, real devices, real cross-compiles."""

import struct
import subprocess

import numpy as np
import pytest

import modrt
import modrt_testing
import shader_testing
from modrt.backend import vulkan as vulkan_hook
from shader_testing import sample, vadd_on

DTYPES = {"float32": "float", "int32": "int"}

# Per-function GLSL; T is the element type. Workgroup sizes come from the
# launch (specialization constants 0 and 3) except in block_sum_fixed.
VADD = """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) readonly buffer B { T b[]; };
layout(std430, binding = 2) writeonly buffer C { T c[]; };
layout(push_constant) uniform Args { int n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""
AXPY = """#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) buffer Y { T y[]; };
layout(push_constant) uniform Args { T alpha; int n; T beta; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) y[i] = alpha * x[i] + y[i] + beta;
}
"""
# Shared memory sized at launch from dyn_shared_mem (specialization constant 3).
BLOCK_SUM = """#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 3) const uint SHARED_BYTES = 4;
layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Out { T partial[]; };
shared T scratch[SHARED_BYTES / 4];
void main() {
  uint lid = gl_LocalInvocationID.x;
  scratch[lid] = x[gl_GlobalInvocationID.x];
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier();
  }
  if (lid == 0) partial[gl_WorkGroupID.x] = scratch[0];
}
"""
BLOCK_SUM_FIXED = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Out { T partial[]; };
shared T scratch[64];
void main() {
  uint lid = gl_LocalInvocationID.x;
  scratch[lid] = x[gl_GlobalInvocationID.x];
  barrier();
  for (uint s = 32; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier();
  }
  if (lid == 0) partial[gl_WorkGroupID.x] = scratch[0];
}
"""


def sources(dtype):
    glsl = {"vadd": VADD, "axpy": AXPY, "block_sum": BLOCK_SUM, "block_sum_fixed": BLOCK_SUM_FIXED}
    return {name: text.replace("\n", f"\n#define T {DTYPES[dtype]}\n", 1) for name, text in glsl.items()}


KERNELS = shader_testing.Kernels("vulkan", sources)
compile_kernels = KERNELS.compile
kernels = KERNELS.load
dev = shader_testing.device_fixture("vulkan")


class TestKernels(shader_testing.KernelTests):
    kernels = KERNELS
    hook = vulkan_hook
    pipelines_at_load = 0  # each is created on first launch, not before


def test_device_attributes_come_from_the_device(dev):
    assert "llvmpipe" in dev.name  # lavapipe names its device after llvmpipe
    assert dev.attr("device_type") == "cpu"
    assert dev.compute_version == dev.attr("vulkan_api_version")
    assert tuple(int(v) for v in dev.compute_version.split(".")[:2]) >= (1, 1)
    assert 1 <= dev.attr("max_block_dim_x") <= dev.max_threads_per_block
    assert dev.max_shared_memory_per_block >= 16384  # the Vulkan minimum for compute
    assert dev.attr("max_push_constants_size") >= 128  # the Vulkan minimum
    assert dev.warp_size >= 1
    for flag in vulkan_hook.TARGET_FLAGS:
        assert dev.attr(flag) in (0, 1), flag
    assert dev.attr("no_such_attribute") is None


def test_target_detector_reads_the_device(dev):
    tgt = modrt.target.detect_target_from_device(dev)
    assert tgt.kind == "vulkan"
    assert tgt.max_threads_per_block == dev.max_threads_per_block
    assert tgt.max_shared_memory_per_block == dev.max_shared_memory_per_block
    assert tgt.thread_warp_size == dev.warp_size
    assert tgt.device_name == dev.name
    for flag in vulkan_hook.TARGET_FLAGS:
        assert getattr(tgt, flag) is bool(dev.attr(flag)), flag


def test_int64_support_reported_is_real(dev):
    """A device that reports int64 runs a shader using it; the target says the same."""
    if not dev.attr("supports_int64"):
        pytest.skip("this Vulkan device has no shaderInt64")
    glsl = """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer X { int64_t x[]; };
layout(push_constant) uniform Args { int64_t add; };
void main() { x[0] = x[0] * 3 + add; }
"""
    mod = modrt.compile({"f": glsl}, "vulkan", ["f(int64*, int64; blockIdx.x)"])
    x = modrt.tensor(np.array([1 << 40], dtype="int64"), dev)
    mod["f"](x, 1 << 35, 1)
    assert x.numpy()[0] == (1 << 40) * 3 + (1 << 35)


@pytest.mark.parametrize(
    "dtype, glsl_type, extension, needs",
    [
        ("float16", "float16_t", "float16", ("supports_float16", "supports_16bit_buffer")),
        ("int8", "int8_t", "int8", ("supports_int8", "supports_8bit_buffer")),
    ],
)
def test_small_types_the_device_reports_run(dev, dtype, glsl_type, extension, needs):
    """16- and 8-bit buffers work exactly when the device's features say so."""
    if not all(dev.attr(flag) for flag in needs):
        pytest.skip(f"this Vulkan device lacks one of {needs}")
    glsl = f"""#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_{extension} : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer A {{ {glsl_type} a[]; }};
layout(std430, binding = 1) readonly buffer B {{ {glsl_type} b[]; }};
layout(std430, binding = 2) writeonly buffer C {{ {glsl_type} c[]; }};
void main() {{ uint i = gl_GlobalInvocationID.x; c[i] = a[i] + b[i]; }}
"""
    mod = modrt.compile({"add": glsl}, "vulkan", [f"add({dtype}*, {dtype}*, {dtype}*; blockIdx.x, threadIdx.x)"])
    a = np.arange(-32, 32).astype(dtype)
    b = (np.arange(64) % 7).astype(dtype)
    c = modrt.empty((64,), dtype, dev)
    mod["add"](modrt.tensor(a, dev), modrt.tensor(b, dev), c, 2, 32)
    np.testing.assert_array_equal(c.numpy(), a + b)


def launch_slots_created(dev):
    return modrt._ffi.call("vulkan.launch_slots_created", dev.index)


def test_launches_recycle_their_command_buffers_fences_and_descriptors(dev):
    mod = kernels()
    n = 256
    x = modrt.tensor(np.ones(n, "float32"), dev)
    y = modrt.tensor(np.zeros(n, "float32"), dev)
    mod["axpy"](x, y, 1.0, n, 0.0, n // 64, 64)
    y.numpy()  # waits: the slot is free again
    before = launch_slots_created(dev)
    for i in range(200):
        mod["axpy"](x, y, 1.0, n, 0.0, n // 64, 64)
        if i % 2:
            dev.sync()
    np.testing.assert_array_equal(y.numpy(), np.full(n, 201, "float32"))
    # Two launches at most are in flight between syncs: no more slots than that.
    assert launch_slots_created(dev) - before <= 2


def test_recycled_launches_take_each_launch_s_own_arguments(dev):
    mod = kernels()
    rng = np.random.default_rng(11)
    for i in range(40):
        # Fresh buffers every round (the old ones are freed, so their handles
        # may come back), and alpha, n and the grid changing under the same pipeline.
        n = int(rng.integers(1, 4)) * 64
        x, y = sample("float32", n, 100 + i), sample("float32", n, 200 + i)
        alpha = float(i)
        tx, ty = modrt.tensor(x, dev), modrt.tensor(y, dev)
        mod["axpy"](tx, ty, alpha, n, 0.0, n // 64, 64)
        np.testing.assert_allclose(ty.numpy(), np.float32(alpha) * x + y, rtol=1e-6)
        del tx, ty


def test_many_launches_in_flight_keep_their_order(dev):
    mod = kernels()
    n = 128
    xs = [modrt.tensor(np.full(n, k, "float32"), dev) for k in (1, 2, 3)]
    y = modrt.tensor(np.zeros(n, "float32"), dev)
    for i in range(300):  # more than the runtime keeps free: some slots are destroyed
        mod["axpy"](xs[i % 3], y, 1.0, n, 0.0, n // 64, 64)
        mod["axpy"](xs[i % 3], y, -1.0, n, 0.5, n // 64, 64)
    np.testing.assert_array_equal(y.numpy(), np.full(n, 150, "float32"))


def test_launches_outlive_a_module_freed_between_them(dev):
    n = 64
    x = modrt.tensor(np.ones(n, "float32"), dev)
    y = modrt.tensor(np.zeros(n, "float32"), dev)
    for _ in range(10):
        mod = kernels()  # a new pipeline each time, the old one destroyed
        mod["axpy"](x, y, 1.0, n, 0.0, 1, 64)
        del mod
    np.testing.assert_array_equal(y.numpy(), np.full(n, 10, "float32"))


def test_threads_launching_syncing_and_freeing_share_the_recycled_slots(dev):
    mod = kernels()
    n, threads, rounds = 128, 6, 25

    def work(t):
        for r in range(rounds):
            x = modrt.tensor(np.full(n, t + 1, "float32"), dev)
            y = modrt.tensor(np.zeros(n, "float32"), dev)
            for _ in range(r % 4 + 1):
                mod["axpy"](x, y, 1.0, n, 0.0, n // 64, 64)
            if r % 3 == 0:
                dev.sync()
            expected = np.full(n, (t + 1) * (r % 4 + 1), "float32")
            np.testing.assert_array_equal(y.numpy(), expected)

    modrt_testing.run_together(work, threads)


def test_bad_arguments_are_clean_errors(dev):
    mod = kernels()
    c = modrt.empty((64,), "float32", dev)
    with pytest.raises(TypeError, match="vadd takes 4 arguments and 2 launch parameters"):
        mod["vadd"](c, c, c, 64)
    with pytest.raises(TypeError, match="argument 1 must be a tensor of float32, got a tensor of int32"):
        mod["vadd"](c, modrt.empty((64,), "int32", dev), c, 64, 1, 64)
    with pytest.raises(TypeError, match="argument 3"):
        mod["vadd"](c, c, c, "sixty-four", 1, 64)
    with pytest.raises(ValueError, match="lives on cpu, but this kernel runs on vulkan"):
        mod["vadd"](modrt.empty((64,), "float32"), c, c, 64, 1, 64)
    with pytest.raises(ValueError, match="threadIdx.x must be >= 1"):
        mod["vadd"](c, c, c, 64, 1, 0)
    with pytest.raises(ValueError, match="threadIdx.x = 100000 exceeds the device.s limit of"):
        mod["vadd"](c, c, c, 64, 1, 100000)
    with pytest.raises(ValueError, match="fixes the workgroup size at \\(64, 1, 1\\), but threadIdx.x = 32"):
        mod["block_sum_fixed"](c, c, 1, 32)
    with pytest.raises(AttributeError, match="vulkan module has no function 'nope'"):
        mod["nope"]
    vadd_on(mod, dev)  # and the module still works


def spirv_words(glsl):
    spirv = modrt.compile({"f": glsl}, "vulkan", ["f(float32*; blockIdx.x)"]).inspect_source("spirv")
    return list(struct.unpack(f"<{len(spirv) // 4}I", spirv))


def with_opcode_patched(words, opcode, index, value):
    words = list(words)
    i = 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if op == opcode:
            words[i + index] = value
        i += count
    return struct.pack(f"<{len(words)}I", *words)


SCALE = """#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main() { x[gl_GlobalInvocationID.x] *= 2.0; }
"""
OP_ENTRY_POINT, OP_STORE = 15, 62


def unchecked_module(spirv):
    """A real module from SPIR-V that skipped the codegen driver's spirv-val check
    (as bytes from elsewhere would)."""
    payload = modrt.Payload.create("multi-shader", "spirv", ["f(float32*; blockIdx.x)"], shaders={"f": spirv})
    return modrt.get_global_func("codegen.vulkan.create_module")(payload)


def test_invalid_spirv_is_refused_at_compile_time():
    broken = with_opcode_patched(spirv_words(SCALE), OP_STORE, 1, 9999)
    with pytest.raises(ValueError, match="SPIR-V of f is invalid: spirv-val failed"):
        modrt.compile({"f": broken}, "vulkan", ["f(float32*; blockIdx.x)"])


@pytest.mark.parametrize(
    "spirv, message",
    [
        (b"\x03\x02\x23\x07" + b"\0" * 14, "18 bytes is not a whole SPIR-V module"),
        (b"\x07\x23\x02\x03" + b"\0" * 16, "wrong magic number"),
        (b"\x03\x02\x23\x07" + b"\0" * 16 + struct.pack("<I", (9 << 16) | 15), "overruns the module"),
        (None, "entry point 'main' names %9999, which is not a function"),
    ],
    ids=["truncated", "magic", "overrun", "entry-point"],
)
def test_malformed_spirv_never_reaches_the_driver(dev, spirv, message):
    if spirv is None:
        spirv = with_opcode_patched(spirv_words(SCALE), OP_ENTRY_POINT, 2, 9999)
    mod = unchecked_module(spirv)
    with pytest.raises(ValueError, match=f"the shader of 'f' is not valid SPIR-V: .*{message}"):
        mod["f"](modrt.empty((1,), "float32", dev), 1)


def test_spirv_the_driver_rejects_is_a_clean_error(dev):
    mod = unchecked_module(with_opcode_patched(spirv_words(SCALE), OP_STORE, 1, 9999))
    with pytest.raises(RuntimeError, match="Vulkan could not create the compute pipeline of f"):
        mod["f"](modrt.empty((1,), "float32", dev), 1)


def test_spirv_given_directly_runs(dev):
    spirv = modrt.compile({"f": SCALE}, "vulkan", ["f(float32*; blockIdx.x)"]).inspect_source("spirv")
    mod = modrt.compile({"f": spirv}, "vulkan", ["f(float32*; blockIdx.x)"])
    x = np.arange(8, dtype="float32")
    t = modrt.tensor(x, dev)
    mod["f"](t, 8)
    np.testing.assert_array_equal(t.numpy(), x * 2)


# Run in a fresh process whose Vulkan loader or driver is broken in a given way.
PROBE = """
import modrt
d = modrt.device('vulkan')
print(modrt.backend.runtime_status('vulkan').loaded)
print(modrt.get_global_func('module.load_from_bytes.vulkan', allow_missing=True) is not None)
print(d.exist)
print(d.unavailable_reason)
try:
    modrt.target.detect_target_from_device(d)
except ValueError as e:
    print(e)
"""


def probe(env):
    proc = modrt_testing.run_python(PROBE, env=env)
    assert proc.returncode == 0, proc.stderr
    loaded, loader, exist, reason, detect_error = proc.stdout.splitlines()
    # The runtime DSO loads and registers itself; only the device is absent.
    assert (loaded, loader, exist) == ("True", "True", "False")
    assert "does not exist" in detect_error and reason in detect_error
    return reason


def test_without_an_icd_the_device_says_why(tmp_path):
    nothing = str(tmp_path / "no_icd.json")
    reason = probe({"VK_ICD_FILENAMES": nothing, "VK_DRIVER_FILES": nothing})
    assert reason.startswith("libvulkan.so.1 found no usable Vulkan driver (vkCreateInstance: ")
    assert "lavapipe" in reason


def build_libvulkan(directory, code, *link):
    """Writes a libvulkan.so.1 impostor built from C `code` into `directory`."""
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", "libvulkan.so.1", "-x", "c", "-", *link],
        input=code,
        text=True,
        cwd=directory,
        check=True,
    )


@pytest.mark.parametrize("fault", ["garbage", "missing-dependency"])
def test_with_a_libvulkan_that_cannot_load_the_device_says_why(tmp_path, fault):
    if fault == "garbage":
        (tmp_path / "libvulkan.so.1").write_bytes(b"this is not a shared object")
        why = "file too short"
    else:  # found, but its own dependency is gone
        subprocess.run(
            ["cc", "-shared", "-fPIC", "-o", "libmodrt_gone.so", "-x", "c", "-"],
            input="int gone(void) { return 0; }",
            text=True,
            cwd=tmp_path,
            check=True,
        )
        build_libvulkan(
            tmp_path, "int gone(void); int vkGetInstanceProcAddr(void) { return gone(); }", "-L.", "-lmodrt_gone"
        )
        (tmp_path / "libmodrt_gone.so").unlink()
        why = "libmodrt_gone.so: cannot open shared object file"
    reason = probe({"LD_LIBRARY_PATH": str(tmp_path)})
    assert reason.startswith("libvulkan.so.1: cannot load the driver library")
    assert why in reason


def test_with_a_libvulkan_lacking_the_loader_entry_the_device_says_why(tmp_path):
    build_libvulkan(tmp_path, "int vkNothing(void) { return 0; }")
    reason = probe({"LD_LIBRARY_PATH": str(tmp_path)})
    assert reason == "libvulkan.so.1: the driver library lacks the symbol vkGetInstanceProcAddr"


def test_every_vulkan_entry_point_is_resolved_at_run_time():
    # The rest of the DSO's linking contract is backends/runtime_contract_test.py.
    path = modrt.backend.runtime_status("vulkan").path
    undefined = modrt_testing.dynamic_symbols(path, "--undefined-only")
    assert not any(s.startswith("vk") for s in undefined)
