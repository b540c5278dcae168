"""`python chart.py results.json out.png`: the chart of docs/BENCHMARKS.md.

Runs in the bench venv (matplotlib). Left: modrt/reference ratios (median of
the per-pair ratios) with their interquartile range (thick) and min-max
(thin), and the target bounds; right: the absolute figures that have a bound
of their own (autoload), with their spread.
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

COLORS = {"met": "#55a868", "missed": "#c44e52", "unstable": "#dd8452", "reported": "#4c72b0"}


def color(line: dict) -> str:
    verdict = line["verdict"]
    for key in ("met", "missed", "unstable"):
        if verdict.startswith(key):
            return COLORS[key]
    return COLORS["reported"]


def main() -> None:
    data = json.load(open(sys.argv[1]))
    lines = data["lines"]
    ratios = [ln for ln in lines if ln["ratio"] is not None]
    absolute = [ln for ln in lines if ln["metric"] == "value" and ln["limit"] is not None and ln["modrt"] is not None]
    fig, axes = plt.subplots(
        1, 2, figsize=(12, 0.45 * max(len(ratios), 3) + 1.8), gridspec_kw={"width_ratios": [3.2, 1.2]}
    )
    ax = axes[0]
    labels = []
    for ln in ratios:
        higher = " (GB/s)" if ln.get("higher_is_better") else ""
        labels.append(f"{ln['id']} vs {ln['ref']}{higher}")
    ys = list(range(len(ratios)))
    lo_all, hi_all = [], []
    for y, ln in zip(ys, ratios):
        s = ln["spreads"].get("ratio")
        c = color(ln)
        ax.plot([ln["ratio"]], [y], "o", color=c, markersize=6, zorder=3)
        if s:
            ax.plot([s["min"], s["max"]], [y, y], color=c, linewidth=1, zorder=2)
            ax.plot([s["q1"], s["q3"]], [y, y], color=c, linewidth=5, alpha=0.6, zorder=2)
            lo_all.append(s["min"])
            hi_all.append(s["max"])
        ax.text(s["max"] if s else ln["ratio"], y, f"  {ln['ratio']:.2f}x", va="center", fontsize=7)
        if ln["metric"] == "ratio" and ln["limit"] is not None:
            ax.plot([ln["limit"]] * 2, [y - 0.4, y + 0.4], color="black", linewidth=2)
            lo_all.append(ln["limit"])
            hi_all.append(ln["limit"])
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.set_yticks(ys, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    if lo_all:
        ax.set_xlim(min(lo_all) / 1.5, max(hi_all) * 2.5)
    ax.set_xlabel(
        "modrt / reference: median of per-pair ratios (dot), IQR (thick), min-max (thin); black tick = bound",
        fontsize=7,
    )
    ax.set_title(
        "modrt against peers and floors (green met, red missed, orange unstable, blue reported; "
        "GB/s rows: higher is better)",
        fontsize=8,
    )

    ax = axes[1]
    names = [f"{ln['id']} ({ln['unit']})" for ln in absolute]
    ys = list(range(len(absolute)))
    for y, ln in zip(ys, absolute):
        s = ln["spreads"].get("modrt")
        c = color(ln)
        ax.plot([ln["modrt"]], [y], "o", color=c, zorder=3)
        if s:
            ax.plot([s["min"], s["max"]], [y, y], color=c, linewidth=1)
            ax.plot([s["q1"], s["q3"]], [y, y], color=c, linewidth=5, alpha=0.6)
        ax.text(ln["modrt"], y - 0.3, f"{ln['modrt']:.1f}", ha="center", fontsize=7)
        ax.plot([ln["limit"]] * 2, [y - 0.4, y + 0.4], color="black", linewidth=2)
    ax.set_yticks(ys, names, fontsize=7)
    ax.set_ylim(-1, max(len(absolute), 3))
    ax.invert_yaxis()
    ax.axvline(0.0, color="grey", linestyle=":", linewidth=1)
    ax.set_title("absolute figures with a bound", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
