"""Sessions, modules, SPMD calls and worker tensors on a local Ray cluster
of WORKERS cpu workers; a tensor-parallel MLP and data-parallel SGD checked
against the same kernels on one device."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time

import numpy as np
import pytest
from distributed_testing import WORKERS, kernels, mlp_on_one_device, session  # noqa: F401 - session is a fixture

import modrt
import modrt.distributed as md


@pytest.fixture(scope="module")
def dmod(session: md.Session) -> md.DModule:  # noqa: F811
    return session.load(kernels())


def test_import_modrt_distributed_does_not_import_ray() -> None:
    code = "import modrt, modrt.distributed, sys; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_node_resources_lists_this_nodes_devices() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "modrt.distributed", "resources", "--workers-per-device", "2"],
        capture_output=True,
        text=True,
        check=True,
    )
    resources = json.loads(out.stdout)
    assert resources["modrt_cpu"] == 2 * modrt._ffi.call("device.count", 1)
    assert resources == md.node_resources(2)
    for name in resources:
        kind = name.removeprefix("modrt_")
        assert modrt.device(kind).exist, kind


def test_the_workers_are_named(session: md.Session) -> None:  # noqa: F811
    assert session.size == len(session.workers) == WORKERS
    assert [w.rank for w in session.workers] == list(range(WORKERS))
    assert len({w.pid for w in session.workers}) == WORKERS
    assert all(w.kind == "cpu" and w.node_id and w.host for w in session.workers)


def test_a_request_the_cluster_cannot_meet_is_refused_at_once(session: md.Session) -> None:  # noqa: F811
    start = time.monotonic()
    # Every cpu slot of the local cluster is taken by the module's session.
    with pytest.raises(
        ValueError, match=r"cannot give 1 cpu worker\(s\) \(0 free\); it has 1 node\(s\) offering .*cpu: 3"
    ):
        md.Session(devices="cpu")
    with pytest.raises(ValueError, match="no free nosuchkind device .* offering .*cpu: 3"):
        md.Session(devices="nosuchkind:*")
    with pytest.raises(ValueError, match="cannot give 2 nosuchkind worker"):
        md.Session(devices=["nosuchkind", "nosuchkind"])
    assert time.monotonic() - start < 10
    with pytest.raises(ValueError, match="at least one worker"):
        md.Session(devices=0)
    with pytest.raises(ValueError, match="'kind', 'kind:N'"):
        md.Session(devices="cpu:x")
    with pytest.raises(TypeError, match="list of kinds"):
        md.Session(devices=[1, 2])
    # The refusals left the session working.
    session.barrier()


def test_spmd_vector_add_equals_numpy(session: md.Session, dmod: md.DModule) -> None:  # noqa: F811
    rng = np.random.default_rng(0)
    n = WORKERS * 1000
    x, y = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    a, b = session.shard(x), session.shard(y)
    c = session.empty((n,), "float32", axis=0)
    dmod["vadd"](a, b, c, n // WORKERS)
    np.testing.assert_array_equal(c.numpy(), x + y)
    np.testing.assert_array_equal(session.gather(c), x + y)
    parts = session.local_parts(c)
    for rank, part in enumerate(parts):
        np.testing.assert_array_equal(part, (x + y)[rank * 1000 : (rank + 1) * 1000])


def test_replicated_and_sharded_layouts(session: md.Session) -> None:  # noqa: F811
    m = np.arange(WORKERS * 2 * 5, dtype="int64").reshape(WORKERS * 2, 5)
    rows = session.shard(m, axis=0)
    assert rows.local_shape == (2, 5) and rows.shape == m.shape
    np.testing.assert_array_equal(rows.numpy(), m)
    cols = session.shard(m.T, axis=1)
    assert cols.local_shape == (5, 2)
    np.testing.assert_array_equal(cols.numpy(), m.T)
    rep = session.replicate(m)
    for part in session.local_parts(rep):
        np.testing.assert_array_equal(part, m)
    np.testing.assert_array_equal(rep.numpy(), m)


def test_shapes_that_do_not_fit_are_refused_before_anything_launches(
    session: md.Session,  # noqa: F811
    dmod: md.DModule,
) -> None:
    held = session.held()
    with pytest.raises(ValueError, match=f"axis 0 of shape \\[7\\] does not divide among {WORKERS} workers"):
        session.shard(np.zeros(7, "float32"))
    with pytest.raises(ValueError, match="axis 1 of shape"):
        session.empty((WORKERS, 4), "float32", axis=1)
    with pytest.raises(ValueError, match="out of range"):
        session.shard(np.zeros(WORKERS, "float32"), axis=1)
    with pytest.raises(ValueError, match="worker tensors hold"):
        session.replicate(np.zeros(3, "complex64"))
    assert session.held() == held, "a refused tensor was made on some worker"

    a = session.shard(np.ones(WORKERS * 4, "float32"))
    wrong = session.shard(np.ones(WORKERS * 4, "int32"))
    out = session.empty((WORKERS * 4,), "float32", axis=0)
    with pytest.raises(TypeError, match=r"argument 1 \(float32\*\) got a worker tensor of int32"):
        dmod["vadd"](a, wrong, out, 4)
    with pytest.raises(TypeError, match="pass a worker tensor"):
        dmod["vadd"](a, np.ones(4, "float32"), out, 4)
    with pytest.raises(TypeError, match="is a scalar, got a worker tensor"):
        dmod["vadd"](a, a, out, a)
    with pytest.raises(TypeError, match="takes 4 values, got 3"):
        dmod["vadd"](a, a, out)
    with pytest.raises(KeyError, match="no function 'nope'.*vadd"):
        dmod["nope"]
    np.testing.assert_array_equal(out.numpy().shape, (WORKERS * 4,))
    dmod["vadd"](a, a, out, 4)
    np.testing.assert_array_equal(out.numpy(), np.full(WORKERS * 4, 2, "float32"))


def test_an_error_on_a_worker_names_the_worker(session: md.Session) -> None:  # noqa: F811
    # A kernel argument out of its dtype's range is refused by modrt on each worker.
    other = session.load(modrt.compile("void f(int* x, int n) { x[0] = n; }", "cpu", ["f(int32*, int32)"]))
    x = session.shard(np.zeros(WORKERS, "int32"))
    with pytest.raises(OverflowError, match=r"call f: worker \d \(pid \d+, cpu device"):
        other["f"](x, 2**40)
    other["f"](x, 5)
    assert x.numpy().tolist() == [5] * WORKERS


def test_worker_tensors_are_freed_with_their_handles(session: md.Session) -> None:  # noqa: F811
    gc.collect()
    before = session.held()
    tensors = [session.replicate(np.zeros(16, "float32")) for _ in range(5)]
    assert session.held() == [b + 5 for b in before]
    del tensors
    gc.collect()
    # The frees are sent without waiting; the next calls to each worker come after them.
    assert session.held() == before


def test_tensor_parallel_mlp_equals_one_device(session: md.Session, dmod: md.DModule) -> None:  # noqa: F811
    """Column-parallel first layer, row-parallel second, allreduce of the partial sums."""
    rng = np.random.default_rng(1)
    batch, d_in, hidden, d_out = 8, 6, 4 * WORKERS, 5
    x = rng.standard_normal((batch, d_in)).astype("float32")
    w1 = rng.standard_normal((d_in, hidden)).astype("float32")
    w2 = rng.standard_normal((hidden, d_out)).astype("float32")

    # One device: the same kernels on modrt's cpu device.
    hidden_expected, expected = mlp_on_one_device(x, w1, w2)
    np.testing.assert_allclose(expected, np.maximum(x @ w1, 0) @ w2, rtol=1e-5, atol=1e-5)

    local_hidden = hidden // WORKERS
    xs = session.replicate(x)
    w1s = session.shard(w1, axis=1)  # columns
    w2s = session.shard(w2, axis=0)  # rows
    h = session.empty((batch, hidden), "float32", axis=1)
    dmod["matmul"](xs, w1s, h, batch, d_in, local_hidden)
    dmod["relu"](h, batch * local_hidden)
    y = session.empty((batch, d_out), "float32")  # partial sums until the allreduce
    dmod["matmul"](h, w2s, y, batch, local_hidden, d_out)
    session.allreduce(y, "sum")
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-5)
    for part in session.local_parts(y):
        np.testing.assert_array_equal(part, y.numpy())
    np.testing.assert_array_equal(h.numpy(), hidden_expected)


def test_data_parallel_sgd_matches_one_device_step_for_step(session: md.Session, dmod: md.DModule) -> None:  # noqa: F811
    """Each worker's gradient over its rows, summed by allreduce, then the same update everywhere."""
    rng = np.random.default_rng(2)
    rows, d, lr, steps = 8 * WORKERS, 4, 0.05, 20
    x = rng.standard_normal((rows, d)).astype("float32")
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], "float32") + 0.1).astype("float32")
    scale = np.float32(2.0 / rows)

    one = kernels()
    x1, y1 = modrt.tensor(x), modrt.tensor(y)
    w1, g1 = modrt.tensor(np.zeros(d, "float32")), modrt.empty((d,), "float32")

    xs, ys = session.shard(x, axis=0), session.shard(y, axis=0)
    w = session.replicate(np.zeros(d, "float32"))
    g = session.empty((d,), "float32")
    losses = []
    for step in range(steps):
        one["grad"](x1, y1, w1, g1, float(scale), rows, d)
        one["sgd"](w1, g1, lr, d)
        dmod["grad"](xs, ys, w, g, float(scale), rows // WORKERS, d)
        session.allreduce(g, "sum")
        dmod["sgd"](w, g, lr, d)
        np.testing.assert_allclose(w.numpy(), w1.numpy(), rtol=1e-5, atol=1e-6, err_msg=f"step {step}")
        parts = session.local_parts(w)
        assert all(np.array_equal(p, parts[0]) for p in parts), f"step {step}: the replicas differ"
        losses.append(float(np.mean((x @ w.numpy() - y) ** 2)))
    assert losses[-1] < losses[0] / 4, losses
