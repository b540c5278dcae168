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
    widths = [max(display_width(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(_pad(c, w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# Tables of `modrt info` and `modrt demo` fit this many columns.
TABLE_WIDTH = 100
ELLIPSIS = "..."


def display_width(text: str) -> int:
    """Columns `text` takes on a terminal: East Asian wide characters take
    two, combining marks none (device names come from drivers, in any script)."""
    import unicodedata

    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def _cut(text: str, width: int) -> str:
    """The longest prefix of `text` that fits `width` columns."""
    out, used = [], 0
    for ch in text:
        w = display_width(ch)
        if used + w > width:
            break
        out.append(ch)
        used += w
    return "".join(out)


def _wrap(text: str, width: int) -> list[str]:
    """`text` wrapped at spaces to `width` columns; a word wider than that is split."""
    import textwrap

    lines: list[str] = []
    for line in textwrap.wrap(text, width, break_on_hyphens=False) or [""]:
        while display_width(line) > width:
            head = _cut(line, width)
            lines.append(head)
            line = line[len(head) :]
        lines.append(line)
    return lines


def fitted_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    flexible: Sequence[int],
    verbose: bool = False,
    width: int = TABLE_WIDTH,
) -> tuple[str, bool]:
    """A table no wider than `width` where it can be: the `flexible` columns
    (indices) give up room in the order given, each down to its header's width
    or 16. A cell wider than its column is shortened with "..." or, when
    `verbose`, wrapped onto continuation lines in full. Widths are display
    columns, so wide (CJK) and combining characters line up.
    Returns the table and whether any cell was shortened."""
    if any(len(row) != len(headers) for row in rows):
        raise ValueError(f"every row needs {len(headers)} cells, one per header {list(headers)}")
    if any(not -len(headers) <= i < len(headers) for i in flexible):
        raise ValueError(f"flexible columns {list(flexible)} are not among the {len(headers)} columns")
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(display_width(r[i]) for r in cells) for i in range(len(headers))]
    for i in flexible:
        excess = sum(widths) + 2 * (len(widths) - 1) - width
        if excess <= 0:
            break
        floor = max(display_width(cells[0][i]), 16, len(ELLIPSIS) + 1)
        widths[i] = max(widths[i] - excess, min(widths[i], floor))
    shortened = False
    lines = []
    for r, row in enumerate(cells):
        parts: list[list[str]] = []
        for i, cell in enumerate(row):
            if display_width(cell) <= widths[i]:
                parts.append([cell])
            elif verbose:
                parts.append(_wrap(cell, widths[i]))
            else:
                shortened = True
                parts.append([_cut(cell, widths[i] - len(ELLIPSIS)).rstrip() + ELLIPSIS])
        for k in range(max(len(p) for p in parts)):
            lines.append("  ".join(_pad(p[k] if k < len(p) else "", w) for p, w in zip(parts, widths)).rstrip())
        if r == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines), shortened


def wrapped(text: str, width: int = TABLE_WIDTH) -> str:
    """`text` wrapped to `width` display columns, continuation lines indented."""
    first, *rest = _wrap(text, width)
    return "\n".join([first, *("  " + line for line in _wrap(" ".join(rest), width - 2) if rest)])


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
