"""Workers on a device that is not the host's memory: OpenCL (PoCL here),
an OpenCL C kernel compiled on the driver, tensors in device memory, and
collectives staged through each worker's host."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import modrt
import modrt.distributed as md
from modrt_testing import VADD_CL, VADD_CL_SIGNATURE

pytestmark = pytest.mark.skipif(
    not modrt.device("opencl").exist, reason="no OpenCL device in this build (--config=cpu-runtimes has PoCL)"
)


@pytest.fixture(scope="module")
def session() -> Iterator[md.Session]:
    # A local cluster shares its one PoCL device between the two workers.
    with md.Session(devices="opencl:2", timeout=60) as sess:
        yield sess


def test_opencl_workers_run_an_opencl_kernel(session: md.Session) -> None:
    assert [w.kind for w in session.workers] == ["opencl", "opencl"]
    dmod = session.load(modrt.compile(VADD_CL, "opencl", [VADD_CL_SIGNATURE]))
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(512).astype("float32"), rng.standard_normal(512).astype("float32")
    c = session.empty((512,), "float32", axis=0)
    dmod["vadd"](session.shard(x), session.shard(y), c, 256, 4, 64)
    np.testing.assert_array_equal(c.numpy(), x + y)


def test_collectives_on_device_tensors(session: md.Session) -> None:
    values = np.arange(16, dtype="float32")
    t = session.shard(values)
    session.allreduce(t, "max")
    for part in session.local_parts(t):
        np.testing.assert_array_equal(part, values[8:])
    gathered = session.allgather(session.shard(values))
    np.testing.assert_array_equal(gathered.numpy(), values)
    scattered = session.reduce_scatter(session.replicate(values), "sum")
    np.testing.assert_array_equal(scattered.numpy(), 2 * values)


def test_a_collective_on_a_stream_is_staged_in_stream_order(session: md.Session) -> None:
    dmod = session.load(modrt.compile(VADD_CL, "opencl", [VADD_CL_SIGNATURE]))
    s = session.stream()
    ones = session.shard(np.ones(512, "float32"))
    x = session.empty((512,), "float32", axis=0)
    dmod["vadd"](ones, ones, x, 256, 4, 64, stream=s)  # x = 2 on each worker, on stream s
    session.allreduce(x, "sum", stream=s)  # reads x after the launch, writes it back on s
    y = session.empty((512,), "float32", axis=0)
    dmod["vadd"](x, ones, y, 256, 4, 64, stream=s)  # sees the reduced x
    session.synchronize(s)
    np.testing.assert_array_equal(x.numpy(), np.full(512, 4.0, "float32"))
    np.testing.assert_array_equal(y.numpy(), np.full(512, 5.0, "float32"))
