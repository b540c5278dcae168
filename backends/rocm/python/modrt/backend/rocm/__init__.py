"""modrt.backend.rocm: HIP codegen through hipcc (ROCm has no source JIT)."""

from __future__ import annotations

from modrt import backend
from modrt._codegen import Source, ToolError, find_tool, run_tool, text_of
from modrt.runtime import Device, Payload
from modrt.target import Target, device_limits


def detect_target(dev: Device) -> Target:
    return Target(
        "rocm",
        mcpu=dev.attr("gcn_arch"),
        **device_limits(dev),
        thread_warp_size=dev.warp_size,
    )


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """HIP source to a code object (fmt "hsaco") with hipcc, for the target's
    mcpu (gfx arch). hip_runtime.h is included for the kernel, as ROCm's own
    hipcc does, so CUDA-style kernels compile unchanged. The target's
    `include_dirs` (-I each) and `options` (as they are) go to hipcc: what
    modrt.compile(options=, include_dirs=) gives. ROCm ships its headers
    with hipcc, so none are added."""
    text = text_of(source)
    hipcc = find_tool("hipcc")
    if hipcc is None:
        raise ValueError("ROCm has no source JIT: compiling HIP needs hipcc, which is not installed")
    arch = tgt.attrs.get("mcpu", "gfx90a")
    try:
        hsaco = run_tool(
            [
                hipcc,
                "--genco",
                f"--offload-arch={arch}",
                "-include",
                "hip/hip_runtime.h",
                *[f"-I{d}" for d in tgt.attrs.get("include_dirs", ())],
                *[str(o) for o in tgt.attrs.get("options", ())],
                "-o",
                "kernel.hsaco",
                "kernel.hip",
            ],
            {"kernel.hip": text},
            "kernel.hsaco",
        )
    except ToolError as e:
        from modrt import _validate  # on failure only: it costs milliseconds to import

        raise _validate.tool_failed("rocm", functions, "kernel.hip", e) from None
    return Payload.create("single-binary", "hsaco", functions, code=hsaco, sources={"hip": text})


codegen.takes_compiler_options = True  # type: ignore[attr-defined]  # modrt.compile(options=, include_dirs=)


def register_backend() -> None:
    backend.register_in_tree("rocm", detect_target, codegen)
