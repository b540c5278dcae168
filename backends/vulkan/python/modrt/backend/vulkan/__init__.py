"""modrt.backend.vulkan: GLSL compute shaders to SPIR-V through glslang, WGSL
through tint where it is installed, or SPIR-V as given.

The kernel declares its interface and modrt reads it from the SPIR-V
(backends/vulkan/spirv_scan.h; docs/formats/spirv.md): buffer arguments
bind the shader's storage buffers and uniform blocks in (set, binding)
order, whatever the set and binding numbers; scalar arguments fill the
members of its push-constant block in offset order; threadIdx.x/y/z set the
specialization constants that size its workgroup (any constant_id), and
dyn_shared_mem sets constant 3 (bytes); blockIdx is the dispatch size.
"""

from __future__ import annotations

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


def kernel_signature(name: str, info: dict, given: str | None = None) -> str:
    """The signature the shader declares, for function `name`: buffers in
    (set, binding) order, then the push-constant members in offset order;
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


def wgsl_to_spirv(name: str, wgsl: str) -> bytes:
    """WGSL compute entry point `name` (every one when empty) to SPIR-V
    through tint (Dawn's WGSL compiler, Debian's dawn-tools)."""
    tint = find_tool("tint")
    if tint is None:
        raise RuntimeError(
            "compiling WGSL for Vulkan needs tint (Dawn's WGSL compiler, Debian package dawn-tools), "
            "which is not installed"
        )
    file = name or "kernels"
    entry = ["--entry-point", name] if name else []
    try:
        return run_tool(
            [tint, "--format", "spirv", *entry, "-o", f"{file}.spv", f"{file}.wgsl"],
            {f"{file}.wgsl": wgsl},
            f"{file}.spv",
        )
    except ToolError as e:
        raise sdk.tool_failed("vulkan", [file], f"{file}.wgsl", e, language="WGSL") from None


def _spirv_of(name: str, code: str | bytes) -> bytes:
    if isinstance(code, bytes) and code[:4] == SPIRV_MAGIC:
        return code
    text = code.decode() if isinstance(code, bytes) else code
    return wgsl_to_spirv(name, text) if is_wgsl(text) else glsl_to_spirv(name, text)


def reflect(source: str | bytes, name: str | None = None) -> list[str] | None:
    """The signatures a shader declares: one per GLCompute entry point of
    SPIR-V or WGSL (compiled by tint to read it), or one for GLSL (compiled
    by glslang), whose entry point is main. With `name` (the function a
    per-function source is for), a source's one kernel is named so instead.
    None when a buffer's element type is not one scalar or vector type (a
    buffer of structs): the signature then names it, and codegen checks the
    rest against the shader."""
    is_spirv = isinstance(source, bytes) and source[:4] == SPIRV_MAGIC
    text = "" if is_spirv else source.decode() if isinstance(source, bytes) else source
    if not is_spirv and not is_wgsl(text):
        kernel = name or "main"
        infos = {kernel: reflect_spirv(glsl_to_spirv(kernel, text))}
    else:
        spirv = source if is_spirv else wgsl_to_spirv(name or "", text)
        entries = reflect_spirv(spirv)["entries"]
        if name and len(entries) == 1:
            infos = {name: reflect_spirv(spirv, entries[0])}
        else:
            infos = {e: reflect_spirv(spirv, e) for e in entries}
    if any(not b["dtype"] and b["kind"] != "other" for info in infos.values() for b in info["bindings"]):
        return None
    return [kernel_signature(kernel, info) for kernel, info in infos.items()]


def check_against_kernel(given: str, info: dict) -> str:
    """`given` checked against the shader's interface (SignatureError showing
    both when they differ); returns it with the kernel's names and const
    markers where it has none."""
    name, _, tags = parse_signature(given)
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
    reflector=sdk.Reflector(reflect, names_kernel=True),
    language="GLSL",
    demo=(DEMO_SOURCE, DEMO_SIGNATURE),
)


def register_backend() -> None:
    sdk.register_in_tree(BACKEND)
