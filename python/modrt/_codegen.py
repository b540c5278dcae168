"""Helpers shared by the codegen drivers of the hooks."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ._ffi import call
from .runtime import Payload

Source = str | bytes | Mapping[str, str | bytes]


class Arg:
    """One argument of a signature: "[const] dtype[*] [name] [= launch_tag]"."""

    __slots__ = ("dtype", "is_buffer", "name", "read_only", "launch_tag")

    def __init__(
        self, dtype: str, is_buffer: bool, name: str = "", read_only: bool = False, launch_tag: str = ""
    ) -> None:
        self.dtype = dtype
        self.is_buffer = is_buffer
        self.name = name  # empty when the signature names none
        self.read_only = read_only  # a const buffer: the kernel does not write it
        self.launch_tag = launch_tag  # a scalar filled from this launch parameter

    def __str__(self) -> str:
        text = ("const " if self.read_only else "") + self.dtype + ("*" if self.is_buffer else "")
        text += f" {self.name}" if self.name else ""
        return text + (f" = {self.launch_tag}" if self.launch_tag else "")

    def __repr__(self) -> str:
        return f"Arg({str(self)!r})"


def normalize_signature(signature: str) -> str:
    """The canonical text of a signature (the core's parser: ValueError if malformed)."""
    return call("signature.normalize", signature)


def parse_signature(signature: str) -> tuple[str, list[Arg], list[str]]:
    """(name, args, launch_tags), via the core's parser."""
    canonical = normalize_signature(signature)
    name, _, rest = canonical.partition("(")
    arg_text, _, tag_text = rest[:-1].partition(";")
    args = []
    for text in (a.strip() for a in arg_text.split(",")):
        if not text:
            continue
        decl, _, launch_tag = text.partition(" = ")
        read_only = decl.startswith("const ")
        decl = decl.removeprefix("const ")
        dtype, _, arg_name = decl.partition(" ")
        is_buffer = dtype.endswith("*")
        args.append(Arg(dtype.rstrip("*"), is_buffer, arg_name, read_only, launch_tag))
    tags = [t.strip() for t in tag_text.split(",") if t.strip()]
    return name, args, tags


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
