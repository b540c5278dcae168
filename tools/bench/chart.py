"""`python chart.py results.json out.png`: the chart of docs/BENCHMARKS.md.

Runs in the bench venv (matplotlib). Left: modrt/peer ratios with their
bounds; right: the absolute figures that have a bound of their own (autoload).
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    data = json.load(open(sys.argv[1]))
    lines = data["lines"]
    ratios = [ln for ln in lines if ln["ratio"] is not None]
    absolute = [ln for ln in lines if ln["metric"] == "value" and ln["limit"] is not None and ln["modrt"] is not None]
    fig, axes = plt.subplots(
        1, 2, figsize=(11, 0.55 * max(len(ratios), 3) + 1.6), gridspec_kw={"width_ratios": [3, 1.4]}
    )
    ax = axes[0]
    labels = [f"{ln['id']} vs {ln['peer'].split(':')[0]}" for ln in ratios]
    ys = range(len(ratios))
    colors = []
    for ln in ratios:
        bound = ln["limit"] if ln["metric"] == "ratio" else None
        colors.append("#4c72b0" if bound is None else "#55a868" if ln["ratio"] <= bound else "#c44e52")
    ax.barh(list(ys), [ln["ratio"] for ln in ratios], color=colors)
    for y, ln in zip(ys, ratios):
        ax.text(ln["ratio"], y, f" {ln['ratio']:.2f}x", va="center", fontsize=8)
        if ln["metric"] == "ratio" and ln["limit"] is not None:
            ax.plot([ln["limit"]] * 2, [y - 0.4, y + 0.4], color="black", linewidth=2)
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.set_yticks(list(ys), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(0.03, 1.6)
    ax.set_xlabel("modrt / peer (median of paired ratios; log scale; black tick = target bound)")
    ax.set_title("modrt against its peers (green: target met, red: missed)", fontsize=9)

    ax = axes[1]
    names = [f"{ln['id']} ({ln['unit']})" for ln in absolute]
    ys = range(len(absolute))
    ax.barh(
        list(ys),
        [ln["modrt"] for ln in absolute],
        color=["#55a868" if ln["limit"] is None or ln["modrt"] <= ln["limit"] else "#c44e52" for ln in absolute],
    )
    for y, ln in zip(ys, absolute):
        ax.text(ln["modrt"], y, f" {ln['modrt']:.1f}", va="center", fontsize=8)
        if ln["limit"] is not None:
            ax.plot([ln["limit"]] * 2, [y - 0.4, y + 0.4], color="black", linewidth=2)
    ax.set_yticks(list(ys), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_title("absolute figures with a bound", fontsize=9)
    ax.set_xlim(0, max([ln["limit"] * 1.4 for ln in absolute] + [ln["modrt"] * 1.2 for ln in absolute] + [1.0]))
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
