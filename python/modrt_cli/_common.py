"""Helpers shared by the commands."""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence


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
