"""modrt info: what this installation can do, backend by backend.

usage: modrt info [--json]

For the core (cpu) and every backend: whether its runtime was selected by the
build flags, whether its DSO was found and loaded, whether a driver answered,
its devices with their key attributes and detected target, and, for every
"no", the reason.
"""

from __future__ import annotations

import json
from typing import Any

from . import _common
from ._flags import FLAGS, define

DEVICE_ATTRS = ("name", "max_threads_per_block", "warp_size", "max_shared_memory_per_block", "compute_version")


def define_flags() -> None:
    from absl import flags

    define(flags.DEFINE_bool, "json", False, "Print the report as JSON.")


def _devices(modrt: Any, kind: str) -> list[dict[str, Any]]:
    count = modrt._ffi.call("device.count", modrt.runtime.device_type_of(kind))
    devices = []
    for index in range(count):
        dev = modrt.device(kind, index)
        entry: dict[str, Any] = {"device": repr(dev)}
        for attr in DEVICE_ATTRS:
            try:
                value = dev.attr(attr)
            except Exception as e:  # noqa: BLE001 - a broken attribute is reported, not fatal
                value = f"error: {e}"
            if value is not None:
                entry[attr] = value
        try:
            entry["target"] = repr(modrt.target.detect_target_from_device(dev))
        except Exception as e:  # noqa: BLE001
            entry["target"] = f"none: {e}"
        devices.append(entry)
    return devices


def collect(modrt: Any) -> list[dict[str, Any]]:
    core = modrt._ffi.find_library(modrt._selection.CORE)
    rows = [{
        "backend": "cpu",
        "selected": True,
        "dso": str(core),
        "dso_found": core is not None,
        "loaded": True,
        "driver_found": True,
        "devices": _devices(modrt, "cpu"),
        "reason": "",
    }]
    in_tree = modrt.backend.in_tree()
    loaded = modrt.backend.loaded()
    kinds = modrt.runtime.device_kinds()
    for r in modrt.backend.report():
        kind_known = r.name in kinds
        if r.name not in in_tree:
            # Out of tree: no build flag or in-tree DSO; its entry point loaded it.
            rows.append({
                "backend": r.name,
                "selected": None,
                "dso": loaded.get(r.name, ""),
                "dso_found": None,
                "loaded": r.name in loaded,
                "driver_found": r.driver_found if kind_known else None,
                "devices": _devices(modrt, r.name) if kind_known and r.driver_found else [],
                "reason": "" if r.name in loaded else r.reason,
            })
            continue
        rows.append({
            "backend": r.name,
            "selected": r.selected,
            "dso": r.dso,
            "dso_found": r.dso_found,
            "loaded": r.loaded,
            "driver_found": r.driver_found,
            "devices": _devices(modrt, r.name) if kind_known and r.driver_found else [],
            "reason": r.reason,
        })
    return rows


def _yes(v: bool | None) -> str:
    return "n/a" if v is None else "yes" if v else "no"


def main(argv: list[str]) -> int:
    if argv:
        return _common.fail(f"info takes no arguments, got {argv}", 2)
    modrt = _common.import_modrt()
    rows = collect(modrt)
    if FLAGS.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(_common.table(
        ["backend", "selected", "DSO found", "loaded", "driver", "devices", "why not"],
        [[r["backend"], _yes(r["selected"]), _yes(r["dso_found"]), _yes(r["loaded"]), _yes(r["driver_found"]),
          len(r["devices"]), r["reason"] or (r["dso"] if r["selected"] is None else "-")] for r in rows],
    ))
    devices = [(r["backend"], d) for r in rows for d in r["devices"]]
    if devices:
        print()
        print(_common.table(
            ["device", *DEVICE_ATTRS, "detected target"],
            [[d["device"], *[d.get(a, "-") for a in DEVICE_ATTRS], d["target"]] for _, d in devices],
        ))
    return 0
