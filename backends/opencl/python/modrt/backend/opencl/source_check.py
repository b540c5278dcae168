"""OpenCL C checked at compile time, runtime or not (see modrt._validate).

clang's OpenCL front end (`clang -x cl -cl-std=CL1.2 -fsyntax-only` with
clang's own OpenCL headers) checks the source, the preprocessed source must
define every function as a `__kernel`, and, where the OpenCL runtime and a
device are present, a real build on that device (`opencl.check_build`, which
also creates each kernel) catches what only the device compiler sees.
Without clang the source is compiled unchecked, with a SourceNotCheckedWarning.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence

from modrt import sdk

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The OpenCL C version the OpenCL runtime builds for (clBuildProgram with no
# -cl-std builds OpenCL C 1.x on every device).
OPENCL_C_STD = "CL1.2"
# clang as an OpenCL C front end, with its own declarations of the builtins.
CLANG_FLAGS = [
    "-x",
    "cl",
    f"-cl-std={OPENCL_C_STD}",
    "--target=spir64",
    "-Xclang",
    "-fdeclare-opencl-builtins",
    "-Xclang",
    "-finclude-default-header",
]
TOOL = f"clang -x cl -cl-std={OPENCL_C_STD}"


def find_clang() -> str | None:
    return sdk.find_tool("clang", "clang-21", "clang-20", "clang-19")


def run_clang(clang: str, args: list[str], text: str, filename: str) -> tuple[int, str, str]:
    """Runs clang on `text` saved as `filename`'s base name in a scratch
    directory; messages name `filename`."""
    base = os.path.basename(filename).strip("<>") or "kernel.cl"
    with tempfile.TemporaryDirectory(prefix="modrt-check-") as tmp:
        with open(os.path.join(tmp, base), "w") as f:
            f.write(text)
        proc = subprocess.run([clang, *args, base], cwd=tmp, capture_output=True, text=True)
    messages = proc.stderr.replace(f"{base}:", f"{filename}:") if base != filename else proc.stderr
    return proc.returncode, proc.stdout, messages


def _kernel_defined(preprocessed: str, name: str) -> bool:
    pattern = r"\b(__kernel|kernel)\b[^;{}]*?\b" + re.escape(name) + r"\s*\("
    return re.search(pattern, preprocessed) is not None


def check(source: Any, functions: Sequence[str], filename: Any) -> None:
    """CompileError when `source` is not OpenCL C defining every function as a kernel."""
    text = sdk.text_of(source)
    names = sdk.function_names(functions)
    name = sdk.display_name(filename if isinstance(filename, str) else None, names[0], "cl")
    clang = find_clang()
    if clang is None:
        sdk.not_checked("opencl", "clang is not installed (it provides the OpenCL C front end)")
    else:
        rc, _, messages = run_clang(clang, [*CLANG_FLAGS, "-fsyntax-only", "-fno-color-diagnostics"], text, name)
        if rc != 0:
            raise sdk.CompileError("opencl", names, name, TOOL, messages)
        if messages.strip():
            # Shown here, once, in full: at load, PoCL's own compiler would
            # only print how many warnings it had ("1 warning generated.").
            import warnings

            warnings.warn(
                f"modrt: OpenCL C of {', '.join(names)} ({name}) compiles with warnings [{TOOL}]:\n" + messages.strip(),
                sdk.CompileWarning,
                stacklevel=5,
            )
        rc, preprocessed, messages = run_clang(clang, [*CLANG_FLAGS, "-E", "-P"], text, name)
        missing = [n for n in names if rc == 0 and not _kernel_defined(preprocessed, n)]
        if missing:
            raise sdk.CompileError(
                "opencl",
                names,
                name,
                TOOL,
                "\n".join(
                    f"{name}: error: no __kernel function '{n}' in the source, though a signature names it"
                    for n in missing
                ),
            )
    _device_build(text, names, name)


def _device_build(text: str, names: list[str], name: str) -> None:
    """Builds the program on OpenCL device 0 when the runtime and a device are here."""
    build = sdk.get_global_func("opencl.check_build", allow_missing=True)
    if build is None:
        return
    dev = sdk.device("opencl", 0)
    if not dev.exist:
        return
    log = build(0, text, " ".join(names))
    if log:
        raise sdk.CompileError("opencl", names, name, f"OpenCL build on {dev.name}", log)
