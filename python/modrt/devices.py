"""Devices: `modrt.device(kind, index)`, what a device is (its attributes,
memory figures, pool) and the device kinds the core knows. The bottom of the
device layer: streams, tensors and graphs stand on it."""

from __future__ import annotations

import functools

from . import _ffi
from ._ffi import call
from ._waits import bounded_wait

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Device kinds seen so far, both ways. Kinds come from the core's backend
# registry (cpu, and each backend that names its DLPack device type) and are
# never withdrawn, so answers are cached.
_TYPE_OF_KIND: dict[str, int] = {"cpu": 1}
_KIND_OF_TYPE: dict[int, str] = {1: "cpu"}


def device_type_of(kind: str) -> int:
    """The DLPack device type of `kind`, as its backend declared it (in its
    BUILD file, or an out-of-tree plugin or package). ValueError if unknown."""
    device_type = _TYPE_OF_KIND.get(kind)
    if device_type is None:
        device_type = call("device.type_of_kind", kind)
        if device_type < 0:
            raise ValueError(f"unknown device kind '{kind}'; known: {', '.join(device_kinds())}")
        _TYPE_OF_KIND[kind] = device_type
        _KIND_OF_TYPE[device_type] = kind
    return device_type


def device_kinds() -> dict[str, int]:
    """Every device kind the core knows now, with its DLPack device type."""
    kinds = {"cpu": 1}
    for line in call("backend.list").splitlines():
        name = line.split("\t", 1)[0]
        device_type = call("device.type_of_kind", name)
        if device_type >= 0:
            kinds[name] = device_type
    return kinds


@functools.cache
def device_attribute_names() -> tuple[str, ...]:
    """The names of the well-known device attributes, in the order of the C
    enum ModrtDeviceAttr (plugin_api.h); any other name is a backend's own."""
    return tuple(call("device.attribute_names").splitlines())


class Device:
    """A device: `modrt.device("opencl", 0)`. Querying a device never raises
    for a missing driver: `exist` is False and `unavailable_reason` says why."""

    __slots__ = ("kind", "index", "device_type")

    def __init__(self, kind: str, index: int = 0) -> None:
        device_type = device_type_of(kind)
        if index < 0:
            raise ValueError(f"device index must be >= 0, got {index}")
        self.kind = kind
        self.index = index
        self.device_type = device_type

    @classmethod
    def _from_dl(cls, dl: _ffi.DLDevice) -> Device:
        kind = _KIND_OF_TYPE.get(dl.device_type)
        if kind is None:
            kind = call("device.kind_name", dl.device_type)
            _KIND_OF_TYPE[dl.device_type] = kind
        return cls(kind, dl.device_id)

    def _dl_pair(self) -> tuple[int, int]:
        """(device_type, index): how a call passes this device (_ffi._box_arg)."""
        return (self.device_type, self.index)

    def __repr__(self) -> str:
        return f"{self.kind}({self.index})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (other.kind, other.index) == (self.kind, self.index)

    def __hash__(self) -> int:
        return hash((self.kind, self.index))

    @property
    def unavailable_reason(self) -> str:
        """Empty when the device exists; else why not (runtime not loaded, no driver, ...)."""
        return call("device.unavailable_reason", self)

    @property
    def exist(self) -> bool:
        return not self.unavailable_reason

    def attr(self, name: str) -> Any:
        """A device attribute by name, or None when the backend does not report
        it or the device does not exist (`unavailable_reason` says why)."""
        try:
            return call("device.attr", self, name)
        except Exception:
            if not self.exist:
                return None
            raise

    @property
    def name(self) -> str | None:
        return self.attr("name")

    @property
    def max_threads_per_block(self) -> int | None:
        return self.attr("max_threads_per_block")

    @property
    def warp_size(self) -> int | None:
        return self.attr("warp_size")

    @property
    def max_shared_memory_per_block(self) -> int | None:
        return self.attr("max_shared_memory_per_block")

    @property
    def compute_version(self) -> str | None:
        return self.attr("compute_version")

    @property
    def multi_processor_count(self) -> int | None:
        return self.attr("multi_processor_count")

    # The well-known attributes (plugin ABI 1.1's ModrtDeviceAttr): one name
    # and one type each, answered by every backend (typed where its plugin has
    # the extension, by name from an ABI 1.0 plugin).
    @property
    def vendor(self) -> str | None:
        return self.attr("vendor")

    @property
    def total_memory(self) -> int | None:
        """Bytes of device memory (the attribute `global_memory`)."""
        return self.attr("global_memory")

    @property
    def max_alloc_size(self) -> int | None:
        """Bytes one allocation may hold."""
        return self.attr("max_alloc_size")

    @property
    def max_block_dims(self) -> tuple[int | None, int | None, int | None]:
        return tuple(self.attr(f"max_block_dim_{axis}") for axis in "xyz")  # type: ignore[return-value]

    @property
    def max_grid_dims(self) -> tuple[int | None, int | None, int | None]:
        return tuple(self.attr(f"max_grid_dim_{axis}") for axis in "xyz")  # type: ignore[return-value]

    def attributes(self) -> dict[str, Any]:
        """Every well-known attribute the backend reports, by name."""
        values = {name: self.attr(name) for name in device_attribute_names()}
        return {name: value for name, value in values.items() if value is not None}

    def sync(self, timeout: float | None = None) -> None:
        """Waits until the device finished every launch (TimeoutError after
        `timeout` seconds, naming the pending launches)."""
        wait_device(self, timeout)
        call("device.sync", self)

    @property
    def default_stream(self) -> Any:
        """The device's default modrt.Stream (modrt.streams, which stands on
        this module, registers the class the core's stream objects become)."""
        return call("stream.default", self)

    def memory_stats(self) -> dict[str, int]:
        """The pool's figures: in_use, peak (bytes), allocations (live
        tensors), driver_allocations, pool_bytes (cached), largest_free_block,
        and the device's total memory (global_memory) where the backend reports it."""
        stats = {}
        for line in call("device.memory_stats", self).splitlines():
            key, _, value = line.partition("=")
            stats[key] = int(value)
        total = self.attr("global_memory")
        if total is not None:
            stats["global_memory"] = total
        return stats

    def empty_cache(self) -> None:
        """Gives the pool's cached blocks back to the driver."""
        call("device.empty_cache", self)


def wait_device(device: Device, timeout: float | None = None) -> None:
    """Waits until every stream of `device` completed its launches."""
    bounded_wait("device.wait", device, timeout)


_ffi.register_device_class(Device._from_dl)


def device(kind: str, index: int = 0) -> Device:
    return Device(kind, index)


def cpu(index: int = 0) -> Device:
    return Device("cpu", index)
