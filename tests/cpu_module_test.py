"""Host (cpu) modules: C compiled by the system compiler, carried as bytes."""

import numpy as np
import pytest

import modrt
import modrt_testing

VADD = """
void vadd(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
void axpy(double alpha, const double* x, double* y, long n) {
  for (long i = 0; i < n; ++i) y[i] += alpha * x[i];
}
"""
SIGNATURES = ["vadd(float32*, float32*, float32*, int32)", "axpy(float64, float64*, float64*, int64)"]


@pytest.fixture(scope="module")
def module():
    return modrt.compile(VADD, "cpu", SIGNATURES)


def run_vadd(mod, n=17):
    a = np.random.default_rng(0).standard_normal(n).astype("float32")
    b = np.random.default_rng(1).standard_normal(n).astype("float32")
    c = modrt.empty((n,), "float32")
    mod["vadd"](modrt.tensor(a), modrt.tensor(b), c, n)
    np.testing.assert_allclose(c.numpy(), a + b)


def test_compile_run(module):
    assert module.kind == "so" and not module.is_fallback
    assert sorted(module.function_names) == ["axpy", "vadd"]
    run_vadd(module)
    x = np.arange(5, dtype="float64")
    y = modrt.tensor(np.ones(5))
    module["axpy"](2.0, modrt.tensor(x), y, 5)
    np.testing.assert_allclose(y.numpy(), 1 + 2 * x)


def test_save_load_run(module):
    data = module.save_to_bytes()
    loaded = modrt.load_module_from_bytes("so", data)
    run_vadd(loaded)
    assert loaded.save_to_bytes() == data
    assert "vadd" in module.inspect_source("c")


def test_save_load_in_fresh_process(module, tmp_path):
    path = tmp_path / "vadd.so.bin"
    path.write_bytes(module.save_to_bytes())
    code = f"""
import numpy as np, modrt
m = modrt.load_module_from_bytes("so", open({str(path)!r}, "rb").read())
c = modrt.empty((3,), "float32")
m["vadd"](modrt.tensor(np.ones(3, dtype="float32")), modrt.tensor(np.ones(3, dtype="float32")), c, 3)
print(c.numpy().tolist())
"""
    proc = modrt_testing.run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[2.0, 2.0, 2.0]"


def test_bad_calls_are_clean_errors(module):
    f = module["vadd"]
    c = modrt.empty((4,), "float32")
    with pytest.raises(TypeError, match="vadd takes 4 arguments"):
        f(c, c, c)
    with pytest.raises(TypeError, match="must be a tensor of float32, got a tensor of int32"):
        f(modrt.empty((4,), "int32"), c, c, 4)
    with pytest.raises(TypeError, match="argument 3"):
        f(c, c, c, "four")
    with pytest.raises(AttributeError, match="no function 'nope'"):
        module["nope"]


def test_compile_errors_carry_the_compiler_output():
    with pytest.raises(ValueError, match="C compilation failed"):
        modrt.compile("void f( {", "cpu", ["f()"])
    with pytest.raises(ValueError, match="bad function signature"):
        modrt.compile(VADD, "cpu", ["vadd(float32*"])
    with pytest.raises(ValueError, match="unknown launch tag 'warpIdx.x'"):
        modrt.compile(VADD, "cpu", ["vadd(float32*; warpIdx.x)"])


@pytest.mark.parametrize("cut", [0, 1, 8, 20, 100])
def test_truncated_bytes_are_refused(module, cut):
    data = module.save_to_bytes()
    with pytest.raises(ValueError, match="truncated|corrupted|cannot load host module"):
        modrt.load_module_from_bytes("so", data[: len(data) - cut] if cut else data[:0])


def test_corrupted_image_is_refused(module):
    data = bytearray(module.save_to_bytes())
    elf = data.index(b"\x7fELF")
    data[elf + 1 : elf + 4] = b"XXX"
    with pytest.raises(ValueError, match="cannot load host module"):
        modrt.load_module_from_bytes("so", bytes(data))


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="no loader 'module.load_from_bytes.nosuch'"):
        modrt.load_module_from_bytes("nosuch", b"")


def test_modules_loaded_one_after_another_stay_distinct():
    # Each host module is its own shared object, even when the first is gone.
    def const_module(value):
        return modrt.compile(f"void get(int* out) {{ *out = {value}; }}", "cpu", ["get(int32*)"])

    results = []
    for value in (1, 2, 3):
        data = const_module(value).save_to_bytes()
        out = modrt.empty((1,), "int32")
        modrt.load_module_from_bytes("so", data)["get"](out)
        results.append(int(out.numpy()[0]))
    assert results == [1, 2, 3]


def test_an_int_for_a_float_scalar_is_that_number():
    # As numpy converts it: 1 is 1.0, 2**24 + 1 rounds to the nearest float32.
    mod = modrt.compile("void put(float* x, float v) { x[0] = v; }", "cpu", ["put(float32*, float32)"])
    x = modrt.empty((1,), "float32")
    for value in (1, -3, 2**24 + 1):
        mod["put"](x, value)
        assert x.numpy()[0] == np.float32(value), value
    with pytest.raises(TypeError):  # the other way is refused: nothing is truncated
        modrt.compile("void n(int* x, int v) { x[0] = v; }", "cpu", ["n(int32*, int32)"])["n"](
            modrt.empty((1,), "int32"), 1.5
        )
