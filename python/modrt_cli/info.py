"""modrt info: what this installation can do, backend by backend.

usage: modrt info [--json] [--verbose]

For the core (cpu) and every backend: whether its runtime was selected by the
build flags, whether its DSO was found and loaded and where it came from
(MODRT_LIBRARY_PATH, a modrt-<x> wheel, modrt's own lib/, the build), whether
a driver answered, its devices with their key attributes and detected target,
and, for every "no", the reason. Where a runtime was found more than once,
every copy is listed with its origin and what became of it (the first usable
one in that order is loaded). The tables fit 100 columns: long reasons and
targets are shortened, and --verbose prints them in full, wrapped (--json has
everything).
"""

from __future__ import annotations

import json
from typing import Any

from . import _common
from ._flags import FLAGS, define

DEVICE_ATTRS = ("name", "max_threads_per_block", "warp_size", "max_shared_memory_per_block", "compute_version")
# Their table headers (the JSON keeps the attribute names).
DEVICE_HEADERS = ("name", "threads/block", "warp", "shared/block", "compute")


def define_flags() -> None:
    from absl import flags

    define(flags.DEFINE_bool, "json", False, "Print the report as JSON.")
    define(flags.DEFINE_bool, "verbose", False, "Print every reason and target in full (wrapped), not shortened.")


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
    rows = [
        {
            "backend": "cpu",
            "selected": True,
            "dso": str(core),
            "dso_found": core is not None,
            "loaded": True,
            "driver_found": True,
            "devices": _devices(modrt, "cpu"),
            "reason": "",
            "origin": "modrt",
            "copies": [],
        }
    ]
    in_tree = modrt.backend.in_tree()
    loaded = modrt.backend.loaded()
    kinds = modrt.runtime.device_kinds()
    for r in modrt.backend.report():
        kind_known = r.name in kinds
        if r.name not in in_tree:
            # Out of tree: no build flag or in-tree DSO; its entry point loaded it.
            rows.append(
                {
                    "backend": r.name,
                    "selected": None,
                    "dso": loaded.get(r.name, ""),
                    "dso_found": None,
                    "loaded": r.name in loaded,
                    "driver_found": r.driver_found if kind_known else None,
                    "devices": _devices(modrt, r.name) if kind_known and r.driver_found else [],
                    "reason": "" if r.name in loaded else r.reason,
                    "origin": loaded.get(r.name, ""),
                    "copies": [],
                }
            )
            continue
        rows.append(
            {
                "backend": r.name,
                "selected": r.selected,
                "dso": r.dso,
                "dso_found": r.dso_found,
                "loaded": r.loaded,
                "driver_found": r.driver_found,
                "devices": _devices(modrt, r.name) if kind_known and r.driver_found else [],
                "reason": r.reason,
                "origin": r.origin,
                "copies": r.copies,
            }
        )
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
    else:
        print(render(rows, verbose=FLAGS.verbose))
    return 0


def render(rows: list[dict[str, Any]], verbose: bool = False) -> str:
    """The report for `rows` (as `collect` gives them) as text: tables that fit
    100 columns whatever the names, counts and reasons in them."""
    out: list[str] = []
    table, shortened = _common.fitted_table(
        ["backend", "selected", "DSO found", "loaded", "from", "driver", "devices", "why not"],
        [
            [
                r["backend"],
                _yes(r["selected"]),
                _yes(r["dso_found"]),
                _yes(r["loaded"]),
                r["origin"] if r["loaded"] else "-",
                _yes(r["driver_found"]),
                len(r["devices"]),
                r["reason"] or (r["dso"] if r["selected"] is None else "-"),
            ]
            for r in rows
        ],
        flexible=(7, 4, 0),
        verbose=verbose,
    )
    out.append(table)
    copies = [
        (r["backend"], c)
        for r in rows
        for c in r["copies"]
        if len(r["copies"]) > 1 or c["state"] not in ("loaded", "found")
    ]
    if copies:
        out.append("")
        out.append("Runtimes found more than once, or skipped (the first usable copy loads: MODRT_LIBRARY_PATH,")
        out.append("then modrt-<x> wheels in sys.path order, then modrt's own lib/, then the build):")
        copy_table, more = _common.fitted_table(
            ["#", "backend", "from", "state"],
            [[i, name, c["origin"], c["state"]] for i, (name, c) in enumerate(copies, 1)],
            flexible=(3, 2, 1),
            verbose=verbose,
        )
        out.append(copy_table)
        shortened |= more
        # Paths are never shortened: each on a line of its own.
        for i, (_, c) in enumerate(copies, 1):
            out.append(f"{i:>2}  {c['path']}")
    devices = [d for r in rows for d in r["devices"]]
    if devices:
        out.append("")
        # Verbose: targets are long, so they follow the table, one wrapped paragraph each.
        target_column = [] if verbose else ["detected target"]
        headers = ["device", *DEVICE_HEADERS, *target_column]
        table, more = _common.fitted_table(
            headers,
            [
                [d["device"], *[d.get(a, "-") for a in DEVICE_ATTRS], *([] if verbose else [d["target"]])]
                for d in devices
            ],
            # The target (when shown), then the device's name, then its label give up room.
            flexible=(*([len(headers) - 1] if target_column else []), 1, 0),
            verbose=verbose,
        )
        out.append(table)
        shortened |= more
        if verbose:
            out.append("")
            for d in devices:
                out.append(_common.wrapped(f"{d['device']} detected target: {d['target']}"))
    if shortened:
        out.append("\n(long reasons are shortened; --verbose prints them in full, --json too)")
    return "\n".join(out)
