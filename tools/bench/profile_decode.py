"""Where a decode step of the GPT-2-small-shaped decoder (or, with `--model cnn-train`, a training
step of the ResNet-18-shaped CNN) spends its time, per tinygrad device.

    tools/bazel run --config=all-runtimes -c opt //tools/bench:profile_decode -- MODRT:opencl CL
    tools/bazel run --config=all-runtimes -c opt //tools/bench:profile_decode -- --model cnn-train MODRT:cpu CPU

The devices are set up in one process (same weights and inputs; the model of
tools/bench/cases_models.py: a prefill and warm-up steps each), then take
turns step by step, so load from elsewhere falls on all of them alike:

- wall: a plain decode step, token fed back (the bench row's loop), in two
  halves: issue (the jitted call returns: tinygrad's JIT and the runtime
  launching the step's kernels, which run asynchronously) and wait (reading
  the token back, or the training step's loss, waits for the kernels);
- kernels: the device time of the step's kernels, measured by tinygrad itself
  as under DEBUG=2 (every launch waited for, GlobalCounters.time_sum_s: OpenCL
  event timestamps on CL, modrt events around each graph replay on MODRT);
- then a cProfile of the plain steps: the cumulative seconds per step in
  tinygrad's JIT call, in the device's launch layer (MODRT: ModrtGraph.__call__,
  which replays the batch with this position's values, with the recording
  alone, made once at the capture; CL: CLProgram.__call__, one per kernel; CPU: none apart, its kernels
  run inside the JIT call) and in the read-back that
  waits for the step (the allocator's _copyout), and the launches per step.

The figures are medians over the steps (the profiled columns: means);
cProfile slows Python down, so its columns are for proportions, and `wall`
comes from the steps without it.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import cases_models


def _key(function: Callable[..., Any]) -> tuple[str, int, str]:
    code = function.__code__
    return (code.co_filename, code.co_firstlineno, code.co_name)


def _entry_points(device: str) -> dict[str, Callable[..., Any]]:
    """The functions whose cumulative time the profile reports, by column."""
    from tinygrad.engine.jit import _TinyJit  # what TinyJit(f) makes

    points: dict[str, Callable[..., Any]] = {"jit": _TinyJit.__call__}
    if device.startswith("MODRT"):
        from modrt_tinygrad.graph import ModrtGraph
        from modrt_tinygrad.memory import ModrtAllocator
        from modrt_tinygrad.program import ModrtProgram

        points.update(
            launches=ModrtGraph.__call__,
            record=ModrtGraph._capture,
            readback=ModrtAllocator._copyout,
            kernel_calls=ModrtProgram.__call__,
        )
    elif device == "CL":
        from tinygrad.runtime.ops_cl import CLAllocator, CLProgram

        points.update(launches=CLProgram.__call__, readback=CLAllocator._copyout, kernel_calls=CLProgram.__call__)
    elif device == "CPU":
        from tinygrad.runtime.ops_cpu import CPUAllocator

        # tinygrad's CPU device runs a jitted batch inside the call (its own
        # queue), so only the JIT call and the read-back are told apart.
        points.update(readback=CPUAllocator._copyout)
    else:
        raise SystemExit(f"profile_decode: {device}: only MODRT devices, CL and CPU are profiled")
    return points


class Side:
    """One model's step on one device, after its warm-up steps; `step()` is one
    step timed in its two halves: `issue()` (the jitted call returns) and
    `finish()` (reading its result back waits for the kernels)."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.figures: dict[str, list[float]] = {}
        self.profiler = cProfile.Profile()
        for _ in range(3):  # TinyJit captures on its second call
            self.step()
        self.figures.clear()

    def issue(self) -> Any:
        raise NotImplementedError

    def finish(self, issued: Any) -> None:
        raise NotImplementedError

    def step(self, profile: bool = False) -> None:
        if profile:
            self.profiler.enable()
        start = time.perf_counter()
        result = self.issue()
        issued = time.perf_counter()
        self.finish(result)
        done = time.perf_counter()
        if profile:
            self.profiler.disable()
        _halves(self.figures, profile, start, issued, done)

    def kernel_step(self) -> None:
        """A step with every launch waited for: tinygrad sums the kernels' device time."""
        with _kernel_timing(self.figures):
            self.finish(self.issue())

    def results(self, steps: int) -> dict[str, float]:
        return _results(self.device, self.figures, self.profiler, steps)


class DecodeSide(Side):
    """The decoder on one device, after its prefill: a step is one decode step (token fed back)."""

    def __init__(self, device: str) -> None:
        self.model = cases_models._decoder(device)  # puts the root's tinygrad on the path
        prompt = cases_models._prompt(cases_models.PROMPT_TOKENS)
        self.token = int(self.model.prefill(prompt, device)[1].item())
        self.pos = len(prompt)
        super().__init__(device)

    def issue(self) -> Any:
        return self.model.decode(self.token, self.pos, self.device)[1]

    def finish(self, issued: Any) -> None:
        self.token = int(issued.item())
        self.pos += 1


class TrainSide(Side):
    """The CNN's jitted training step on one device (cases_models.cnn_train_step's
    model, batch and trainer): a step ends when its loss is read back."""

    def __init__(self, device: str) -> None:
        resnet, model, self.images, self.labels = cases_models._cnn(device)
        self.trainer = resnet.Trainer(model)
        super().__init__(device)

    def issue(self) -> Any:
        return self.trainer.step(self.images, self.labels)

    def finish(self, issued: Any) -> None:
        issued.item()


def _halves(figures: dict[str, list[float]], profile: bool, start: float, issued: float, done: float) -> None:
    prefix = "profiled " if profile else ""
    figures.setdefault(prefix + "wall ms", []).append((done - start) * 1e3)
    figures.setdefault(prefix + "issue ms", []).append((issued - start) * 1e3)
    figures.setdefault(prefix + "wait ms", []).append((done - issued) * 1e3)


@contextlib.contextmanager
def _kernel_timing(figures: dict[str, list[float]]) -> Iterator[None]:
    """tinygrad's DEBUG=2 timing (every launch waited for) around a step; adds its kernels' time to `figures`."""
    from tinygrad.helpers import DEBUG, Context, GlobalCounters

    with contextlib.redirect_stdout(io.StringIO()), Context(DEBUG=max(DEBUG.value, 2)):
        GlobalCounters.reset()
        yield
    figures.setdefault("kernels ms", []).append(GlobalCounters.time_sum_s * 1e3)


def _results(device: str, figures: dict[str, list[float]], profiler: cProfile.Profile, steps: int) -> dict[str, float]:
    medians = {name: statistics.median(values) for name, values in figures.items()}
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    for column, function in _entry_points(device).items():
        calls, _, _, cumulative, _ = stats.get(_key(function), (0, 0, 0.0, 0.0, {}))
        if column == "kernel_calls":
            medians["kernel launches per step"] = calls / steps
        else:
            medians[f"{column} ms (profiled)"] = cumulative / steps * 1e3
    return medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("devices", nargs="+", help="tinygrad devices, e.g. MODRT:opencl CL")
    parser.add_argument("--steps", type=int, default=8, help="steps per figure (default 8)")
    parser.add_argument("--model", choices=("decode", "cnn-train"), default="decode", help="the step profiled")
    args = parser.parse_args()
    side = DecodeSide if args.model == "decode" else TrainSide
    sides: list[Side] = []
    for device in args.devices:
        print(f"profile_decode: {args.model} on {device} ...", file=sys.stderr, flush=True)
        sides.append(side(device))
    # The devices take turns step by step, so load from elsewhere falls on all alike.
    for _ in range(args.steps):
        for side in sides:
            side.step()
    for _ in range(args.steps):
        for side in sides:
            side.kernel_step()
    for _ in range(args.steps):
        for side in sides:
            side.step(profile=True)
    results = {side.device: side.results(args.steps) for side in sides}
    columns = list(dict.fromkeys(c for figures in results.values() for c in figures))
    print(f"load average: {os.getloadavg()[0]:.1f}; {args.steps} steps per figure, medians")
    print("| figure | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for column in columns:
        cells = [f"{results[d][column]:.1f}" if column in results[d] else "—" for d in results]
        print(f"| {column} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
