"""modrt.distributed on a Ray cluster of 3 hosts (tools/netns_hosts: network
namespaces on a private bridge, each its own address, hostname and /tmp):
a Ray head on host1 offering its cpu and vulkan devices, a Ray node on host2
offering its cpu, opencl and webgpu devices, as docs/DISTRIBUTED.md says
(`ray start ... --resources="$(python -m modrt.distributed resources)"`),
and the driver on host3, a Ray node that offers no devices. Workers land on
host1 and host2 only; the results must equal numpy and one device. A session
of one worker per backend spans both hosts and runs every collective x every
dtype x 1 element, 7 and 64 MiB.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from netns_hosts import Hosts
from ray_hosts import DRIVER_PRELUDE, ray_cluster

DRIVER = r"""
import functools, json, time
import numpy as np
import modrt
import modrt.distributed as md
from modrt._shapes import HOST_DTYPES
from distributed_testing import kernels, mlp_on_one_device
from modrt_testing import VADD_CL, VADD_CL_SIGNATURE

UFUNCS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}


def values_of(dtype, count, seed):
    # Small values: a product of four is exact, sums stay in range.
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, count).astype(bool)
    if dtype.startswith("float"):
        return rng.choice(np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0]), count).astype(dtype)
    return rng.integers(0 if dtype.startswith("uint") else -3, 4, count).astype(dtype)


def every_collective(sess, dtype, n, ops=tuple(UFUNCS), others=True):
    # n values of `dtype` on each worker; which checks held, by name.
    w = sess.size
    values = values_of(dtype, w * n, n)
    parts = np.split(values, w)
    ok = {}
    for op in ops:
        t = sess.shard(values)
        sess.allreduce(t, op)
        expected = functools.reduce(UFUNCS[op], parts)
        ok[f"allreduce({op})"] = all(np.array_equal(p, expected) for p in sess.local_parts(t))
    if not others:
        return ok
    g = sess.allgather(sess.shard(values))
    ok["allgather"] = bool(np.array_equal(g.numpy(), values))  # worker 0's copy
    ok["allgather everywhere"] = n > 1 << 16 or all(np.array_equal(p, values) for p in sess.local_parts(g))
    b = sess.shard(values)
    sess.broadcast(b, root=w - 1)
    ok["broadcast"] = all(np.array_equal(p, parts[-1]) for p in sess.local_parts(b))
    s = sess.shard(values)
    sess.send(s, src=0, dst=w - 1)
    ok["send"] = bool(np.array_equal(sess.local_parts(s)[-1], parts[0]))
    # reduce_scatter cuts each worker's tensor among the workers: w * n values there.
    scattered = values if n % w == 0 else values_of(dtype, w * w * n, n + 1)
    rs = sess.reduce_scatter(sess.shard(scattered), "sum")
    ok["reduce_scatter(sum)"] = bool(np.array_equal(rs.numpy(), functools.reduce(np.add, np.split(scattered, w))))
    return ok


out = {}
# Different backends on different hosts in one session: host1 offers cpu
# and vulkan, host2 cpu, opencl and webgpu (those this build has). Every
# collective x every dtype x 1 element, 7 (no divisor), 64 MiB.
kinds = [k for k in ("cpu", "opencl", "vulkan", "webgpu") if modrt.device(k).exist]
started = time.monotonic()
with md.Session(devices=kinds, timeout=300) as mixed:
    out["mixed_hosts"] = {w.kind: w.host for w in mixed.workers}
    matrix = {}
    for dtype in HOST_DTYPES:
        for n in (1, 7):
            for name, ok in every_collective(mixed, dtype, n).items():
                matrix[f"{name} {dtype} x{n}"] = ok
        # 64 MiB in all: its part on each worker.
        n = (64 << 20) // np.dtype(dtype).itemsize // mixed.size
        big = every_collective(mixed, dtype, n, ops=("sum",), others=dtype == "float32")
        for name, ok in big.items():
            matrix[f"{name} {dtype} 64 MiB"] = ok
    out["matrix"] = matrix
out["matrix_s"] = time.monotonic() - started

with md.Session(devices="cpu:4", timeout=120) as sess:
    out["hosts"] = [w.host for w in sess.workers]
    dmod = sess.load(kernels())
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(4000).astype("float32"), rng.standard_normal(4000).astype("float32")
    c = sess.empty((4000,), "float32", axis=0)
    dmod["vadd"](sess.shard(x), sess.shard(y), c, 1000)
    out["vadd_equal"] = bool(np.array_equal(c.numpy(), x + y))

    # Tensor-parallel MLP across the hosts against the same kernels on one device.
    batch, d_in, hidden, d_out = 8, 6, 16, 5
    a = rng.standard_normal((batch, d_in)).astype("float32")
    w1 = rng.standard_normal((d_in, hidden)).astype("float32")
    w2 = rng.standard_normal((hidden, d_out)).astype("float32")
    _, expected = mlp_on_one_device(a, w1, w2)
    h = sess.empty((batch, hidden), "float32", axis=1)
    dmod["matmul"](sess.replicate(a), sess.shard(w1, axis=1), h, batch, d_in, hidden // 4)
    dmod["relu"](h, batch * hidden // 4)
    partial = sess.empty((batch, d_out), "float32")
    dmod["matmul"](h, sess.shard(w2, axis=0), partial, batch, hidden // 4, d_out)
    sess.allreduce(partial, "sum")
    out["mlp_close"] = bool(np.allclose(partial.numpy(), expected, rtol=1e-5, atol=1e-5))

    sess.barrier()

    # A session of OpenCL workers lands on host2 only, the one host offering OpenCL.
    if modrt.device("opencl").exist:
        with md.Session(devices="opencl:*", timeout=120) as cl:
            out["opencl_hosts"] = [w.host for w in cl.workers]
            cmod = cl.load(modrt.compile(VADD_CL, "opencl", [VADD_CL_SIGNATURE]))
            cc = cl.empty((256,), "float32", axis=0)
            cmod["vadd"](cl.shard(x[:256]), cl.shard(y[:256]), cc, 128, 2, 64)
            out["opencl_vadd_equal"] = bool(np.array_equal(cc.numpy(), x[:256] + y[:256]))

    # host2 leaves in the middle of a call: its link is cut while its workers sleep.
    flags = sess.shard(np.ones(4, "int32"))
    launch = dmod["nap"](flags, 20000, wait=False)
    print("CUT NOW", flush=True)
    sys.stdin.readline()  # the test has cut host2's link
    cut_at = time.monotonic()
    try:
        launch.wait()
        out["node_lost"] = "no error"
    except md.WorkerError as e:
        out["node_lost"] = str(e)
        out["node_lost_hosts"] = sorted(w.host for w in e.workers)
    except Exception as e:
        out["node_lost"] = f"{type(e).__name__}: {e}"
    out["node_lost_s"] = time.monotonic() - cut_at
print(json.dumps(out), flush=True)
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Hosts, dict[str, str], str]]:
    # Different backends on different hosts: host1 (the head) offers cpu and
    # vulkan, host2 cpu, opencl and webgpu.
    offers = [["cpu", "vulkan"], ["cpu", "opencl", "webgpu"]]
    with ray_cluster(offers, workers_per_device=2, paths=[str(Path(__file__).parent)]) as made:
        yield made


def test_a_session_across_three_hosts(cluster: tuple[Hosts, dict[str, str], str]) -> None:
    hosts, env, address = cluster
    _, node, driver = hosts
    proc = driver.popen(
        [sys.executable, "-c", DRIVER_PRELUDE + DRIVER, address, driver.address],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "CUT NOW", line + proc.stderr.read()[-4000:]
        node.cut()
        proc.stdin.write("\n")
        proc.stdin.flush()
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr[-4000:]
    out = json.loads(stdout.strip().splitlines()[-1])
    print("node_lost_s:", out.get("node_lost_s"), "opencl_hosts:", out.get("opencl_hosts"))  # --test_arg=-s shows it
    # Two workers on each host that offers cpu devices; none on the driver's.
    assert sorted(out["hosts"]) == ["host1", "host1", "host2", "host2"], out["hosts"]
    assert out["vadd_equal"]
    assert out["mlp_close"]
    print("matrix_s:", out.get("matrix_s"), "mixed_hosts:", out.get("mixed_hosts"))
    failed = [name for name, ok in out["matrix"].items() if not ok]
    assert out["matrix"] and not failed, failed
    assert len(out["matrix"]) == 12 * 2 * 9 + 12 + 5, sorted(out["matrix"])
    mixed = out["mixed_hosts"]
    assert mixed["cpu"] in ("host1", "host2"), mixed
    for kind, host in (("vulkan", "host1"), ("opencl", "host2"), ("webgpu", "host2")):
        assert mixed.get(kind, host) == host, mixed  # a kind this build has lands where it is offered
    if "opencl_hosts" in out:  # a build with the OpenCL runtime (PoCL)
        assert out["opencl_hosts"] == ["host2", "host2"] and out["opencl_vadd_equal"], out
    # The lost host's workers, named, once Ray declares the node dead (its
    # health checks), well before the nap would have ended; never a hang.
    assert out["node_lost"].startswith("call nap: lost worker"), out["node_lost"]
    assert out["node_lost_hosts"] == ["host2", "host2"], out
    assert out["node_lost_s"] < 20, out
