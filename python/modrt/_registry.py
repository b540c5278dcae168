"""What a backend is, in Python: one `Backend` record per backend, in one registry.

A record holds everything the front end asks of a backend: its codegen driver
(`modrt.compile`), its target detector (`modrt.target`), its source check and
its reflector (`modrt._validate`, `modrt.compile`), and its identity (device
facts). The registry is written once per backend, when its hook's
`register_backend()` returns (see modrt.backend.load), and read by compile,
target detection and validation; nothing else keeps per-backend tables.

This module is the ground the front end stands on: it imports nothing of modrt.
The public face is modrt.backend (`Backend`, `Reflector`, `register`, `record`).
"""

from __future__ import annotations

import contextvars

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    # Spelled without naming modrt.modules, modrt.devices and modrt.target,
    # which stand on this module: codegen(source, functions, target) -> modrt.Payload;
    # detect(device: modrt.Device) -> modrt.target.Target;
    # check(source, functions, filename) raises modrt.CompileError.
    CodegenDriver = Callable[..., Any]
    TargetDetector = Callable[..., Any]
    SourceChecker = Callable[..., None]


class _Frozen:
    """A record whose fields are set once, in __init__ (plain classes rather
    than dataclasses: `import dataclasses` imports `re` and `inspect`, which
    `import modrt` would pay for)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen; use replace()")

    def _set(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def replace(self, **changes: Any) -> Any:
        """A copy with `changes` applied (unknown field names raise TypeError)."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return type(self)(**fields)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Reflector(_Frozen):
    """How a backend reads a kernel source's own interface.

    `read(source)` -> one canonical signature per kernel (argument names,
    const buffers, element and scalar types, launch tags), in the order the
    source defines them, or None when this source does not declare its
    interface (PTX records no element types): signatures are then required.
    It runs on the codegen side, with or without the backend's runtime.

    Capabilities:
    - `names_kernel`: the source's kernels have no name of their own (GLSL's
      entry point is always main), so `read(source, function_name)` is called.
    - `buffer_fits(dtype, source, index) -> bool`: whether a buffer of `dtype`
      may be bound as argument `index` besides the kernel's own element type
      (a format that packs narrow data into wider words: WGSL's array<u32>).
    """

    __slots__ = ("read", "names_kernel", "buffer_fits")

    def __init__(
        self,
        read: Callable[..., list[str] | None],
        *,
        names_kernel: bool = False,
        buffer_fits: Callable[[str, str | bytes, int], bool] | None = None,
    ) -> None:
        if not callable(read):
            raise TypeError(f"a reflector reads with a callable, not {read!r}")
        self._set(read=read, names_kernel=bool(names_kernel), buffer_fits=buffer_fits)

    @classmethod
    def of(cls, read: Callable[..., Any]) -> Reflector:
        """A Reflector from a plain function whose capabilities are its
        attributes (`names_kernel`, `buffer_fits`), as out-of-tree backends wrote them."""
        if isinstance(read, Reflector):
            return read
        return cls(
            read, names_kernel=getattr(read, "names_kernel", False), buffer_fits=getattr(read, "buffer_fits", None)
        )


class Backend(_Frozen):
    """One backend, as the front end sees it. Every field but `name` is optional.

    - codegen: `codegen(source, functions, target)` -> modrt.Payload, for
      `modrt.compile(source, name, ...)`.
    - takes_compiler_options: the codegen driver reads the target's `options`
      and `include_dirs` (modrt.compile's `options=`, `include_dirs=`).
    - detect: `detect(device)` -> the Target describing a device of kind `name`.
    - check: `check(source, functions, filename)`: the compile-time source
      check (raises modrt.CompileError), run unless `validate=False`.
    - reflector: a Reflector, or a plain function (see Reflector.of).
    - identity: the device facts {display_name, device_type (DLPack),
      payload_shape ("single-binary"/"multi-shader"), formats, and optionally
      addressable_buffers: buffers are device addresses a kernel may take at
      a byte offset, False when absent}.
    - language: the source language `modrt.compile` takes, as messages name
      it ("OpenCL C"); messages say the backend's name where there is none.
    - demo: (source, signature) of `modrt demo`'s kernel in that language,
      `vadd(a, b, c, n)`: c = a + b over n float32 (the signature's launch
      tags say whether it takes a grid and block).
    """

    __slots__ = (
        "name",
        "codegen",
        "takes_compiler_options",
        "detect",
        "check",
        "reflector",
        "identity",
        "language",
        "demo",
    )

    def __init__(
        self,
        name: str,
        *,
        codegen: CodegenDriver | None = None,
        takes_compiler_options: bool = False,
        detect: TargetDetector | None = None,
        check: SourceChecker | None = None,
        reflector: Reflector | Callable[..., Any] | None = None,
        identity: Mapping[str, Any] | None = None,
        language: str | None = None,
        demo: tuple[Any, str] | None = None,
    ) -> None:
        if not name or not isinstance(name, str):
            raise ValueError(f"a backend needs a name, not {name!r}")
        for field, value in (("codegen", codegen), ("detect", detect), ("check", check)):
            if value is not None and not callable(value):
                raise TypeError(f"backend {name}: {field} must be callable, not {value!r}")
        self._set(
            name=name,
            codegen=codegen,
            takes_compiler_options=bool(takes_compiler_options),
            detect=detect,
            check=check,
            reflector=None if reflector is None else Reflector.of(reflector),
            identity=None if identity is None else dict(identity),
            language=language,
            demo=None if demo is None else tuple(demo),
        )


_records: dict[str, Backend] = {}
# While a hook registers: what it registered so far, written into _records
# only when the hook returns (a hook that raises leaves no half backend).
_pending: contextvars.ContextVar[dict[str, Backend] | None] = contextvars.ContextVar("modrt_pending", default=None)


def add(record: Backend) -> None:
    """Registers `record`, replacing a record of the same name."""
    if not isinstance(record, Backend):
        raise TypeError(f"expected a modrt.backend.Backend, not {type(record).__name__}")
    pending = _pending.get()
    (pending if pending is not None else _records)[record.name] = record


def update(name: str, **fields: Any) -> Backend:
    """Registers `name`'s record with `fields` set (a new record if it has none)."""
    current = get(name)
    record = Backend(name, **fields) if current is None else current.replace(**fields)
    add(record)
    return record


def get(name: str) -> Backend | None:
    """`name`'s record (one being registered by a running hook included), or None."""
    pending = _pending.get()
    if pending is not None and name in pending:
        return pending[name]
    return _records.get(name)


def language_of(name: str) -> str:
    """The source language of backend `name` as messages name it (its
    record's `language`), else the name itself."""
    record = get(name)
    return record.language if record is not None and record.language else name


def records() -> dict[str, Backend]:
    """Every registered record, by name."""
    return {**_records, **(_pending.get() or {})}


class staging:
    """`with staging(): hook()`: what `hook` registers is written into the
    registry when it returns, and dropped when it raises."""

    def __enter__(self) -> None:
        outer = _pending.get()
        self._token = _pending.set({} if outer is None else dict(outer))

    def __exit__(self, kind: type[BaseException] | None, *_: Any) -> None:
        registered = _pending.get() or {}
        _pending.reset(self._token)
        if kind is None:
            for record in registered.values():
                add(record)
