"""Tensor.view(dtype): the same bytes as another element type, on every
backend with a device here, as numpy's ndarray.view does on the host."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import modrt

KINDS = ["cpu", "opencl", "vulkan", "webgpu"]


def device_here(kind: str) -> modrt.Device:
    dev = modrt.device(kind)
    if not dev.exist and "build with --//backends:" in dev.unavailable_reason:
        pytest.skip(f"{kind}: runtime not selected in this build")
    assert dev.exist, dev.unavailable_reason
    return dev


@pytest.mark.parametrize("kind", KINDS)
def test_a_view_has_the_same_bytes_as_numpys_view(kind: str) -> None:
    dev = device_here(kind)
    half = np.linspace(-2, 2, 32, dtype="float16").reshape(2, 16)
    t = modrt.tensor(half, dev)
    for dtype, shape in [("uint16", (2, 16)), ("uint8", (2, 32)), ("float32", (2, 8)), ("uint32x4", (2, 2))]:
        v = t.view(dtype)
        assert (v.shape, v.dtype, v.device) == (shape, dtype, dev)
        if dtype != "uint32x4":  # numpy has no 4-lane type
            np.testing.assert_array_equal(v.numpy(), half.view(dtype))
    assert t.view(np.float16).dtype == "float16" and t.view(np.dtype("int16")).dtype == "int16"


@pytest.mark.parametrize("kind", KINDS)
def test_a_write_through_a_view_is_a_write_to_the_tensor(kind: str) -> None:
    dev = device_here(kind)
    t = modrt.tensor(np.zeros(4, dtype="float32"), dev)
    t.view("uint32").copyfrom(np.full(4, 0x3F800000, dtype="uint32"))  # the bits of 1.0f
    np.testing.assert_array_equal(t.numpy(), np.ones(4, dtype="float32"))


@pytest.mark.parametrize("kind", KINDS)
def test_a_view_keeps_the_memory_of_a_dropped_tensor(kind: str) -> None:
    dev = device_here(kind)
    t = modrt.tensor(np.arange(8, dtype="int32"), dev)
    v = t.view("uint8")
    del t
    gc.collect()
    modrt.empty((1 << 16,), "uint8", dev)  # memory a freed tensor would give back
    np.testing.assert_array_equal(v.numpy().view("int32"), np.arange(8, dtype="int32"))


def test_a_view_that_does_not_divide_the_last_dimension_is_refused() -> None:
    t = modrt.empty((2, 3), "float32")
    with pytest.raises(ValueError, match=r"cannot view float32\[2, 3\] as float64: the last dimension's 12 bytes"):
        t.view("float64")
    with pytest.raises(ValueError, match="only a type of the same size keeps its shape"):
        modrt.empty((), "float32").view("uint8")
    assert modrt.empty((), "float32").view("int32").shape == ()
    with pytest.raises(ValueError, match="unknown dtype 'no_such_type'"):
        t.view("no_such_type")


def test_a_view_of_a_read_only_tensor_is_read_only() -> None:
    frozen = np.arange(4, dtype="float32")
    frozen.flags.writeable = False
    v = modrt.from_dlpack(frozen).view("uint32")
    assert v.read_only
    with pytest.raises(ValueError, match="read-only"):
        v.copyfrom(np.zeros(4, dtype="uint32"))


def test_an_opencl_kernel_declaring_ushort_takes_a_float16_tensor_viewed() -> None:
    # tinygrad's OpenCL renders half buffers as ushort: no copy, no capsule patching.
    dev = device_here("opencl")
    mod = modrt.compile(
        "__kernel void bump(__global ushort* x) { x[get_global_id(0)] += 1; }",
        "opencl",
        ["bump(uint16*; blockIdx.x, threadIdx.x)"],
    )
    half = np.array([1.0, 2.0, -3.0, 0.5], dtype="float16")
    t = modrt.tensor(half, dev)
    mod["bump"](t.view("uint16"), 1, 4)
    np.testing.assert_array_equal(t.numpy().view("uint16"), half.view("uint16") + 1)
