"""modrt.backend.hexagon: Hexagon modules are shared objects for the DSP (fmt "so"),
given prebuilt as bytes or compiled from C with clang's Hexagon target."""

from __future__ import annotations

from modrt import sdk
from modrt.sdk import Device, Payload, Source, Target, call, find_tool, run_tool, text_of

ELF_MACHINE_QDSP6 = 164
ELF_CLASS_32 = 1


def detect_target(dev: Device) -> Target:
    return Target("hexagon", name=dev.name)


def check_hexagon_object(data: bytes) -> None:
    """The runtime's check (the core's elf.shared_object_problem): a 32-bit
    little-endian QDSP6 shared object, or ValueError saying what it is not."""
    problem = call("elf.shared_object_problem", data, "Hexagon", ELF_CLASS_32, ELF_MACHINE_QDSP6, "QDSP6")
    if problem:
        raise ValueError(problem)


def compile_c(text: str, cpu: str) -> bytes:
    clang = find_tool("clang")
    if clang is None:
        raise ValueError(
            "compiling C for Hexagon needs clang (with its Hexagon target and lld); "
            "or pass a prebuilt shared object as bytes"
        )
    return run_tool(
        [
            clang,
            "--target=hexagon-unknown-elf",
            f"-mcpu={cpu}",
            "-O2",
            "-fPIC",
            "-shared",
            "-nostdlib",
            "-fuse-ld=lld",
            "-o",
            "kernel.so",
            "kernel.c",
        ],
        {"kernel.c": text},
        "kernel.so",
    )


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """Bytes: a prebuilt Hexagon shared object. Text: C, compiled for `tgt.mcpu` (default hexagonv68)."""
    if isinstance(source, bytes) and source[:4] == b"\x7fELF":
        check_hexagon_object(source)
        return Payload.create("single-binary", "so", functions, code=source)
    text = text_of(source)
    code = compile_c(text, tgt.attrs.get("mcpu", "hexagonv68"))
    return Payload.create("single-binary", "so", functions, code=code, sources={"c": text})


# `modrt demo`'s kernel (c = a + b over float32), in this backend's language:
# C for the DSP, compiled with clang's Hexagon target (no launch grid: one DSP thread).
DEMO_SOURCE = """\
void vadd(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
"""
DEMO_SIGNATURE = "vadd(float32*, float32*, float32*, int32)"

BACKEND = sdk.Backend(
    "hexagon",
    codegen=codegen,
    detect=detect_target,
    demo=(DEMO_SOURCE, DEMO_SIGNATURE),
)


def register_backend() -> None:
    sdk.register_in_tree(BACKEND)
