"""Interleaved measurement in fresh processes.

Every sample is one fresh process (a worker.py case, a C floor, or a whole
`python -c ...`), so effects fixed for the life of a process (address layout,
the core it lands on, cache placement) vary between samples instead of biasing
a row. Sides take turns within a round, the order rotating each round, so
drift and load from other processes fall on all of them alike, and ratios come
from the samples of one round (pairs). A row is measured in several repeats;
repeats that disagree mark it unstable."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

WORKER = Path(__file__).with_name("worker.py")


class Unavailable(Exception):
    """A side cannot run here (a peer package or a device is missing)."""


@dataclass
class Side:
    label: str  # "modrt", "tvm", ...
    command: str  # what it runs, shown in the report
    sample: Callable[[], float]  # one measurement, in the row's unit


def interleave(sides: Sequence[Side], reps: int) -> dict[str, list[float]]:
    """`reps` rounds; each round samples every side once, the order rotating
    by one each round (A B, B A, ... for two sides) so no side always runs
    first after the same neighbour."""
    samples: dict[str, list[float]] = {s.label: [] for s in sides}
    for r in range(reps):
        k = r % len(sides)
        for side in list(sides[k:]) + list(sides[:k]):
            samples[side.label].append(side.sample())
    return samples


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def paired_ratio(a: Sequence[float], b: Sequence[float]) -> float:
    """Median of the per-round ratios a_i / b_i."""
    return statistics.median(x / y for x, y in zip(a, b))


def paired_difference(a: Sequence[float], b: Sequence[float]) -> float:
    """Median of the per-round differences a_i - b_i."""
    return statistics.median(x - y for x, y in zip(a, b))


def ratios(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """The per-round (per-pair) ratios a_i / b_i."""
    return [x / y for x, y in zip(a, b)]


@dataclass
class Spread:
    """Median, quartiles and extremes of some figures."""

    median: float
    q1: float
    q3: float
    min: float
    max: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        v = sorted(values)
        if len(v) >= 2:
            q1, _, q3 = statistics.quantiles(v, n=4, method="inclusive")
        else:
            q1 = q3 = v[0]
        return cls(statistics.median(v), q1, q3, v[0], v[-1], len(v))


def disagreement(values: Sequence[float]) -> float:
    """How far apart repeats are: max / min - 1 (0.2 = 20%). Figures of
    either sign (differences) compare by their absolute spread instead."""
    lo, hi = min(values), max(values)
    if lo > 0:
        return hi / lo - 1.0
    return float("inf") if hi != lo else 0.0


def repeat(sides: Sequence[Side], rounds: int, repeats: int) -> list[dict[str, list[float]]]:
    """`repeats` independent interleaved runs of `rounds` rounds each, after
    one discarded warm-up round (it fills the page cache, PoCL's kernel cache
    and the like)."""
    interleave(sides, 1)
    return [interleave(sides, rounds) for _ in range(repeats)]


# Measured batches per process; a process's figure is its fastest batch.
BATCHES = 5


def fresh_worker(
    python: str, case: str, env: Mapping[str, str], n: int, scale: float, batches: int = BATCHES
) -> Callable[[], float]:
    """A sampler: one fresh worker process for `case`; a discarded warm-up batch
    of `n` repetitions, then `batches` batches; the seconds per repetition of
    the fastest batch (the one other processes on the machine disturbed least),
    times `scale`. Raises Unavailable when the case cannot run here."""

    def sample() -> float:
        worker = Worker(python, case, env)
        try:
            worker.seconds(n)
            return min(worker.seconds(n) / n * scale for _ in range(batches))
        finally:
            worker.close()

    return sample


# Set in a probe's environment: a case whose setup is long (a whole model) may
# stop once it knows it can run (its device opens) instead of setting up.
PROBE_ENV = "MODRT_BENCH_PROBE"


def probe(python: str, case: str, env: Mapping[str, str]) -> str | None:
    """None when `case` starts here, else why it cannot (Unavailable's reason)."""
    try:
        Worker(python, case, {**env, PROBE_ENV: "1"}).close()
    except Unavailable as e:
        return str(e)
    return None


def c_floor(
    argv: Sequence[str], n: int, scale: float, batches: int = BATCHES, env: Mapping[str, str] | None = None
) -> Callable[[], float]:
    """A sampler: one run of a C floor (floors/*.c: `floor N BATCHES [args]`,
    its last line the seconds per repetition of its fastest batch), times
    `scale`; `env` is added to the bench's environment."""
    run_env = {**os.environ, **env} if env else None

    def sample() -> float:
        done = subprocess.run([argv[0], str(n), str(batches), *argv[1:]], capture_output=True, text=True, env=run_env)
        if done.stdout.startswith("unavailable:"):
            raise Unavailable(done.stdout.partition(": ")[2].strip())
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
        return float(done.stdout.split()[-1]) * scale

    return sample


class Worker:
    """A worker.py process holding one side of an in-process comparison."""

    def __init__(self, python: str, case: str, env: Mapping[str, str] | None = None) -> None:
        self.case = case
        self.proc = subprocess.Popen(
            [python, str(WORKER), case],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(env) if env is not None else None,
        )
        first = self.proc.stdout.readline().strip()
        if first.startswith("unavailable:"):
            self.close()
            raise Unavailable(first.partition(": ")[2])
        if first != "ready":
            err = self._stop()
            raise RuntimeError(f"worker {case} failed to start: {first}\n{err}")

    def seconds(self, n: int) -> float:
        """Wall seconds for `n` repetitions."""
        self.proc.stdin.write(f"{n}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.case} died:\n{self._stop()}")
        return float(line)

    def per_unit(self, n: int, scale: float) -> Callable[[], float]:
        """A sampler giving `scale` * seconds per repetition over batches of n."""
        return lambda: self.seconds(n) / n * scale

    def _stop(self) -> str:
        self.proc.kill()
        _, err = self.proc.communicate()
        return err or ""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


def process_wall(argv: Sequence[str], env: Mapping[str, str], scale: float = 1.0) -> Callable[[], float]:
    """A sampler: wall time of one fresh process (fork, exec, interpreter,
    imports, exit), times `scale`. A failing process is an error."""

    def sample() -> float:
        start = time.perf_counter()
        done = subprocess.run(list(argv), env=dict(env), capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
        return elapsed * scale

    return sample


def process_reported(argv: Sequence[str], env: Mapping[str, str], scale: float = 1.0) -> Callable[[], float]:
    """A sampler: seconds that one fresh process measured itself and printed
    as its last line of output, times `scale`."""

    def sample() -> float:
        done = subprocess.run(list(argv), env=dict(env), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
        return float(done.stdout.split()[-1]) * scale

    return sample


def python_env(paths: Sequence[str] = (), extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a measured interpreter: ours without Bazel's
    runfiles variables, with PYTHONPATH set to `paths` only."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RUNFILES", "PYTHON", "BUILD_", "BAZEL")) and k != "JAVA_RUNFILES"
    }
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra or {})
    return env
