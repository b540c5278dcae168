"""PTX checked at compile time by ptxas, so a cross-compile never exports PTX
that no GPU will load.

ptxas assembles PTX without a GPU or a driver. It is found on PATH (a CUDA
toolkit), else in the nvidia-cuda-nvcc-cu12 wheel (nvidia/cuda_nvcc/bin/ptxas)
under one of the package roots: `pip install 'modrt-cuda[ptxas]'` installs it.
Without it, PTX is taken unchecked with a SourceNotCheckedWarning saying so.
ptxas assembles for the arch of the PTX's own `.target` line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from modrt import sdk

# The wheel's ptxas, relative to a package root.
WHEEL_PTXAS = os.path.join("nvidia", "cuda_nvcc", "bin", "ptxas")
INSTALL_HINT = "pip install 'modrt-cuda[ptxas]' (the nvidia-cuda-nvcc-cu12 wheel) or put a CUDA toolkit's ptxas on PATH"


def find_ptxas(package_roots: Sequence[str]) -> str | None:
    """ptxas on PATH, else the nvidia-cuda-nvcc wheel's under `package_roots`; None when neither."""
    found = sdk.find_tool("ptxas")
    if found is not None:
        return found
    for root in package_roots:
        candidate = os.path.join(root, WHEEL_PTXAS)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def ptx_arch(ptx: str) -> str | None:
    """The arch of the PTX's `.target` line (sm_75, sm_90a, ...), or None."""
    m = re.search(r"^\s*\.target\s+(sm_\w+)", ptx, re.M)
    return m.group(1) if m else None


def check(ptx: str, functions: Sequence[str], package_roots: Sequence[str]) -> None:
    """Assembles `ptx` with ptxas: CompileError with its messages when it does
    not assemble; a SourceNotCheckedWarning when there is no ptxas here."""
    ptxas = find_ptxas(package_roots)
    if ptxas is None:
        sdk.not_checked("cuda", f"ptxas is not installed here: {INSTALL_HINT}", language="PTX")
        return
    arch = ptx_arch(ptx)
    arch_option = [f"-arch={arch}"] if arch else []
    try:
        sdk.run_tool([ptxas, *arch_option, "-o", "kernel.cubin", "kernel.ptx"], {"kernel.ptx": ptx}, "kernel.cubin")
    except sdk.ToolError as e:
        raise sdk.tool_failed("cuda", functions, "kernel.ptx", e, language="PTX") from None
