"""Metal: MSL codegen on any platform; the runtime builds only on macOS."""

import sys

import modrt
from modrt import _selection

MSL = """#include <metal_stdlib>
using namespace metal;
kernel void scale(device float* x [[buffer(0)]], constant float& a [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) { x[i] *= a; }"""
SIG = "scale(float32*, float32; blockIdx.x, threadIdx.x)"


def test_msl_is_carried_as_source():
    mod = modrt.compile(MSL, "metal", [SIG])
    assert mod.kind == "metal"
    assert mod.inspect_source("metal") == MSL


def test_runtime_status_explains_the_platform():
    status = modrt.backend.runtime_status("metal")
    if sys.platform == "darwin" and "metal" in _selection.FLAGS_ON:
        assert status.selected
    elif "metal" in _selection.FLAGS_ON:
        assert not status.selected
        assert "does not build for this platform" in status.reason
    else:
        assert "--//backends:metal=off" in status.reason
    if not status.loaded:
        assert not modrt.device("metal").exist
        assert "libmodrt_runtime_metal.so is not loaded" in modrt.device("metal").unavailable_reason
