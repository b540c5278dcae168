"""Results of a run -> docs/BENCHMARKS.md (and benchmarks.json for the chart)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import measure

# Repeats that disagree by more than this make a line unstable.
UNSTABLE = 0.20


@dataclass
class Line:
    """One line of the table: modrt against one reference (a peer or a floor)."""

    id: str
    what: str
    command: str  # modrt's side
    unit: str
    modrt: float | None  # median of the per-process figures, all repeats
    peer: str = ""  # the reference's label and command; empty when there is none
    ref: str = ""  # the reference's label
    peer_value: float | None = None
    ratio: float | None = None  # median of the per-pair modrt/reference ratios, all repeats
    target: str = "report"  # as written in the issue
    limit: float | None = None  # the bound on `metric`
    metric: str = "ratio"  # "ratio" or "value": what `limit` bounds
    higher_is_better: bool = False  # bandwidths
    verdict: str = ""
    notes: list[str] = field(default_factory=list)
    samples: dict[str, list[float]] = field(default_factory=dict)  # per label, all repeats in run order
    spreads: dict[str, dict] = field(default_factory=dict)  # "modrt", ref, "ratio" -> Spread fields
    repeat_figures: list[float] = field(default_factory=list)  # the judged figure, per repeat

    @classmethod
    def from_runs(cls, runs: Sequence[dict[str, list[float]]], ref: str, **kw) -> Line:
        """A line from measure.repeat's runs: pooled medians and spreads of
        modrt and `ref`, per-pair ratios, and the median ratio of each repeat."""
        pooled = {k: [v for r in runs for v in r[k]] for k in runs[0]}
        line = cls(modrt=measure.median(pooled["modrt"]), ref=ref, **kw)
        line.spreads["modrt"] = asdict(measure.Spread.of(pooled["modrt"]))
        line.samples["modrt"] = pooled["modrt"]
        if ref in pooled:
            line.samples[ref] = pooled[ref]
            line.peer_value = measure.median(pooled[ref])
            line.spreads[ref] = asdict(measure.Spread.of(pooled[ref]))
            pairs = [x for r in runs for x in measure.ratios(r["modrt"], r[ref])]
            line.ratio = measure.median(pairs)
            line.spreads["ratio"] = asdict(measure.Spread.of(pairs))
            line.repeat_figures = [measure.median(measure.ratios(r["modrt"], r[ref])) for r in runs]
        else:
            line.repeat_figures = [measure.median(r["modrt"]) for r in runs]
        return line

    @classmethod
    def from_differences(cls, runs: Sequence[dict[str, list[float]]], a: str, b: str, **kw) -> Line:
        """A value line: the median of per-pair differences a - b (all repeats)."""
        diffs = [x - y for r in runs for x, y in zip(r[a], r[b])]
        line = cls(modrt=measure.median(diffs), metric="value", **kw)
        line.spreads["modrt"] = asdict(measure.Spread.of(diffs))
        line.samples = {k: [v for r in runs for v in r[k]] for k in runs[0]}
        line.repeat_figures = [measure.paired_difference(r[a], r[b]) for r in runs]
        return line

    @property
    def unstable(self) -> str | None:
        """Why the repeats disagree, or None. Ratios (and positive figures)
        disagree when max/min - 1 > UNSTABLE; a value with a bound, when its
        repeats fall on both sides of the bound."""
        r = self.repeat_figures
        if len(r) < 2:
            return None
        if self.metric == "value" and self.limit is not None:
            sides = {v <= self.limit for v in r}
            return None if len(sides) == 1 else "repeats fall on both sides of the bound"
        d = measure.disagreement(r)
        return None if d <= UNSTABLE else f"repeats disagree by {d:.0%}"

    def judge(self) -> Line:
        """Fills `verdict` from the figures (kept if already set)."""
        if self.verdict:
            return self
        repeats = "/".join(
            _short(v) + ("x" if self.metric == "ratio" and self.ratio is not None else "") for v in self.repeat_figures
        )
        unstable = self.unstable
        if self.limit is None:
            self.verdict = "reported" + (f"; unstable ({unstable}: {repeats})" if unstable else "")
            return self
        figure = self.ratio if self.metric == "ratio" else self.modrt
        if figure is None:
            self.verdict = "not measured"
        elif unstable:
            within = "within" if figure <= self.limit else "outside"
            self.verdict = f"unstable ({unstable}: {repeats}); median {within} the bound"
        elif figure <= self.limit:
            self.verdict = "met"
        else:
            over = (figure / self.limit - 1.0) * 100.0
            shown = f"{figure:.2f}x" if self.metric == "ratio" else f"{figure:.1f} {self.unit}"
            self.verdict = f"missed: {shown}, {over:.0f}% over the bound"
        return self


def _short(value: float) -> str:
    digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
    return f"{value:.{digits}f}"


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return f"{_short(value)} {unit}".strip()


def _with_iqr(value: float | None, spread: dict | None, unit: str, suffix: str = "") -> str:
    if value is None:
        return "—"
    shown = f"{_short(value)}{suffix}" + (f" {unit}" if unit else "")
    if spread:
        shown += f" (IQR {_short(spread['q1'])}–{_short(spread['q3'])})"
    return shown


def table(lines: list[Line]) -> str:
    out = [
        "| id | what (modrt's command) | modrt | reference | reference value | modrt/reference | target | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for ln in lines:
        what = f"{ln.what}: `{ln.command}`" if ln.command else ln.what
        out.append(
            f"| {ln.id} | {what} | {_with_iqr(ln.modrt, ln.spreads.get('modrt'), ln.unit)} | {ln.peer or '—'} | "
            f"{_with_iqr(ln.peer_value, ln.spreads.get(ln.ref), ln.unit)} | "
            f"{_with_iqr(ln.ratio, ln.spreads.get('ratio'), '', 'x')} | {ln.target} | {ln.verdict} |"
        )
    return "\n".join(out)


def details(lines: list[Line]) -> str:
    out = []
    for ln in lines:
        if not ln.notes and not ln.samples:
            continue
        out.append(f"- **{ln.id}**" + (f" against {ln.ref}" if ln.ref else ""))
        for note in ln.notes:
            out.append(f"  - {note}")
        for label, s in ln.spreads.items():
            unit = "" if label == "ratio" else f" {ln.unit}"
            name = f"modrt/{ln.ref} per pair" if label == "ratio" else label
            out.append(
                f"  - {name}: median {_short(s['median'])}{unit}, IQR {_short(s['q1'])}–{_short(s['q3'])}, "
                f"min–max {_short(s['min'])}–{_short(s['max'])} ({s['n']} samples)"
            )
        if ln.repeat_figures:
            kind = f"modrt/{ln.ref}" if ln.ratio is not None else "modrt"
            out.append(f"  - per repeat ({kind}): " + ", ".join(_short(v) for v in ln.repeat_figures))
        for label, values in ln.samples.items():
            shown = ", ".join(_short(v) for v in values)
            out.append(f"  - {label} samples ({ln.unit}, one per process, in run order): {shown}")
    return "\n".join(out)


def markdown(lines: list[Line], meta: dict[str, str], analysis: str, chart: str | None) -> str:
    parts = [
        "# Benchmarks",
        "",
        f"Generated by `{meta.get('command', 'tools/bazel run //tools/bench -- all')}` from one real run;",
        "do not edit by hand",
        "(the closing analysis comes from `tools/bench/analysis.md`).",
        "",
        "Method: every sample is one fresh process per side (a worker timing a loop: a discarded warm-up",
        "batch, then the fastest of 5 batches, the one other processes disturbed least; or a C floor doing",
        "the same; or a whole `python -c`).",
        "Sides take turns in rounds, the order rotating each round, after one discarded warm-up round;",
        "each row is measured in 3 repeats of at least 5 rounds. A figure is the median over all",
        "processes of all repeats, shown with its interquartile range (IQR); **modrt/reference is the",
        "median of the per-round (per-pair) ratios**, which is the figure to trust on this machine:",
        "its 2 cores are shared with other sessions' builds, which inflates every absolute time (load",
        "average below) but falls on both sides of a round alike. A row whose 3 repeats disagree by",
        "more than 20% (max/min of their median ratios) is reported **unstable**, never met. Floors are",
        "what the same work costs with no runtime in between (`tools/bench/floors/`).",
        "",
        "## Environment",
        "",
    ]
    parts += [f"- {k}: {v}" for k, v in meta.items() if k != "command"]
    parts += ["", "## Results", "", table(lines), ""]
    if chart:
        parts += [f"![modrt against its peers and floors]({chart})", ""]
    parts += ["## Details", "", details(lines), ""]
    if analysis.strip():
        parts += [analysis.strip(), ""]
    return "\n".join(parts)


def write(out_dir: Path, lines: list[Line], meta: dict[str, str], analysis: str, chart: str | None) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = out_dir / "BENCHMARKS.md"
    doc.write_text(markdown(lines, meta, analysis, chart))
    return doc


def dump(path: Path, lines: list[Line], meta: dict[str, str]) -> None:
    path.write_text(json.dumps({"meta": meta, "lines": [asdict(ln) for ln in lines]}, indent=1))
