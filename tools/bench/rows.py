"""The rows that time a loop inside one process: their table is data
(rows.toml, read here), each row modrt's worker case against references."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import measure
import tomllib
from context import C_FLOORS, Context, Tree, say
from measure import Side, Unavailable
from report import Line

ROWS_FILE = Path(__file__).resolve().parent / "rows.toml"


@dataclass
class Ref:
    """A reference modrt is compared with: a peer's worker case, or a floor
    (a worker case on the floor's extension, or a C floor program)."""

    label: str
    command: str  # what it times, as shown in the report
    target: str = "report"
    limit: float | None = None
    case: str | None = None  # worker.py case ...
    floor: str | None = None  # ... or a C floor binary
    floor_args: Sequence[str] = ()
    of_modrt: bool = False  # a worker case of modrt itself (another way to do the same), run on its tree


@dataclass
class InProcessRow:
    """A row whose sides each time a loop inside one process: modrt's worker
    case against each Ref. Adding a row is adding it to rows.toml (and its
    worker cases to worker.py)."""

    what: str
    unit: str
    n: int  # repetitions per batch
    modrt_case: str
    modrt_command: str
    refs: list[Ref] = field(default_factory=list)
    scale: float = 1.0  # per-repetition seconds -> unit
    bytes_per_rep: int | None = None  # set: the unit is GB/s (higher is better)
    note: str = ""
    env: dict[str, str] = field(default_factory=dict)  # driver settings every side runs with


def _sampler_for(
    ctx: Context,
    spec: InProcessRow,
    case: str | None,
    tree: Tree | None,
    floor: str | None = None,
    floor_args: Sequence[str] = (),
) -> Callable[[], float]:
    scale = spec.scale if spec.bytes_per_rep is None else 1.0
    if floor:
        args = [str(ctx.floors.path(floor))] + [a.format(floors=ctx.floors.dir) for a in floor_args]
        sample = measure.c_floor(args, spec.n, scale, env=spec.env)
    else:
        sample = measure.fresh_worker(ctx.python, case, _case_env(ctx, spec, tree), spec.n, scale)
    if spec.bytes_per_rep is None:
        return sample
    per_copy = spec.bytes_per_rep
    return lambda: per_copy / sample() / 1e9


def _case_env(ctx: Context, spec: InProcessRow, tree: Tree | None) -> dict[str, str]:
    return ctx.env(tree, MODRT_BENCH_FLOORS=str(ctx.floors.dir), **spec.env)


def run_in_process_row(ctx: Context, row: str, spec: InProcessRow) -> list[Line]:
    """Probes every side (one that cannot start here is left out, with the
    reason), then measures the rest together: repeats of interleaved rounds,
    each sample a fresh process."""
    why = measure.probe(ctx.python, spec.modrt_case, _case_env(ctx, spec, ctx.on))
    if why is not None:
        raise Unavailable(f"modrt cannot run it here: {why}")
    command = f"{spec.modrt_command} (tools/bench/worker.py {spec.modrt_case})"
    sides = [Side("modrt", command, _sampler_for(ctx, spec, spec.modrt_case, ctx.on))]
    missing: dict[str, str] = {}
    for ref in spec.refs:
        try:
            if ref.floor:
                sampler = _sampler_for(ctx, spec, None, None, ref.floor, ref.floor_args)
                sampler()  # a probe: raises Unavailable where it cannot run
            else:
                tree = ctx.on if ref.of_modrt else None
                reason = measure.probe(ctx.python, ref.case, _case_env(ctx, spec, tree))
                if reason is not None:
                    raise Unavailable(reason)
                sampler = _sampler_for(ctx, spec, ref.case, tree)
        except Unavailable as e:
            missing[ref.label] = str(e)
            say(f"  {row}: {ref.label} unavailable: {e}")
            continue
        sides.append(Side(ref.label, ref.command, sampler))
    rounds, repeats = ctx.rounds(5), ctx.repeats
    runs = measure.repeat(sides, rounds, repeats)
    lines = []
    for ref in spec.refs:
        shown = ref.command + (
            f" (tools/bench/worker.py {ref.case})"
            if ref.case
            else f" (tools/bench/floors/{C_FLOORS[ref.floor][0]})"
            if ref.floor
            else ""
        )
        line = Line.from_runs(
            id=row,
            what=spec.what,
            command=command,
            unit=spec.unit,
            runs=runs,
            ref=ref.label,
            peer=f"{ref.label}: `{shown}`",
            target=ref.target,
            limit=ref.limit,
            higher_is_better=spec.bytes_per_rep is not None,
        )
        if ref.label in missing:
            line.verdict = f"{ref.label} unavailable ({missing[ref.label]})"
        line.notes.append(
            f"{repeats} repeats of {rounds} rounds; each sample a fresh process (a warm-up batch, then the "
            f"fastest of {measure.BATCHES} batches of {spec.n}); modrt from the tree built with {ctx.on.flags}."
        )
        if spec.note:
            line.notes.append(spec.note)
        if spec.env:
            line.notes.append("Every side ran with " + ", ".join(f"{k}={v}" for k, v in spec.env.items()) + ".")
        lines.append(line.judge())
    return lines


class Table:
    """rows.toml: every row in run order, the groups, and the in-process rows' specs."""

    def __init__(self, path: Path = ROWS_FILE) -> None:
        with open(path, "rb") as f:
            data = tomllib.load(f)
        self.order: list[str] = [row["id"] for row in data["row"]]
        self.groups: dict[str, list[str]] = data.get("groups", {})
        self.specs: dict[str, InProcessRow] = {}
        self.process_rows: list[str] = []
        for row in data["row"]:
            fields = {k: v for k, v in row.items() if k not in ("id", "ref", "runs")}
            if row.get("runs") == "process":
                self.process_rows.append(row["id"])
                continue
            refs = [Ref(**{**ref, "floor_args": tuple(ref.get("floor_args", ()))}) for ref in row.get("ref", [])]
            self.specs[row["id"]] = InProcessRow(**fields, refs=refs)
        unknown = [r for rows in self.groups.values() for r in rows if r not in self.order]
        if unknown:
            raise ValueError(f"{path}: groups name rows it does not define: {unknown}")

    def runner(self, row: str) -> Callable[[Context], list[Line]]:
        spec = self.specs[row]
        return lambda ctx: run_in_process_row(ctx, row, spec)
