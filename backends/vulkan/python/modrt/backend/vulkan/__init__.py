"""modrt.backend.vulkan: GLSL compute shaders to SPIR-V through glslang, WGSL
through tint where it is installed, or SPIR-V as given.

The kernel declares its interface and modrt reads it from the SPIR-V
(backends/vulkan/spirv_scan.h; docs/formats/spirv.md): buffer arguments
bind the shader's storage buffers and uniform blocks in (set, binding)
order, whatever the set and binding numbers; scalar arguments fill the
members of its push-constant block in offset order; threadIdx.x/y/z set the
specialization constants that size its workgroup (any constant_id), and
dyn_shared_mem sets constant 3 (bytes); blockIdx is the dispatch size.

WGSL is the exception: its SPIR-V carries the WGSL (embed_wgsl), and the
WGSL's declarations are the interface, read by the WebGPU target's reader
(webgpu.reflect), so one WGSL source has one signature and one call on
both targets (docs/formats/spirv.md, "WGSL on Vulkan").
"""

from __future__ import annotations

import struct

from modrt import sdk
from modrt.sdk import (
    Device,
    Module,
    Payload,
    Source,
    Target,
    ToolError,
    call,
    device_limits,
    dtype_bytes,
    find_tool,
    parse_signature,
    per_function,
    run_tool,
)

SPIRV_MAGIC = (0x07230203).to_bytes(4, "little")

# Properties of a Vulkan device that decide what code may be generated for it.
TARGET_ATTRS = (
    "device_name",
    "device_type",
    "vulkan_api_version",
    "thread_warp_size",
    "max_push_constants_size",
    "max_storage_buffer_range",
    "max_uniform_buffer_range",
)
TARGET_FLAGS = (
    "supports_float16",
    "supports_float64",
    "supports_int8",
    "supports_int16",
    "supports_int64",
    "supports_8bit_buffer",
    "supports_16bit_buffer",
    "supports_8bit_push_constant",
    "supports_16bit_push_constant",
)


def detect_target(dev: Device) -> Target:
    """A vulkan Target from the device's real properties, features and limits."""
    return Target(
        "vulkan",
        **device_limits(dev),
        **{name: dev.attr(name) for name in TARGET_ATTRS},
        **{name: bool(dev.attr(name)) for name in TARGET_FLAGS},
    )


def glsl_to_spirv(name: str, glsl: str) -> bytes:
    glslang = find_tool("glslangValidator", "glslang")
    if glslang is None:
        raise RuntimeError("compiling GLSL needs glslang (glslangValidator), which is not installed")
    try:
        return run_tool(
            [glslang, "-V", "--target-env", "vulkan1.1", "-S", "comp", "-o", f"{name}.spv", f"{name}.comp"],
            {f"{name}.comp": glsl},
            f"{name}.spv",
        )
    except ToolError as e:
        raise sdk.tool_failed("vulkan", [name], f"{name}.comp", e) from None


def _vulkan_env(spirv: bytes) -> str:
    """The Vulkan environment that matches the module's SPIR-V version."""
    minor = spirv[6] if len(spirv) > 6 else 0
    return {4: "vulkan1.1spv1.4", 5: "vulkan1.2", 6: "vulkan1.3"}.get(minor, "vulkan1.1")


def validate_spirv(name: str, spirv: bytes) -> None:
    """Checks SPIR-V given directly with spirv-val where it is installed, so a
    broken module is refused at compile time, before any driver sees it
    (skipped by `modrt.compile(..., validate=False)`)."""
    if not sdk.checks_enabled():
        return
    spirv_val = find_tool("spirv-val")
    if spirv_val is None:
        return  # the runtime still checks the module's structure before use
    try:
        run_tool([spirv_val, "--target-env", _vulkan_env(spirv), f"{name}.spv"], {f"{name}.spv": spirv}, f"{name}.spv")
    except ValueError as e:
        raise ValueError(f"SPIR-V of {name} is invalid: {e}") from None


def reflect_spirv(spirv: bytes, function: str = "") -> dict:
    """What modrt reads from a compute shader's SPIR-V (spirv_scan.h): the
    entry point for `function` (or the only one), its workgroup size and the
    specialization constants that set it, the grid axes it reads, its
    bindings, push-constant members and specialization constants.
    ValueError for SPIR-V modrt cannot read."""
    import json  # imported on use: it costs milliseconds at `import modrt`

    return json.loads(call("backend.vulkan.reflect_spirv", spirv, function))


def _unique_names(names: list[str]) -> list[str]:
    """The names a signature may carry: a name used twice is dropped."""
    return [n if names.count(n) == 1 else "" for n in names]


def _block_dtype(element: str, size: int) -> str:
    """A uniform block of `size` bytes as one dtype: lanes of its element
    type's scalar ("uint32x4" for a uvec4 block, "float32" for one float), of
    uint32 when its members differ, of uint8 when words do not divide it."""
    scalar = element.partition("x")[0] or "uint32"
    if size % dtype_bytes(scalar):
        scalar = "uint8"
    lanes = size // dtype_bytes(scalar)
    return scalar if lanes == 1 else f"{scalar}x{lanes}"


def kernel_signature(name: str, info: dict, given: str | None = None) -> str:
    """The signature the shader declares, for function `name`: buffers in
    (set, binding) order (a uniform block as "uniform <dtype>", the dtype
    spanning its bytes), then the push-constant members in offset order;
    blockIdx for each grid axis it reads and threadIdx for each workgroup
    axis a specialization constant sets. A buffer whose element type is not
    one scalar or vector type takes the `given` signature's element type;
    without one, it is a ValueError, as are bindings modrt cannot bind and
    push-constant members that are not scalars."""
    given_args = parse_signature(given)[1] if given else []
    given_buffers = [a for a in given_args if a.is_buffer]
    args = []
    names = _unique_names([b["name"] for b in info["bindings"]] + [m["name"] for m in info["push"]])
    for i, b in enumerate(info["bindings"]):
        where = f"set {b['set']} binding {b['binding']}"
        if b["kind"] == "other":
            raise ValueError(
                f"{name}: its shader binds {b['what']} at {where}; modrt binds storage buffers and uniform blocks only"
            )
        if b["kind"] == "uniform":
            if not b["size"]:
                raise ValueError(f"{name}: the size of uniform block '{b['name']}' ({where}) cannot be read")
            args.append(f"uniform {_block_dtype(b['dtype'], b['size'])} {names[i]}".rstrip())
            continue
        dtype = b["dtype"]
        if not dtype:
            if i >= len(given_buffers):
                raise ValueError(
                    f"{name}: the element type of {b['what']} '{b['name']}' ({where}) is not one scalar or "
                    "vector type; give a signature that names it"
                )
            dtype = given_buffers[i].dtype
        args.append(("const " if b["readonly"] else "") + f"{dtype}* {names[i]}".rstrip())
    for m, arg_name in zip(info["push"], names[len(info["bindings"]) :]):
        if not m["dtype"]:
            raise ValueError(
                f"{name}: push constant '{m['name']}' (offset {m['offset']}) is {m['type']}; "
                "modrt fills push constants from scalar arguments"
            )
        args.append(f"{m['dtype']} {arg_name}".rstrip())
    tags = [f"blockIdx.{axis}" for axis in "xyz"[: info["grid_axes"]]]
    tags += [f"threadIdx.{axis}" for axis, spec in zip("xyz", info["size_spec_ids"]) if spec >= 0]
    return f"{name}({', '.join(args)}{'; ' if tags else ''}{', '.join(tags)})"


def is_wgsl(text: str) -> bool:
    """WGSL rather than GLSL: WGSL marks its compute entry points `@compute`."""
    return "@compute" in text and "#version" not in text


# SPIR-V opcodes and the source language that embed_wgsl writes.
_OP_SOURCE_CONTINUED, _OP_SOURCE, _OP_STRING = 2, 3, 7
_SOURCE_LANGUAGE_WGSL = 10
# What precedes the debug instructions: capabilities, extensions, imports,
# the memory model, entry points and execution modes.
_PREAMBLE_OPS = frozenset({17, 10, 11, 14, 15, 16, 331})
# Bytes of source text per instruction (an instruction has at most 65535 words).
_SOURCE_CHUNK = 65_000 * 4


def _literal(data: bytes) -> list[int]:
    """A SPIR-V literal string: the bytes, a NUL, zero-padded to whole words."""
    data += b"\0" * (4 - len(data) % 4)
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def embed_wgsl(spirv: bytes, wgsl: str, filename: str = "kernel.wgsl") -> bytes:
    """`spirv` (compiled from `wgsl` by tint) carrying `wgsl` as its source:
    an OpString naming `filename` and an OpSource of language WGSL whose text,
    continued by OpSourceContinued, is the WGSL. The runtime reads the
    kernel's interface from it (tint drops unused bindings and lowers scalar
    uniforms to blocks of vec4<u32>: the SPIR-V alone no longer says it)."""
    words = list(struct.unpack(f"<{len(spirv) // 4}I", spirv))
    at = 5
    while at < len(words) and (words[at] & 0xFFFF) in _PREAMBLE_OPS:
        at += words[at] >> 16
    file_id = words[3]
    words[3] += 1  # the id bound
    text = wgsl.encode()
    chunks = [text[i : i + _SOURCE_CHUNK] for i in range(0, len(text), _SOURCE_CHUNK)] or [b""]

    def instruction(op: int, operands: list[int]) -> list[int]:
        return [(len(operands) + 1) << 16 | op, *operands]

    debug = instruction(_OP_STRING, [file_id, *_literal(filename.encode())])
    debug += instruction(_OP_SOURCE, [_SOURCE_LANGUAGE_WGSL, 0, file_id, *_literal(chunks[0])])
    for chunk in chunks[1:]:
        debug += instruction(_OP_SOURCE_CONTINUED, _literal(chunk))
    words[at:at] = debug
    return struct.pack(f"<{len(words)}I", *words)


def wgsl_to_spirv(name: str, wgsl: str) -> bytes:
    """WGSL compute entry point `name` (every one when empty) to SPIR-V
    through tint (Dawn's WGSL compiler, Debian's dawn-tools), carrying the
    WGSL (embed_wgsl)."""
    tint = find_tool("tint")
    if tint is None:
        raise RuntimeError(
            "compiling WGSL for Vulkan needs tint (Dawn's WGSL compiler, Debian package dawn-tools), "
            "which is not installed"
        )
    file = name or "kernels"
    entry = ["--entry-point", name] if name else []
    try:
        spirv = run_tool(
            [tint, "--format", "spirv", *entry, "-o", f"{file}.spv", f"{file}.wgsl"],
            {f"{file}.wgsl": wgsl},
            f"{file}.spv",
        )
    except ToolError as e:
        raise sdk.tool_failed("vulkan", [file], f"{file}.wgsl", e, language="WGSL") from None
    return embed_wgsl(spirv, wgsl, f"{file}.wgsl")


def _spirv_of(name: str, code: str | bytes) -> bytes:
    if isinstance(code, bytes) and code[:4] == SPIRV_MAGIC:
        return code
    text = code.decode() if isinstance(code, bytes) else code
    return wgsl_to_spirv(name, text) if is_wgsl(text) else glsl_to_spirv(name, text)


def wgsl_signatures(wgsl: str) -> list[str]:
    """The signature of each @compute entry point of `wgsl`, as the webgpu
    target infers it (the WebGPU runtime's reader, in libmodrt_compiler.so)."""
    return call("webgpu.reflect", wgsl).splitlines()


def _wgsl_kernel_signature(name: str, info: dict) -> str:
    """The signature of function `name`, whose SPIR-V carries its WGSL: the
    WGSL's signature of the entry point, under the function's name."""
    for signature in wgsl_signatures(info["wgsl"]):
        if parse_signature(signature)[0] == info["entry"]:
            return name + signature[signature.index("(") :]
    raise ValueError(f"{name}: the WGSL its SPIR-V carries has no @compute entry point '{info['entry']}'")


def _signature_of(name: str, info: dict) -> str:
    return _wgsl_kernel_signature(name, info) if info["wgsl"] else kernel_signature(name, info)


def reflect(source: str | bytes, name: str | None = None) -> list[str] | None:
    """The signatures a shader declares: for WGSL, one per @compute entry
    point, as the webgpu target reads them; one per GLCompute entry point of
    SPIR-V, or one for GLSL (compiled by glslang), whose entry point is main.
    With `name` (the function a per-function source is for), a source's one
    kernel is named so instead. None when a buffer's element type is not one
    scalar or vector type (a buffer of structs): the signature then names
    it, and codegen checks the rest against the shader."""
    is_spirv = isinstance(source, bytes) and source[:4] == SPIRV_MAGIC
    text = "" if is_spirv else source.decode() if isinstance(source, bytes) else source
    if not is_spirv and is_wgsl(text):
        signatures = wgsl_signatures(text)
        if name and len(signatures) == 1:
            return [name + signatures[0][signatures[0].index("(") :]]
        return signatures
    if not is_spirv:
        kernel = name or "main"
        infos = {kernel: reflect_spirv(glsl_to_spirv(kernel, text))}
    else:
        entries = reflect_spirv(source)["entries"]
        if name and len(entries) == 1:
            infos = {name: reflect_spirv(source, entries[0])}
        else:
            infos = {e: reflect_spirv(source, e) for e in entries}
    if any(
        not b["dtype"] and b["kind"] == "storage" and not info["wgsl"]
        for info in infos.values()
        for b in info["bindings"]
    ):
        return None
    return [_signature_of(kernel, info) for kernel, info in infos.items()]


def _wgsl_of(source: str | bytes) -> str:
    """The WGSL of a source: its text, or the WGSL its SPIR-V carries; empty for GLSL."""
    if isinstance(source, bytes) and source[:4] == SPIRV_MAGIC:
        return reflect_spirv(source)["wgsl"]
    text = source.decode() if isinstance(source, bytes) else source
    return text if is_wgsl(text) else ""


def buffer_fits(given: str, source: str | bytes, index: int) -> bool:
    """Whether a buffer of dtype `given` may be bound as argument `index`
    besides the kernel's own element type: for WGSL, 8- and 16-bit data
    packed in 32-bit words, as on webgpu (webgpu.buffer_fits); never for GLSL."""
    wgsl = _wgsl_of(source)
    return bool(wgsl) and bool(call("webgpu.buffer_fits", given, wgsl, index))


def check_against_kernel(given: str, info: dict) -> str:
    """`given` checked against the shader's interface (SignatureError showing
    both when they differ); returns it with the kernel's names and const
    markers where it has none."""
    name, _, tags = parse_signature(given)
    if info["wgsl"]:
        kernel = _wgsl_kernel_signature(name, info)
        return sdk.check_signature("vulkan", given, kernel, lambda dtype, i: buffer_fits(dtype, info["wgsl"], i))
    kernel = kernel_signature(name, info, given)
    checked = sdk.check_signature("vulkan", given, kernel)
    spec_ids = {c["id"] for c in info["spec_constants"]}
    if "dyn_shared_mem" in tags and 3 not in spec_ids - set(info["size_spec_ids"]):
        raise sdk.SignatureError(
            "vulkan",
            given,
            kernel,
            "dyn_shared_mem sets specialization constant 3 (bytes), which the kernel does not declare",
        )
    return checked


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """One compute shader per function: GLSL or WGSL text, or SPIR-V bytes
    as they are; each function's signature checked against its shader's interface."""
    shaders: dict[str, bytes] = {}
    texts: dict[str, dict[str, str]] = {"glsl": {}, "wgsl": {}}
    for name, code in per_function(source, functions).items():
        if isinstance(code, bytes) and code[:4] == SPIRV_MAGIC:
            validate_spirv(name, code)
        else:
            text = code.decode() if isinstance(code, bytes) else code
            texts["wgsl" if is_wgsl(text) else "glsl"][name] = text
        shaders[name] = _spirv_of(name, code)
    checked = [
        check_against_kernel(f, reflect_spirv(shaders[parse_signature(f)[0]], parse_signature(f)[0])) for f in functions
    ]
    sources = {
        fmt: "\n".join(f"// function: {n}\n{t}" for n, t in by_name.items())
        for fmt, by_name in texts.items()
        if by_name
    }
    return Payload.create("multi-shader", "spirv", checked, shaders=shaders, sources=sources)


def pipelines_created(module: Module) -> int:
    """How many compute pipelines a real vulkan module has created: one per
    function and launch shape (workgroup size, dynamic shared memory), reused
    by every later launch."""
    return call("vulkan.pipelines_created", module)


# The counts of submission_counts, by name.
SUBMISSION_COUNTS = ("launches", "graph_recordings", "graph_replays")


def submission_counts(device: Device) -> dict[str, int]:
    """What a vulkan device has submitted since the process began: dispatches
    one by one (`launches`), graph recordings (`graph_recordings`: one per
    capture and one per replay that rebinds buffers differently from the
    graph's last), and graph replays (`graph_replays`: one reusable command
    buffer each). A rebound replay that ran natively adds one replay (and one
    recording when its bindings changed) and no launch."""
    return {name: call("vulkan.submission_count", device.index, name) for name in SUBMISSION_COUNTS}


# Buffers bind to set 0 in argument order, scalars are push constants, and
# threadIdx.x is specialization constant 0 (the Vulkan runtime's convention).
# `modrt demo`'s kernel (c = a + b over float32), in this backend's language.
DEMO_SOURCE = """\
#version 450
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Params { int n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(n)) c[i] = a[i] + b[i];
}
"""
DEMO_SIGNATURE = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"

BACKEND = sdk.Backend(
    "vulkan",
    codegen=codegen,
    detect=detect_target,
    # GLSL kernels are all named main: the front end passes the function's name.
    reflector=sdk.Reflector(reflect, names_kernel=True, buffer_fits=buffer_fits),
    language="GLSL",
    demo=(DEMO_SOURCE, DEMO_SIGNATURE),
)


def register_backend() -> None:
    sdk.register_in_tree(BACKEND)
