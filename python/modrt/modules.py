"""Modules (compiled code of one kind, with imported children), payloads
(what a codegen driver produces), loading them back, and checked mode."""

from __future__ import annotations

from . import _ffi
from ._ffi import call

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any


class Module(_ffi.Object):
    """Compiled code of one kind, with imported child modules."""

    __slots__ = ()

    @property
    def kind(self) -> str:
        return call("module.kind", self)

    @property
    def is_fallback(self) -> bool:
        """True when this module holds code whose runtime is not loaded here."""
        return bool(call("module.is_fallback", self))

    @property
    def function_names(self) -> list[str]:
        return call("module.function_names", self).split()

    def get_function(self, name: str) -> _ffi.Function:
        f = call("module.get_function", self, name)
        if f is None:
            raise AttributeError(
                f"{self.kind} module has no function '{name}' (it has: {', '.join(self.function_names) or 'none'})"
            )
        f._parameters = lambda: _parameter_names(self.signature(name))
        return f

    def signature(self, name: str) -> str:
        """The signature of function `name` as the module holds it (names,
        `const` and launch-filled arguments included); empty when the module
        that defines it keeps none (a host module's C function, an opaque
        out-of-tree module)."""
        return call("module.function_signature", self, name)

    def __getitem__(self, name: str) -> _ffi.Function:
        return self.get_function(name)

    def save_to_bytes(self) -> bytes:
        return call("module.save_to_bytes", self)

    def export(self, path: str) -> None:
        """Writes this module and its imports to a `.modrt` artifact file
        (`modrt.load_module(path)` reads it back)."""
        from . import artifact

        artifact.export(self, path)

    def inspect_source(self, format: str = "") -> Any:
        """Source of a held format (text as str, binary formats as bytes)."""
        data = call("module.inspect_source", self, format)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data

    @property
    def imports(self) -> list[Module]:
        return [call("module.get_import", self, i) for i in range(call("module.num_imports", self))]

    def import_module(self, child: Module) -> None:
        call("module.import_module", self, child)

    def __repr__(self) -> str:
        extra = ", fallback" if self.is_fallback else ""
        return f"modrt.Module(kind={self.kind}{extra}, functions={self.function_names})"


_ffi.register_object_class(_ffi.OBJ_MODULE, Module)


def _parameter_names(signature: str) -> list[str]:
    """What a call of a function with this signature passes, by name: its
    arguments not filled from the launch, then its launch parameters
    (blockIdx.x as blockIdx_x). An unnamed argument can be passed by position only."""
    if not signature:
        return []
    from ._signature import parse_signature

    _, args, tags = parse_signature(signature)
    passed = [a.name or f"<argument {i}>" for i, a in enumerate(args) if not a.launch_tag]
    return passed + [t.replace(".", "_") for t in tags]


def load_module(path: str, trusted_keys: Sequence[Any] | None = None, allow_host_code: bool | None = None) -> Module:
    """Loads a `.modrt` artifact written by `Module.export`; `trusted_keys`
    (default: MODRT_TRUSTED_KEYS) requires a signature by one of them, and
    `allow_host_code=False` refuses host modules (see modrt.artifact.load_module)."""
    from . import artifact

    return artifact.load_module(path, trusted_keys, allow_host_code)


def load_module_from_bytes(kind: str, data: bytes) -> Module:
    """A real module of `kind` from bytes saved by `Module.save_to_bytes`."""
    return call("module.load_from_bytes", kind, data)


class Payload(_ffi.Object):
    """What a codegen driver produces: code, format, signatures and sources."""

    __slots__ = ()

    @staticmethod
    def create(
        shape: str,
        fmt: str,
        functions: Iterable[str],
        code: bytes = b"",
        shaders: dict[str, bytes] | None = None,
        sources: dict[str, str] | None = None,
    ) -> Payload:
        p = call("payload.new", shape, fmt)
        for sig in functions:
            call("payload.add_function", p, sig)
        if code:
            call("payload.set_code", p, code)
        for name, blob in (shaders or {}).items():
            call("payload.set_shader", p, name, blob)
        for source_fmt, text in (sources or {}).items():
            call("payload.set_source", p, source_fmt, text)
        return p

    def save(self) -> bytes:
        return call("payload.save", self)


_ffi.register_object_class(_ffi.OBJ_PAYLOAD, Payload)


class checked:
    """Checked mode while the block runs (process-wide, like MODRT_CHECK=bounds):
    tensors allocated in it get guard zones, and functions fetched in it check
    their tensor arguments' guards after each call, raising IndexError naming
    the kernel, the argument and the bytes written out of bounds. It costs a
    guard read per tensor argument per launch (docs/RELIABILITY.md)."""

    def __init__(self, bounds: bool = True) -> None:
        self._bounds = bounds
        self._previous = 0

    def __enter__(self) -> checked:
        self._previous = call("check.bounds", int(self._bounds))
        return self

    def __exit__(self, *exc: object) -> None:
        call("check.bounds", self._previous)
