"""tinygrad's renderers and compile step on modrt: which renderer each modrt
backend takes, and modrt's module of a rendered kernel.

Renderers are tinygrad's own, as they emit: OpenCL C for opencl, WGSL for
webgpu and vulkan (modrt compiles it to SPIR-V with tint, and the kernel has
the same signature and call on both), CUDA C++ for cuda, for the device's
sm_XY, tinygrad's C for cpu, compiled by clang with tinygrad's CPU flags
(cpu_flags): it uses clang's vector extensions; `CC` chooses another compiler. Compiling is `modrt.compile` of
the rendered source, with a signature made from what tinygrad knows of the
kernel (its buffers' element types, its variables).

Where it runs: C for cpu is compiled in tinygrad's compile step, as on
tinygrad's own CPU device: in its pool of worker processes, several kernels at
once, and through its disk cache (CACHELEVEL). The renderer appends the
kernel's modrt signature to the C (`// modrt: f(float32*, int32)`), so the
compile step, which gets only the source, knows it; the binary tinygrad keeps
is the host module's saved bytes. The other backends compile when tinygrad
makes the Program, in the process that has the device (PoCL builds there,
tint and NVRTC beside it).
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from typing import Any

from tinygrad.codegen.opt import tc
from tinygrad.device import Compiler, TinyELF
from tinygrad.dtype import AddrSpace, DType, dtypes
from tinygrad.helpers import ALLOW_TF32
from tinygrad.renderer.cstyle import ClangRenderer, CStyleLanguage, CUDARenderer, OpenCLRenderer
from tinygrad.renderer.wgsl import WGSLRenderer

import modrt

# The backends that run tinygrad's WGSL (vulkan through tint's SPIR-V).
WGSL_BACKENDS = ("webgpu", "vulkan")


@functools.cache
def modrt_dtype(dt: DType) -> str:
    """modrt's name of tinygrad's scalar dtype `dt` (float32, uint8, bool, ...)."""
    if dt == dtypes.bool:
        return "bool"
    if dt == dtypes.bfloat16:
        return "bfloat16"
    kind = "float" if dtypes.is_float(dt) else "uint" if dtypes.is_unsigned(dt) else "int"
    return f"{kind}{dt.itemsize * 8}"


class ModrtCompiler(Compiler):
    """tinygrad's compile step keeps the rendered source as it is: modrt
    compiles it in ModrtProgram, where the kernel's buffer types and variables
    (its signature) are known."""

    def compile(self, src: str) -> bytes:
        return src.encode()


class ModrtOpenCLRenderer(OpenCLRenderer):
    def __init__(self, target: Any) -> None:
        super().__init__(target)
        self.compiler = ModrtCompiler()


class ModrtWGSLRenderer(WGSLRenderer):
    def __init__(self, target: Any) -> None:
        super().__init__(target)
        self.compiler = ModrtCompiler()


class ModrtCCompiler(Compiler):
    """MODRT:cpu's compile step: tinygrad's C (with ModrtCRenderer's entry
    and signature) compiled by modrt for the host into a module, whose saved
    bytes are the kernel's binary (ModrtProgram loads them). It runs where
    tinygrad compiles, in its worker processes, and its results go to
    tinygrad's disk cache under a key of modrt's version, the target and `CC`."""

    def __init__(self, arch: str) -> None:
        self.arch = arch
        compiler = hashlib.sha256(os.environ.get("CC", "").encode()).hexdigest()[:12]
        super().__init__(f"compile_modrt_c_{modrt.__version__}_{arch.replace(',', '_')}_{compiler}")

    def compile(self, src: str) -> bytes:
        marks = [line for line in src.splitlines() if line.startswith(SIGNATURE_MARK)]
        if len(marks) != 1:
            raise ValueError(
                f"MODRT:cpu compiles C rendered by its own renderer, which ends it with one '{SIGNATURE_MARK}' "
                f"line (the kernel's signature); this source has {len(marks)}"
            )
        return compile_c(src, marks[0][len(SIGNATURE_MARK) :], self.arch).save_to_bytes()


class ModrtCRenderer(ClangRenderer):
    """tinygrad's C, split over threads as on tinygrad's CPU device (its
    `THREADS`, `NUM_CPU_THREADS`): a kernel that takes tinygrad's `core_id`
    runs as `threaded_entry`'s function, which calls it once per thread
    (modrt's cpu backend runs a host function once per launch). The source
    ends with that entry, if any, and the modrt signature of the function a
    launch calls, for ModrtCCompiler."""

    def __init__(self, target: Any) -> None:
        super().__init__(target)
        self.compiler = ModrtCCompiler(target.arch)

    def _render_entry(self, function_name: str, bufs: list[tuple[str, tuple[Any, bool]]]) -> str:
        # tinygrad declares the kernel's parameters in this order, and passes
        # its buffers and variable values in it (its signature, TinyELF's).
        params = [(u.arg.name if u.addrspace == AddrSpace.ALU else None, u.dtype) for _, (u, _) in bufs]
        entry, name = "", function_name
        if any(param == CORE_ID for param, _ in params):
            name, entry = threaded_entry(function_name, params)
        return f"{entry}{SIGNATURE_MARK}{c_signature(name, params)}\n"


class ModrtCUDARenderer(CUDARenderer):
    """tinygrad's CUDA C++ for the target's arch (`sm_XY`), compiled by
    modrt (NVRTC or nvcc) rather than by tinygrad's own NVRTC binding, which
    CUDARenderer's constructor would open."""

    def __init__(self, target: Any) -> None:
        CStyleLanguage.__init__(self, target)
        self.compiler = ModrtCompiler()
        self._arch_tensor_cores = tc.get_cuda(target.arch)

    @property
    def tensor_cores(self) -> list:  # type: ignore[override]
        # tinygrad keeps float32 off TF32 tensor cores unless ALLOW_TF32=1, but
        # only for devices named CUDA or NV (codegen/opt/postrange.py); this
        # device is MODRT, so the same rule is applied here, where it is read.
        if ALLOW_TF32:
            return self._arch_tensor_cores
        return [t for t in self._arch_tensor_cores if t.dtype_in != dtypes.float]


RENDERERS = {
    "cuda": ModrtCUDARenderer,
    "opencl": ModrtOpenCLRenderer,
    "webgpu": ModrtWGSLRenderer,
    "vulkan": ModrtWGSLRenderer,
    "cpu": ModrtCRenderer,
}

_GRID_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")
_CC_LOCK = threading.Lock()
# How ModrtCRenderer's C tells ModrtCCompiler the signature of its function.
SIGNATURE_MARK = "// modrt: "

# A kernel's parameters as tinygrad declares them, in order: (the variable's
# name, None for a buffer; its dtype).
Params = list[tuple[str | None, DType]]


def c_signature(name: str, params: Params) -> str:
    """The modrt signature of C function `name` of `params` (buffers, then variables)."""
    return f"{name}({', '.join(f'{modrt_dtype(dt)}*' if p is None else modrt_dtype(dt) for p, dt in params)})"


def kernel_signature(backend: str, obj: TinyELF) -> tuple[str, list[str]]:
    """The modrt signature of tinygrad kernel `obj`, and its buffers' dtypes."""
    buffers = [modrt_dtype(dt) for name, _, dt, _ in obj.signature if name is None]
    scalars = [modrt_dtype(dt) for name, _, dt, _ in obj.signature if name is not None]
    args = ", ".join([f"{d}*" for d in buffers] + scalars)
    tags = "" if backend == "cpu" else "; " + ", ".join(_GRID_TAGS)
    return f"{obj.name}({args}{tags})", buffers


# tinygrad's runtime variable for the thread a CPU kernel runs as (codegen/gpudims.py).
CORE_ID = "core_id"
THREADED_PREFIX = "modrt_threads_"
_C_SCALARS = {"int32": "int32_t", "int64": "int64_t", "uint32": "uint32_t", "uint64": "uint64_t"}


def threaded(obj: TinyELF) -> bool:
    """Whether tinygrad's C kernel `obj` is split over threads (takes `core_id`)."""
    return any(name == CORE_ID for name, _, _, _ in obj.signature)


def threaded_name(obj: TinyELF) -> str:
    """The name of `threaded_entry`'s function for C kernel `obj`."""
    return THREADED_PREFIX + obj.name


def threaded_entry(kernel: str, params: Params) -> tuple[str, str]:
    """(name, C source) of the function that runs C kernel `kernel` of
    `params` on threads.

    It takes the kernel's own arguments, with the number of threads in
    `core_id`'s place (tinygrad's launch size, global_size[0]), and calls the
    kernel with `core_id` 0..n-1, each on a thread of its own (0 on the
    calling one, the cpu stream's worker) and returns when all are done, as
    tinygrad's CPU device runs the same kernel on its worker threads. Where a
    thread cannot be started, its part runs on the calling thread."""
    entry = THREADED_PREFIX + kernel
    fields, declared, passed = [], [], []
    for i, (name, dt) in enumerate(params):
        if name is None:  # a buffer: the kernel's own pointer type converts from void*
            ctype = "void*"
        elif (ctype := _C_SCALARS.get(modrt_dtype(dt))) is None:
            raise ValueError(f"kernel {kernel}: its variable {name} of dtype {dt} has no C type here")
        fields.append(f"  {ctype} a{i};\n")
        declared.append(f"{ctype} a{i}")
        passed.append(f"a->a{i}")
    core = next(i for i, (name, _) in enumerate(params) if name == CORE_ID)
    return entry, (
        "#include <pthread.h>\n"
        f"struct {entry}_args {{\n{''.join(fields)}}};\n"
        f"static void* {entry}_part(void* p) {{\n"
        f"  struct {entry}_args* a = p;\n  {kernel}({', '.join(passed)});\n  return 0;\n}}\n"
        f"void {entry}({', '.join(declared)}) {{\n"
        f"  int32_t n = (int32_t)a{core} > 1 ? (int32_t)a{core} : 1;\n"
        f"  struct {entry}_args parts[n];\n  pthread_t threads[n];\n  int started[n];\n"
        "  for (int32_t t = 0; t < n; t++) {\n"
        f"    parts[t] = (struct {entry}_args){{{', '.join(f'a{i}' for i in range(len(params)))}}};\n"
        f"    parts[t].a{core} = t;\n  }}\n"
        "  for (int32_t t = 1; t < n; t++) {\n"
        f"    started[t] = pthread_create(&threads[t], 0, {entry}_part, &parts[t]) == 0;\n"
        f"    if (!started[t]) {entry}_part(&parts[t]);\n  }}\n"
        f"  {entry}_part(&parts[0]);\n"
        "  for (int32_t t = 1; t < n; t++)\n    if (started[t]) pthread_join(threads[t], 0);\n}\n"
    )


def buffer_dtypes(signature: str) -> list[str]:
    """The element types of the buffer arguments in modrt signature
    `signature`, in order ("f(float32 x, const uint32* a; ...)" -> ["uint32"])."""
    args = signature[signature.index("(") + 1 :].split(";")[0].rstrip(")")
    return [a.split("*")[0].split()[-1] for a in args.split(",") if "*" in a]


# The language each backend's renderer emits, and how its source is told apart.
LANGUAGES = {"cuda": "CUDA C++", "opencl": "OpenCL C", "webgpu": "WGSL", "vulkan": "WGSL", "cpu": "C"}


def compiled_c(lib: bytes) -> bool:
    """Whether tinygrad's binary `lib` is C compiled by ModrtCCompiler (a
    saved modrt module, which starts with its length-prefixed format name)
    rather than source that the other backends compile (text, no NUL)."""
    return b"\0" in lib[:8]


def kernel_language(lib: bytes) -> str:
    """The language (LANGUAGES) of the kernel whose tinygrad binary is `lib`."""
    return "C" if compiled_c(lib) else rendered_language(lib.decode())


def rendered_language(source: str) -> str:
    """Which of tinygrad's renderers (LANGUAGES) wrote kernel `source`."""
    if "@compute" in source:
        return "WGSL"
    if "__global__" in source:
        return "CUDA C++"
    if "__kernel" in source:
        return "OpenCL C"
    return "C"


def compile_kernel(backend: str, arch: str, obj: TinyELF) -> modrt.Module:
    """modrt's module of tinygrad kernel `obj` as rendered for `backend`
    (for cpu, compiled already: its saved module, loaded)."""
    if (language := kernel_language(obj.lib)) != LANGUAGES[backend]:
        # tinygrad renders a kernel of a multi-device tensor once, for its
        # first device, and runs that program on every device of the tensor.
        raise ValueError(
            f"kernel {obj.name} is {language} and modrt {backend} runs {LANGUAGES[backend]}: "
            "a tensor sharded over MODRT devices of different backends needs backends with the same "
            "tinygrad renderer (webgpu and vulkan: WGSL; devices of one backend always are)"
        )
    if backend == "cpu":
        return modrt.load_module_from_bytes("so", obj.lib)
    source = obj.lib.decode()
    if backend in WGSL_BACKENDS:
        # modrt reads the interface from the shader (tinygrad's INFINITY
        # uniform first, then its buffers and variables; the workgroup size).
        return modrt.compile(source, backend)
    signature, _ = kernel_signature(backend, obj)
    if backend == "cuda":
        return modrt.compile(source, modrt.target.Target("cuda", arch=arch), [signature])
    return modrt.compile(source, backend, [signature])


def compile_c(source: str, signature: str, arch: str) -> modrt.Module:
    """modrt's host module of C `source` with function `signature`, compiled
    by clang with tinygrad CPU's flags for `arch` (cpu_flags), or by `CC` as
    it is where that is set."""
    if "CC" in os.environ:
        return modrt.compile(source, "cpu", [signature])
    # tinygrad's C uses clang's vector extensions (ext_vector_type); threads: threaded_entry.
    with _CC_LOCK:
        os.environ["CC"] = " ".join(["clang", "-pthread", *cpu_flags(arch)])
        try:
            return modrt.compile(source, "cpu", [signature])
        finally:
            del os.environ["CC"]


def cpu_flags(arch: str) -> list[str]:
    """The code generation flags of tinygrad's own CPU compiler for target arch
    `arch` ("x86_64,native"; runtime/support/compiler_cpu.py): its CPU model,
    and -fno-math-errno, without which sqrt is a libm call that keeps loops
    from being vectorized. Both change the step's speed (the CNN's training
    step on AVX-512: 1.4-1.8 s against 6.9-8.1 s without) and its rounding
    (FMA contraction): with them MODRT:cpu's losses equal tinygrad CPU's."""
    machine, _, cpu = arch.partition(",")
    cpu = cpu.split(",")[0] or "native"
    model = {"x86_64": [f"-march={cpu}"], "aarch64": [f"-mcpu={cpu}"], "arm64": [f"-mcpu={cpu}"]}
    return ["-fno-math-errno", *model.get(machine, [])]


def cuda_arch(compute_version: str) -> str:
    """tinygrad's and NVRTC's arch name (sm_90) of a compute capability ("9.0")."""
    major, _, minor = compute_version.partition(".")
    return f"sm_{major}{minor}"
