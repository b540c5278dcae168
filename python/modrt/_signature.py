"""Signature text, parsed by the core: what the codegen side and calls by
keyword both read. Depends on nothing but the FFI, so `modrt.runtime` can use
it without importing the codegen helpers (which import `modrt.runtime`)."""

from __future__ import annotations

from ._ffi import call


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
