"""The rows of modrt.distributed (rows.toml marks them `runs = "process"`):
on a Ray cluster of namespace hosts (tests/distributed/ray_hosts.py: host1
the head and host2 a node, each offering its cpu device, the driver on
host3), every sample a fresh driver process on host3
(distributed_cases.py), the sides interleaved as every row's are.

- distributed-allreduce: Session.allreduce against the same Allreduce through
  mpi4py on bare Ray actors, float32, 1 KiB..64 MiB per worker.
- distributed-launch: an empty kernel run on every worker against a method
  that does nothing called on bare Ray actors.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import measure
from context import Context, say
from measure import Side, Unavailable
from report import Line

CASES = Path(__file__).with_name("distributed_cases.py")
# Bytes per worker, with repetitions per batch.
ALLREDUCE_SIZES = [(1 << 10, 100), (1 << 16, 50), (1 << 20, 20), (1 << 24, 4), (1 << 26, 2)]
BATCHES = 3
WORKERS = 2  # one per worker host


def _size(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


@contextlib.contextmanager
def _cluster(ctx: Context) -> Iterator[Callable[[str, str, int], Callable[[], float]]]:
    """The namespace cluster for one row; yields sampler(side, case, n)."""
    if not Path("/proc/self/ns/net").exists():
        raise Unavailable("no network namespaces here")
    # ray_hosts finds modrt (and through it Ray) in the tree the sides run.
    sys.path[:0] = [p for p in ctx.on.paths if p not in sys.path]
    try:
        from ray_hosts import ray_cluster
    except ImportError as e:
        raise Unavailable(f"the namespace cluster needs {e}") from None
    share = sorted({str(Path(p).resolve()) for p in ctx.on.paths})
    with ray_cluster([["cpu"], ["cpu"]], paths=ctx.on.paths, share=share) as (hosts, env, address):
        driver = hosts.host(3)
        # The measured interpreter is the bench's (ctx.python); Ray and MPI are the toolchain root's.
        env = {**env, **{k: v for k, v in ctx.env(ctx.on).items() if k != "PYTHONPATH"}}

        def sampler(side: str, case: str, n: int) -> Callable[[], float]:
            argv = [ctx.python, str(CASES), address, driver.address, side, case, str(n), str(BATCHES)]

            def sample() -> float:
                done = driver.run(argv, env=env, capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    raise RuntimeError(f"{side} {case} failed ({done.returncode}):\n{done.stderr[-4000:]}")
                return float(done.stdout.split()[-1]) * 1e3

            return sample

        yield sampler


def row_allreduce(ctx: Context) -> list[Line]:
    rounds = ctx.rounds(3)
    lines = []
    with _cluster(ctx) as sampler:
        for nbytes, n in ALLREDUCE_SIZES:
            case = f"allreduce:{nbytes}"
            sides = [
                Side("modrt", 'sess.allreduce(t, "sum")', sampler("modrt", case, n)),
                Side("mpi4py", "comm.Allreduce(IN_PLACE, buf, SUM) on bare Ray actors", sampler("mpi", case, n)),
            ]
            say(f"  distributed-allreduce {_size(nbytes)}")
            runs = measure.repeat(sides, rounds, ctx.repeats)
            small = nbytes <= 1 << 10
            large = nbytes >= 1 << 20
            line = Line.from_runs(
                id="distributed-allreduce",
                what=f"allreduce(sum) of {_size(nbytes)} float32 per worker, {WORKERS} workers on 2 hosts, ms",
                command='sess.allreduce(t, "sum") (tools/bench/distributed_cases.py modrt)',
                unit="ms",
                runs=runs,
                ref="mpi4py",
                peer="mpi4py: `comm.Allreduce(MPI.IN_PLACE, buf, MPI.SUM)` launched from the driver on bare "
                "Ray actors (tools/bench/distributed_cases.py mpi)",
                target="latency <= 1.5x mpi4py"
                if small
                else "bus bandwidth >= 0.8x mpi4py (time <= 1.25x)"
                if large
                else "report",
                limit=1.5 if small else 1.25 if large else None,
            )
            busbw = _busbw(nbytes, line.modrt), _busbw(nbytes, line.peer_value)
            line.notes.append(
                f"bus bandwidth (2(n-1)/n x bytes / time, n={WORKERS}): modrt {busbw[0]:.3f} GB/s, "
                f"mpi4py {busbw[1]:.3f} GB/s. {ctx.repeats} repeats of {rounds} rounds; each sample a fresh driver "
                f"process (a session or the actors set up, a warm-up batch, then the fastest of {BATCHES} batches "
                f"of {n})."
            )
            lines.append(line.judge())
    return lines


def _busbw(nbytes: int, ms: float | None) -> float:
    if not ms:
        return 0.0
    return 2 * (WORKERS - 1) / WORKERS * nbytes / (ms / 1e3) / 1e9


def row_launch(ctx: Context) -> list[Line]:
    rounds = ctx.rounds(5)
    n = 200
    with _cluster(ctx) as sampler:
        sides = [
            Side("modrt", 'dmod["nop"](0)', sampler("modrt", "launch", n)),
            Side("ray", "ray.get([a.nop.remote() for a in actors])", sampler("ray", "launch", n)),
        ]
        runs = measure.repeat(sides, rounds, ctx.repeats)
    line = Line.from_runs(
        id="distributed-launch",
        what=f"an empty kernel run on every worker ({WORKERS} workers on 2 hosts), ms",
        command='dmod["nop"](0) (tools/bench/distributed_cases.py modrt launch)',
        unit="ms",
        runs=runs,
        ref="ray",
        peer="ray: `ray.get([a.nop.remote() for a in actors])`, bare Ray actors placed alike "
        "(tools/bench/distributed_cases.py ray launch)",
        target="<= 1.3x ray",
        limit=1.3,
    )
    line.notes.append(
        f"{ctx.repeats} repeats of {rounds} rounds; each sample a fresh driver process (a warm-up batch, "
        f"then the fastest of {BATCHES} batches of {n})."
    )
    return [line.judge()]
