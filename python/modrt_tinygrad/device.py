"""tinygrad's MODRT device: tinygrad's renderers, modrt's compile, memory and launch.

One tinygrad device per modrt backend and device index:

    MODRT:opencl  MODRT:opencl:1  MODRT:webgpu  MODRT:vulkan  MODRT:cpu  MODRT:cuda

`DEV=MODRT:opencl` makes tinygrad's default device `MODRT` with the target
renderer `OPENCL`; the plain `MODRT` device (and `MODRT:<n>`, which tinygrad
uses for device n of the default) takes its backend from that renderer, its
index from the target's arch (`DEV=MODRT:opencl:1`), or, with neither, the first
of cuda, opencl, webgpu, vulkan, cpu that has a device here.

The pieces:
- memory: each tinygrad buffer is a modrt tensor of bytes (uint8); a kernel
  receives it as a modrt tensor of the element type it declares, sharing the
  same memory (a DLPack re-export, see `ModrtBuffer.typed`);
- copies: host<->device with the tensor's copy functions; device to device
  with modrt's tensor copy (across backends modrt stages it through host);
- renderers: tinygrad's own, as they emit (OpenCL C for opencl, WGSL for
  webgpu and vulkan (modrt compiles it to SPIR-V with tint, where uniforms
  are uniform blocks: see spirv_arguments), CUDA C++ for cuda, for the
  device's sm_XY, tinygrad's C for cpu, compiled by clang: it uses clang's
  vector extensions; `CC` chooses another compiler);
- compile: `modrt.compile` of the rendered source, with a signature made from
  what tinygrad knows of the kernel (its buffers' element types, its
  variables); it runs when tinygrad makes the Program, where that is known;
- launch: the modrt function with tinygrad's global/local sizes and values;
  `wait=True` times it with modrt events on the device's clock, or on the
  host between device syncs where the stream has no device timestamps;
- no buffer views at an offset, like tinygrad's own CL and WEBGPU devices
  (see _views.py);
- graph: TinyJit's batches of kernels replay as one modrt.Graph each, with
  the jitted function's input buffers rebound per call (see graph.py).
"""

from __future__ import annotations

import functools
import os
import platform
import re
import struct
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from tinygrad.codegen.opt import tc
from tinygrad.device import BufferSpec, Compiled, Compiler, LRUAllocator, TinyELF
from tinygrad.dtype import DType, dtypes
from tinygrad.helpers import ALLOW_TF32, DEV
from tinygrad.renderer.cstyle import ClangRenderer, CStyleLanguage, CUDARenderer, OpenCLRenderer
from tinygrad.renderer.wgsl import WGSLRenderer

import modrt
from modrt.sdk import parse_signature

from . import _views

DEVICE_NAME = "MODRT"
# The backends a MODRT device can run on, in the order a plain `MODRT` picks one.
BACKENDS = ("cuda", "opencl", "webgpu", "vulkan", "cpu")
# The backends that run tinygrad's WGSL (vulkan through tint's SPIR-V).
WGSL_BACKENDS = ("webgpu", "vulkan")


def parse_device(device: str) -> tuple[str, int]:
    """(modrt backend, device index) of a tinygrad device string."""
    parts = device.split(":")
    if parts[0].upper() != DEVICE_NAME or len(parts) > 3:
        raise ValueError(f"{device!r} is not a MODRT device (MODRT, MODRT:<backend>, MODRT:<backend>:<index>)")
    if len(parts) == 1 or parts[1].isdigit():
        target = DEV.target(DEVICE_NAME)
        backend = target.renderer.lower() or default_backend()
        index = int(parts[1]) if len(parts) > 1 else int(target.arch or 0)
        return _known(backend, device), index
    index = parts[2] if len(parts) == 3 else "0"
    if not index.isdigit():
        raise ValueError(f"{device!r}: the device index {index!r} is not a number")
    return _known(parts[1].lower(), device), int(index)


def _known(backend: str, device: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(
            f"{device!r}: modrt backend {backend!r} has no tinygrad device; choose one of {', '.join(BACKENDS)}"
        )
    return backend


@functools.cache
def default_backend() -> str:
    for backend in BACKENDS:
        if modrt.device(backend).exist:
            return backend
    raise RuntimeError(
        "MODRT: no modrt backend has a device here: "
        + ", ".join(f"{b}: {modrt.device(b).unavailable_reason}" for b in BACKENDS)
    )


# ---- memory ---------------------------------------------------------------


@functools.cache
def modrt_dtype(dt: DType) -> str:
    """modrt's name of tinygrad's scalar dtype `dt` (float32, uint8, bool, ...)."""
    if dt == dtypes.bool:
        return "bool"
    if dt == dtypes.bfloat16:
        return "bfloat16"
    kind = "float" if dtypes.is_float(dt) else "uint" if dtypes.is_unsigned(dt) else "int"
    return f"{kind}{dt.itemsize * 8}"


class ModrtBuffer:
    """A tinygrad buffer: `nbytes` bytes of a modrt uint8 tensor (for WGSL
    rounded up to whole 32-bit words, see ModrtAllocator), and the typed
    tensors over the same memory that kernels have taken it as."""

    __slots__ = ("storage", "nbytes", "view", "_typed")

    def __init__(self, storage: modrt.Tensor, nbytes: int, view: bool = False) -> None:
        # A view (ModrtAllocator._offset) is the first `nbytes` of another buffer's storage.
        self.storage, self.nbytes, self.view = storage, nbytes, view
        self._typed: dict[str, modrt.Tensor] = {"uint8": storage}

    def typed(self, dtype: str) -> modrt.Tensor:
        """This buffer as a modrt tensor of `dtype` (the same memory: modrt
        checks that a kernel's buffers have its signature's element types, and
        tinygrad's buffers are untyped bytes)."""
        t = self._typed.get(dtype)
        if t is None:
            t = self._typed[dtype] = self.storage.view(dtype)
        return t


class ModrtAllocator(LRUAllocator["ModrtDevice"]):
    def _alloc(self, size: int, options: BufferSpec) -> ModrtBuffer:
        # tinygrad's WGSL keeps bool, 8- and 16-bit elements packed in u32
        # words: a kernel takes such a buffer as whole words (as tinygrad's
        # own WEBGPU device allocates it).
        storage = -(-size // 4) * 4 if self.dev.backend in WGSL_BACKENDS else size
        return ModrtBuffer(modrt.empty((storage,), "uint8", self.dev.modrt_device), size)

    def _offset(self, buf: ModrtBuffer, size: int, offset: int) -> ModrtBuffer:
        # Only views at offset 0 reach here (see _views.py): the same memory.
        if offset != 0:
            raise ValueError(f"a MODRT buffer cannot be viewed at byte offset {offset} (only at 0)")
        return ModrtBuffer(buf.storage, size, view=True)

    def _copyin(self, dest: ModrtBuffer, src: memoryview) -> None:
        dest.storage.copyfrom(np.frombuffer(src, dtype=np.uint8, count=dest.nbytes), offset=0)

    def _copyout(self, dest: memoryview, src: ModrtBuffer) -> None:
        src.storage.copyto(np.frombuffer(dest, dtype=np.uint8))

    def _transfer(
        self, dest: ModrtBuffer, src: ModrtBuffer, sz: int, src_dev: ModrtDevice, dest_dev: ModrtDevice
    ) -> None:
        # Any two modrt devices: device to device on one backend, staged
        # through host memory by modrt across backends; through host here
        # where one side is rounded up to whole words and the other is not,
        # or is a view (whose storage goes on past its bytes).
        if dest.storage.shape == src.storage.shape and not (dest.view or src.view):
            dest.storage.copyfrom(src.storage)
            return
        staged = np.empty(sz, dtype=np.uint8)
        src.storage.copyto(staged)
        dest.storage.copyfrom(staged, offset=0)


# ---- renderers and compile ------------------------------------------------


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


class ModrtCRenderer(ClangRenderer):
    """tinygrad's C, one call per launch (modrt's cpu backend runs a host
    function once; tinygrad's CPU device splits kernels over its own threads)."""

    has_threads = False

    def __init__(self, target: Any) -> None:
        super().__init__(target)
        self.compiler = ModrtCompiler()


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


def kernel_signature(backend: str, obj: TinyELF) -> tuple[str, list[str]]:
    """The modrt signature of tinygrad kernel `obj`, and its buffers' dtypes."""
    buffers = [modrt_dtype(dt) for name, _, dt, _ in obj.signature if name is None]
    scalars = [modrt_dtype(dt) for name, _, dt, _ in obj.signature if name is not None]
    args = ", ".join([f"{d}*" for d in buffers] + scalars)
    tags = "" if backend == "cpu" else "; " + ", ".join(_GRID_TAGS)
    return f"{obj.name}({args}{tags})", buffers


def buffer_dtypes(signature: str) -> list[str]:
    """The element types of the buffer arguments in modrt signature
    `signature`, in order ("f(float32 x, const uint32* a; ...)" -> ["uint32"])."""
    args = signature[signature.index("(") + 1 :].split(";")[0].rstrip(")")
    return [a.split("*")[0].split()[-1] for a in args.split(",") if "*" in a]


# The language each backend's renderer emits, and how its source is told apart.
LANGUAGES = {"cuda": "CUDA C++", "opencl": "OpenCL C", "webgpu": "WGSL", "vulkan": "WGSL", "cpu": "C"}


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
    """modrt's module of tinygrad kernel `obj` as rendered for `backend`."""
    source = obj.lib.decode()
    if (language := rendered_language(source)) != LANGUAGES[backend]:
        # tinygrad renders a kernel of a multi-device tensor once, for its
        # first device, and runs that program on every device of the tensor.
        raise ValueError(
            f"kernel {obj.name} is {language} and modrt {backend} runs {LANGUAGES[backend]}: "
            "a tensor sharded over MODRT devices of different backends needs backends with the same "
            "tinygrad renderer (webgpu and vulkan: WGSL; devices of one backend always are)"
        )
    if backend in WGSL_BACKENDS:
        # modrt reads the interface from the shader (tinygrad's INFINITY
        # uniform first, then its buffers and variables; the workgroup size).
        return modrt.compile(source, backend)
    signature, _ = kernel_signature(backend, obj)
    if backend == "cuda":
        return modrt.compile(source, modrt.target.Target("cuda", arch=arch), [signature])
    if backend != "cpu" or "CC" in os.environ:
        return modrt.compile(source, backend, [signature])
    # tinygrad's C uses clang's vector extensions (ext_vector_type).
    with _CC_LOCK:
        os.environ["CC"] = "clang"
        try:
            return modrt.compile(source, backend, [signature])
        finally:
            del os.environ["CC"]


_WGSL_BINDING = re.compile(r"@binding\((\d+)\)\s*var<[^>]*>\s*(\w+)\s*:")


def spirv_arguments(wgsl: str, signature: str, buffers: int) -> list[tuple[bool, int, str]]:
    """How to fill the arguments of tinygrad WGSL kernel `wgsl` compiled to
    SPIR-V, whose modrt `signature` binds every uniform as a buffer (a uniform
    block) and leaves out the bindings the shader does not use (tint drops
    them: INFINITY where no inf is computed, a variable only the launch size
    reads). Each argument is (is a tinygrad buffer, index, element type):
    buffer `index` of the launch's `buffers` buffers, else uniform `index`
    (0: INFINITY, then the variables' values)."""
    # tinygrad binds INFINITY at 0, then its buffers, then its variables.
    binding_of = {name: int(b) for b, name in _WGSL_BINDING.findall(wgsl)}
    arguments = []
    for arg in parse_signature(signature)[1]:
        binding = binding_of.get(arg.name)
        if binding is None or not arg.is_buffer:
            raise ValueError(f"{signature}: argument {arg.name!r} is not one of the kernel's WGSL bindings")
        if 1 <= binding <= buffers:
            arguments.append((True, binding - 1, arg.dtype))
        else:
            arguments.append((False, 0 if binding == 0 else binding - buffers, arg.dtype))
    return arguments


class ModrtProgram:
    def __init__(self, dev: ModrtDevice, obj: TinyELF) -> None:
        self.dev, self.name = dev, obj.name
        # WGSL on webgpu: tinygrad's INFINITY uniform, a scalar, comes first.
        self.leading: tuple[float, ...] = (float("inf"),) if dev.backend == "webgpu" else ()
        self.module = compile_kernel(dev.backend, dev.arch or "", obj)
        self.spirv_arguments: list[tuple[bool, int, str]] | None = None
        if dev.backend == "webgpu":
            # The shader's own element types (packed small dtypes are u32 words).
            self.buffer_dtypes = buffer_dtypes(self.module.signature(obj.name))
        elif dev.backend == "vulkan":
            signature = self.module.signature(obj.name)
            buffers = sum(1 for name, *_ in obj.signature if name is None)
            self.spirv_arguments = spirv_arguments(obj.lib.decode(), signature, buffers)
            # An unused buffer (not bound) keeps tinygrad's element type.
            self.buffer_dtypes = kernel_signature(dev.backend, obj)[1]
            for is_buffer, index, dtype in self.spirv_arguments:
                if is_buffer:
                    self.buffer_dtypes[index] = dtype
            # The dispatch has an axis for each workgroup_id axis the shader reads.
            self.grid_axes = sum(tag.startswith("blockIdx.") for tag in parse_signature(signature)[2])
        else:
            _, self.buffer_dtypes = kernel_signature(dev.backend, obj)
        self.function = self.module[obj.name]
        self.grid, self.blocks = dev.backend != "cpu", dev.backend not in WGSL_BACKENDS

    def __call__(
        self,
        *bufs: ModrtBuffer,
        global_size: tuple[int, int, int] = (1, 1, 1),
        local_size: tuple[int, int, int] | None = (1, 1, 1),
        vals: tuple[int, ...] = (),
        wait: bool = False,
        **kw: Any,
    ) -> float | None:
        if self.spirv_arguments is not None:
            args = self._spirv_args(bufs, global_size, vals)
        else:
            args = [*self.leading, *(b.typed(d) for b, d in zip(bufs, self.buffer_dtypes)), *vals]
            if self.grid:
                args += global_size
            if self.blocks and self.grid:
                args += local_size if local_size is not None else (1, 1, 1)
        if not wait:
            self.function(*args)
            return None
        return self.dev.time_launch(lambda: self.function(*args))

    def _spirv_args(
        self, bufs: tuple[ModrtBuffer, ...], global_size: tuple[int, int, int], vals: tuple[int, ...]
    ) -> list:
        # The uniforms (INFINITY, the variables) are uniform blocks in SPIR-V:
        # tensors holding their values; the workgroup size is the shader's.
        values = (float("inf"), *vals)
        args: list[Any] = [
            bufs[i].typed(d) if is_buffer else self.dev.uniform(d, values[i])
            for is_buffer, i, d in self.spirv_arguments
        ]
        return args + list(global_size[: self.grid_axes])


# ---- the device -----------------------------------------------------------


class ModrtDevice(Compiled):
    def __init__(self, device: str) -> None:
        self.backend, index = parse_device(device)
        self.modrt_device = modrt.device(self.backend, index)
        if not self.modrt_device.exist:
            raise RuntimeError(
                f"{device}: modrt {self.backend}({index}) does not exist: {self.modrt_device.unavailable_reason}"
            )
        from .graph import ModrtGraph  # imports tinygrad's JIT, which needs tinygrad.device complete

        super().__init__(
            device, ModrtAllocator(self), [RENDERERS[self.backend]], ModrtProgram, graph=ModrtGraph, arch=self._arch()
        )
        self.device_id = index
        self.uniforms: dict[tuple[str, float], modrt.Tensor] = {}
        self.device_timing = True  # until a stream says it has no device timestamps

    def _arch(self) -> str:
        if self.backend == "cpu":
            # tinygrad's "<arch>,<cpu>" (its C compiler's -march); modrt's compiles for the host.
            return f"{platform.machine()},native"
        if self.backend == "opencl":
            return ",".join(_opencl_extensions(self.modrt_device))
        if self.backend == "cuda":
            return cuda_arch(self.modrt_device.compute_version)
        if self.backend == "webgpu" and self.modrt_device.attr("supports_float16"):
            # What tinygrad's own WEBGPU device declares when its adapter has the
            # feature: its WGSL renderer then runs half in f16.
            return "shader-f16"
        return ""

    def _select_renderer(self) -> Any:
        # One renderer per device: its backend's, whatever DEV names for others.
        # Its target names this device: BEAM search times kernels on Device[target.device].
        key = (RENDERERS[self.backend],)
        if key not in self.cached_renderer:
            from tinygrad.helpers import Target

            target = Target(self.device, self.backend.upper(), self.arch or "")
            self.cached_renderer[key] = RENDERERS[self.backend](target)
        return self.cached_renderer[key]

    def synchronize(self) -> None:
        self.modrt_device.sync()

    # Uniform blocks kept per device before they are let go after a sync.
    MAX_UNIFORMS = 4096

    def uniform(self, dtype: str, value: float) -> modrt.Tensor:
        """A tensor of element type `dtype` (a uniform block: one uint32x4 as
        tint lays out a WGSL scalar uniform) holding `value` (INFINITY as
        float32, a variable as int32), made once per value and never written
        again, so launches in flight and recorded graphs can share it."""
        key = (dtype, value)
        tensor = self.uniforms.get(key)
        if tensor is None:
            if len(self.uniforms) >= self.MAX_UNIFORMS:
                self.synchronize()  # no launch in flight still reads one; graphs hold their own
                self.uniforms.clear()
            if not isinstance(value, float) and not -(2**31) <= value < 2**31:
                # tinygrad's WGSL declares every variable i32.
                raise OverflowError(f"variable value {value} does not fit the kernel's int32 (WGSL i32) uniform")
            data = struct.pack("<f" if isinstance(value, float) else "<i", value)
            scalar, _, lanes = dtype.partition("x")
            size = int(re.sub(r"\D", "", scalar)) // 8 * int(lanes or 1)
            host = np.frombuffer(data.ljust(size, b"\0"), dtype=np.uint8)
            storage = modrt.tensor(host, self.modrt_device)
            tensor = self.uniforms[key] = ModrtBuffer(storage, size).typed(dtype)
        return tensor

    def time_launch(self, launch: Callable[[], None]) -> float:
        """Seconds `launch` ran: from modrt events on the device's clock where
        its stream has device timestamps, else on the host between two device
        syncs (modrt never substitutes host time for an event's, so the
        choice is made here, once per device)."""
        stream = modrt.current_stream(self.modrt_device) if self.device_timing else None
        self.synchronize()
        begin = time.perf_counter()
        start = stream.record() if stream is not None else None
        launch()
        end = stream.record() if stream is not None else None
        self.synchronize()
        host = time.perf_counter() - begin
        if start is not None and end is not None:
            try:
                return end.elapsed_ms(start) / 1e3
            except RuntimeError:  # this device's streams have no device timestamps
                self.device_timing = False
        return host


def cuda_arch(compute_version: str) -> str:
    """tinygrad's and NVRTC's arch name (sm_90) of a compute capability ("9.0")."""
    major, _, minor = compute_version.partition(".")
    return f"sm_{major}{minor}"


# tinygrad's OpenCL renderer emits double only where the target's arch names
# cl_khr_fp64; found by building a kernel that uses it on the device. Half is
# left out: tinygrad then emulates it (as on PoCL, which has no cl_khr_fp16).
_FP64_PROBE = "__kernel void probe(__global double* a) { a[0] = 1.0; }"


@functools.cache
def _opencl_extensions(device: modrt.Device) -> tuple[str, ...]:
    try:
        with warnings.catch_warnings():  # where clang is missing: the probe's own source needs no warning
            warnings.simplefilter("ignore", modrt.SourceNotCheckedWarning)
            warnings.simplefilter("ignore", modrt.CompileWarning)
            modrt.compile(_FP64_PROBE, "opencl", ["probe(float64*; blockIdx.x, threadIdx.x)"])
    except (modrt.CompileError, ValueError):
        return ()
    return ("cl_khr_fp64",)


_views.forbid_views_on(DEVICE_NAME)
