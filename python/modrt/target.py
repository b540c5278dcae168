"""Compilation targets, and detecting one from a device."""

from __future__ import annotations

from collections.abc import Callable

from . import _registry
from .devices import Device

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Target:
    """A compilation target: a kind ("cpu", "cuda", ...) and its attributes."""

    def __init__(self, kind: str, **attrs: Any) -> None:
        if not kind:
            raise ValueError("a target needs a kind")
        self.kind = kind
        self.attrs = attrs

    def __getattr__(self, name: str) -> Any:
        try:
            return self.attrs[name]
        except KeyError:
            raise AttributeError(f"target {self.kind} has no attribute '{name}'") from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and (self.kind, self.attrs) == (other.kind, other.attrs)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in sorted(self.attrs.items()))
        return f"Target({self.kind!r}{', ' if inner else ''}{inner})"


def device_limits(dev: Device) -> dict[str, Any]:
    """The limits every GPU-like target records, read from the device."""
    return {
        "max_threads_per_block": dev.max_threads_per_block,
        "max_shared_memory_per_block": dev.max_shared_memory_per_block,
    }


def register_device_target_detector(device_type: str, detector: Callable[[Device], Target]) -> None:
    """Registers how to describe a device of `device_type` as a Target (the
    `detect` field of its modrt.backend record)."""
    _registry.update(device_type, detect=detector)


def _detector(kind: str) -> Callable[[Device], Target] | None:
    record = _registry.get(kind)
    return None if record is None else record.detect


def detect_target_from_device(dev: Device | str) -> Target:
    """The target of an existing device. ValueError for a device type with no
    detector (naming the supported ones) or a device that does not exist."""
    if isinstance(dev, str):
        if _detector(dev) is None:
            _unknown(dev)
        dev = Device(dev)
    detector = _detector(dev.kind)
    if detector is None:
        _unknown(dev.kind)
    reason = dev.unavailable_reason
    if reason:
        raise ValueError(
            f"cannot detect a target: {dev} does not exist ({reason}); check that its driver "
            f"is installed and that libmodrt_runtime_{dev.kind}.so is built "
            f"(--//backends:{dev.kind}=on)"
        )
    return detector(dev)


def _unknown(kind: str) -> Any:
    supported = sorted(name for name, record in _registry.records().items() if record.detect is not None)
    raise ValueError(f"no target detector for device type '{kind}'; supported: {', '.join(supported)}")


# The host: every build describes its CPU the same way.
register_device_target_detector("cpu", lambda dev: Target("cpu"))
