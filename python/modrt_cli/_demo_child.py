"""The demo's second half, run in a fresh process: load each exported
artifact, run it on every device of its kind, check against numpy.

    python -m modrt_cli._demo_child PLAN.json

PLAN.json: {"n": int, "block": int, "artifacts": [{"target", "path", "launched"}]}.
Prints one JSON object per line: {"event": "load" | "run", ...}.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def run_plan(plan: dict[str, Any]) -> None:
    import numpy as np

    import modrt

    n, block = plan["n"], plan["block"]
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype("float32")
    b = rng.standard_normal(n).astype("float32")
    for item in plan["artifacts"]:
        target = item["target"]
        try:
            module = modrt.load_module(item["path"])
        except Exception as e:  # noqa: BLE001 - every refusal is a row of the table
            emit(event="load", target=target, loaded=False, error=first_line(e))
            continue
        emit(event="load", target=target, loaded=True, fallback=module.is_fallback)
        kind = "cpu" if module.kind == "so" else module.kind
        kinds = modrt.runtime.device_kinds()
        count = modrt._ffi.call("device.count", kinds[kind]) if kind in kinds else 0
        if count == 0:
            reason = modrt.device(kind).unavailable_reason if kind in kinds else f"no device kind {kind}"
            emit(event="run", target=target, device=None, ok=None, error=f"no {kind} device here: {reason}")
            continue
        for index in range(count):
            dev = modrt.device(kind, index)
            label = f"{dev} {dev.name or ''}".strip()
            try:
                c = modrt.empty((n,), "float32", dev)
                launch = ((n + block - 1) // block, block) if item["launched"] else ()
                module["vadd"](modrt.tensor(a, dev), modrt.tensor(b, dev), c, n, *launch)
                err = float(np.max(np.abs(c.numpy() - (a + b))))
                emit(event="run", target=target, device=label, ok=bool(err <= 1e-6), max_error=err)
            except Exception as e:  # noqa: BLE001
                emit(event="run", target=target, device=label, ok=False, error=first_line(e))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        run_plan(json.load(f))
