"""`modrt.compile`: dispatch to the codegen driver of the target's backend."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ._ffi import call
from .runtime import Module, Payload
from .target import Target

# A codegen driver turns source and signatures into a payload.
CodegenDriver = Callable[[str | bytes, Sequence[str], Target], Payload]
_DRIVERS: dict[str, CodegenDriver] = {}


def register_codegen(kind: str, driver: CodegenDriver) -> None:
    """Registers the codegen driver of target kind `kind` (called by hooks)."""
    _DRIVERS[kind] = driver


def compile(
    source: str | bytes,
    target: str | Target,
    functions: Sequence[str],
    *,
    host: Module | None = None,
    validate: bool = True,
    filename: None | str | Mapping[str, str] = None,
) -> Module:
    """Compiles kernel `source` for `target`.

    `functions` are signatures such as
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)":
    buffer arguments end in '*', launch parameters follow ';'.

    For a device target the result is the real module when its runtime is
    loaded here, else a fallback module with identical bytes (`is_fallback`).
    With `host`, the device module is also imported into it.

    Source is checked here, runtime or not (see modrt._validate): OpenCL C
    with clang's OpenCL front end (and a build on a device where one is
    present), WGSL with naga; GLSL, CUDA C++ and HIP are compiled by their
    drivers. A failure raises `modrt.CompileError` naming the functions and
    `filename` (default `<function.ext>`) with the compiler's line:column
    messages, and no module is made. Source that cannot be checked here
    (Metal off macOS) gets a `modrt.SourceNotCheckedWarning`.
    `validate=False` skips the checks (source meant for a newer device
    compiler than the one here).
    """
    tgt = target if isinstance(target, Target) else Target(target)
    if not functions:
        raise ValueError("compile needs at least one function signature")
    if tgt.kind == "cpu":
        from . import _host_codegen

        module = _host_codegen.compile_c(source, functions)
    else:
        driver = _DRIVERS.get(tgt.kind)
        if driver is None:
            raise ValueError(
                f"no codegen for target '{tgt.kind}'; known targets: {', '.join(['cpu'] + sorted(_DRIVERS))}"
            )
        from . import _validate

        with _validate.validating(validate, filename):
            _validate.check(tgt.kind, source, functions, filename)
            payload = driver(source, functions, tgt)
        module = call(f"codegen.{tgt.kind}.create_module", payload)
    if host is not None:
        host.import_module(module)
    return module
