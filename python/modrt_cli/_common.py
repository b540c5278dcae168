"""Helpers shared by the commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any


def import_modrt(runtimes: bool = True) -> Any:
    """Imports modrt; with runtimes=False only libmodrt_runtime.so is loaded
    (no compiler, no backend hooks or runtime DSOs)."""
    if not runtimes:
        os.environ["MODRT_RUNTIME_ONLY"] = "1"
        os.environ["MODRT_DEVICE_BACKEND_AUTOLOAD"] = "0"
    import modrt

    return modrt


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table, columns padded to their widest cell."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# Tables of `modrt info` and `modrt demo` fit this many columns.
TABLE_WIDTH = 100
ELLIPSIS = "..."


def fitted_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    flexible: Sequence[int],
    verbose: bool = False,
    width: int = TABLE_WIDTH,
) -> tuple[str, bool]:
    """A table no wider than `width`: the `flexible` columns (indices) give up
    room in the order given, each down to its header's width or 16. A cell longer than its column is shortened with
    "..." or, when `verbose`, wrapped onto continuation lines in full.
    Returns the table and whether any cell was shortened."""
    import textwrap

    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for i in flexible:
        excess = sum(widths) + 2 * (len(widths) - 1) - width
        if excess <= 0:
            break
        widths[i] = max(widths[i] - excess, min(widths[i], max(len(cells[0][i]), 16)))
    shortened = False
    lines = []
    for r, row in enumerate(cells):
        parts: list[list[str]] = []
        for i, cell in enumerate(row):
            if len(cell) <= widths[i]:
                parts.append([cell])
            elif verbose:
                parts.append(textwrap.wrap(cell, widths[i], break_on_hyphens=False) or [""])
            else:
                shortened = True
                parts.append([cell[: widths[i] - len(ELLIPSIS)].rstrip() + ELLIPSIS])
        for k in range(max(len(p) for p in parts)):
            lines.append("  ".join((p[k] if k < len(p) else "").ljust(w) for p, w in zip(parts, widths)).rstrip())
        if r == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines), shortened


def wrapped(text: str, width: int = TABLE_WIDTH) -> str:
    """`text` wrapped to `width` columns, continuation lines indented."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False))


def human_size(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def fail(message: str, code: int = 1) -> int:
    print(f"modrt: {message}", file=sys.stderr)
    return code


def read_source(path: str) -> str | bytes:
    """A source file: text when it is UTF-8, else its bytes (SPIR-V, a Hexagon .so)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data
