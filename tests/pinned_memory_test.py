"""Pinned host memory (`modrt.pinned_empty`) on every backend with a device
here: page-locked where the backend has it (opencl: a mapped
CL_MEM_ALLOC_HOST_PTR buffer; cpu: aligned host memory it uses in place),
said so where it has not (vulkan, webgpu), and copies with `stream=` that use
it in place. CUDA's cuMemHostAlloc is tested against its driver test double
(tests/driver_doubles/streams_driver_test_double_test.py)."""

import gc

import numpy as np
import pytest

import modrt

# Backends whose plugin has pinned host memory (ModrtPinnedHostExtension),
# and the cpu device, whose memory is host memory.
PINNED = {"cpu", "opencl"}
KINDS = ["cpu", "opencl", "vulkan", "webgpu"]


@pytest.fixture(params=KINDS)
def dev(request):
    d = modrt.device(request.param, 0)
    if not d.exist:
        pytest.skip(f"{request.param}: {d.unavailable_reason}")
    return d


def test_pinned_or_says_it_is_not(dev):
    host = modrt.pinned_empty((3, 5), "float32", device=dev)
    assert isinstance(host, np.ndarray) and isinstance(host, modrt.PinnedArray)
    assert host.shape == (3, 5) and host.dtype == np.float32
    assert host.ctypes.data % 64 == 0  # at least cache-line aligned
    assert host.pinned == (dev.kind in PINNED)
    assert host.pinned_memory
    if dev.kind in PINNED:
        assert modrt.pinned_memory(dev) == host.pinned_memory
    else:
        assert modrt.pinned_memory(dev) == ""
        assert "no pinned host memory" in host.pinned_memory
    # Views keep saying what their memory is.
    assert host[1:].pinned == host.pinned
    host[...] = np.arange(15, dtype="float32").reshape(3, 5)
    np.testing.assert_array_equal(host.sum(), 105)


def test_round_trip_through_pinned_memory_on_a_stream(dev):
    n = 1000
    data = np.arange(n, dtype="int32")
    host = modrt.pinned_empty(n, "int32", device=dev)
    host[:] = data
    t = modrt.empty((n,), "int32", dev)
    s = modrt.Stream(dev)
    t.copyfrom(host, stream=s)
    back = modrt.pinned_empty(n, "int32", device=dev)
    back[:] = -1
    t.copyto(back, stream=s)
    s.synchronize(timeout=30)
    np.testing.assert_array_equal(back, data)
    part = modrt.pinned_empty(4, "int32", device=dev)
    t.copyto(part, offset=40, stream=s)
    s.synchronize(timeout=30)
    np.testing.assert_array_equal(part, data[10:14])


def test_copies_keep_pinned_memory_alive_after_the_array_goes(dev):
    if dev.kind not in PINNED or dev.kind == "cpu":
        pytest.skip(f"{dev.kind}: no pinned memory of a backend's own (copies stage their bytes)")
    n = 1 << 16
    t = modrt.empty((n,), "float32", dev)
    s = modrt.Stream(dev)
    host = modrt.pinned_empty(n, "float32", device=dev)
    host[:] = 2.5
    t.copyfrom(host, stream=s)
    del host
    gc.collect()
    s.synchronize(timeout=30)
    np.testing.assert_array_equal(t.numpy(), np.full(n, 2.5, "float32"))


def test_copies_use_a_backends_pinned_memory_in_place(dev):
    host = modrt.pinned_empty(8, "int32", device=dev)
    in_place = dev.kind in PINNED and dev.kind != "cpu"
    # Copies with stream= on the backend's own pinned memory take it as it is
    # (and the device's copies to the host write it without staging).
    assert modrt.pinned.covers(dev, host) == in_place
    assert modrt.pinned.covers(dev, host[2:6]) == in_place
    assert not modrt.pinned.covers(dev, np.ones(8, "int32"))


def test_pinned_memory_of_one_device_is_not_used_in_place_by_another():
    cpu, cl = modrt.cpu(), modrt.device("opencl")
    if not cl.exist:
        pytest.skip(cl.unavailable_reason)
    host = modrt.pinned_empty(16, "uint8", device=cpu)
    assert not modrt.pinned.covers(cl, host)
    t = modrt.empty((16,), "uint8", cl)
    host[:] = 7
    t.copyfrom(host, stream=modrt.Stream(cl))  # staged: still correct
    np.testing.assert_array_equal(t.numpy(stream=None), np.full(16, 7, "uint8"))


def test_bad_requests_raise():
    cpu = modrt.cpu()
    with pytest.raises(TypeError, match="device="):
        modrt.pinned_empty(4, "float32", device="cpu")
    with pytest.raises(ValueError, match="negative"):
        modrt.pinned_empty((2, -1), "float32", device=cpu)
    empty = modrt.pinned_empty(0, "float32", device=cpu)
    assert empty.size == 0
