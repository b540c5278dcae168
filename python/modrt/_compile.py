"""`modrt.compile`: dispatch to the codegen driver of the target's backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Union

from ._ffi import call
from .runtime import Module, Payload
from .target import Target

# A codegen driver turns source and signatures into a payload.
CodegenDriver = Callable[[str | bytes, Sequence[str], Target], Payload]
_DRIVERS: dict[str, CodegenDriver] = {}


def register_codegen(kind: str, driver: CodegenDriver) -> None:
    """Registers the codegen driver of target kind `kind` (called by hooks)."""
    _DRIVERS[kind] = driver


def compile(  # noqa: A001 - the public name is modrt.compile
    source: Union[str, bytes],
    target: Union[str, Target],
    functions: Sequence[str],
    *,
    host: Optional[Module] = None,
) -> Module:
    """Compiles kernel `source` for `target`.

    `functions` are signatures such as
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)":
    buffer arguments end in '*', launch parameters follow ';'.

    For a device target the result is the real module when its runtime is
    loaded here, else a fallback module with identical bytes (`is_fallback`).
    With `host`, the device module is also imported into it.
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
                f"no codegen for target '{tgt.kind}'; known targets: "
                f"{', '.join(['cpu'] + sorted(_DRIVERS))}"
            )
        module = call(f"codegen.{tgt.kind}.create_module", driver(source, functions, tgt))
    if host is not None:
        host.import_module(module)
    return module
