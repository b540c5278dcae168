"""What the Metal runtime accepts when a module is created, run on Linux with
the runtime's own source built as a plugin (Metal itself cannot run here):
metallib shaders must be Metal library files, refused at creation naming the
function otherwise, so one is never accepted and then run as MSL source."""

from pathlib import Path

import pytest

import modrt
import modrt._ffi

PLUGIN = Path(modrt._ffi.package_root(), "backends", "metal", "metal_runtime_on_linux.so")
SIGS = ["f(float32*; blockIdx.x, threadIdx.x)", "g(float32*; blockIdx.x, threadIdx.x)"]
# The first bytes of a .metallib file: its magic, then the rest of its header.
METALLIB = b"MTLB\x01\x80\x02\x00" + bytes(56)


@pytest.fixture(scope="module", autouse=True)
def metal_runtime():
    modrt.backend.load_plugin(PLUGIN)


def payload(fmt: str, shaders: dict[str, bytes]) -> modrt.Payload:
    return modrt.Payload.create("multi-shader", fmt, SIGS, shaders=shaders)


@pytest.mark.parametrize("how", ["create", "codegen", "load_from_bytes"])
def test_a_metallib_shader_that_is_not_a_library_is_refused_naming_the_function(how):
    p = payload("metallib", {"f": METALLIB, "g": b"kernel void g(device float* x) {}"})
    with pytest.raises(ValueError, match="the metallib shader of 'g' is not a Metal library file"):
        if how == "create":
            modrt.get_global_func("module.create.metal")(p)
        elif how == "codegen":
            modrt.get_global_func("codegen.metal.create_module")(p)
        else:
            modrt.load_module_from_bytes("metal", p.save())


def test_metallib_libraries_and_msl_source_are_accepted():
    lib = modrt.load_module_from_bytes("metal", payload("metallib", {"f": METALLIB, "g": METALLIB}).save())
    assert lib.kind == "metal" and not lib.is_fallback
    msl = modrt.get_global_func("module.create.metal")(payload("metal", {"f": b"kernel void f() {}", "g": b"x"}))
    assert msl.kind == "metal" and not msl.is_fallback


def test_without_metal_the_device_says_why():
    dev = modrt.device("metal")
    assert not dev.exist
    assert "Objective-C runtime" in dev.unavailable_reason
