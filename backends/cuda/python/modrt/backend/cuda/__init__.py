"""modrt.backend.cuda: CUDA C++ codegen (nvcc, else NVRTC, else carried as source)."""

from __future__ import annotations

from collections.abc import Sequence

from modrt import sdk
from modrt.sdk import (
    Device,
    Payload,
    Source,
    Target,
    ToolError,
    device_limits,
    find_tool,
    parse_signature,
    run_tool,
    text_of,
)

# When the target names no arch: PTX for this virtual arch runs (JIT-compiled
# by the driver) on every GPU from Turing on; older ones are deprecated in NVRTC 12.
DEFAULT_ARCH = "sm_75"


def detect_target(dev: Device) -> Target:
    major, _, minor = (dev.compute_version or "0.0").partition(".")
    return Target(
        "cuda",
        arch=f"sm_{major}{minor}",
        **device_limits(dev),
        thread_warp_size=dev.warp_size,
    )


def reflect(source: str | bytes) -> list[str] | None:
    """The canonical signatures the kernels in CUDA C++ source declare
    (docs/formats/cuda.md); None for PTX, which records no element types: a
    PTX module needs signatures, checked against its .entry and .param lists."""
    from . import reflection

    text = text_of(source)
    if reflection.is_ptx(text):
        return None
    return reflection.reflect(text)


def _options(tgt: Target) -> list[str]:
    """The user's NVRTC/nvcc options from the target (modrt.compile's
    `options=` and `include_dirs=` land there): -I for each of
    `include_dirs`, then `options` as they are."""
    options = [f"-I{d}" for d in tgt.attrs.get("include_dirs", ())]
    options += [str(o) for o in tgt.attrs.get("options", ())]
    bad = [o for o in options if "\n" in o]
    if bad:
        raise ValueError(f"a CUDA compiler option cannot hold a line break: {bad[0]!r}")
    return options


def _ptx_checked(ptx: str, functions: list[str], language: str) -> str:
    """PTX whose entries answer to the functions' names: each name resolved
    (an extern "C" kernel's own, or a C++ kernel's mangled one, renamed in the
    PTX to the plain name) and each .param list checked against the signature."""
    from . import reflection

    names = [parse_signature(f)[0] for f in functions]
    entries = reflection.resolve_entries(reflection.ptx_entries(ptx), names, language)
    renames = {}
    for text in functions:
        name, args, _ = parse_signature(text)
        entry = entries[name]
        sizes = [reflection.Param(a.dtype, a.is_buffer).nbytes for a in args]
        if sizes != entry.param_bytes:
            raise sdk.SignatureError(
                "cuda",
                text,
                f"{entry.name}({', '.join(entry.param_types)})",
                f"the .param sizes of {language} entry '{entry.name}' are {entry.param_bytes} bytes, "
                f"the signature's {sizes} (a buffer is a 64-bit pointer; a scalar is as wide as its dtype)",
            )
        if entry.name != name:
            renames[entry.name] = name
    return reflection.rename_entries(ptx, renames) if renames else ptx


def check(source: Source, functions: Sequence[str], filename: object) -> None:
    """PTX is assembled by ptxas (ptx_check); CUDA C++ is checked by the
    compiler codegen runs (nvcc or NVRTC), or said to be unchecked there."""
    from . import reflection

    text = text_of(source)
    if reflection.is_ptx(text):
        from . import nvrtc, ptx_check  # imported on use: they cost milliseconds at `import modrt`

        ptx_check.check(text, functions, nvrtc.package_roots().split("\n"))


def codegen(source: Source, functions: list[str], tgt: Target) -> Payload:
    """CUDA C++ to PTX with nvcc when it is installed, else with NVRTC when a
    libnvrtc is found (see modrt.backend.cuda.nvrtc for the library search, the
    arch policy and the CUDA headers, shared with the runtime); without either
    the source is kept as fmt "cuda", which the CUDA runtime compiles when it
    loads the module. PTX text is taken as it is (fmt "ptx"). The target's
    `options` and `include_dirs` go to the compiler. Signatures are checked
    against the kernel's declarations and the PTX entries (docs/formats/cuda.md)."""
    from . import reflection

    text = text_of(source)
    if reflection.is_ptx(text):
        ptx = _ptx_checked(text, functions, "PTX")
        return Payload.create("single-binary", "ptx", functions, code=ptx.encode(), sources={"ptx": text})
    arch = tgt.attrs.get("arch", DEFAULT_ARCH)
    options = _options(tgt)
    nvcc = find_tool("nvcc")
    if nvcc is not None:
        try:
            ptx = run_tool(
                [nvcc, "--ptx", f"-arch={arch}", *options, "-o", "kernel.ptx", "kernel.cu"],
                {"kernel.cu": text},
                "kernel.ptx",
            )
        except ToolError as e:
            raise sdk.tool_failed("cuda", functions, "kernel.cu", e) from None
        return _ptx_payload(ptx, functions, text)
    from . import nvrtc  # imported on use: it costs milliseconds at `import modrt`

    compiler = nvrtc.load()
    if compiler is not None:
        try:
            ptx = compiler.compile_to_ptx(text, arch, options)
        except nvrtc.NvrtcCompileError as e:
            raise sdk.tool_failed("cuda", functions, "kernel.cu", e) from None
        return _ptx_payload(ptx, functions, text)
    if options:
        raise ValueError(
            "CUDA compiler options were given, but neither nvcc nor NVRTC is installed here to use them "
            "(a module kept as source is compiled where it is loaded, without them). Install the "
            "nvidia-cuda-nvrtc-cu12 wheel (or set MODRT_NVRTC_LIBRARY)."
        )
    not_extern_c = [k.name for k in reflection.scan_kernels(text, read_params=False) if not k.extern_c]
    wanted = {parse_signature(f)[0] for f in functions}
    if wanted & set(not_extern_c):
        raise ValueError(
            f'kernel(s) {", ".join(sorted(wanted & set(not_extern_c)))} are not extern "C": their C++ '
            "names are resolved from NVRTC's output, and there is no NVRTC here (install the "
            'nvidia-cuda-nvrtc-cu12 wheel), or declare them extern "C"'
        )
    sdk.not_checked(
        "cuda",
        "neither nvcc nor NVRTC is installed, so CUDA C++ is kept as source (fmt 'cuda'); "
        "the CUDA runtime compiles it with NVRTC when the module is loaded. Install the "
        "nvidia-cuda-nvrtc-cu12 wheel (a dependency of modrt-cuda; or set MODRT_NVRTC_LIBRARY) to get PTX here.",
    )
    return Payload.create("single-binary", "cuda", functions, code=text.encode(), sources={"cuda": text})


def _ptx_payload(ptx: bytes, functions: list[str], text: str) -> Payload:
    """The module of compiled PTX, its entries resolved and checked."""
    checked = _ptx_checked(ptx.decode(), functions, "CUDA C++ (as compiled to PTX)")
    return Payload.create("single-binary", "ptx", functions, code=checked.encode(), sources={"cuda": text})


# `modrt demo`'s kernel (c = a + b over float32), in this backend's language.
DEMO_SOURCE = """\
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""
DEMO_SIGNATURE = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"

BACKEND = sdk.Backend(
    "cuda",
    codegen=codegen,
    # modrt.compile(options=, include_dirs=) reach NVRTC or nvcc.
    takes_compiler_options=True,
    detect=detect_target,
    reflector=reflect,
    check=check,
    language="CUDA C++",
    demo=(DEMO_SOURCE, DEMO_SIGNATURE),
)


def register_backend() -> None:
    from . import nvrtc

    # The one native NVRTC search (backends/cuda/nvrtc.h), for codegen and for
    # the runtime's compile-on-load alike, is told where Python packages live,
    # so NVRTC from a wheel is found the same way by both: the runtime DSO
    # gets them as a load option (it never calls back into Python).
    sdk.register_in_tree(BACKEND, runtime_options={"nvrtc.package_roots": nvrtc.package_roots()})
