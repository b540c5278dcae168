"""Compile-time checks of kernel source, run by `modrt.compile` whatever runtime is loaded.

A cross-compile must not carry a broken kernel to the machine that runs it, so
source that a codegen driver does not itself compile is checked by its
backend's `check` (the `check` field of its modrt.backend record), which lives
in the backend's own folder: OpenCL C with clang's OpenCL front end (and a
build on a device where one is present: modrt.backend.opencl.source_check),
WGSL with naga through wgpu-native (modrt.backend.webgpu.source_check); Metal
Shading Language is not checkable off macOS. GLSL (glslang), CUDA C++ (nvcc /
NVRTC) and HIP (hipcc) are compiled by their drivers, which raise the same
CompileError through `tool_failed`.

A failure raises CompileError (a ValueError) before any module exists, so
nothing is exported. Source that cannot be checked here is compiled all the
same, with a SourceNotCheckedWarning (`not_checked`) saying why.
`modrt.compile(..., validate=False)` (`modrt compile --no-validate`) skips the
checks, for source meant for a newer device compiler than the one here.

This module is what every check shares (the switch, the file names messages
use); it is cheap to import, so hooks reach it through modrt.sdk.
"""

from __future__ import annotations

import contextvars
import os
import warnings
from collections.abc import Mapping, Sequence

from . import _registry
from ._compile_errors import CompileError, SourceNotCheckedWarning
from ._signature import parse_signature

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ENABLED: contextvars.ContextVar[bool] = contextvars.ContextVar("modrt_validate", default=True)
_FILENAME: contextvars.ContextVar[Any] = contextvars.ContextVar("modrt_validate_filename", default=None)


def enabled() -> bool:
    """Whether the current `modrt.compile` checks source (drivers ask this)."""
    return _ENABLED.get()


class validating:
    """`with validating(on, filename):` the checks' switch and the source's
    file name(s) for one `modrt.compile`."""

    def __init__(self, on: bool, filename: Any = None) -> None:
        self._on, self._filename = on, filename

    def __enter__(self) -> None:
        self._tokens = (_ENABLED.set(self._on), _FILENAME.set(self._filename))

    def __exit__(self, *_: Any) -> None:
        _ENABLED.reset(self._tokens[0])
        _FILENAME.reset(self._tokens[1])


def tool_failed(
    kind: str, functions: Sequence[str], input_name: str, error: Exception, language: str | None = None
) -> CompileError:
    """The CompileError for a compiler a driver ran (run_tool's ToolError, or
    NVRTC's) on `input_name`: its messages name the user's file instead.
    `language` names the source's language where the target takes several."""
    names = function_names(functions)
    ext = os.path.splitext(input_name)[1].lstrip(".")
    shown = display_name(_FILENAME.get(), names[0], ext)
    tool = getattr(error, "tool", "") or kind
    output = getattr(error, "output", None) or str(error)
    return CompileError(kind, names, shown, tool, output.replace(input_name, shown), language)


def not_checked(target: str, reason: str, language: str | None = None) -> None:
    """Warns (SourceNotCheckedWarning) that `target`'s source (in `language`,
    default the target's own) is compiled unchecked, and why."""
    warnings.warn(
        f"modrt: {language or _registry.language_of(target)} source is not checked at compile time: {reason}",
        SourceNotCheckedWarning,
        stacklevel=5,
    )


def display_name(filename: None | str | Mapping[str, str], function: str, ext: str) -> str:
    """The name messages use for a function's source."""
    if filename is None:
        filename = _FILENAME.get()
    if isinstance(filename, Mapping):
        filename = filename.get(function)
    return filename or f"<{function}.{ext}>"


def check(kind: str, source: Any, functions: Sequence[str], filename: Any) -> None:
    """Runs the source check of target `kind`'s backend, when it has one and checks are on."""
    if not enabled():
        return
    record = _registry.get(kind)
    if record is not None and record.check is not None:
        record.check(source, functions, filename)


def function_names(functions: Sequence[str]) -> list[str]:
    """The function names of signatures (or of bare names)."""
    return [parse_signature(f)[0] if "(" in f else f for f in functions]
