"""Calls into native functions through modrt._ffi_ext: every kind of argument
and result crosses, errors keep their kind, and what a call creates lives
exactly as long as it must."""

import gc

import numpy as np
import pytest

import modrt
import modrt_test_hooks
from modrt import _ffi

modrt_test_hooks.load()


def call_back(fn, *args):
    """Native code (testing.apply) calls `fn` with `args`, which cross the ABI twice."""
    return modrt.get_global_func("testing.apply")(fn, *args)


def test_more_arguments_than_fit_inline():
    assert call_back(lambda *a: sum(a), *range(12)) == sum(range(12))
    mixed = call_back(lambda *a: len(a), 1, 2.5, "s", b"b", None, modrt.cpu(), 7, 8, 9, 10, bytearray(b"x"))
    assert mixed == 11


def test_each_kind_of_value_round_trips():
    identity = lambda x: x  # noqa: E731
    assert call_back(identity, 2**63 - 1) == 2**63 - 1
    assert call_back(identity, True) == 1
    assert call_back(identity, 1.25) == 1.25
    assert call_back(identity, "héllo") == "héllo"
    assert call_back(identity, b"\x00\xff") == b"\x00\xff"
    assert call_back(identity, memoryview(b"abc")) == b"abc"
    assert call_back(identity, None) is None
    assert call_back(lambda d: repr(d), modrt.device("opencl", 1)) == "opencl(1)"
    t = modrt.tensor(np.arange(4, dtype="int32"))
    back = call_back(identity, t)
    assert isinstance(back, modrt.Tensor) and back.handle == t.handle
    np.testing.assert_array_equal(back.numpy(), [0, 1, 2, 3])


def test_unsupported_argument_is_a_type_error_and_earlier_arguments_are_released():
    released = []

    class Tracked:
        def __call__(self):
            return 0

        def __del__(self):
            released.append(True)

    with pytest.raises(TypeError, match="cannot pass a object to a modrt function"):
        call_back(Tracked(), object())
    gc.collect()
    assert released == [True]


def test_keyword_arguments_are_refused():
    with pytest.raises(TypeError, match="positional arguments only"):
        modrt.get_global_func("testing.nop")(x=1)


def test_native_error_during_a_call_with_a_boxed_callable_keeps_its_kind():
    def fail():
        raise KeyError("inner")

    with pytest.raises(KeyError, match="inner"):
        call_back(fail)
    with pytest.raises(ValueError, match="bad"):
        modrt.get_global_func("testing.raise")("ValueError", "bad")


def test_results_outlive_the_function_that_made_them():
    f = modrt.get_global_func("tensor.empty")
    t = f(modrt.cpu(), "float32", 3)
    del f
    gc.collect()
    assert t.shape == (3,) and t.dtype == "float32"


def test_object_handles():
    assert _ffi.Object(None).handle is None
    f = modrt.get_global_func("testing.nop")
    assert isinstance(f, _ffi.Object) and isinstance(f.handle, int) and f() is None
