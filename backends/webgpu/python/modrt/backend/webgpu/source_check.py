"""WGSL checked at compile time, runtime or not (see modrt._validate).

naga checks the source as wgpu-native runs it when it creates a shader module,
through the `wgpu` Python package on the first adapter found (lavapipe here).
Neither naga nor tint ships a device-free validator in this environment, so a
(software) adapter is needed; without one the source is compiled unchecked,
with a SourceNotCheckedWarning saying why.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

from modrt import sdk

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
            roots = [r for r in sdk.WHEEL_ROOTS if os.path.isdir(os.path.join(r, "wgpu"))]
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


def check(source: Any, functions: Sequence[str], filename: Any) -> None:
    """CompileError when naga rejects a function's WGSL, or (cross-compiling)
    the WebGPU runtime would find no entry point for it."""
    device, why = _wgpu_device()
    if device is None:
        sdk.not_checked("webgpu", why)
        return
    for name, code in sdk.per_function(source, functions).items():
        shown = sdk.display_name(filename, name, "wgsl")
        try:
            shader = device.create_shader_module(
                code=code.decode("utf-8", "replace") if isinstance(code, bytes) else code, label=name
            )
        except _gpu_error() as e:
            raise sdk.CompileError("webgpu", [name], shown, "naga (wgpu-native)", _naga_message(e, shown)) from None
        # Where the WebGPU runtime makes the module, it chooses the entry point
        # itself and says why it cannot; elsewhere (a cross-compile) it is checked here.
        problem = "" if _webgpu_runtime_makes_the_module() else _wgsl_entry_point_problem(device, shader, name)
        if problem:
            raise sdk.CompileError("webgpu", [name], shown, "naga (wgpu-native)", f"{shown}: error: {problem}")


def _webgpu_runtime_makes_the_module() -> bool:
    return os.environ.get("MODRT_COMPILE_FORCE_FALLBACK") != "1" and sdk.runtime_status("webgpu").loaded


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
