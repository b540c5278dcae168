"""The global registry and errors, from both sides of the C ABI."""

from pathlib import Path

import numpy as np
import pytest

import modrt
import modrt_test_hooks

modrt_test_hooks.load()


def test_test_hooks_are_not_in_the_production_core():
    core = Path(modrt._ffi.find_library(modrt._ffi._selection.CORE))
    assert b"testing.nop" not in core.read_bytes()
    assert b"testing.nop" in Path(modrt._ffi.find_library("tests/hooks/libmodrt_testing.so")).read_bytes()


def test_cpp_function_called_from_python():
    assert modrt.get_global_func("dtype.normalize")("float32x4") == "float32x4"


def test_missing_global_is_key_error():
    with pytest.raises(KeyError, match="no global function 'no.such.function'"):
        modrt.get_global_func("no.such.function")
    assert modrt.get_global_func("no.such.function", allow_missing=True) is None


def test_python_function_called_from_cpp():
    modrt.register_func("test.add", lambda a, b: a + b)
    assert modrt.get_global_func("testing.call_global")("test.add", 2, 40) == 42
    assert modrt.get_global_func("test.add")(1.5, 2) == 3.5


def test_python_function_returns_strings_and_objects():
    modrt.register_func("test.greet", lambda name: "hello " + name)
    assert modrt.get_global_func("testing.call_global")("test.greet", "modrt") == "hello modrt"
    t = modrt.tensor(np.arange(3, dtype="int32"))
    modrt.register_func("test.identity", lambda x: x)
    back = modrt.get_global_func("testing.call_global")("test.identity", t)
    np.testing.assert_array_equal(back.numpy(), [0, 1, 2])


def test_callable_argument_is_invoked_by_native_code():
    apply = modrt.get_global_func("testing.apply")
    assert apply(lambda x, y: x * y, 6, 7) == 42


def test_duplicate_registration_refused_unless_override():
    modrt.register_func("test.once", lambda: 1)
    with pytest.raises(KeyError, match="already registered"):
        modrt.register_func("test.once", lambda: 2)
    modrt.register_func("test.once", lambda: 3, override=True)
    assert modrt.get_global_func("test.once")() == 3


def test_native_errors_keep_their_kind():
    raise_ = modrt.get_global_func("testing.raise")
    with pytest.raises(ValueError, match="bad value"):
        raise_("ValueError", "bad value")
    with pytest.raises(TypeError):
        raise_("TypeError", "bad type")
    with pytest.raises(modrt.Error, match="anything"):
        raise_("SomethingElse", "anything")


def test_python_exception_crosses_native_code_and_back():
    def fail(_):
        raise ValueError("from python")

    with pytest.raises(ValueError, match="from python"):
        modrt.get_global_func("testing.apply")(fail, 1)


def test_argument_type_errors_name_the_argument():
    with pytest.raises(TypeError, match="argument 0: expected str, got int"):
        modrt.get_global_func("dtype.normalize")(3)
    with pytest.raises(TypeError, match="expects 1 argument, got 2"):
        modrt.get_global_func("dtype.normalize")("int32", "x")


def test_unknown_dtype():
    with pytest.raises(ValueError, match="unknown dtype 'float33'"):
        modrt.empty((2,), "float33")


def test_tensor_numpy_round_trip_and_dlpack():
    a = np.arange(12, dtype="float32").reshape(3, 4)
    t = modrt.tensor(a)
    assert t.shape == (3, 4) and t.dtype == "float32" and t.device == modrt.cpu()
    np.testing.assert_array_equal(t.numpy(), a)
    shared = modrt.from_dlpack(a)
    a[0, 0] = 100.0  # shares memory with the producer
    assert shared.numpy()[0, 0] == 100.0
    np.testing.assert_array_equal(np.from_dlpack(t), t.numpy())
    with pytest.raises(ValueError, match="cannot copy"):
        t.copyfrom(np.zeros((2, 2), dtype="float32"))


def test_unknown_device_kind():
    with pytest.raises(ValueError, match="unknown device kind 'tpu'"):
        modrt.device("tpu")
    assert modrt.device("cpu").exist
    assert not modrt.device("cpu", 3).exist
    assert "out of range" in modrt.device("cpu", 3).unavailable_reason
