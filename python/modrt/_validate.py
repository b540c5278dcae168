"""Compile-time checks of kernel source, run by `modrt.compile` whatever runtime is loaded.

A cross-compile must not carry a broken kernel to the machine that runs it, so
source that a codegen driver does not itself compile is checked here:

- OpenCL C: clang's OpenCL front end (`clang -x cl -cl-std=CL1.2 -fsyntax-only`
  with clang's own OpenCL headers), that every function is a kernel in the
  preprocessed source, and, where the OpenCL runtime and a device are present,
  a real build on that device (`opencl.check_build`, which also creates each kernel).
- WGSL: naga, as wgpu-native runs it when it creates a shader module, through
  the `wgpu` Python package on the first adapter found (lavapipe here). Neither
  naga nor tint ships a device-free validator in this environment, so a
  (software) adapter is needed; without one the source is not checked.
- Metal Shading Language: not checkable off macOS (Apple's `metal` compiler is
  the only MSL front end).

GLSL (glslang), CUDA C++ (nvcc / NVRTC) and HIP (hipcc) are compiled by their
drivers, which raise the same CompileError.

A failure raises CompileError (a ValueError) before any module exists, so
nothing is exported. Source that cannot be checked here is compiled all the
same, with a SourceNotCheckedWarning saying why. `modrt.compile(...,
validate=False)` (`modrt compile --no-validate`) skips the checks, for source
meant for a newer device compiler than the one here.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence

from ._compile_errors import LANGUAGE as _LANGUAGE
from ._compile_errors import CompileError, SourceNotCheckedWarning

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Where the toolchain root installs the `wgpu` wheel (with wgpu-native inside).
WGPU_ROOTS: tuple[str, ...] = ("/opt/modrt/pip",)
# The OpenCL C version the OpenCL runtime builds for (clBuildProgram with no
# -cl-std builds OpenCL C 1.x on every device).
OPENCL_C_STD = "CL1.2"

_ENABLED: contextvars.ContextVar[bool] = contextvars.ContextVar("modrt_validate", default=True)
_FILENAME: contextvars.ContextVar[Any] = contextvars.ContextVar("modrt_validate_filename", default=None)


def enabled() -> bool:
    """Whether the current `modrt.compile` checks source (drivers ask this)."""
    return _ENABLED.get()


@contextlib.contextmanager
def validating(on: bool, filename: Any = None) -> Iterator[None]:
    """The checks' switch and the source's file name(s) for one `modrt.compile`."""
    token, name_token = _ENABLED.set(on), _FILENAME.set(filename)
    try:
        yield
    finally:
        _ENABLED.reset(token)
        _FILENAME.reset(name_token)


def tool_failed(kind: str, functions: Sequence[str], input_name: str, error: Exception) -> CompileError:
    """The CompileError for a compiler a driver ran (run_tool's ToolError, or
    NVRTC's) on `input_name`: its messages name the user's file instead."""
    names = _names(functions)
    ext = os.path.splitext(input_name)[1].lstrip(".")
    shown = display_name(_FILENAME.get(), names[0], ext)
    tool = getattr(error, "tool", "") or kind
    output = getattr(error, "output", None) or str(error)
    return CompileError(kind, names, shown, tool, output.replace(input_name, shown))


def not_checked(target: str, reason: str) -> None:
    warnings.warn(
        f"modrt: {_LANGUAGE.get(target, target)} source is not checked at compile time: {reason}",
        SourceNotCheckedWarning,
        stacklevel=5,
    )


def display_name(filename: None | str | Mapping[str, str], function: str, ext: str) -> str:
    """The name messages use for a function's source."""
    if filename is None:
        filename = _FILENAME.get()
    if isinstance(filename, Mapping):
        filename = filename.get(function)
    return filename or f"<{function}.{ext}>"


def check(kind: str, source: Any, functions: Sequence[str], filename: Any) -> None:
    """Checks `source` for target `kind` when this module knows how (see the module doc)."""
    if not enabled():
        return
    checker = _CHECKERS.get(kind)
    if checker is not None:
        checker(source, functions, filename)


def _names(functions: Sequence[str]) -> list[str]:
    from ._codegen import parse_signature

    return [parse_signature(f)[0] if "(" in f else f for f in functions]


def _text(data: str | bytes) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


# ---------------------------------------------------------------- OpenCL C


def _clang() -> str | None:
    from ._codegen import find_tool

    return find_tool("clang", "clang-21", "clang-20", "clang-19")


def _run_clang(clang: str, args: list[str], text: str, filename: str) -> tuple[int, str, str]:
    """Runs clang on `text` saved as `filename`'s base name in a scratch
    directory; messages name `filename`."""
    import subprocess
    import tempfile

    base = os.path.basename(filename).strip("<>") or "kernel.cl"
    with tempfile.TemporaryDirectory(prefix="modrt-check-") as tmp:
        with open(os.path.join(tmp, base), "w") as f:
            f.write(text)
        proc = subprocess.run([clang, *args, base], cwd=tmp, capture_output=True, text=True)
    messages = proc.stderr.replace(f"{base}:", f"{filename}:") if base != filename else proc.stderr
    return proc.returncode, proc.stdout, messages


def _opencl_kernel_defined(preprocessed: str, name: str) -> bool:
    pattern = r"\b(__kernel|kernel)\b[^;{}]*?\b" + re.escape(name) + r"\s*\("
    return re.search(pattern, preprocessed) is not None


def check_opencl(source: Any, functions: Sequence[str], filename: Any) -> None:
    from ._codegen import text_of

    text = text_of(source)
    names = _names(functions)
    name = display_name(filename if isinstance(filename, str) else None, names[0], "cl")
    tool = f"clang -x cl -cl-std={OPENCL_C_STD}"
    clang = _clang()
    if clang is None:
        not_checked("opencl", "clang is not installed (it provides the OpenCL C front end)")
    else:
        flags = [
            "-x",
            "cl",
            f"-cl-std={OPENCL_C_STD}",
            "--target=spir64",
            "-Xclang",
            "-fdeclare-opencl-builtins",
            "-Xclang",
            "-finclude-default-header",
        ]
        rc, _, messages = _run_clang(clang, [*flags, "-fsyntax-only", "-fno-color-diagnostics"], text, name)
        if rc != 0:
            raise CompileError("opencl", names, name, tool, messages)
        rc, preprocessed, messages = _run_clang(clang, [*flags, "-E", "-P"], text, name)
        missing = [n for n in names if rc == 0 and not _opencl_kernel_defined(preprocessed, n)]
        if missing:
            raise CompileError(
                "opencl",
                names,
                name,
                tool,
                "\n".join(
                    f"{name}: error: no __kernel function '{n}' in the source, though a signature names it"
                    for n in missing
                ),
            )
    _opencl_device_build(text, names, name)


def _opencl_device_build(text: str, names: list[str], name: str) -> None:
    """Builds the program on OpenCL device 0 when the runtime and a device are here."""
    from . import _ffi
    from .runtime import device

    build = _ffi.get_global_func("opencl.check_build", allow_missing=True)
    if build is None:
        return
    dev = device("opencl", 0)
    if not dev.exist:
        return
    log = build(0, text, " ".join(names))
    if log:
        raise CompileError("opencl", names, name, f"OpenCL build on {dev.name}", log)


# ---------------------------------------------------------------- WGSL

_WGPU: dict[str, Any] = {}


def _wgpu_device() -> tuple[Any, str]:
    """(a wgpu device, "") for naga's checks, or (None, why there is none). Cached per process."""
    if "device" in _WGPU:
        return _WGPU["device"], _WGPU["why"]
    device, why = None, ""
    try:
        try:
            import wgpu
        except ImportError:
            import sys

            roots = [r for r in WGPU_ROOTS if os.path.isdir(os.path.join(r, "wgpu"))]
            if not roots:
                raise
            sys.path.extend(r for r in roots if r not in sys.path)
            import wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference="low-power")
        if adapter is None:
            why = "wgpu found no adapter (no Vulkan, Metal, D3D12 or GL driver here)"
        else:
            # The features the WebGPU runtime asks for (webgpu_device.cc), so
            # that naga accepts what the runtime runs (`enable f16;`).
            device = adapter.request_device_sync(
                required_features=[f for f in ("shader-f16",) if f in adapter.features]
            )
    except ImportError:
        why = "the `wgpu` Python package (wgpu-native, whose naga validates WGSL) is not installed"
    except Exception as e:  # noqa: BLE001 - any failure of a driver means "cannot check here"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        why = f"wgpu could not open an adapter: {first}"
    _WGPU["device"], _WGPU["why"] = device, why
    return device, why


def _naga_message(error: Exception, filename: str) -> str:
    text = str(error)
    # wgpu-native wraps naga's report: keep naga's own lines.
    for marker in ("Shader '", "Caused by:"):
        at = text.find(marker)
        if at >= 0:
            text = text[at:].removeprefix("Caused by:")
            break
    text = re.sub(r"(┌─ )wgsl:", lambda m: m.group(1) + f"{filename}:", text)
    # One summary line in the compiler's file:line:column form, then naga's report.
    where = re.search(r"┌─ .*?:(\d+):(\d+)", text)
    head = text.strip().splitlines()[0] if text.strip() else "invalid WGSL"
    head = re.sub(r"^Shader '[^']*' (parsing |validation )?error: ", "", head)
    summary = f"{filename}:{where.group(1)}:{where.group(2)}: error: {head}" if where else f"{filename}: error: {head}"
    return summary + "\n" + "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def check_wgsl(source: Any, functions: Sequence[str], filename: Any) -> None:
    from ._codegen import per_function

    device, why = _wgpu_device()
    if device is None:
        not_checked("webgpu", why)
        return
    for name, code in per_function(source, functions).items():
        shown = display_name(filename, name, "wgsl")
        try:
            shader = device.create_shader_module(code=_text(code), label=name)
        except _gpu_error() as e:
            raise CompileError("webgpu", [name], shown, "naga (wgpu-native)", _naga_message(e, shown)) from None
        # Where the WebGPU runtime makes the module, it chooses the entry point
        # itself and says why it cannot; elsewhere (a cross-compile) it is checked here.
        problem = "" if _webgpu_runtime_makes_the_module() else _wgsl_entry_point_problem(device, shader, name)
        if problem:
            raise CompileError("webgpu", [name], shown, "naga (wgpu-native)", f"{shown}: error: {problem}")


def _webgpu_runtime_makes_the_module() -> bool:
    from . import backend

    return os.environ.get("MODRT_COMPILE_FORCE_FALLBACK") != "1" and backend.runtime_status("webgpu").loaded


def _gpu_error() -> type[Exception]:
    """wgpu's error class (GPUValidationError and the rest derive from it)."""
    import wgpu

    return wgpu.GPUError


def _wgsl_entry_point_problem(device: Any, shader: Any, name: str) -> str:
    """Why the WebGPU runtime would find no entry point for `name`, or "".
    Its rule: the @compute function named like the function, else the
    module's only one. Other pipeline errors (override constants, bindings)
    depend on the launch and are the runtime's to report."""
    try:
        device.create_compute_pipeline(layout="auto", compute={"module": shader, "entry_point": name})
        return ""
    except _gpu_error() as e:
        if "entry point" not in str(e):
            return ""
    try:
        device.create_compute_pipeline(layout="auto", compute={"module": shader})
        return ""
    except _gpu_error() as e:
        if "entry point" not in str(e):
            return ""
        return f"no @compute entry point '{name}', and not exactly one @compute entry point to use instead"


# ---------------------------------------------------------------- Metal


def check_metal(source: Any, functions: Sequence[str], filename: Any) -> None:
    not_checked(
        "metal",
        "MSL can be checked only on macOS, with Apple's metal compiler; it is compiled by the "
        "Metal runtime when the module is loaded",
    )


_CHECKERS = {"opencl": check_opencl, "webgpu": check_wgsl, "metal": check_metal}
