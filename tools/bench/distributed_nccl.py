"""The NCCL rows of modrt.distributed, for a machine with two or more NVIDIA
GPUs (not run yet: no such machine was lent; docs/DISTRIBUTED.md says so):

    python tools/bench/distributed_nccl.py [--workers N] [--reps R]

modrt's side: a local-cluster Session of N cuda workers (one per GPU),
`sess.allreduce(t, "sum")` of float32 tensors in GPU memory, which
modrt.distributed stages through host memory and MPI (it has no NCCL
transport yet). The peer: NCCL through CuPy (`cupy.cuda.nccl`, the
nvidia-nccl-cu12 wheel) in bare Ray actors, one per GPU, launched from the
driver the same way. Sizes 1 KiB..64 MiB per GPU; for each, R rounds of one
fresh driver process per side (taking turns), and the median ms with its
spread and the bus bandwidth. Needs `pip install 'modrt[ray]' modrt-cuda
cupy-cuda12x nvidia-nccl-cu12` (or modrt from tools/gpu/cuda_e2e.sh's stage
on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

SIZES = [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26]

SAMPLE = r"""
import sys, time
import numpy as np
side, nbytes, workers, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
import modrt.distributed as md
from modrt.distributed._cluster import import_ray

if side == "modrt":
    sess = md.Session(devices=f"cuda:{workers}", timeout=300)
    t = sess.shard(np.zeros(workers * nbytes // 4, np.float32))
    once = lambda: sess.allreduce(t, "sum")
else:
    ray = import_ray()
    ray.init(num_gpus=workers, logging_level="WARNING", log_to_driver=False)

    @ray.remote(num_gpus=1)
    class Rank:
        def join(self, uid, rank):
            import cupy
            from cupy.cuda import nccl

            self.comm = nccl.NcclCommunicator(workers, uid, rank)
            self.buf = cupy.zeros(nbytes // 4, cupy.float32)
            self.stream = cupy.cuda.Stream.null

        def allreduce(self):
            from cupy.cuda import nccl

            self.comm.allReduce(self.buf.data.ptr, self.buf.data.ptr, self.buf.size, nccl.NCCL_FLOAT32,
                                nccl.NCCL_SUM, self.stream.ptr)
            self.stream.synchronize()

    from cupy.cuda import nccl

    uid = nccl.get_unique_id()
    ranks = [Rank.remote() for _ in range(workers)]
    ray.get([r.join.remote(uid, i) for i, r in enumerate(ranks)])
    once = lambda: ray.get([r.allreduce.remote() for r in ranks])
once()
start = time.perf_counter()
for _ in range(n):
    once()
print((time.perf_counter() - start) / n)
"""


def sample(side: str, nbytes: int, workers: int) -> float:
    n = 50 if nbytes <= 1 << 20 else 5
    done = subprocess.run(
        [sys.executable, "-c", SAMPLE, side, str(nbytes), str(workers), str(n)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{side} {nbytes}: {done.stderr[-3000:]}")
    return float(done.stdout.split()[-1]) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    for nbytes in SIZES:
        runs: dict[str, list[float]] = {"modrt": [], "nccl": []}
        for r in range(args.reps):
            for side in ("modrt", "nccl") if r % 2 == 0 else ("nccl", "modrt"):
                runs[side].append(sample(side, nbytes, args.workers))
        ratios = [m / p for m, p in zip(runs["modrt"], runs["nccl"])]
        busbw = {
            k: 2 * (args.workers - 1) / args.workers * nbytes / (statistics.median(v) / 1e3) / 1e9
            for k, v in runs.items()
        }
        print(
            json.dumps(
                {
                    "bytes": nbytes,
                    "modrt_ms": statistics.median(runs["modrt"]),
                    "nccl_ms": statistics.median(runs["nccl"]),
                    "ratio_median": statistics.median(ratios),
                    "ratio_min_max": [min(ratios), max(ratios)],
                    "busbw_gbs": busbw,
                    "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
