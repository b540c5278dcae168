"""One launch rule for every target (README, "Launch parameters"): a call by
keyword names the launch parameters of the axes it uses, and a y or z one it
leaves out is 1. So a 1-D launch of c = a + b is the same call everywhere:
blockIdx_x, and threadIdx_x where the kernel takes it, whatever the kernel's
format reads or declares (three grid axes for WGSL, the axes read for
SPIR-V, OpenCL's joint highest dimension, none for a host function).
Each backend's own `vadd` (tests/device_layer_kernels.py), its signature
read from the kernel where the target reads it."""

from __future__ import annotations

import numpy as np
import pytest
from device_layer_kernels import BLOCK, KERNELS, device_or_skip

import modrt
from modrt._signature import parse_signature

KINDS = [kind for kind in ("cpu", "opencl", "vulkan", "webgpu") if kind in KERNELS]


def compile_vadd(kind: str) -> modrt.Module:
    source, signatures = KERNELS[kind]
    if getattr(modrt.backend.record(kind), "reflector", None) is None:
        return modrt.compile(source, kind, [s for s in signatures if s.startswith("vadd(")])
    # A backend with one source per kernel: vadd's alone.
    return modrt.compile({"vadd": source["vadd"]} if isinstance(source, dict) else source, kind, ["vadd"])


@pytest.mark.parametrize("kind", KINDS)
def test_a_1d_launch_names_only_its_x_axis(kind):
    dev = modrt.device(device_or_skip(kind))
    mod = compile_vadd(kind)
    tags = parse_signature(mod.signature("vadd"))[2]
    n = 300
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    c = modrt.empty((n,), "float32", dev)
    launch = {"blockIdx_x": (n + BLOCK - 1) // BLOCK, "threadIdx_x": BLOCK}
    given = {name: v for name, v in launch.items() if name.replace("_", ".") in tags}
    mod["vadd"](modrt.tensor(x, dev), modrt.tensor(y, dev), c, n, **given)
    np.testing.assert_allclose(c.numpy(), x + y, rtol=1e-6)
    # The x axes are all a 1-D launch needs to name on every target.
    assert {t for t in tags if not t.endswith(".x")} <= {"blockIdx.y", "blockIdx.z", "threadIdx.y", "threadIdx.z"}


def test_a_higher_axis_left_out_is_one_and_a_given_one_counts():
    """WGSL's three grid axes: blockIdx_y left out is 1; given, it is the
    number of workgroups along y (a kernel reading y sees each row)."""
    device_or_skip("webgpu")
    dev = modrt.device("webgpu")
    wgsl = """
@group(0) @binding(0) var<storage, read_write> rows: array<u32>;
@compute @workgroup_size(1)
fn mark(@builtin(workgroup_id) g: vec3<u32>) { rows[g.y] = rows[g.y] + 1u; }
"""
    mod = modrt.compile(wgsl, "webgpu")
    assert mod.signature("mark") == "mark(uint32* rows; blockIdx.x, blockIdx.y, blockIdx.z)"
    rows = modrt.tensor(np.zeros(4, "uint32"), dev)
    mod["mark"](rows, blockIdx_x=1)
    np.testing.assert_array_equal(rows.numpy(), [1, 0, 0, 0])
    mod["mark"](rows=rows, blockIdx_x=1, blockIdx_y=4)
    np.testing.assert_array_equal(rows.numpy(), [2, 1, 1, 1])


def test_the_x_axis_is_never_assumed():
    device_or_skip("webgpu")
    mod = modrt.compile(KERNELS["webgpu"][0]["vadd"], "webgpu", ["vadd"])
    c = modrt.empty((4,), "float32", modrt.device("webgpu"))
    with pytest.raises(TypeError, match="missing argument: blockIdx_x"):
        mod["vadd"](c, c, c, 4, threadIdx_x=64)
