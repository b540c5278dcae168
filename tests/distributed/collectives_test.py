"""Every collective x every dtype a worker tensor holds x sizes (one element,
sizes that do not divide among the workers, a larger one), against numpy
applied to the workers' own tensors."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from distributed_testing import WORKERS, session  # noqa: F401 - session is a fixture

import modrt.distributed as md
from modrt._shapes import HOST_DTYPES

# Elements on each worker: one, a prime (so nothing divides), and 256 Ki.
SIZES = (1, 7, 1 << 18)
UFUNCS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}


def worker_values(dtype: str, n: int, seed: int) -> np.ndarray:
    """WORKERS * n values of `dtype`, small enough that a product of WORKERS of them is exact."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, WORKERS * n).astype(bool)
    if dtype.startswith("float"):
        return rng.choice(np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0]), WORKERS * n).astype(dtype)
    low = 0 if dtype.startswith("uint") else -3
    return rng.integers(low, 4, WORKERS * n).astype(dtype)


def parts_of(session: md.Session, values: np.ndarray) -> tuple[md.DTensor, list[np.ndarray]]:  # noqa: F811
    tensor = session.shard(values)
    return tensor, np.split(values, WORKERS)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", HOST_DTYPES)
def test_allreduce(session: md.Session, dtype: str, n: int) -> None:  # noqa: F811
    for op, ufunc in UFUNCS.items():
        tensor, parts = parts_of(session, worker_values(dtype, n, seed=n))
        assert session.allreduce(tensor, op) is tensor
        expected = functools.reduce(ufunc, parts)
        assert expected.dtype == np.dtype(dtype)
        for rank, got in enumerate(session.local_parts(tensor)):
            np.testing.assert_array_equal(got, expected, err_msg=f"{op} on worker {rank}")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", HOST_DTYPES)
def test_allgather_broadcast_send(session: md.Session, dtype: str, n: int) -> None:  # noqa: F811
    values = worker_values(dtype, n, seed=1)
    tensor, parts = parts_of(session, values)

    gathered = session.allgather(tensor)
    assert gathered.shape == (WORKERS * n,) and gathered.axis is None and gathered.dtype == dtype
    for got in session.local_parts(gathered):
        np.testing.assert_array_equal(got, values)

    session.send(tensor, src=WORKERS - 1, dst=0)
    after = session.local_parts(tensor)
    np.testing.assert_array_equal(after[0], parts[-1])
    for rank in range(1, WORKERS):
        np.testing.assert_array_equal(after[rank], parts[rank])

    session.broadcast(tensor, root=1)
    for got in session.local_parts(tensor):
        np.testing.assert_array_equal(got, parts[1])


@pytest.mark.parametrize("dtype", HOST_DTYPES)
def test_reduce_scatter(session: md.Session, dtype: str) -> None:  # noqa: F811
    n = WORKERS * 5
    for op, ufunc in UFUNCS.items():
        tensor, parts = parts_of(session, worker_values(dtype, n, seed=2))
        out = session.reduce_scatter(tensor, op)
        expected = functools.reduce(ufunc, parts)
        assert out.shape == (n,) and out.axis == 0 and out.local_shape == (5,)
        np.testing.assert_array_equal(out.numpy(), expected, err_msg=op)
        for rank, got in enumerate(session.local_parts(out)):
            np.testing.assert_array_equal(got, expected[rank * 5 : (rank + 1) * 5])


def test_collectives_along_an_axis_of_a_matrix(session: md.Session) -> None:  # noqa: F811
    m = np.arange(WORKERS * 2 * WORKERS * 3, dtype="float32").reshape(WORKERS * 2, WORKERS * 3)
    rows = session.shard(m, axis=0)  # (2, 3W) on each worker
    np.testing.assert_array_equal(session.allgather(rows, axis=0).numpy(), m)
    joined = session.allgather(rows, axis=1)
    assert joined.shape == (2, WORKERS * WORKERS * 3)
    np.testing.assert_array_equal(joined.numpy(), np.concatenate(np.split(m, WORKERS), axis=1))
    scattered = session.reduce_scatter(rows, "sum", axis=1)  # (2, 3) on each worker
    assert scattered.local_shape == (2, 3)
    np.testing.assert_array_equal(scattered.numpy(), sum(np.split(m, WORKERS)))


def test_a_64_mib_allreduce(session: md.Session) -> None:  # noqa: F811
    n = 16 << 20  # float32: 64 MiB on each worker
    tensor = session.replicate(np.ones(n, "float32"))
    session.allreduce(tensor, "sum")
    for part in session.local_parts(tensor):
        assert part.shape == (n,) and (part == WORKERS).all()


def test_barrier_returns_when_every_worker_is_done(session: md.Session) -> None:  # noqa: F811
    session.barrier()
    session.barrier(timeout=30)


def test_mistakes_are_refused_before_anything_runs(session: md.Session) -> None:  # noqa: F811
    tensor = session.shard(np.zeros(WORKERS * 7, "int32"))
    with pytest.raises(ValueError, match="unknown reduction 'mean'; one of sum, prod, min, max"):
        session.allreduce(tensor, "mean")
    with pytest.raises(ValueError, match=f"axis 0 of the workers' shape \\[7\\] does not divide among {WORKERS}"):
        session.reduce_scatter(tensor)
    with pytest.raises(ValueError, match=r"root: 9 is not a worker rank \(0..2\)"):
        session.broadcast(tensor, root=9)
    with pytest.raises(ValueError, match="receiving tensor is float32"):
        session.send(tensor, 0, 1, out=session.shard(np.zeros(WORKERS * 7, "float32")))
    with pytest.raises(TypeError, match="expected a worker tensor"):
        session.allreduce(np.zeros(3, "int32"))
