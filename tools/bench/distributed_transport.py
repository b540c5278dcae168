"""Allreduce on 3 Ray actors of one machine, for the transport choice of
modrt.distributed (docs/DISTRIBUTED.md, "Transport"): modrt.distributed's
own (MPI since the object store was replaced) against torch.distributed's gloo
and Ray's collective API (ray.util.collective, backend gloo), float32 sizes
1 KiB..64 MiB. Prints one JSON line per side and size: the median and IQR of
per-operation seconds.

Not part of `tools/bench` (its peers are not in the toolchain root: torch has
no CPython 3.14 CPU wheel on PyPI). Run it in a venv of the host's python3:

    python3 -m venv /tmp/tv && /tmp/tv/bin/pip install torch==2.13.0 absl-py \
        "bazel-out/*/bin/python/modrt-1.0.0-cp310-abi3-manylinux_2_28_x86_64.whl[ray]"
    /tmp/tv/bin/python tools/bench/distributed_transport.py modrt|gloo|ray-collective
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

import numpy as np
import ray

WORKERS = 3
SIZES = [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26]  # bytes
REPS = {1 << 10: 30, 1 << 16: 30, 1 << 20: 15, 1 << 24: 7, 1 << 26: 5}
GROUP = "bench"


@ray.remote(num_cpus=0)
class GlooPeer:
    """One rank of a gloo group, through torch.distributed or ray.util.collective."""

    def setup(self, rank: int, port: int, ray_collective: bool) -> None:
        import torch.distributed as dist

        self.ray_collective = ray_collective
        if ray_collective:
            import ray.util.collective as col

            col.init_collective_group(WORKERS, rank, backend="gloo", group_name=GROUP)
        else:
            dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORKERS)

    def make(self, nbytes: int) -> None:
        import torch

        self.tensor = torch.ones(nbytes // 4, dtype=torch.float32)

    def once(self) -> None:
        if self.ray_collective:
            import ray.util.collective as col

            col.allreduce(self.tensor, GROUP)
        else:
            import torch.distributed as dist

            dist.all_reduce(self.tensor)

    def loop(self, reps: int) -> list[float]:
        """Per-op seconds of `reps` allreduces, each after a barrier (the first discarded)."""
        import torch.distributed as dist

        times = []
        for _ in range(reps + 1):
            if self.ray_collective:
                import ray.util.collective as col

                col.barrier(GROUP)
            else:
                dist.barrier()
            start = time.perf_counter()
            self.once()
            times.append(time.perf_counter() - start)
        return times[1:]


def stats(xs: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(xs, n=4)
    return statistics.median(xs), q[0], q[2]


def timed(fn: Any, reps: int) -> list[float]:
    times = []
    for _ in range(reps + 1):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times[1:]


def modrt_side() -> dict[str, tuple[float, float, float]]:
    import modrt.distributed as md

    out = {}
    with md.Session(devices=WORKERS, timeout=120, object_store_memory=768 << 20) as sess:
        for n in SIZES:
            tensor = sess.replicate(np.ones(n // 4, "float32"))
            out[f"{n}"] = stats(timed(lambda t=tensor: sess.allreduce(t), REPS[n]))
            del tensor
    return out


def gloo_side(ray_collective: bool) -> dict[str, tuple[float, float, float]]:
    out = {}
    temp_dir = tempfile.mkdtemp(prefix="bench-ray-", dir="/tmp")
    ray.init(
        num_cpus=1,
        object_store_memory=768 << 20,
        include_dashboard=False,
        _temp_dir=temp_dir,
        logging_level="WARNING",
        log_to_driver=False,
    )
    try:
        peers = [GlooPeer.remote() for _ in range(WORKERS)]
        port = 29500 + os.getpid() % 1000
        ray.get([p.setup.remote(r, port, ray_collective) for r, p in enumerate(peers)])
        for n in SIZES:
            ray.get([p.make.remote(n) for p in peers])
            # In the actors: each op ends when the slowest rank has it.
            per_rank = ray.get([p.loop.remote(REPS[n]) for p in peers])
            out[f"{n}"] = stats([max(ts) for ts in zip(*per_rank)])
            # Each op started by the driver, as modrt.distributed's are.
            out[f"{n} from the driver"] = stats(timed(lambda: ray.get([p.once.remote() for p in peers]), REPS[n]))
    finally:
        ray.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)
    return out


def main(side: str) -> None:
    if side == "modrt":
        results = modrt_side()
    elif side in ("gloo", "ray-collective"):
        results = gloo_side(side == "ray-collective")
    else:
        sys.exit(f"unknown side {side!r}: modrt, gloo or ray-collective")
    for key, (median, q1, q3) in results.items():
        nbytes = int(key.split()[0])
        case = side + key[len(str(nbytes)) :]
        print(json.dumps({"side": case, "bytes": nbytes, "median_s": median, "q1_s": q1, "q3_s": q3}))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
