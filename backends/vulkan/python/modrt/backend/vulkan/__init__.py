"""modrt.backend.vulkan: GLSL compute shaders to SPIR-V through glslang, or SPIR-V as given.

Kernel conventions (the runtime's, see backends/vulkan/vulkan_runtime.cc): buffer
arguments bind to set 0, bindings 0, 1, ... in argument order; scalar arguments
form one push-constant block in argument order (std430 offsets); threadIdx.x/y/z
set specialization constants 0/1/2 (`layout(local_size_x_id = 0) in;`),
dyn_shared_mem sets constant 3 (bytes); blockIdx is the dispatch size.
"""

from __future__ import annotations

from modrt import backend
from modrt._codegen import Source, ToolError, find_tool, per_function, run_tool
from modrt._ffi import call
from modrt.runtime import Device, Module, Payload
from modrt.target import Target, device_limits

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
        from modrt import _validate  # on failure only: it costs milliseconds to import

        raise _validate.tool_failed("vulkan", [name], f"{name}.comp", e) from None


def _vulkan_env(spirv: bytes) -> str:
    """The Vulkan environment that matches the module's SPIR-V version."""
    minor = spirv[6] if len(spirv) > 6 else 0
    return {4: "vulkan1.1spv1.4", 5: "vulkan1.2", 6: "vulkan1.3"}.get(minor, "vulkan1.1")


def validate_spirv(name: str, spirv: bytes) -> None:
    """Checks SPIR-V given directly with spirv-val where it is installed, so a
    broken module is refused at compile time, before any driver sees it
    (skipped by `modrt.compile(..., validate=False)`)."""
    from modrt import _validate  # imported on use: it costs milliseconds at `import modrt`

    if not _validate.enabled():
        return
    spirv_val = find_tool("spirv-val")
    if spirv_val is None:
        return  # the runtime still checks the module's structure before use
    try:
        run_tool([spirv_val, "--target-env", _vulkan_env(spirv), f"{name}.spv"], {f"{name}.spv": spirv}, f"{name}.spv")
    except ValueError as e:
        raise ValueError(f"SPIR-V of {name} is invalid: {e}") from None


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """One compute shader per function: GLSL text, or SPIR-V bytes as they are."""
    shaders: dict[str, bytes] = {}
    glsl: dict[str, str] = {}
    for name, code in per_function(source, functions).items():
        if isinstance(code, bytes) and code[:4] == SPIRV_MAGIC:
            validate_spirv(name, code)
            shaders[name] = code
        else:
            text = code.decode() if isinstance(code, bytes) else code
            glsl[name] = text
            shaders[name] = glsl_to_spirv(name, text)
    sources = {"glsl": "\n".join(f"// function: {n}\n{t}" for n, t in glsl.items())} if glsl else {}
    return Payload.create("multi-shader", "spirv", functions, shaders=shaders, sources=sources)


def pipelines_created(module: Module) -> int:
    """How many compute pipelines a real vulkan module has created: one per
    function and launch shape (workgroup size, dynamic shared memory), reused
    by every later launch."""
    return call("vulkan.pipelines_created", module)


def register_backend() -> None:
    backend.register_in_tree("vulkan", detect_target, codegen)
