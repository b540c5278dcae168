"""Signature text, parsed by the core: what the codegen side and calls by
keyword both read, and the check of a given signature against the one a
kernel declares. Depends on nothing but the FFI (and the error it raises), so
`modrt.modules` can use it without importing the codegen helpers (which import
`modrt.modules`)."""

from __future__ import annotations

from collections.abc import Callable

from ._compile_errors import SignatureError
from ._ffi import call


class Arg:
    """One argument of a signature: "[const] dtype[*] [name] [= launch_tag]",
    or "uniform dtype [name]": a uniform block of dtype's bytes (a buffer the
    kernel reads, which takes a tensor of any element type or an array of
    exactly those bytes)."""

    __slots__ = ("dtype", "is_buffer", "name", "read_only", "launch_tag", "uniform")

    def __init__(
        self,
        dtype: str,
        is_buffer: bool,
        name: str = "",
        read_only: bool = False,
        launch_tag: str = "",
        uniform: bool = False,
    ) -> None:
        self.dtype = dtype
        self.is_buffer = is_buffer or uniform
        self.name = name  # empty when the signature names none
        self.read_only = read_only  # a const buffer: the kernel does not write it
        self.launch_tag = launch_tag  # a scalar filled from this launch parameter
        self.uniform = uniform  # a uniform block of dtype's bytes

    @property
    def kind(self) -> str:
        """The kind of argument, for messages: "uniform block", "buffer" or "scalar"."""
        return "uniform block" if self.uniform else "buffer" if self.is_buffer else "scalar"

    def __str__(self) -> str:
        if self.uniform:
            return f"uniform {self.dtype}" + (f" {self.name}" if self.name else "")
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
        uniform = decl.startswith("uniform ")
        decl = decl.removeprefix("const ").removeprefix("uniform ")
        dtype, _, arg_name = decl.partition(" ")
        is_buffer = dtype.endswith("*")
        args.append(Arg(dtype.rstrip("*"), is_buffer, arg_name, read_only, launch_tag, uniform))
    tags = [t.strip() for t in tag_text.split(",") if t.strip()]
    return name, args, tags


def dtype_bytes(dtype: str) -> int:
    """Bytes of one element of a dtype name: 16 for "uint32x4", 1 for "bool"."""
    base, _, lanes = dtype.partition("x")
    bits = "".join(c for c in base if c.isdigit())
    return (int(bits) if bits else 8) // 8 * int(lanes or 1)


def _mismatch(given: Arg, kernel: Arg, fits: Callable[[str], bool] | None = None) -> str:
    """What differs between one given argument and the kernel's, or "".
    `fits(dtype)`: whether the format binds a buffer of that dtype here
    besides the kernel's own element type (packed data)."""
    if given.kind != kernel.kind:
        return f"is a {given.kind} in the signature, a {kernel.kind} in the kernel"
    if given.uniform:
        # Any element type: a block is its bytes.
        given_bytes, kernel_bytes = dtype_bytes(given.dtype), dtype_bytes(kernel.dtype)
        if given_bytes != kernel_bytes:
            return f"is a uniform block of {given_bytes} bytes in the signature, {kernel_bytes} in the kernel"
    elif given.dtype != kernel.dtype and not (given.is_buffer and fits is not None and fits(given.dtype)):
        what = "buffer element type" if given.is_buffer else "scalar type"
        return f"has {what} {given.dtype} in the signature, {kernel.dtype} in the kernel"
    if given.name and kernel.name and given.name != kernel.name:
        return f"is named '{given.name}' in the signature, '{kernel.name}' in the kernel"
    if given.read_only and kernel.is_buffer and not kernel.read_only:
        return "is const in the signature, but the kernel may write it"
    return ""


def check_signature(kind: str, given: str, kernel: str, buffer_fits: Callable[[str, int], bool] | None = None) -> str:
    """`given` checked against the kernel's signature `kernel` (SignatureError
    showing both when they differ in argument count, buffer element types,
    scalar types, or names where both have them); returns the signature the
    module keeps: the given one, with the kernel's names and const markers
    where it has none. `buffer_fits(dtype, index)`: the reflector's rule for
    buffer element types other than the kernel's own (see register)."""
    name, given_args, tags = parse_signature(given)
    _, kernel_args, _ = parse_signature(kernel)
    if len(given_args) != len(kernel_args):
        raise SignatureError(
            kind, given, kernel, f"{len(given_args)} arguments in the signature, {len(kernel_args)} in the kernel"
        )
    for i, (g, k) in enumerate(zip(given_args, kernel_args)):
        fits = (lambda dtype, i=i: buffer_fits(dtype, i)) if buffer_fits is not None else None
        why = _mismatch(g, k, fits)
        if why:
            raise SignatureError(kind, given, kernel, f"argument {i} ('{g.name or k.name}') {why}")
        g.name = g.name or k.name
        g.read_only = g.read_only or k.read_only
    if "dyn_shared_mem" in parse_signature(kernel)[2] and "dyn_shared_mem" not in tags:
        raise SignatureError(
            kind, given, kernel, "the kernel takes dynamic shared memory; the signature has no dyn_shared_mem"
        )
    return f"{name}({', '.join(str(a) for a in given_args)}{'; ' if tags else ''}{', '.join(tags)})"
