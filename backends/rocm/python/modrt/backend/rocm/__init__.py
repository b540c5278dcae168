"""modrt.backend.rocm: HIP codegen through hipcc (ROCm has no source JIT)."""

from __future__ import annotations

from modrt import sdk
from modrt.sdk import Device, Payload, Source, Target, ToolError, device_limits, find_tool, run_tool, text_of


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
        raise sdk.tool_failed("rocm", functions, "kernel.hip", e) from None
    return Payload.create("single-binary", "hsaco", functions, code=hsaco, sources={"hip": text})


# `modrt demo`'s kernel (c = a + b over float32), in this backend's language.
DEMO_SOURCE = """\
#include <hip/hip_runtime.h>
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""
DEMO_SIGNATURE = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"

BACKEND = sdk.Backend(
    "rocm",
    codegen=codegen,
    # modrt.compile(options=, include_dirs=) reach hipcc.
    takes_compiler_options=True,
    detect=detect_target,
    language="HIP",
    demo=(DEMO_SOURCE, DEMO_SIGNATURE),
)


def register_backend() -> None:
    sdk.register_in_tree(BACKEND)
