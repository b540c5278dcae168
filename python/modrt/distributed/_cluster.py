"""The Ray cluster as modrt sees it: Ray itself, the devices each node
offers as custom resources, and what a session's `devices` asks for."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

# Each node offers its modrt devices to Ray as custom resources of these names.
RESOURCE_PREFIX = "modrt_"


def import_ray() -> Any:
    """Ray, installed (`pip install 'modrt[ray]'`) or, like modrt's other
    optional wheels, under a root of modrt._locate.WHEEL_ROOTS (pip --target:
    the toolchain root's /opt/modrt/pip)."""
    import importlib.util
    import sys

    from modrt._locate import WHEEL_ROOTS

    if importlib.util.find_spec("ray") is None:
        for root in WHEEL_ROOTS:
            if os.path.isdir(os.path.join(root, "ray")):
                sys.path.append(root)
                # The processes of a local cluster (raylet, workers) find it too.
                paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
                os.environ["PYTHONPATH"] = os.pathsep.join(paths + [root])
                break
    try:
        import ray
    except ImportError as e:
        raise ImportError(f"modrt.distributed needs Ray: pip install 'modrt[ray]' ({e})") from None
    return ray


def node_resources(workers_per_device: int = 1) -> dict[str, float]:
    """The Ray custom resources this node offers: `modrt_<kind>` = the number
    of devices of each kind that exist here, times `workers_per_device`
    (several workers may share one device). `python -m modrt.distributed
    resources` prints it for `ray start --resources=...`."""
    import modrt

    if workers_per_device < 1:
        raise ValueError(f"workers_per_device must be at least 1, got {workers_per_device}")
    out: dict[str, float] = {}
    for kind, device_type in modrt.runtime.device_kinds().items():
        count = modrt._ffi.call("device.count", device_type)
        if count > 0 and modrt.device(kind, 0).exist:
            out[RESOURCE_PREFIX + kind] = float(count * workers_per_device)
    return out


def parse_devices(devices: Any) -> list[str] | str:
    """The kind of each worker, or "<kind>:*" (every device of that kind in the cluster)."""
    if isinstance(devices, bool):
        raise TypeError("devices is a kind ('cpu'), 'kind:N', 'kind:*', a count or a list of kinds, not a bool")
    if isinstance(devices, int):
        if devices < 1:
            raise ValueError(f"devices: a session needs at least one worker, got {devices}")
        return ["cpu"] * devices
    if isinstance(devices, str):
        kind, sep, count = devices.partition(":")
        if not kind:
            raise ValueError(f"devices: no kind in {devices!r}")
        if not sep:
            return [kind]
        if count == "*":
            return devices
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"devices: {devices!r} is not 'kind', 'kind:N' (N >= 1) or 'kind:*'")
        return [kind] * int(count)
    if isinstance(devices, Sequence) and devices and all(isinstance(d, str) and ":" not in d for d in devices):
        return list(devices)
    raise TypeError(
        f"devices is a kind ('cpu'), 'kind:N', 'kind:*', a count or a non-empty list of kinds, not {devices!r}"
    )


def cluster_summary(ray: Any) -> str:
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    offered: dict[str, float] = {}
    for n in nodes:
        for name, amount in n.get("Resources", {}).items():
            if name.startswith(RESOURCE_PREFIX):
                offered[name[len(RESOURCE_PREFIX) :]] = offered.get(name[len(RESOURCE_PREFIX) :], 0) + amount
    free = ray.available_resources()
    devices = ", ".join(
        f"{kind}: {int(total)} ({int(free.get(RESOURCE_PREFIX + kind, 0))} free)"
        for kind, total in sorted(offered.items())
    )
    return f"{len(nodes)} node(s) offering {devices or 'no modrt devices'}"
