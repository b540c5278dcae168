"""Whether a DSO built in the toolchain root loads on an older distribution."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

# The oldest glibc the portable build targets (RHEL 8, Debian 10).
MAX_GLIBC = (2, 28)


def glibc_problems(path: Path) -> list[str]:
    """Why `path` would not load on glibc MAX_GLIBC; empty when it would."""
    dynamic = subprocess.run(["objdump", "-T", "-p", str(path)], capture_output=True, text=True, check=True).stdout
    problems = []
    for major, minor, symbol in re.findall(r"\(?GLIBC_(\d+)\.(\d+)(?:\.\d+)?\)?\s+(\S+)$", dynamic, re.M):
        if (int(major), int(minor)) > MAX_GLIBC:
            problems.append(f"{symbol} needs GLIBC_{major}.{minor}")
    if re.search(r"NEEDED\s+libstdc\+\+", dynamic) or re.search(r"\b(GLIBCXX|CXXABI)_\d", dynamic):
        problems.append("imports libstdc++ (build with --config=portable)")
    return sorted(set(problems))
