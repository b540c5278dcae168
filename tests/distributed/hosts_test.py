"""modrt.distributed on a Ray cluster of 3 hosts (tools/netns_hosts: network
namespaces on a private bridge, each its own address, hostname and /tmp):
a Ray head on host1, a Ray node on host2, both offering their modrt devices
as docs/DISTRIBUTED.md says (`ray start ... --resources="$(python -m
modrt.distributed resources)"`), and the driver on host3, a Ray node that
offers no devices. Workers land on host1 and host2 only; the results must
equal numpy and one device."""

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
import json, time
import numpy as np
import modrt
import modrt.distributed as md
from distributed_testing import OPENCL_VADD, OPENCL_VADD_SIGNATURE, kernels

out = {}
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
    one = kernels()
    h1 = modrt.empty((batch, hidden), "float32")
    one["matmul"](modrt.tensor(a), modrt.tensor(w1), h1, batch, d_in, hidden)
    one["relu"](h1, batch * hidden)
    y1 = modrt.empty((batch, d_out), "float32")
    one["matmul"](h1, modrt.tensor(w2), y1, batch, hidden, d_out)
    h = sess.empty((batch, hidden), "float32", axis=1)
    dmod["matmul"](sess.replicate(a), sess.shard(w1, axis=1), h, batch, d_in, hidden // 4)
    dmod["relu"](h, batch * hidden // 4)
    partial = sess.empty((batch, d_out), "float32")
    dmod["matmul"](h, sess.shard(w2, axis=0), partial, batch, hidden // 4, d_out)
    sess.allreduce(partial, "sum")
    out["mlp_close"] = bool(np.allclose(partial.numpy(), y1.numpy(), rtol=1e-5, atol=1e-5))

    # Every collective across the hosts, on a dtype of each family.
    checks = {}
    for dtype in ("int8", "uint64", "float16", "float64", "bool"):
        values = (rng.integers(0, 2, 4 * 8) if dtype == "bool" else rng.integers(0, 4, 4 * 8)).astype(dtype)
        parts = np.split(values, 4)
        t = sess.shard(values)
        sess.allreduce(t, "max")
        checks[f"allreduce {dtype}"] = all(np.array_equal(p, np.maximum.reduce(parts)) for p in sess.local_parts(t))
        g = sess.allgather(sess.shard(values))
        checks[f"allgather {dtype}"] = all(np.array_equal(p, values) for p in sess.local_parts(g))
        rs = sess.reduce_scatter(sess.shard(values), "min")
        checks[f"reduce_scatter {dtype}"] = bool(np.array_equal(rs.numpy(), np.minimum.reduce(parts)))
        b = sess.shard(values)
        sess.broadcast(b, root=3)
        checks[f"broadcast {dtype}"] = all(np.array_equal(p, parts[3]) for p in sess.local_parts(b))
        s = sess.shard(values)
        sess.send(s, src=0, dst=3)
        checks[f"send {dtype}"] = bool(np.array_equal(sess.local_parts(s)[3], parts[0]))
    sess.barrier()
    out["collectives"] = checks

    # A session of OpenCL workers lands on host2 only, the one host offering OpenCL.
    if modrt.device("opencl").exist:
        with md.Session(devices="opencl:*", timeout=120) as cl:
            out["opencl_hosts"] = [w.host for w in cl.workers]
            cmod = cl.load(modrt.compile(OPENCL_VADD, "opencl", [OPENCL_VADD_SIGNATURE]))
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
    # host1 (the head) offers only its cpu: the other kinds are host2's.
    with ray_cluster([["cpu"], None], workers_per_device=2, paths=[str(Path(__file__).parent)]) as made:
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
    assert out["collectives"] and all(out["collectives"].values()), out["collectives"]
    if "opencl_hosts" in out:  # a build with the OpenCL runtime (PoCL)
        assert out["opencl_hosts"] == ["host2", "host2"] and out["opencl_vadd_equal"], out
    # The lost host's workers, named, once Ray declares the node dead (its
    # health checks), well before the nap would have ended; never a hang.
    assert out["node_lost"].startswith("call nap: lost worker"), out["node_lost"]
    assert out["node_lost_hosts"] == ["host2", "host2"], out
    assert out["node_lost_s"] < 20, out
