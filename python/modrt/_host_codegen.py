"""Host codegen: C source -> a shared object carried as bytes (module kind "so").

For each signature the driver appends a wrapper
`int32_t __modrt_call_<f>(void* const* args)` that calls `f` with each
argument read in its declared C type; the runtime marshals into that layout.
"""

from __future__ import annotations

import os
import shlex

from ._codegen import parse_signature, run_tool, text_of
from ._ffi import call
from .modules import Module, Payload

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_C_TYPES = {
    "bool": "int8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "float16": "uint16_t",
    "bfloat16": "uint16_t",
    "float32": "float",
    "float64": "double",
}


def _wrapper(signature: str) -> str:
    name, args, tags = parse_signature(signature)
    if tags:
        raise ValueError(f"cpu function {name} cannot take launch parameters ({', '.join(tags)})")
    params = []
    for i, arg in enumerate(args):
        dtype, is_buffer = arg.dtype, arg.is_buffer
        if arg.uniform:
            raise ValueError(f"cpu function {name}: argument {i} is a uniform block, which only shaders declare")
        ctype = _C_TYPES.get(dtype.split("x")[0] if "x" in dtype else dtype)
        if ctype is None or ("x" in dtype and not is_buffer):
            raise ValueError(f"cpu function {name}: argument {i} of dtype {dtype} is not supported")
        params.append(f"*({ctype}**)args[{i}]" if is_buffer else f"*({ctype}*)args[{i}]")
    return (
        f"int32_t __modrt_call_{name}(void* const* args) {{\n"
        f"  (void)args;\n  {name}({', '.join(params)});\n  return 0;\n}}\n"
    )


def compile_c(source: str | bytes, functions: Sequence[str]) -> Module:
    """Compiles C `source` with the system C compiler ($CC, default cc)."""
    text = text_of(source)
    unit = "#include <stdint.h>\n" + text + "\n\n" + "".join(_wrapper(f) for f in functions)
    compiler = shlex.split(os.environ.get("CC", "cc"))
    cmd = compiler + ["-shared", "-fPIC", "-O2", "-std=gnu11", "-o", "module.so", "module.c"]
    try:
        image = run_tool(cmd, {"module.c": unit}, "module.so")
    except ValueError as e:
        raise ValueError(f"C compilation failed: {e}") from None
    payload = Payload.create("single-binary", "so", functions, code=image, sources={"c": text})
    return call("module.create.so", payload)
