"""DLPack 1.x between modrt tensors and numpy, both ways: versioned and legacy
capsules, writable zero-copy views (checked by writing through one side and
reading the other), read-only memory, strided input, copies and devices."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

import modrt

_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_name(capsule: object) -> str:
    for name in ("dltensor_versioned", "dltensor", "used_dltensor_versioned", "used_dltensor"):
        if _is_valid(capsule, name.encode()):
            return name
    return "?"


def test_capsule_kind_follows_max_version():
    t = modrt.tensor(np.arange(6, dtype="float32"))
    assert capsule_name(t.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert capsule_name(t.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"
    assert capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(t.__dlpack__()) == "dltensor"
    assert capsule_name(t.__dlpack__(None)) == "dltensor"  # stream, positionally, as old consumers pass it
    gc.collect()  # unconsumed capsules of both kinds release their reference to t
    assert t.numpy().tolist() == [0, 1, 2, 3, 4, 5]


def test_numpy_from_modrt_is_a_writable_zero_copy_view():
    t = modrt.tensor(np.zeros((2, 3), dtype="float32"))
    view = np.from_dlpack(t)
    assert view.flags.writeable and view.shape == (2, 3) and view.dtype == np.float32
    view[1, 2] = 7.5  # numpy writes, modrt reads
    assert t.numpy()[1, 2] == 7.5
    t.copyfrom(np.full((2, 3), 3, dtype="float32"))  # modrt writes, numpy reads
    assert (view == 3).all()
    del t  # the view keeps the memory alive
    gc.collect()
    assert (view == 3).all()


def test_modrt_from_numpy_is_zero_copy_both_ways():
    a = np.arange(12, dtype="int32").reshape(3, 4)
    t = modrt.from_dlpack(a)
    assert t.shape == (3, 4) and t.dtype == "int32" and not t.read_only
    a[2, 3] = -1
    assert t.numpy()[2, 3] == -1
    t.copyfrom(np.ones((3, 4), dtype="int32"))
    assert (a == 1).all()


def test_capsules_of_both_kinds_are_accepted():
    a = np.arange(4, dtype="float64")
    versioned = a.__dlpack__(max_version=(1, 0))
    legacy = a.__dlpack__()
    assert capsule_name(versioned) == "dltensor_versioned" and capsule_name(legacy) == "dltensor"
    for capsule in (versioned, legacy):
        t = modrt.from_dlpack(capsule)
        a[0] = 9
        assert t.numpy()[0] == 9
    assert capsule_name(versioned) == "used_dltensor_versioned" and capsule_name(legacy) == "used_dltensor"
    with pytest.raises(TypeError, match="unused DLPack capsule"):
        modrt.from_dlpack(versioned)  # a capsule is consumed once


class LegacyProducer:
    """A producer from before DLPack 1.0: __dlpack__ takes no keywords."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_legacy_producers_are_accepted():
    a = np.arange(5, dtype="uint8")
    t = modrt.from_dlpack(LegacyProducer(a))
    a[4] = 200
    assert t.numpy().tolist() == [0, 1, 2, 3, 200]


def test_modrt_to_modrt_shares_memory():
    t = modrt.tensor(np.zeros(3, dtype="float32"))
    u = modrt.from_dlpack(t)
    u.copyfrom(np.array([1, 2, 3], dtype="float32"))
    assert t.numpy().tolist() == [1, 2, 3]


def test_read_only_memory_stays_read_only():
    a = np.arange(3, dtype="float32")
    a.flags.writeable = False
    t = modrt.from_dlpack(a)  # numpy exports read-only memory only as DLPack >= 1.0, flagged
    assert t.read_only
    with pytest.raises(ValueError, match="read-only tensor"):
        t.copyfrom(np.zeros(3, dtype="float32"))
    back = np.from_dlpack(t)
    assert not back.flags.writeable and back.tolist() == [0, 1, 2]


def test_strided_input_is_refused_with_how_to_fix_it():
    a = np.arange(12, dtype="float32").reshape(3, 4)
    with pytest.raises(
        ValueError,
        match=r"not compact row-major \(shape \[4, 3\], strides \[1, 4\].*"
        r"np\.ascontiguousarray\(x\).*x\.contiguous\(\).*copy=True",
    ):
        modrt.from_dlpack(a.T)
    with pytest.raises(ValueError, match="not compact row-major"):
        modrt.from_dlpack(a[:, ::2], copy=False)
    assert modrt.from_dlpack(np.ascontiguousarray(a.T)).numpy().tolist() == a.T.tolist()


def test_copy_true_copies_strided_and_compact_input():
    a = np.arange(12, dtype="float32").reshape(3, 4)
    for source in (a.T, a[:, ::2], a[::-1], a):
        t = modrt.from_dlpack(source, copy=True)
        assert t.numpy().tolist() == source.tolist()
        before = t.numpy().copy()
        a += 100  # the copy does not see later writes
        assert (t.numpy() == before).all()


def test_numpy_asks_for_a_copy():
    t = modrt.tensor(np.zeros(4, dtype="float32"))
    copied = np.from_dlpack(t, copy=True)
    copied[0] = 5
    assert t.numpy()[0] == 0 and copied.flags.writeable
    shared = np.from_dlpack(t, copy=False)
    shared[0] = 6
    assert t.numpy()[0] == 6


def test_dl_device():
    t = modrt.tensor(np.zeros(2, dtype="float32"))
    assert capsule_name(t.__dlpack__(max_version=(1, 0), dl_device=(1, 0))) == "dltensor_versioned"
    with pytest.raises(BufferError, match="to DLPack device"):
        t.__dlpack__(max_version=(1, 0), dl_device=(2, 0))


def test_device_tensors_reach_numpy_by_a_copy():
    dev = modrt.device("opencl")
    if not dev.exist:
        pytest.skip(f"no OpenCL device here: {dev.unavailable_reason}")
    t = modrt.tensor(np.arange(4, dtype="float32"), dev)
    assert t.__dlpack_device__() == (dev.device_type, 0)
    with pytest.raises((BufferError, RuntimeError), match="(?i)unsupported device"):
        np.from_dlpack(t)  # numpy takes CPU memory only
    host = np.from_dlpack(t, device="cpu")  # numpy asks for dl_device (1, 0): a copy
    assert host.tolist() == [0, 1, 2, 3]
    with pytest.raises(BufferError, match="copy=False"):
        t.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)
