"""Backends: in-tree hooks (modrt.backend.<x>), their runtime DSOs, and
out-of-tree backends found through the `modrt.backends` entry-point group.

`modrt.backend` is a namespace: `modrt.backend.<x>` may come from this
repository's backends/<x>/ or from any installed distribution.

What a backend is, in Python, is one `Backend` record (codegen driver, target
detector, source check, reflector, device facts): `register(Backend(...))`
writes it, `record(name)` reads it. A hook's registration is written when its
`register_backend()` (or entry point) returns; one that raises leaves nothing.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import warnings

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from collections.abc import Callable, Mapping

from .._namespace import extend_path

__path__ = extend_path(__path__, __name__)

from .. import _entry_points, _ffi, _locate, _registry, _selection, _verify, _version
from .._registry import Backend, Reflector
from ..devices import Device, device_type_of

__all__ = [
    "Backend",
    "BackendReport",
    "Reflector",
    "RuntimeStatus",
    "autoload",
    "failures",
    "in_tree",
    "is_loaded",
    "load",
    "load_plugin",
    "load_runtime",
    "loaded",
    "record",
    "records",
    "register",
    "register_codegen",
    "register_in_tree",
    "report",
    "runtime_status",
]

ENTRY_POINT_GROUP = "modrt.backends"


# Plain classes rather than dataclasses: `import dataclasses` costs milliseconds.
class RuntimeStatus:
    """What happened to one backend's runtime DSO in this process.

    `copies` lists every copy modrt found (see modrt._locate.runtime_copies for
    the order of preference), each with its origin and what became of it;
    `path` and `origin` are the copy chosen (loaded, or to be loaded)."""

    __slots__ = ("selected", "path", "loaded", "reason", "origin", "copies")

    def __init__(
        self,
        selected: bool,
        path: str | None = None,
        loaded: bool = False,
        reason: str = "",
        origin: str = "",
        copies: list[_locate.RuntimeCopy] | None = None,
    ) -> None:
        self.selected = selected  # the build flags selected it (the in-tree build bundles it)
        self.path = path
        self.loaded = loaded
        self.reason = reason  # why it is not loaded
        self.origin = origin
        self.copies = copies or []

    def __repr__(self) -> str:
        return (
            f"RuntimeStatus(selected={self.selected!r}, path={self.path!r}, loaded={self.loaded!r}, "
            f"reason={self.reason!r}, origin={self.origin!r}, copies={self.copies!r})"
        )


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.loaded: dict[str, str] = {}  # name -> how it was loaded
        self.failed: dict[str, str] = {}  # name -> why not
        self.runtimes: dict[str, RuntimeStatus] = {}
        self.autoloaded = False


_state = _State()


def in_tree() -> list[str]:
    """The in-tree backends this build knows, whether or not their runtime was selected."""
    return list(_selection.RUNTIMES)


def load(name: str) -> None:
    """Imports modrt.backend.<name> and calls its register_backend(), once."""
    with _state.lock:
        if name in _state.loaded:
            return
        hook = f"{__name__}.{name}"
        try:
            module = importlib.import_module(hook)
        except ModuleNotFoundError as e:
            if e.name != hook:  # the hook exists; what it imports is missing
                raise
            raise ImportError(f"modrt: no backend hook modrt.backend.{name}: {e}") from e
        register = getattr(module, "register_backend", None)
        if not callable(register):
            raise ImportError(f"modrt: modrt.backend.{name} has no register_backend()")
        _registering(register)
        _state.loaded[name] = "hook"
        _state.failed.pop(name, None)


def _registering(register: Callable[[], Any]) -> None:
    """Calls a hook's registration; its records are written when it returns,
    so a failed backend is not half there. (What it declared to the core, an
    identity or a runtime DSO, stays: native state cannot be taken back.)"""
    with _registry.staging():
        register()


def record(name: str) -> Backend | None:
    """The record of backend `name`, or None when none is registered."""
    return _registry.get(name)


def records() -> dict[str, Backend]:
    """Every registered backend record, by name (cpu's included: its target detector)."""
    return _registry.records()


def load_plugin(path: str | os.PathLike[str], options: Mapping[str, str] | None = None) -> None:
    """Loads a backend plugin DSO built against modrt's C ABI (what an
    out-of-tree backend's entry point does). Checks its ABI version, runs its
    init once; loading the same file again is a no-op. `options`: its
    load-time configuration, strings the plugin reads while it registers
    (docs/C_ABI.md, load_option)."""
    _ffi.load_plugin(path, options)


def is_loaded(name: str) -> bool:
    return name in _state.loaded


def loaded() -> dict[str, str]:
    """Loaded backends, each with how it came: 'hook' or 'entry point <name>'."""
    return dict(_state.loaded)


def failures() -> dict[str, str]:
    """Backends whose hook or entry point failed in this process, and why."""
    return dict(_state.failed)


def runtime_status(name: str) -> RuntimeStatus:
    """Whether `name`'s runtime DSO was selected, found and loaded, and why not."""
    with _state.lock:
        status = _state.runtimes.get(name)
        if status is None:
            status = _locate_runtime(name)
        return status


def _locate_runtime(name: str) -> RuntimeStatus:
    """Finds `name`'s runtime DSO by presence: the build flags decide what the
    in-tree build bundles, not what may load (see runtime_copies for the order)."""
    if name not in _selection.RUNTIMES:
        return RuntimeStatus(selected=False, reason="not an in-tree backend")
    relative = _selection.RUNTIMES[name]
    selected = relative is not None
    copies = _locate.runtime_copies(name, relative, _version.PLUGIN_ABI, _version.__version__, sys.path)
    usable = [c for c in copies if not c.problem]
    if usable:
        return RuntimeStatus(selected=selected, path=usable[0].path, origin=usable[0].origin, copies=copies)
    problems = "; ".join(c.problem for c in copies)
    if selected:
        expected = os.path.join(_ffi.package_root(), relative)
        return RuntimeStatus(selected=True, path=expected, copies=copies, reason=problems or _locate.missing(expected))
    if name not in _selection.HAS_RUNTIME:
        why = (
            f"modrt has no native {name} runtime (its modrt_backend() declares no runtime_srcs); "
            "its modules compile to fallbacks"
        )
    elif name in _selection.FLAGS_ON:
        why = f"--//backends:{name}=on, but its runtime does not build for this platform"
    else:
        why = (
            f"not selected in this build (--//backends:{name}=off), and no modrt-{name} wheel "
            "or MODRT_LIBRARY_PATH copy is installed"
        )
    return RuntimeStatus(selected=False, copies=copies, reason=problems or why)


class BackendReport:
    """Everything about one backend in this process, for `modrt info`."""

    __slots__ = (
        "name",
        "hook_loaded",
        "selected",
        "dso",
        "dso_found",
        "loaded",
        "driver_found",
        "devices",
        "reason",
        "origin",
        "copies",
    )

    def __init__(
        self,
        *,
        name: str,
        hook_loaded: bool,
        selected: bool,
        dso: str | None,
        dso_found: bool,
        loaded: bool,
        driver_found: bool,
        devices: int,
        reason: str,
        origin: str = "",
        copies: list[dict[str, str]] | None = None,
    ) -> None:
        self.name = name
        self.hook_loaded = hook_loaded  # modrt.backend.<name> registered (codegen, target detector)
        self.selected = selected  # the build flags selected its runtime DSO
        self.dso = dso  # where the runtime DSO is (or was expected)
        self.dso_found = dso_found
        self.loaded = loaded  # the runtime DSO is loaded in this process
        self.driver_found = driver_found  # its device API reports at least one device
        self.devices = devices
        self.reason = reason  # why the first "no" above is a no; empty when all is well
        self.origin = origin  # where the chosen DSO came from ("wheel modrt-opencl 1.0.0", "build", ...)
        self.copies = copies or []  # every copy found: {origin, path, state}

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__slots__)
        return f"BackendReport({fields})"


def report(names: list[str] | None = None) -> list[BackendReport]:
    """One report per backend (in-tree ones, then those loaded from entry
    points): selected, DSO found, loaded, driver found, and why not."""
    if names is None:
        names = in_tree() + [n for n in _state.loaded if n not in _selection.RUNTIMES]
    reports = []
    for name in names:
        status = runtime_status(name)
        dso_found = status.path is not None and os.path.exists(status.path)
        devices, device_reason = 0, "no device kind of this name"
        try:
            device_type = device_type_of(name)
        except ValueError:
            device_type = -1
        if device_type >= 0:
            device_reason = Device(name).unavailable_reason
            devices = 0 if device_reason else _ffi.call("device.count", device_type)
        hook_loaded = name in _state.loaded
        reason = (
            _state.failed.get(name, "")
            or ("" if hook_loaded else "hook not loaded (autoload off, or not yet imported)")
            or status.reason
            or device_reason
        )
        reports.append(
            BackendReport(
                name=name,
                hook_loaded=hook_loaded,
                selected=status.selected,
                dso=status.path,
                dso_found=dso_found,
                loaded=status.loaded,
                driver_found=devices > 0,
                devices=devices,
                reason=reason,
                origin=status.origin,
                copies=[c.as_dict() for c in status.copies],
            )
        )
    return reports


def register(
    backend: str | Backend,
    *,
    identity: dict[str, Any] | None = None,
    runtime: str | os.PathLike[str] | None = None,
    detector: Callable[..., Any] | None = None,
    codegen: Callable[..., Any] | None = None,
    reflect: Callable[..., Any] | None = None,
) -> None:
    """What every backend, in-tree or out-of-tree, registers from Python.

    `register(Backend(name, codegen=..., detect=..., check=..., reflector=...,
    identity=...))` writes the backend's record (see modrt.backend.Backend),
    declaring its identity to the core when it has one. The keyword form
    `register(name, ...)` sets fields of `name`'s record one by one:

    identity: {display_name, device_type (DLPack), payload_shape
      ("single-binary"/"multi-shader"), formats}: declares the backend to the
      core (the same C call a plugin makes; registering it again is a no-op).
    runtime: a plugin DSO to load now (an error if it cannot load).
    detector: how to describe a device of kind `name` as a Target.
    codegen: `codegen(source, functions, target)` -> modrt.Payload, for
      `modrt.compile(source, name, ...)`; a true attribute
      `takes_compiler_options` on it sets that field.
    reflect: `reflect(source)` -> [signature, ...]: the kernels `source`
      defines, each as a canonical signature read from the kernel itself, or
      a Reflector (its capabilities `names_kernel` and `buffer_fits` may also
      be attributes of the function; see modrt.backend.Reflector). With it,
      `modrt.compile` infers signatures when none are given and checks given
      ones against the kernel. It must work without the runtime DSO
      (cross-compiling): read the source in Python, or through
      libmodrt_compiler.so (the backend's :fallback library).
    """
    if isinstance(backend, Backend):
        if any(v is not None for v in (identity, runtime, detector, codegen, reflect)):
            raise TypeError("register(Backend(...)) takes no other arguments: the record holds them")
        if backend.identity is not None:
            _ffi.register_backend_identity(backend.name, **backend.identity)
        _registry.add(backend)
        return
    name = backend
    if identity is not None:
        _ffi.register_backend_identity(name, **identity)
    if runtime is not None:
        _ffi.load_plugin(runtime)
    fields: dict[str, Any] = {}
    if identity is not None:
        fields["identity"] = identity
    if detector is not None:
        fields["detect"] = detector
    if codegen is not None:
        fields["codegen"] = codegen
        fields["takes_compiler_options"] = bool(getattr(codegen, "takes_compiler_options", False))
    if reflect is not None:
        fields["reflector"] = Reflector.of(reflect)
    if fields:
        _registry.update(name, **fields)


def register_in_tree(backend: Backend, runtime_options: Mapping[str, str] | None = None) -> None:
    """What every in-tree hook's register_backend() does: declare the identity
    its BUILD file gives, load the runtime DSO if selected and present (a
    broken one is a warning) with `runtime_options` as its load-time
    configuration, then register its record (codegen, target detector,
    source check and reflector work with or without the runtime)."""
    record = backend.replace(identity=_selection.IDENTITIES[backend.name])
    _ffi.register_backend_identity(record.name, **record.identity)
    load_runtime(record.name, runtime_options)
    _registry.add(record)


def register_codegen(kind: str, driver: Callable[..., Any]) -> None:
    """Makes `modrt.compile(source, kind, ...)` call `driver(source, functions, target)`,
    which returns a modrt.Payload."""
    register(kind, codegen=driver)


def load_runtime(name: str, options: Mapping[str, str] | None = None) -> bool:
    """Loads `name`'s runtime DSO, the first usable copy in the order of
    modrt._locate.runtime_copies, whether or not the flags selected it, with
    `options` as its load-time configuration (see load_plugin).

    None found: skipped silently. A copy that cannot be used (a backend wheel
    for another plugin ABI major, or whose DSO is missing) or that fails to
    load (damaged, refused by the core): a warning naming the file and the
    reason, and the next copy is tried. Returns whether the runtime is loaded.
    """
    with _state.lock:
        status = _state.runtimes.get(name)
        if status is not None:
            return status.loaded
        status = _locate_runtime(name)
        _state.runtimes[name] = status
        for copy in status.copies:
            if copy.problem:
                warnings.warn(
                    f"modrt: {name} runtime from {copy.origin} skipped: {copy.problem}", RuntimeWarning, stacklevel=2
                )
        failures = []
        for copy in status.copies:
            if copy.problem:
                continue
            if status.loaded:
                copy.state = f"not loaded: the copy from {status.origin} was loaded first"
                continue
            try:
                _verify.check(copy.path)
                _ffi.load_plugin(copy.path, options)
            except Exception as e:  # noqa: BLE001 - a broken DSO must not break import
                copy.state = f"failed: {e}"
                failures.append(str(e))
                warnings.warn(f"modrt: {name} runtime not loaded: {e}", RuntimeWarning, stacklevel=2)
                continue
            copy.state = "loaded"
            status.loaded, status.path, status.origin, status.reason = True, copy.path, copy.origin, ""
        if not status.loaded and failures:
            status.reason = "; ".join(failures)
        return status.loaded


def _load_extra() -> None:
    path = _ffi.find_library("backends/extra/libmodrt_runtime_extra.so")
    if path is None:
        return
    try:
        _verify.check(path)
        _ffi.load_plugin(path)
    except Exception as e:  # noqa: BLE001
        warnings.warn(f"modrt: {path} not loaded: {e}", RuntimeWarning, stacklevel=2)


def _load_entry_points() -> None:
    if not _entry_points.some_distribution_declares(ENTRY_POINT_GROUP):
        return
    from importlib import metadata

    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        name = f"entry point {ep.name} ({ep.value})"
        try:
            hook = ep.load()
            if not callable(hook):
                raise TypeError(f"{ep.value} is not callable")
            _registering(hook)
            _state.loaded[ep.name] = name
        except Exception as e:  # noqa: BLE001 - out-of-tree code must not break import
            _state.failed[ep.name] = f"{name}: {type(e).__name__}: {e}"
            warnings.warn(f"modrt: backend {name} failed: {e}", RuntimeWarning, stacklevel=2)


def autoload() -> None:
    """Once per process: in-tree hooks (each loading its runtime if selected),
    libmodrt_runtime_extra.so, then the `modrt.backends` entry points.
    MODRT_DEVICE_BACKEND_AUTOLOAD=0 turns it all off."""
    with _state.lock:
        if _state.autoloaded:
            return
        _state.autoloaded = True
        if os.environ.get("MODRT_DEVICE_BACKEND_AUTOLOAD", "1") == "0":
            return
        for name in _selection.RUNTIMES:
            try:
                load(name)
            except Exception as e:  # noqa: BLE001 - a raising hook must not break import
                _state.failed[name] = f"hook: {type(e).__name__}: {e}"
                warnings.warn(f"modrt: backend hook {name} failed: {e}", RuntimeWarning, stacklevel=2)
        _load_extra()
        _load_entry_points()
