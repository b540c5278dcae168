"""One sample of a distributed row (distributed_rows.py), in a fresh driver
process on the driver's namespace host:

    python distributed_cases.py ADDRESS NODE_IP SIDE CASE N BATCHES

joins the Ray cluster at ADDRESS, sets SIDE up on one worker per cpu device
the cluster offers, runs a warm-up batch of N repetitions of CASE, then
BATCHES batches, and prints the seconds per repetition of the fastest.

SIDE, CASE:
  modrt  allreduce:BYTES  Session.allreduce(t, "sum") of a float32 tensor of BYTES per worker
  mpi    allreduce:BYTES  the peer: bare Ray actors, each holding a numpy array of
                          BYTES, joined into one MPI communicator (mpi4py, the
                          same MPICH); the driver launches Allreduce on every actor
  modrt  launch           dmod["nop"](0): an empty kernel run on every worker
  ray    launch           the peer: a method that does nothing, called on bare
                          Ray actors placed like modrt's workers
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import modrt
import modrt.distributed as md
from modrt.distributed._cluster import RESOURCE_PREFIX, import_ray

NOP = "void nop(int n) { (void)n; }"


class MpiPeer:
    """One rank of the peer: a numpy array and an MPI communicator of all ranks."""

    def port(self) -> str:
        from modrt.distributed._worker import _mpi  # where the toolchain root keeps mpi4py and MPICH

        self.mpi = _mpi()
        return self.mpi.Open_port()

    def join(self, port: str, rank: int, size: int, nbytes: int) -> None:
        from modrt.distributed._worker import _mpi

        mpi = self.mpi = _mpi()
        comm = mpi.COMM_SELF
        if rank > 0:
            comm = comm.Connect(port, root=0).Merge(high=True)
        while comm.Get_size() < size:
            comm = comm.Accept(port, root=0).Merge(high=False)
        self.comm = comm.Split(0, rank)
        self.buf = np.zeros(nbytes // 4, np.float32)

    def allreduce(self) -> None:
        self.comm.Allreduce(self.mpi.IN_PLACE, self.buf, self.mpi.SUM)


class RayPeer:
    def nop(self) -> None:
        return None


def _workers(ray: Any) -> int:
    return int(ray.cluster_resources().get(RESOURCE_PREFIX + "cpu", 0))


def setup(side: str, case: str) -> Callable[[], None]:
    ray = import_ray()
    name, _, arg = case.partition(":")
    if side == "modrt":
        sess = md.Session(devices="cpu:*", timeout=300)
        if name == "allreduce":
            t = sess.shard(np.zeros(sess.size * int(arg) // 4, np.float32))
            return lambda: sess.allreduce(t, "sum")
        nop = sess.load(modrt.compile(NOP, "cpu", ["nop(int32)"]))["nop"]
        return lambda: nop(0)
    size = _workers(ray)
    if side == "mpi":
        actors = [
            ray.remote(MpiPeer).options(num_cpus=0, resources={RESOURCE_PREFIX + "cpu": 1}).remote()
            for _ in range(size)
        ]
        port = ray.get(actors[0].port.remote())
        ray.get([a.join.remote(port, r, size, int(arg)) for r, a in enumerate(actors)])
        return lambda: ray.get([a.allreduce.remote() for a in actors])
    actors = [
        ray.remote(RayPeer).options(num_cpus=0, resources={RESOURCE_PREFIX + "cpu": 1}).remote() for _ in range(size)
    ]
    ray.get([a.nop.remote() for a in actors])
    return lambda: ray.get([a.nop.remote() for a in actors])


def main() -> None:
    address, node_ip, side, case, n, batches = sys.argv[1:7]
    import_ray().init(address=address, _node_ip_address=node_ip, logging_level="WARNING", log_to_driver=False)
    once = setup(side, case)

    def batch() -> float:
        start = time.perf_counter()
        for _ in range(int(n)):
            once()
        return (time.perf_counter() - start) / int(n)

    batch()
    print(min(batch() for _ in range(int(batches))), flush=True)


if __name__ == "__main__":
    main()
