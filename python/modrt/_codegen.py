"""Helpers shared by the codegen drivers of the hooks."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

# Re-exported: the hooks read signatures through this module.
from ._signature import Arg as Arg
from ._signature import normalize_signature as normalize_signature
from ._signature import parse_signature
from .modules import Payload

Source = str | bytes | Mapping[str, str | bytes]


def text_of(source: str | bytes) -> str:
    if isinstance(source, Mapping):
        raise TypeError("this target takes one source text, not one per function")
    return source.decode("utf-8") if isinstance(source, bytes) else source


def per_function(source: Source, functions: Sequence[str]) -> dict[str, str | bytes]:
    """Sources of multi-shader targets: a mapping {function: source} naming
    every function, or one source shared by all of them."""
    names = [parse_signature(f)[0] for f in functions]
    if not isinstance(source, Mapping):
        return {n: source for n in names}
    missing = [n for n in names if n not in source]
    extra = [n for n in source if n not in names]
    if missing or extra:
        raise ValueError(
            f"per-function sources must match the signatures: missing {missing or 'none'}, "
            f"without a signature {extra or 'none'}"
        )
    return {n: source[n] for n in names}


def text_shaders(source: Source, functions: Sequence[str], fmt: str) -> Payload:
    """A multi-shader payload of text shaders (MSL, WGSL), one per function.
    The shaders are the source: inspect_source(fmt) lists them, so they are not stored twice."""
    shaders = per_function(source, functions)
    return Payload.create(
        "multi-shader", fmt, functions, shaders={n: t.encode() if isinstance(t, str) else t for n, t in shaders.items()}
    )


def find_tool(*names: str) -> str | None:
    """The first of `names` found on PATH, or None."""
    import shutil  # imported on use: it costs milliseconds at `import modrt`

    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


class ToolError(ValueError):
    """An external compiler failed: `tool` is its name, `output` what it printed."""

    def __init__(self, tool: str, command: Sequence[str], output: str) -> None:
        self.tool = tool
        self.output = output
        super().__init__(f"{tool} failed ({' '.join(command)}):\n{output}")


def run_tool(cmd: list[str], inputs: Mapping[str, str | bytes], output: str) -> bytes:
    """Runs an external compiler in a scratch directory holding `inputs`;
    returns the bytes of `output`. Failures raise ToolError (a ValueError) with its output."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="modrt-codegen-") as tmp:
        for name, data in inputs.items():
            mode = "wb" if isinstance(data, bytes) else "w"
            with open(os.path.join(tmp, name), mode) as f:
                f.write(data)
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        except FileNotFoundError:
            raise RuntimeError(f"'{cmd[0]}' is not installed") from None
        if proc.returncode != 0:
            raise ToolError(os.path.basename(cmd[0]), cmd, f"{proc.stderr}{proc.stdout}")
        with open(os.path.join(tmp, output), "rb") as f:
            return f.read()
