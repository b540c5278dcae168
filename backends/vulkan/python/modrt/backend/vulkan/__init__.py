"""modrt.backend.vulkan: GLSL compute shaders to SPIR-V through glslang, or SPIR-V as given."""

from __future__ import annotations

import shutil

from modrt import backend
from modrt._codegen import Source, per_function, run_tool
from modrt.runtime import Device, Payload
from modrt.target import Target, device_limits

SPIRV_MAGIC = (0x07230203).to_bytes(4, "little")


def detect_target(dev: Device) -> Target:
    return Target(
        "vulkan",
        **device_limits(dev),
        supports_float16=dev.attr("supports_float16"),
        supports_int64=dev.attr("supports_int64"),
    )


def glsl_to_spirv(name: str, glsl: str) -> bytes:
    glslang = shutil.which("glslangValidator") or shutil.which("glslang")
    if glslang is None:
        raise RuntimeError("compiling GLSL needs glslang (glslangValidator), which is not installed")
    try:
        return run_tool(
            [glslang, "-V", "--target-env", "vulkan1.1", "-S", "comp", "-o", f"{name}.spv", f"{name}.comp"],
            {f"{name}.comp": glsl},
            f"{name}.spv",
        )
    except ValueError as e:
        raise ValueError(f"GLSL of {name} does not compile: {e}") from None


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """One compute shader per function: GLSL text, or SPIR-V bytes as they are."""
    shaders: dict[str, bytes] = {}
    glsl: dict[str, str] = {}
    for name, code in per_function(source, functions).items():
        if isinstance(code, bytes) and code[:4] == SPIRV_MAGIC:
            shaders[name] = code
        else:
            text = code.decode() if isinstance(code, bytes) else code
            glsl[name] = text
            shaders[name] = glsl_to_spirv(name, text)
    sources = {"glsl": "\n".join(f"// function: {n}\n{t}" for n, t in glsl.items())} if glsl else {}
    return Payload.create("multi-shader", "spirv", functions, shaders=shaders, sources=sources)


def register_backend() -> None:
    backend.register_in_tree("vulkan", detect_target, codegen)
