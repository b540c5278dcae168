"""What a CUDA kernel says about its own interface (docs/formats/cuda.md).

Two readers, one per thing the kernel gives:

- CUDA C++ source (`reflect`): every `__global__` function's name and
  parameters (element type, `const`, name), and the launch dimensions the
  source uses. No compiler is needed, so it runs before NVRTC does, and where
  there is no NVRTC at all.
- PTX (`ptx_entries`), what NVRTC produced or what the user gives: each
  `.entry` and the size of each `.param`. After NVRTC, the PTX is the authority
  on which entry points exist and under which (C++-mangled) names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# CUDA C++ scalar types (after `const`, `__restrict__` and the like are
# removed) and the dtype each is, as modrt names it.
SCALAR_TYPES = {
    "bool": "bool",
    "char": "int8",
    "signed char": "int8",
    "int8_t": "int8",
    "unsigned char": "uint8",
    "uchar": "uint8",
    "uint8_t": "uint8",
    "short": "int16",
    "signed short": "int16",
    "int16_t": "int16",
    "unsigned short": "uint16",
    "ushort": "uint16",
    "uint16_t": "uint16",
    "int": "int32",
    "signed": "int32",
    "signed int": "int32",
    "int32_t": "int32",
    "unsigned": "uint32",
    "unsigned int": "uint32",
    "uint": "uint32",
    "uint32_t": "uint32",
    "long": "int64",
    "long long": "int64",
    "long long int": "int64",
    "int64_t": "int64",
    "unsigned long": "uint64",
    "unsigned long long": "uint64",
    "unsigned long long int": "uint64",
    "uint64_t": "uint64",
    "size_t": "uint64",
    "half": "float16",
    "__half": "float16",
    "nv_bfloat16": "bfloat16",
    "__nv_bfloat16": "bfloat16",
    "float": "float32",
    "double": "float64",
}
# CUDA's vector types: float4 is float32x4, and so on.
VECTOR_BASES = {
    "char": "int8",
    "uchar": "uint8",
    "short": "int16",
    "ushort": "uint16",
    "int": "int32",
    "uint": "uint32",
    "long": "int64",
    "ulong": "uint64",
    "longlong": "int64",
    "ulonglong": "uint64",
    "float": "float32",
    "double": "float64",
    "half": "float16",
}
# Words in a parameter declaration that say nothing about its type here.
_IGNORED_WORDS = {"__restrict__", "__restrict", "restrict", "volatile", "__grid_constant__", "struct"}
_NAMESPACES = ("cuda::std::", "std::", "::")

DTYPE_BYTES = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "float16": 2,
    "bfloat16": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
}


class ReflectionError(ValueError):
    """The kernel's interface could not be read (the message says which parameter and why)."""


@dataclass
class Param:
    dtype: str  # "float32", "float32x4"
    is_buffer: bool
    name: str = ""
    read_only: bool = False

    def spelled(self) -> str:
        text = ("const " if self.read_only else "") + self.dtype + ("*" if self.is_buffer else "")
        return f"{text} {self.name}" if self.name else text

    @property
    def nbytes(self) -> int:
        base, _, lanes = self.dtype.partition("x")
        return 8 if self.is_buffer else DTYPE_BYTES[base] * int(lanes or 1)


@dataclass
class Kernel:
    name: str
    params: list[Param]
    launch_tags: list[str]
    extern_c: bool = True

    def signature(self) -> str:
        """The canonical signature: "k(const float32* a, float32* b, int32 n; blockIdx.x, threadIdx.x)"."""
        args = ", ".join(p.spelled() for p in self.params)
        tags = f"; {', '.join(self.launch_tags)}" if self.launch_tags else ""
        return f"{self.name}({args}{tags})"


def strip_comments(text: str) -> str:
    """`text` without // and /* */ comments (string literals kept), lines kept in place."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _matching(text: str, start: int, open_c: str, close_c: str) -> int:
    """Index of the bracket closing the one at `start`, or -1."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_c:
            depth += 1
        elif text[i] == close_c:
            depth -= 1
            if depth == 0:
                return i
    return -1


def split_top_level(text: str) -> list[str]:
    """`text` split at the commas outside any bracket."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([<{":
            depth += 1
        elif c in ")]>}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _scalar_dtype(words: list[str]) -> str | None:
    spelled = " ".join(words)
    for prefix in _NAMESPACES:
        spelled = spelled.replace(prefix, "")
    if spelled in SCALAR_TYPES:
        return SCALAR_TYPES[spelled]
    vector = re.fullmatch(r"([a-z]+)([1-4])", spelled)
    if vector and vector.group(1) in VECTOR_BASES:
        lanes = int(vector.group(2))
        base = VECTOR_BASES[vector.group(1)]
        return base if lanes == 1 else f"{base}x{lanes}"
    return None


def parse_param(kernel: str, index: int, decl: str) -> Param:
    """One CUDA C++ parameter declaration, e.g. `const half* __restrict__ x`."""
    if "&" in decl or "[" in decl:
        raise ReflectionError(f"kernel '{kernel}': parameter {index} `{decl}` is not a pointer or a scalar")
    pointer = decl.count("*")
    if pointer > 1:
        raise ReflectionError(f"kernel '{kernel}': parameter {index} `{decl}` is a pointer to a pointer")
    before, _, after = decl.partition("*")
    words = [w for w in re.findall(r"[A-Za-z_][\w:]*", before) if w not in _IGNORED_WORDS]
    after_words = [w for w in re.findall(r"[A-Za-z_]\w*", after) if w not in _IGNORED_WORDS and w != "const"]
    const = "const" in words
    words = [w for w in words if w != "const"]
    name = ""
    if pointer:
        name = after_words[-1] if after_words else ""
    elif len(words) > 1 and _scalar_dtype(words) is None:
        name, words = words[-1], words[:-1]
    dtype = _scalar_dtype(words)
    if dtype is None:
        raise ReflectionError(
            f"kernel '{kernel}': cannot read the type of parameter {index} `{decl}` "
            "(modrt reads CUDA's scalar, vector, half and bfloat16 types and pointers to them)"
        )
    return Param(dtype, bool(pointer), name, read_only=const and bool(pointer))


_GLOBAL = re.compile(r"\b__global__\b")


def _extern_c_ranges(text: str) -> list[tuple[int, int]]:
    ranges = []
    for m in re.finditer(r'\bextern\s+"C"\s*\{', text):
        end = _matching(text, m.end() - 1, "{", "}")
        ranges.append((m.end(), len(text) if end < 0 else end))
    return ranges


def launch_tags(text: str, shared_arrays: Sequence[str] = ()) -> list[str]:
    """The launch parameters a kernel's text uses: blockIdx.* and threadIdx.*
    up to the highest dimension any of blockIdx, threadIdx, blockDim, gridDim
    is read in (x at least), then dyn_shared_mem when it declares an extern
    __shared__ array or uses one of `shared_arrays` (those at file scope)."""
    dims = [
        "xyz".index(m.group(1))
        for m in re.finditer(r"\b(?:blockIdx|threadIdx|blockDim|gridDim)\s*\.\s*([xyz])\b", text)
    ]
    n = max(dims, default=0) + 1
    tags = [f"blockIdx.{d}" for d in "xyz"[:n]] + [f"threadIdx.{d}" for d in "xyz"[:n]]
    uses_file_scope = any(re.search(rf"\b{re.escape(a)}\b", text) for a in shared_arrays)
    if uses_file_scope or re.search(r"\bextern\s+__shared__\b|\b__shared__\s+extern\b", text):
        tags.append("dyn_shared_mem")
    return tags


def strip_directives(text: str) -> str:
    """`text` with its preprocessor lines (and their continuations) blanked."""
    lines = text.split("\n")
    continued = False
    for i, line in enumerate(lines):
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.rstrip().endswith("\\")
        if directive:
            lines[i] = ""
    return "\n".join(lines)


def scan_kernels(source: str, read_params: bool = True) -> list[Kernel]:
    """Every `__global__` function written out in CUDA C++ `source`, in order
    (a declaration and its definition count once). Kernels that a macro
    expands to are not seen here; NVRTC's PTX still lists them. With
    `read_params` False, only names and extern "C" are read (params stay empty)."""
    text = strip_directives(strip_comments(source))
    externs = _extern_c_ranges(text)
    # File-scope extern __shared__ arrays (dynamic shared memory), by name.
    shared_arrays = [
        m.group(1)
        for m in re.finditer(r"(?:\bextern\s+__shared__|\b__shared__\s+extern)\b[^;{}]*?(\w+)\s*\[\s*\]", text)
    ]
    kernels: dict[str, Kernel] = {}
    overloaded: set[str] = set()
    for m in _GLOBAL.finditer(text):
        # The statement's start: after the previous ; } or { (a template<> before it is part of it).
        start = max(text.rfind(c, 0, m.start()) for c in ";}{") + 1
        head = text[start : m.start()]
        i = m.end()
        # Skip attributes such as __launch_bounds__(256) and the return type up to the name's "(".
        name = ""
        while i < len(text):
            word = re.match(r"\s*([A-Za-z_]\w*)", text[i:])
            if not word:
                break
            i += word.end()
            after = re.match(r"\s*\(", text[i:])
            if after and word.group(1) in ("__launch_bounds__", "__maxnreg__", "__cluster_dims__", "__align__"):
                i = _matching(text, i + after.end() - 1, "(", ")") + 1
                continue
            if after:
                name = word.group(1)
                i += after.end() - 1
                break
        if not name:
            continue
        close = _matching(text, i, "(", ")")
        if close < 0:
            continue
        body = re.match(r"\s*([;{])", text[close + 1 :])
        body_end = _matching(text, close + 1 + body.end() - 1, "{", "}") if body and body.group(1) == "{" else close
        tags = launch_tags(text[m.start() : body_end + 1], shared_arrays)
        extern_c = bool(re.search(r'\bextern\s+"C"', head)) or any(a <= m.start() < b for a, b in externs)
        templated = bool(re.search(r"\btemplate\s*<", head))
        decls = split_top_level(text[i + 1 : close])
        if decls == ["void"]:
            decls = []
        if templated:
            continue  # a template is no entry point until instantiated: NVRTC's PTX names those
        params = [parse_param(name, k, d) for k, d in enumerate(decls)] if read_params else []
        kernel = Kernel(name, params, tags, extern_c)
        if name in kernels and kernels[name].params != kernel.params:
            overloaded.add(name)
        if name not in kernels or (body and body.group(1) == "{"):
            kernels[name] = kernel
    if overloaded:
        raise Overloaded(sorted(overloaded))
    return list(kernels.values())


class Overloaded(ReflectionError):
    """Several kernels of one name (C++ overloads): which one a name means is NVRTC's PTX to say."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        super().__init__(f"overloaded kernels: {', '.join(names)}")


def reflect(source: str) -> list[str] | None:
    """The canonical signature of every kernel in CUDA C++ `source`; None when
    a preprocessor line declares one (a macro's kernels are NVRTC's to see), a
    name is overloaded, or a parameter's type is not one modrt reads: then
    signatures are given, and checked against the PTX."""
    text = strip_comments(source)
    if len(_GLOBAL.findall(text)) != len(_GLOBAL.findall(strip_directives(text))):
        return None
    try:
        return [k.signature() for k in scan_kernels(source)]
    except ReflectionError:
        # Overloads (the PTX refuses a name that means several kernels), or a
        # parameter type the scan does not know (a typedef, a struct):
        # signatures are given, and checked against the PTX's .param sizes.
        return None


# ---------------------------------------------------------------- PTX

# .param state space types and their sizes in bytes.
_PTX_TYPE_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8}


@dataclass
class PtxEntry:
    name: str  # as in the PTX: mangled for a C++ kernel
    param_bytes: list[int]
    param_types: list[str]  # ".u64", ".f32", ".b8[16]"


def is_ptx(text: str) -> bool:
    """Whether `text` is PTX (it has .version and .target directives), not CUDA C++."""
    body = strip_comments(text)
    return bool(re.search(r"^\s*\.version\s+\d+\.\d+", body, re.M) and re.search(r"^\s*\.target\s+\w+", body, re.M))


def ptx_entries(ptx: str) -> list[PtxEntry]:
    """Every `.entry` of PTX text with the size of each `.param`."""
    text = strip_comments(ptx)
    entries = []
    for m in re.finditer(r"\.entry\s+([A-Za-z_$%][\w$]*)\s*\(", text):
        close = _matching(text, m.end() - 1, "(", ")")
        params = [p for p in text[m.end() : close].split(",") if p.strip()]
        sizes, types = [], []
        for p in params:
            array = re.search(r"\.(?:b|u|s)(8|16|32|64)\s+[\w$]+\s*\[\s*(\d+)\s*\]", p)
            scalar = re.search(r"\.(?:b|u|s|f)(8|16|32|64)\b", p)
            if array:
                sizes.append(_PTX_TYPE_BYTES[array.group(1)] * int(array.group(2)))
                types.append(f".b{array.group(1)}[{array.group(2)}]")
            elif scalar:
                sizes.append(_PTX_TYPE_BYTES[scalar.group(1)])
                types.append(scalar.group(0))
            else:
                raise ReflectionError(f"PTX entry '{m.group(1)}': cannot read the parameter `{p.strip()}`")
        entries.append(PtxEntry(m.group(1), sizes, types))
    return entries


def plain_name(symbol: str) -> str:
    """The function name inside an Itanium-mangled symbol (`_Z4vaddPfS_` ->
    `vadd`, `_ZN2ns1kEPf` -> `ns::k`); the symbol itself when it is not mangled."""
    if not symbol.startswith("_Z"):
        return symbol
    i, parts = 2, []
    nested = symbol.startswith("_ZN")
    if nested:
        i = 3
        while i < len(symbol) and symbol[i] in "rVK":  # cv-qualifiers of a member
            i += 1
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while j < len(symbol) and symbol[j].isdigit():
            j += 1
        length = int(symbol[i:j])
        parts.append(symbol[j : j + length])
        i = j + length
        if not nested:
            break
        if symbol.startswith("I", i):  # template arguments of this part
            break
    return "::".join(parts) if parts else symbol


def resolve_entries(entries: Sequence[PtxEntry], names: Sequence[str], language: str) -> dict[str, PtxEntry]:
    """The PTX entry each function name means: the entry of that name (an
    extern "C" kernel), else the one C++ kernel whose mangled name is that
    function's. ValueError naming the entry points that exist when a name has
    none, or several (overloads, templates)."""
    by_name = {e.name: e for e in entries}
    resolved = {}
    for name in names:
        if name in by_name:
            resolved[name] = by_name[name]
            continue
        matches = [e for e in entries if plain_name(e.name) == name]
        if len(matches) == 1:
            resolved[name] = matches[0]
            continue
        listing = ", ".join(
            e.name if plain_name(e.name) == e.name else f"{e.name} (C++ {plain_name(e.name)})" for e in entries
        )
        why = (
            'several C++ kernels are named so (overloads or templates): give each an extern "C" name'
            if matches
            else "no such entry point"
        )
        raise ValueError(f"{language} has no single kernel '{name}' ({why}); its entry points are: {listing or 'none'}")
    return resolved


def rename_entries(ptx: str, renames: dict[str, str]) -> str:
    """PTX with each `.entry` symbol in `renames` (mangled -> plain) renamed,
    so the module's functions are found under the names their signatures give."""
    for old, new in renames.items():
        ptx = re.sub(r"(?<![\w$])" + re.escape(old) + r"(?![\w$])", new, ptx)
    return ptx
