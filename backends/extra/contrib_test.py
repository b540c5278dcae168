"""libmodrt_runtime_extra.so: its contrib functions, and how autoload treats it."""

import numpy as np
import pytest

import modrt
import modrt_testing

EXTRA = "backends/extra/libmodrt_runtime_extra.so"
argsort = modrt.get_global_func("contrib.sort.argsort")
uniform = modrt.get_global_func("contrib.random.uniform")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_argsort_is_numpys_stable_argsort(dtype):
    rng = np.random.default_rng(7)
    values = rng.integers(-50, 50, size=5000).astype(dtype)  # many ties: stability matters
    if dtype.startswith("float"):
        values[::97] = np.nan
    indices = modrt.empty(values.shape, "int64")
    argsort(modrt.tensor(values), indices)
    np.testing.assert_array_equal(indices.numpy(), np.argsort(values, kind="stable"))


def test_argsort_refuses_bad_arguments():
    values = modrt.tensor(np.zeros(4, "float32"))
    with pytest.raises(TypeError, match="indices must be int64, got int32"):
        argsort(values, modrt.empty((4,), "int32"))
    with pytest.raises(ValueError, match="indices has 3 elements, values 4"):
        argsort(values, modrt.empty((3,), "int64"))
    with pytest.raises(ValueError, match="values must be 1-D, got 2-D"):
        argsort(modrt.tensor(np.zeros((2, 2), "float32")), modrt.empty((4,), "int64"))
    with pytest.raises(TypeError, match="float16 are not supported"):
        argsort(modrt.tensor(np.zeros(4, "float16")), modrt.empty((4,), "int64"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_is_reproducible_and_in_range(dtype):
    a, b, c = (modrt.empty((100_000,), dtype) for _ in range(3))
    uniform(a, 42, -2.0, 3.0)
    uniform(b, 42, -2.0, 3.0)
    uniform(c, 43, -2.0, 3.0)
    x = a.numpy()
    np.testing.assert_array_equal(x, b.numpy())
    assert np.mean(x == c.numpy()) < 1e-3
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.05 and abs(x.std() - 5 / np.sqrt(12)) < 0.05
    # Element i depends only on (seed, i): a shorter fill is a prefix.
    short = modrt.empty((10,), dtype)
    uniform(short, 42, -2.0, 3.0)
    np.testing.assert_array_equal(short.numpy(), x[:10])


def test_uniform_refuses_bad_arguments():
    with pytest.raises(ValueError, match="need finite low < high"):
        uniform(modrt.empty((2,), "float32"), 0, 1.0, 1.0)
    with pytest.raises(TypeError, match="out must be float32 or float64, got int32"):
        uniform(modrt.empty((2,), "int32"), 0, 0.0, 1.0)


def test_absent_extra_dso_is_skipped_silently(tmp_path):
    tree = modrt_testing.copy_tree(tmp_path / "tree", drop=(EXTRA,))
    proc = modrt_testing.run_python(
        "import modrt\nprint('argsort:', modrt.get_global_func('contrib.sort.argsort', allow_missing=True))", tree=tree
    )
    assert proc.returncode == 0, proc.stderr
    assert "argsort: None" in proc.stdout
    assert "Warning" not in proc.stderr, proc.stderr


def test_corrupt_extra_dso_warns_with_its_path(tmp_path):
    tree = modrt_testing.copy_tree(tmp_path / "tree", replace={EXTRA: b"\x7fELF truncated"})
    proc = modrt_testing.run_python("import modrt\nprint('imported')", tree=tree)
    assert proc.returncode == 0, proc.stderr
    assert "imported" in proc.stdout
    assert f"{tree / EXTRA} not loaded" in proc.stderr and "RuntimeWarning" in proc.stderr
