"""The WebGPU runtime on wgpu-native over Mesa's lavapipe: real WGSL, a real adapter,
real cross-compiles, and the ways the library or the adapter can be missing."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import modrt
import modrt_testing
import shader_testing
from modrt.backend import webgpu as webgpu_hook
from shader_testing import vadd_on

DSO = "backends/webgpu/libmodrt_runtime_webgpu.so"
WGSL_TYPES = {"float32": "f32", "int32": "i32"}

# Per-function WGSL; T is the element type. Workgroup sizes come from the
# launch (override constants named in @workgroup_size) except in block_sum_fixed.
VADD = """
override block_x: u32 = 64;
@group(0) @binding(0) var<storage, read> a: array<T>;
@group(0) @binding(1) var<storage, read> b: array<T>;
@group(0) @binding(2) var<storage, read_write> c: array<T>;
@group(0) @binding(3) var<uniform> n: i32;
@compute @workgroup_size(block_x)
fn vadd(@builtin(global_invocation_id) id: vec3<u32>) {
  if (i32(id.x) < n) { c[id.x] = a[id.x] + b[id.x]; }
}
"""
# Several scalars: one uniform block, in argument order.
AXPY = """
override block_x: u32 = 64;
struct Args { alpha: T, n: i32, beta: T }
@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read_write> y: array<T>;
@group(0) @binding(2) var<uniform> args: Args;
@compute @workgroup_size(block_x)
fn axpy(@builtin(global_invocation_id) id: vec3<u32>) {
  if (i32(id.x) < args.n) { y[id.x] = args.alpha * x[id.x] + y[id.x] + args.beta; }
}
"""
# Workgroup memory sized at launch from dyn_shared_mem (bytes).
BLOCK_SUM = """
override block_x: u32 = 64;
override dyn_shared_mem: u32 = 256;
@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read_write> partial: array<T>;
var<workgroup> scratch: array<T, dyn_shared_mem / 4>;
@compute @workgroup_size(block_x)
fn block_sum(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
             @builtin(workgroup_id) wid: vec3<u32>) {
  scratch[lid.x] = x[gid.x];
  workgroupBarrier();
  for (var s = block_x / 2u; s > 0u; s >>= 1u) {
    if (lid.x < s) { scratch[lid.x] += scratch[lid.x + s]; }
    workgroupBarrier();
  }
  if (lid.x == 0u) { partial[wid.x] = scratch[0]; }
}
"""
BLOCK_SUM_FIXED = """
const SIZE = 64;
@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read_write> partial: array<T>;
var<workgroup> scratch: array<T, SIZE>;
/* a comment with @compute @workgroup_size(1) fn decoy() in it */
@compute @workgroup_size(SIZE)
fn block_sum_fixed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
                   @builtin(workgroup_id) wid: vec3<u32>) {
  scratch[lid.x] = x[gid.x];
  workgroupBarrier();
  for (var s = 32u; s > 0u; s >>= 1u) {
    if (lid.x < s) { scratch[lid.x] += scratch[lid.x + s]; }
    workgroupBarrier();
  }
  if (lid.x == 0u) { partial[wid.x] = scratch[0]; }
}
"""


def sources(dtype):
    wgsl = {"vadd": VADD, "axpy": AXPY, "block_sum": BLOCK_SUM, "block_sum_fixed": BLOCK_SUM_FIXED}
    return {name: f"alias T = {WGSL_TYPES[dtype]};{text}" for name, text in wgsl.items()}


KERNELS = shader_testing.Kernels("webgpu", sources)
compile_kernels = KERNELS.compile
kernels = KERNELS.load
dev = shader_testing.device_fixture("webgpu")


class TestKernels(shader_testing.KernelTests):
    kernels = KERNELS
    hook = webgpu_hook
    # The fixed-size kernel's pipeline is made at load; the others on first launch.
    pipelines_at_load = 1

    def test_real_and_fallback_bytes_are_identical(self, monkeypatch):
        real, fallback = self.real_and_fallback(monkeypatch)
        assert real.inspect_source("wgsl") == fallback.inspect_source("wgsl")


def test_device_attributes_describe_the_adapter(dev):
    assert "llvmpipe" in dev.name  # lavapipe names its device after llvmpipe
    assert dev.attr("adapter_name") == dev.name
    assert dev.attr("backend") == "vulkan"
    assert dev.attr("device_type") == "cpu"
    assert dev.compute_version == dev.attr("wgpu_native_version") == "29.0.1.1"
    # The library the `wgpu` package ships, found without importing it.
    library = Path(dev.attr("driver_library"))
    assert library.parent.parts[-2:] == ("wgpu", "resources") and library.name.startswith("libwgpu_native")
    assert str(library) in webgpu_hook.driver_candidates()
    # The adapter's own limits (all requested), not WebGPU's defaults.
    assert 256 <= dev.attr("max_block_dim_x") <= dev.max_threads_per_block
    assert dev.attr("max_block_dim_z") >= 64
    assert dev.max_shared_memory_per_block >= 16384
    assert dev.attr("max_storage_buffer_binding_size") >= 128 << 20
    assert dev.attr("max_storage_buffers_per_shader_stage") >= 8
    assert dev.attr("max_grid_dim_x") >= 65535
    assert dev.attr("supports_float16") in (0, 1)
    assert dev.attr("no_such_attribute") is None
    assert not modrt.device("webgpu", 1).exist


def test_target_detector_reads_the_adapter(dev):
    tgt = modrt.target.detect_target_from_device(dev)
    assert tgt.kind == "webgpu"
    assert tgt.max_threads_per_block == dev.max_threads_per_block
    assert tgt.max_shared_memory_per_block == dev.max_shared_memory_per_block
    assert tgt.adapter_name == dev.name and tgt.backend == "vulkan"
    assert tgt.max_storage_buffers_per_shader_stage == dev.attr("max_storage_buffers_per_shader_stage")


def test_host_copies_round_trip_odd_sizes(dev):
    for n in (1, 3, 5, 1001):
        x = np.arange(n, dtype="uint8")
        t = modrt.tensor(x, dev)
        np.testing.assert_array_equal(t.numpy(), x)


def test_each_launch_sees_its_own_scalars(dev):
    """The uniform block is written in queue order: back-to-back launches with
    different scalars, no sync between them, each use their own."""
    mod = kernels()
    n = 128
    x = modrt.tensor(np.ones(n, "float32"), dev)
    y = modrt.tensor(np.zeros(n, "float32"), dev)
    for alpha in range(1, 21):
        mod["axpy"](x, y, float(alpha), n, 0.0, n // 64, 64)
    np.testing.assert_array_equal(y.numpy(), np.full(n, sum(range(1, 21)), "float32"))


def test_launches_are_batched_but_ordered_with_host_copies(dev):
    """Launches are submitted in batches; a host write after a launch lands
    after it (the launch reads the old data), a read sees every launch before it."""
    mod = kernels()
    n = 256
    a = modrt.tensor(np.ones(n, "float32"), dev)
    b = modrt.tensor(np.ones(n, "float32"), dev)
    c = modrt.empty((n,), "float32", dev)
    mod["vadd"](a, b, c, n, n // 64, 64)
    a.copyfrom(np.full(n, 100, "float32"))  # after the launch: it saw ones
    np.testing.assert_array_equal(c.numpy(), np.full(n, 2, "float32"))
    y = modrt.tensor(np.zeros(n, "float32"), dev)
    launches = 3 * 64 + 5  # several full batches and a partial one
    for i in range(launches):
        mod["axpy"](b, y, float(i % 7), n, 0.0, n // 64, 64)
    np.testing.assert_array_equal(y.numpy(), np.full(n, sum(i % 7 for i in range(launches)), "float32"))


def test_bad_arguments_are_clean_errors(dev):
    mod = kernels()
    c = modrt.empty((64,), "float32", dev)
    limit = dev.attr("max_block_dim_x")
    with pytest.raises(TypeError, match="vadd takes 4 arguments and 2 launch parameters"):
        mod["vadd"](c, c, c, 64)
    with pytest.raises(TypeError, match="argument 1 must be a tensor of float32, got a tensor of int32"):
        mod["vadd"](c, modrt.empty((64,), "int32", dev), c, 64, 1, 64)
    with pytest.raises(ValueError, match="lives on cpu, but this kernel runs on webgpu"):
        mod["vadd"](modrt.empty((64,), "float32"), c, c, 64, 1, 64)
    with pytest.raises(ValueError, match="threadIdx.x must be >= 1"):
        mod["vadd"](c, c, c, 64, 1, 0)
    with pytest.raises(
        ValueError,
        match=f"vadd: threadIdx.x = {limit * 2} exceeds the device's limit of {limit} \\(maxComputeWorkgroupSizeX, ",
    ):
        mod["vadd"](c, c, c, 64, 1, limit * 2)
    with pytest.raises(ValueError, match="fixes @workgroup_size x at 64, but threadIdx.x = 32"):
        mod["block_sum_fixed"](c, c, 1, 32)
    shared = dev.max_shared_memory_per_block
    with pytest.raises(
        ValueError, match=f"{shared * 2} bytes of workgroup memory exceed the adapter's limit of {shared}"
    ):
        mod["block_sum"](c, c, 1, 64, shared * 2)
    groups = dev.attr("max_grid_dim_x")
    with pytest.raises(
        ValueError,
        match=f"blockIdx.x = {groups + 1} exceeds the device's limit of {groups} \\(maxComputeWorkgroupsPerDimension, ",
    ):
        mod["vadd"](c, c, c, 64, groups + 1, 64)
    with pytest.raises(AttributeError, match="webgpu module has no function 'nope'"):
        mod["nope"]
    vadd_on(mod, dev)  # and the module still works


def test_dyn_shared_mem_needs_an_override_to_size(dev):
    wgsl = (
        "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n"
        "@compute @workgroup_size(1) fn f() { x[0] = 1.0; }"
    )
    mod = modrt.compile(wgsl, "webgpu", ["f(float32*; blockIdx.x, dyn_shared_mem)"])
    x = modrt.empty((1,), "float32", dev)
    mod["f"](x, 1, 0)
    with pytest.raises(ValueError, match="dyn_shared_mem = 64 but its WGSL declares no `override dyn_shared_mem`"):
        mod["f"](x, 1, 64)


SCALE = """@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(1) fn f(@builtin(global_invocation_id) i: vec3<u32>) { x[i.x] *= 2.0; }"""
BROKEN = SCALE.replace("*= 2.0", "*= undefined_thing")


# The runtime's own checks at module creation and load (validate=False skips
# modrt.compile's compile-time check, tests/compile_check_test.py, which would
# refuse these sources first).
def test_invalid_wgsl_is_refused_at_compile_time_with_wgpus_message():
    with pytest.raises(ValueError) as e:
        modrt.compile({"f": BROKEN}, "webgpu", ["f(float32*; blockIdx.x)"], validate=False)
    message = str(e.value)
    assert message.startswith("the WGSL of 'f' does not compile: validation error: ")
    assert "undefined_thing" in message  # wgpu's (naga's) own diagnostic


def test_invalid_wgsl_is_refused_at_load_not_first_launch(monkeypatch):
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    saved = modrt.compile({"f": BROKEN}, "webgpu", ["f(float32*; blockIdx.x)"], validate=False).save_to_bytes()
    monkeypatch.delenv("MODRT_COMPILE_FORCE_FALLBACK")
    with pytest.raises(ValueError, match="(?s)the WGSL of 'f' does not compile: .*undefined_thing"):
        modrt.load_module_from_bytes("webgpu", saved)


@pytest.mark.parametrize(
    "bad, at",
    [(b"\xcb\xdf", 0), (b"\xe2\x82", 0), (b"\xed\xa0\x80", 0), (b"ok\xff", 2)],
    ids=["bad-continuation", "cut-short", "surrogate", "invalid-byte"],
)
def test_wgsl_that_is_not_utf8_is_refused_before_wgpu_sees_it(bad, at):
    """wgpu-native converts such text lossily and naga 29 then panics (aborting
    the process) formatting its error: found by load_webgpu_fuzzer."""
    text = SCALE.encode() + b"\n// " + bad
    offset = len(SCALE) + 4 + at
    payload = modrt.Payload.create("multi-shader", "wgsl", ["f(float32*; blockIdx.x)"], shaders={"f": text})
    with pytest.raises(ValueError, match=f"the WGSL of 'f' is not UTF-8 text: byte {offset} \\(0x{bad[at]:02x}\\)"):
        modrt.load_module_from_bytes("webgpu", payload.save())
    # Valid UTF-8 beyond ASCII is fine.
    fine = (SCALE + "\n// \u00e9\u4e2d\U0001f600").encode()
    payload = modrt.Payload.create("multi-shader", "wgsl", ["f(float32*; blockIdx.x)"], shaders={"f": fine})
    assert not modrt.load_module_from_bytes("webgpu", payload.save()).is_fallback


def test_a_workgroup_over_the_adapters_limit_is_refused_at_load(dev):
    limit = dev.attr("max_block_dim_x")
    big = SCALE.replace("@workgroup_size(1)", f"@workgroup_size({limit * 4})")
    with pytest.raises(ValueError, match=f"f: @workgroup_size x = {limit * 4} exceeds the adapter's limit of {limit}"):
        modrt.compile({"f": big}, "webgpu", ["f(float32*; blockIdx.x)"], validate=False)
    total = SCALE.replace("@workgroup_size(1)", f"@workgroup_size({limit}, 4)")
    with pytest.raises(ValueError, match=f"a workgroup of {limit * 4} invocations exceeds the adapter's limit"):
        modrt.compile({"f": total}, "webgpu", ["f(float32*; blockIdx.x)"], validate=False)


def test_bindings_that_do_not_fit_the_signature_fail_at_load():
    """A saved module (no compile-time check) whose signature does not fit the
    shader: the runtime says what the signature asks and what the shader declares."""
    wgsl = "@group(0) @binding(0) var<uniform> x: f32;\n@compute @workgroup_size(1) fn f() { _ = x; }"
    payload = modrt.Payload.create("multi-shader", "wgsl", ["f(float32*; blockIdx.x)"], shaders={"f": wgsl.encode()})
    with pytest.raises(ValueError) as e:
        modrt.load_module_from_bytes("webgpu", payload.save())
    assert str(e.value) == (
        "f: the signature does not fit the bindings its WGSL declares: argument 0 is a buffer, "
        "the shader's 'x' a uniform scalar. The signature's arguments: float32*; "
        "the shader declares: @group(0) @binding(0) var<uniform> x: f32 (float32)"
    )


def test_entry_points_are_chosen_by_name():
    two = SCALE + "\n@compute @workgroup_size(1) fn g() {}"
    mod = modrt.compile({"f": two}, "webgpu", ["f(float32*; blockIdx.x)"])
    assert not mod.is_fallback
    with pytest.raises(ValueError, match=r"the WGSL source has no kernel 'h' \(it defines: f, g\)"):
        modrt.compile(two, "webgpu", ["h(float32*; blockIdx.x)"])
    # One source per function: the runtime's own check.
    with pytest.raises(ValueError, match=r"several @compute entry points \(f, g\) and none is named 'h'"):
        modrt.compile({"h": two}, "webgpu", ["h(float32*; blockIdx.x)"], validate=False)
    payload = modrt.Payload.create("multi-shader", "wgsl", ["f(; blockIdx.x)"], shaders={"f": b"fn f() {}"})
    with pytest.raises(ValueError, match="has no @compute entry point"):
        modrt.load_module_from_bytes("webgpu", payload.save())


def test_scalars_must_have_the_shaders_type():
    wgsl = SCALE.replace("@compute", "@group(0) @binding(1) var<uniform> n: i32;\n@compute")
    with pytest.raises(modrt.SignatureError, match=r"argument 1 \('n'\) has scalar type int64 in the signature, int32"):
        modrt.compile({"f": wgsl}, "webgpu", ["f(float32*, int64; blockIdx.x)"])
    payload = modrt.Payload.create(
        "multi-shader", "wgsl", ["f(float32*, int64; blockIdx.x)"], shaders={"f": wgsl.encode()}
    )
    with pytest.raises(ValueError, match=r"argument 1 is int64, the shader's 'n' holds i32 \(int32\)"):
        modrt.load_module_from_bytes("webgpu", payload.save())


def test_artifact_round_trip_in_a_fresh_process(tmp_path, monkeypatch):
    """Exported where the runtime is forced off, loaded and run in a fresh process."""
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    path = tmp_path / "kernels.modrt"
    compile_kernels("int32").export(path)
    proc = modrt_testing.run_python(
        f"""
import numpy as np, modrt
m = modrt.load_module({str(path)!r})
assert not m.is_fallback and m.kind == "webgpu", m
d = modrt.device("webgpu")
a = np.arange(100, dtype="int32"); b = 2 * a
c = modrt.empty((100,), "int32", d)
m["vadd"](modrt.tensor(a, d), modrt.tensor(b, d), c, 100, 2, 64)
assert (c.numpy() == 3 * a).all()
print("ran")
""",
        env={"MODRT_COMPILE_FORCE_FALLBACK": "0"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ran"


# Run in a fresh process whose wgpu-native library or Vulkan driver is missing
# or broken in a given way.
PROBE = f"""
import json, modrt
out = []
d = modrt.device('webgpu')
out.append(modrt.backend.runtime_status('webgpu').loaded)
out.append(modrt.get_global_func('module.load_from_bytes.webgpu', allow_missing=True) is not None)
out.append(d.exist)
out.append(d.unavailable_reason)
try:
    modrt.target.detect_target_from_device(d)
except ValueError as e:
    out.append(str(e))
# A saved module still loads (and saves the same bytes); its launch says why not.
saved = modrt.Payload.create(
    "multi-shader", "wgsl", ["f(float32*; blockIdx.x)"], shaders={{"f": {SCALE!r}.encode()}}
).save()
m = modrt.load_module_from_bytes("webgpu", saved)
assert m.save_to_bytes() == saved and not m.is_fallback
try:
    m["f"](modrt.empty((1,), "float32"), 1)
except Exception as e:
    out.append(type(e).__name__ + " " + str(e))
print(json.dumps(out))
"""


def probe(env):
    proc = modrt_testing.run_python(PROBE, env=env)
    assert proc.returncode == 0, proc.stderr
    loaded, loader, exist, reason, detect_error, launch_error = json.loads(proc.stdout)
    # The runtime DSO loads and registers itself; only the device is absent.
    assert (loaded, loader, exist) == (True, True, False)
    assert "does not exist" in detect_error and reason in detect_error
    assert launch_error.startswith("ValueError cannot launch f: webgpu(0) does not exist: ") and reason in launch_error
    return reason


def test_without_the_wgpu_library_the_device_says_which_files_were_tried(tmp_path):
    missing = str(tmp_path / "libwgpu_native.so")
    reason = probe({"MODRT_WEBGPU_DRIVER_LIBRARY": missing})
    assert reason.startswith(f"no usable wgpu-native library (tried: {missing}: cannot open shared object file")


def library_path():
    return webgpu_hook.driver_candidates()[0]


def test_with_a_truncated_wgpu_library_the_device_says_why(tmp_path):
    cut = tmp_path / "libwgpu_native.so"
    with open(library_path(), "rb") as f:
        cut.write_bytes(f.read(4096))  # the ELF header survives, the rest is gone
    reason = probe({"MODRT_WEBGPU_DRIVER_LIBRARY": str(cut)})
    assert reason.startswith(f"no usable wgpu-native library (tried: {cut}: a loadable segment ends at byte ")
    assert "past the end of the file (4096 bytes): cut short?" in reason


def test_with_a_library_that_is_not_wgpu_native_the_device_says_why(tmp_path):
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", "libwgpu_native.so", "-x", "c", "-"],
        input="int wgpuNothing(void) { return 0; }",
        text=True,
        cwd=tmp_path,
        check=True,
    )
    fake = tmp_path / "libwgpu_native.so"
    reason = probe({"MODRT_WEBGPU_DRIVER_LIBRARY": str(fake)})
    assert reason.startswith(f"no usable wgpu-native library (tried: {fake}: the driver library lacks the symbol ")


def test_the_python_hook_hands_its_candidates_to_the_runtime(tmp_path):
    """Found through sys.path: a copy of the `wgpu` package's resources on
    PYTHONPATH comes before the toolchain root's."""
    resources = tmp_path / "site" / "wgpu" / "resources"
    resources.mkdir(parents=True)
    shutil.copy(library_path(), resources / "libwgpu_native-release.so")
    proc = modrt_testing.run_python(
        "import sys, modrt; sys.stdout.write(modrt.device('webgpu').attr('driver_library'))",
        env={"PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), modrt_testing.current_pythonpath()])},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == str(resources / "libwgpu_native-release.so")


def test_without_a_vulkan_driver_the_device_says_why_with_wgpus_reason(tmp_path):
    nothing = str(tmp_path / "no_icd.json")
    reason = probe({"VK_ICD_FILENAMES": nothing, "VK_DRIVER_FILES": nothing})
    assert reason.startswith("wgpu-native 29.0.1.1 (") and " found no adapter: " in reason
    assert "No suitable graphics adapter found" in reason  # wgpu's own words
    assert "vulkan drivers/libraries could not be loaded" in reason
    assert "\n" not in reason and reason.endswith("(Mesa's lavapipe: mesa-vulkan-drivers) installed?")


def test_without_the_dso_import_works_and_device_is_absent(tmp_path):
    tree = modrt_testing.copy_tree(tmp_path / "tree", drop=(DSO,))
    proc = modrt_testing.run_python(
        "import modrt; d = modrt.device('webgpu'); print(d.exist, modrt.backend.runtime_status('webgpu').reason)",
        tree=tree,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("False ") and "libmodrt_runtime_webgpu.so is missing" in proc.stdout
    assert proc.stderr == ""  # skipped silently


def test_dso_links_no_part_of_the_core_and_no_driver():
    # The plugin ABI is C: the DSO reaches the core only through the table
    # modrt_plugin_init receives, and loads wgpu-native lazily.
    path = modrt.backend.runtime_status("webgpu").path
    needed = modrt_testing.needed_libraries(path)
    assert "libmodrt_runtime.so" not in needed
    assert not any("wgpu" in n.lower() for n in needed), needed
    assert modrt_testing.core_symbols_imported_by(path) == set()
    assert "modrt_plugin_init" in modrt_testing.dynamic_symbols(path, "--defined-only")
    undefined = modrt_testing.dynamic_symbols(path, "--undefined-only")
    assert not any(s.startswith("wgpu") for s in undefined)  # every entry point is resolved at run time
