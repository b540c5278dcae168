"""Given signatures checked against the ones read from the kernel (reflection).

A reflector reads canonical signatures from a kernel's source, such as
"vadd(const float32* a, float32* b, int32 n; blockIdx.x, threadIdx.x)". A
signature the user gives must agree with the kernel's on the number of
arguments, which are buffers, and each element and scalar type; names and
`const` are compared when the given signature has them. Launch tags are the
caller's choice (how the launch is shaped), except that a kernel that takes
dynamic shared memory needs `dyn_shared_mem`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_ARG = re.compile(r"^(const\s+)?([A-Za-z_]\w*)\s*(\*)?\s*([A-Za-z_]\w*)?\s*(?:=\s*([\w.]+))?$")


@dataclass
class Arg:
    dtype: str
    is_buffer: bool
    name: str
    read_only: bool

    def spelled(self) -> str:
        return ("const " if self.read_only else "") + self.dtype + ("*" if self.is_buffer else "")


@dataclass
class Signature:
    name: str
    args: list[Arg]
    tags: list[str]
    text: str


def parse(signature: str) -> Signature:
    """A signature as text: `name(args; tags)`, arguments optionally named and const."""
    text = signature.strip()
    name, _, rest = text.partition("(")
    arg_text, _, tag_text = rest.rstrip().removesuffix(")").partition(";")
    args = []
    for a in (a.strip() for a in arg_text.split(",")):
        if not a:
            continue
        m = _ARG.match(a)
        if m is None:
            raise ValueError(f"bad argument '{a}' in signature '{signature}'")
        args.append(Arg(m.group(2), bool(m.group(3)), m.group(4) or "", bool(m.group(1))))
    return Signature(name.strip(), args, [t.strip() for t in tag_text.split(",") if t.strip()], text)


class SignatureMismatch(ValueError):
    """A given signature that disagrees with what the kernel declares."""


def _describe(arg: Arg) -> str:
    return f"a buffer of {arg.dtype}" if arg.is_buffer else f"a scalar of {arg.dtype}"


def mismatches(kernel: Signature, given: Signature) -> list[str]:
    """What `given` says that `kernel` does not, one line each ([] when they agree)."""
    problems = []
    if len(kernel.args) != len(given.args):
        names = ", ".join(a.name or a.spelled() for a in kernel.args) or "none"
        problems.append(
            f"the kernel takes {len(kernel.args)} arguments ({names}); the signature gives {len(given.args)}"
        )
    for i, (k, g) in enumerate(zip(kernel.args, given.args)):
        label = f"argument {i}" + (f" ({k.name})" if k.name else "")
        if k.is_buffer != g.is_buffer or k.dtype != g.dtype:
            problems.append(f"{label}: the kernel declares {_describe(k)}, the signature says {_describe(g)}")
        if g.name and k.name and g.name != k.name:
            problems.append(f"{label}: the kernel names it '{k.name}', the signature '{g.name}'")
        if g.read_only and not k.read_only:
            problems.append(f"{label}: the signature marks it const, the kernel may write it")
    if "dyn_shared_mem" in kernel.tags and "dyn_shared_mem" not in given.tags:
        problems.append("the kernel takes dynamic shared memory; the signature has no dyn_shared_mem launch tag")
    return problems


def check(language: str, reflected: Sequence[str], given: Sequence[str]) -> None:
    """Raises SignatureMismatch showing both sides when a given signature
    disagrees with the kernel of its name; ValueError when the source has no
    kernel of a given name (naming the kernels it has)."""
    kernels: Mapping[str, Signature] = {s.name: s for s in map(parse, reflected)}
    for text in given:
        sig = parse(text)
        kernel = kernels.get(sig.name)
        if kernel is None:
            raise SignatureMismatch(
                f"the {language} source has no kernel '{sig.name}', though a signature names it; "
                f"its kernels: {', '.join(kernels) or 'none'}"
            )
        problems = mismatches(kernel, sig)
        if problems:
            lines = "\n".join(f"  {p}" for p in problems)
            raise SignatureMismatch(
                f"the signature of '{sig.name}' does not match the {language} kernel:\n"
                f"  kernel:    {kernel.text}\n  signature: {sig.text}\n{lines}"
            )
