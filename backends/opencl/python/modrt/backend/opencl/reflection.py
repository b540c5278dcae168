"""What an OpenCL C kernel says about its own interface (docs/formats/opencl.md).

clang's OpenCL front end (the one source_check checks source with) parses
the source; its AST (`-Xclang -ast-dump=json`) gives every `__kernel`
function's parameters with their address spaces, types (typedefs resolved)
and names:

- `__global T*` -> a buffer of T; `const __global T*` and `__constant T*` are
  read-only buffers;
- a private scalar or vector (`int n`, `float4 v`) -> a scalar of its dtype;
- one trailing `__local T*` -> the dyn_shared_mem launch parameter (its size
  is the launch's dynamic shared memory); any other `__local` pointer, images,
  samplers, pointers to pointers and structs are refused, naming the
  parameter (the OpenCL runtime passes none of them);
- launch tags: blockIdx.* and threadIdx.* up to the highest dimension that
  any work-item function (get_global_id, get_group_id, get_local_id, their
  sizes) is called with in the kernel's own text, x at least; 3 when one is
  called with a dimension that is not a literal (or only from a helper
  function: then the signature says how many).
"""

from __future__ import annotations

import json
import re

from modrt import sdk

from . import source_check

# OpenCL C scalar types, as clang spells them after typedefs, and their dtypes.
SCALAR_TYPES = {
    "bool": "bool",
    "char": "int8",
    "signed char": "int8",
    "unsigned char": "uint8",
    "short": "int16",
    "unsigned short": "uint16",
    "int": "int32",
    "unsigned int": "uint32",
    "long": "int64",
    "unsigned long": "uint64",
    "half": "float16",
    "float": "float32",
    "double": "float64",
}
_QUALIFIERS = {"__global", "__constant", "__local", "__private", "__generic", "const", "restrict", "volatile"}
_WORK_ITEM = re.compile(
    r"\bget_(?:global_id|group_id|local_id|global_size|local_size|num_groups|global_offset)\s*\(\s*([^)]*?)\s*\)"
)


class ReflectionError(ValueError):
    """The kernel's interface could not be read (the message says which parameter and why)."""


def _ast(source: str) -> dict | None:
    """clang's AST of `source`; None when there is no clang here, or the source
    does not parse and checks are off (then signatures are required). A source
    that does not parse is the CompileError the checks (source_check) raise."""
    clang = source_check.find_clang()
    if clang is None:
        return None
    names = re.findall(r"\b(?:__kernel|kernel)\s+void\s+(\w+)", source) or ["kernel"]
    shown = sdk.display_name(None, names[0], "cl")
    rc, out, messages = source_check.run_clang(
        clang,
        [*source_check.CLANG_FLAGS, "-fsyntax-only", "-fno-color-diagnostics", "-Xclang", "-ast-dump=json"],
        source,
        shown,
    )
    if rc != 0:
        if not sdk.checks_enabled():
            return None
        raise sdk.CompileError("opencl", names, shown, source_check.TOOL, messages)
    return json.loads(out)


def _launch_tags(source: str) -> list[str]:
    dims = 1
    for m in _WORK_ITEM.finditer(source):
        arg = m.group(1)
        dims = max(dims, int(arg) + 1 if arg.isdigit() and int(arg) < 3 else 3)
    return [f"blockIdx.{d}" for d in "xyz"[:dims]] + [f"threadIdx.{d}" for d in "xyz"[:dims]]


def _desugar(spelled: str, typedefs: dict[str, str]) -> str:
    """`spelled` with its typedef names replaced by what they stand for."""
    for _ in range(8):  # typedefs of typedefs
        replaced = re.sub(r"[A-Za-z_]\w*", lambda m: typedefs.get(m.group(0), m.group(0)), spelled)
        if replaced == spelled:
            break
        spelled = replaced
    return spelled


def _dtype(words: list[str]) -> str | None:
    vector = re.search(r"__attribute__\(\(ext_vector_type\((\d+)\)\)\)", " ".join(words))
    base = " ".join(w for w in words if not w.startswith("__attribute__") and not w.startswith("((") and w != "))")
    base = re.sub(r"\s*__attribute__.*$", "", base).strip()
    dtype = SCALAR_TYPES.get(base)
    if dtype is None:
        return None
    return f"{dtype}x{vector.group(1)}" if vector and vector.group(1) != "1" else dtype


def _param(kernel: str, index: int, name: str, spelled: str) -> tuple[str, str, bool, bool]:
    """(dtype, address space, is_pointer, read-only) of one parameter; the
    dtype is "" for a type modrt does not read (signature() says why)."""
    if spelled.count("*") > 1 or "[" in spelled:
        return f"?{spelled}", "__private", False, False
    pointee, star, outer = spelled.partition("*")
    words = pointee.split()
    space = next((w for w in words if w in ("__global", "__constant", "__local")), "__private")
    const = "const" in words or space == "__constant"
    dtype = _dtype([w for w in words if w not in _QUALIFIERS])
    return dtype or f"?{spelled}", space, bool(star), const


def kernels(source: str) -> list[dict] | None:
    """Every `__kernel` function defined in `source`: {name, params: [(dtype,
    space, is_pointer, read_only, name)], tags}; None as _ast."""
    ast = _ast(source)
    if ast is None:
        return None
    typedefs = {
        n["name"]: n["type"].get("desugaredQualType", n["type"]["qualType"])
        for n in ast.get("inner", [])
        if n.get("kind") == "TypedefDecl" and "name" in n
    }
    found: dict[str, dict] = {}
    for node in ast.get("inner", []):
        if node.get("kind") != "FunctionDecl" or node.get("isImplicit"):
            continue
        inner = node.get("inner", [])
        if not any(c.get("kind") in ("DeviceKernelAttr", "OpenCLKernelAttr") for c in inner):
            continue
        name = node["name"]
        params = []
        for i, p in enumerate(c for c in inner if c.get("kind") == "ParmVarDecl"):
            spelled = _desugar(p["type"].get("desugaredQualType", p["type"]["qualType"]), typedefs)
            pname = p.get("name", "")
            params.append((*_param(name, i, pname or f"#{i}", spelled), pname))
        if name not in found or any(c.get("kind") == "CompoundStmt" for c in inner):
            span = node.get("range", {})
            begin, end = span.get("begin", {}).get("offset"), span.get("end", {}).get("offset")
            own_text = source[begin : end + 1] if begin is not None and end is not None else source
            found[name] = {"name": name, "params": params, "tags": _launch_tags(own_text)}
    return list(found.values())


def signature(kernel: dict) -> str:
    """The canonical signature of one kernel from kernels()."""
    params = kernel["params"]
    tags = list(kernel["tags"])
    locals_ = [i for i, p in enumerate(params) if p[1] == "__local"]
    if locals_:
        if locals_ != [len(params) - 1]:
            names = ", ".join(params[i][4] or f"#{i}" for i in locals_)
            raise ReflectionError(
                f"kernel '{kernel['name']}': __local pointer parameter(s) {names}: modrt sizes one __local "
                "pointer, the last parameter, as the launch's dynamic shared memory (dyn_shared_mem); declare "
                "other work-group arrays inside the kernel"
            )
        params = params[:-1]
        tags.append("dyn_shared_mem")
    args = []
    for i, (dtype, _space, is_pointer, read_only, name) in enumerate(params):
        if dtype.startswith("?"):
            raise ReflectionError(
                f"kernel '{kernel['name']}': parameter {i} ({name}: {dtype[1:]}) is not one modrt passes: "
                "it passes buffers (__global or __constant pointers to scalars or vectors), scalars and "
                "vectors; no images, samplers, structs or pointers to pointers"
            )
        text = ("const " if read_only and is_pointer else "") + dtype + ("*" if is_pointer else "")
        args.append(f"{text} {name}" if name else text)
    return f"{kernel['name']}({', '.join(args)}; {', '.join(tags)})"


def reflect(source: str) -> list[str] | None:
    """The canonical signature of every kernel in OpenCL C `source`; None
    when it cannot be read here (no clang; or it does not parse and checks are off)."""
    found = kernels(source)
    return None if found is None else [signature(k) for k in found]
