"""Regenerates the real compilers' WGSL kernels the WebGPU tests run as
emitted (wgsl_reflect_test.py): tinygrad 0.14.0 and apache-tvm 0.27.0.post1,
both rendering WGSL without a device. Not run by the tests; run it in a venv:

    python3 -m venv /tmp/v && /tmp/v/bin/pip install tinygrad==0.14.0 apache-tvm==0.27.0.post1 numpy
    /tmp/v/bin/python backends/webgpu/testdata/generate.py backends/webgpu/testdata
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ["DEV"] = "NULL:WGSL"  # tinygrad's device-less backend, rendering WGSL


def tinygrad_kernels() -> dict[str, Any]:
    """Each case's kernels with the launch tinygrad would make (global size in
    workgroups, local size, symbolic variable values), captured at the
    runtime call instead of running."""
    from tinygrad import Tensor, Variable, dtypes
    from tinygrad.engine import realize
    from tinygrad.uop.ops import Ops

    captured: list[dict[str, Any]] = []

    class Capture:
        def __init__(self, program: Any) -> None:
            self.program = program

        def __call__(
            self, *bufs: Any, global_size: Any = None, local_size: Any = None, vals: Any = (), **_: Any
        ) -> None:
            source = next(s.arg for s in self.program.src if s.op is Ops.SOURCE)
            captured.append(
                {
                    "name": self.program.arg.function_name,
                    "wgsl": source,
                    "global_size": list(global_size),
                    "local_size": list(local_size or (1, 1, 1)),
                    "vals": list(vals),
                }
            )

    realize.get_runtime = lambda device, ast, cache=True: Capture(ast)
    n = Variable("n", 1, 32).bind(10)
    cases = {
        "add_broadcast": lambda: (Tensor.empty(16, 16) + Tensor.empty(16)).realize(),
        "sum_rows": lambda: Tensor.empty(16, 16).sum(axis=1).realize(),
        "max": lambda: Tensor.empty(64).max().realize(),
        "int_mul": lambda: (Tensor.empty(8, dtype=dtypes.int32) * 3).realize(),
        "uint8_add": lambda: (Tensor.empty(16, dtype=dtypes.uint8) + 1).realize(),
        "symbolic": lambda: (Tensor.empty(32)[:n] * 2).realize(),
    }
    out = {}
    for case, run in cases.items():
        captured.clear()
        run()
        (kernel,) = captured
        out[case] = kernel
    return out


def tvm_vadd() -> str:
    """TVM's WGSL of vadd over a symbolic n (its buffers, a PODArgs uniform
    with n and the packGridDimX grid-size scalar)."""
    import tvm
    import tvm.s_tir as stir
    from tvm import te

    n = te.var("n")
    a = te.placeholder((n,), name="A")
    b = te.placeholder((n,), name="B")
    c = te.compute((n,), lambda i: a[i] + b[i], name="C")
    sch = stir.Schedule(tvm.IRModule({"vadd": te.create_prim_func([a, b, c]).with_attr("global_symbol", "vadd")}))
    (loop,) = sch.get_loops(sch.get_sblock("C", func_name="vadd"))
    bx, tx = sch.split(loop, [None, 64])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    lib = tvm.compile(sch.mod, target="webgpu")
    return lib.mod.imports[0].inspect_source()


def main() -> None:
    out = Path(sys.argv[1])
    (out / "tinygrad-0.14.0.json").write_text(json.dumps(tinygrad_kernels(), indent=1) + "\n")
    (out / "tvm-0.27.0-vadd.wgsl").write_text(tvm_vadd())


if __name__ == "__main__":
    main()
