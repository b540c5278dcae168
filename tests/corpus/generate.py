"""Regenerates the kernel corpus of tests/corpus/ with the real compilers.

Run on the host (not under Bazel), in a venv with the pinned compilers:

    python3 -m venv /tmp/corpus-venv
    /tmp/corpus-venv/bin/pip install tinygrad==0.14.0 apache-tvm==0.27.0.post1 numpy
    NVRTC_PATH=<a libnvrtc.so.12> /tmp/corpus-venv/bin/python tests/corpus/generate.py

tinygrad's CUDA renderer loads NVRTC when it is made (it renders without a GPU);
the toolchain root has one at opt/modrt/pip/nvidia/cuda_nvrtc/lib/libnvrtc.so.12.
CORPUS_TVM_ONLY=1 regenerates only TVM's part (a minute; tinygrad's needs NVRTC).
The output is deterministic: a rerun leaves the checked-in files unchanged.

Neither compiler needs a device: tinygrad renders on its NULL device
(DEV=NULL:<renderer>; the NULL device runs nothing), and the launches it would
make are recorded; TVM builds TE/topi functions scheduled by dlight, and its
lowered host function gives the launches (T.call_ffi_kernel).

Output, per compiler, case and format (opencl, wgsl, cuda):
tests/corpus/<compiler>/<case>/<format>/ holds the kernels exactly as emitted
and manifest.json:

- kernels: in launch order; each with its source file, entry name, args in the
  compiler's own order ({"buffer": name, "dtype": the element type the kernel
  declares} or {"scalar": name, "dtype", "value"}; hidden ones included:
  tinygrad's WGSL INFINITY uniform, TVM's WGSL packGridDimX), grid (blocks per
  dimension) and block (threads per block), as modrt launches;
- buffers: name -> dtype, shape, role (input, output, intermediate);
- inputs: name -> the seeded recipe (see corpus_test.make_input);
- expected: output name -> a numpy expression over the inputs and vars
  (`np` is numpy); a symbolic output is compared over the expression's size;
- vars: the symbolic shape variables and the values the launches use.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from cases import (
    EXTENSION,
    FORMATS,
    ROOT,
    SHARED,
    Case,
    f32,
    make_input,
    set_declared_types,
    wgsl_storage_types,
    write_case,
)
from generate_tvm import tvm_render

TINYGRAD_RENDERER = {"opencl": "NULL:OPENCL", "wgsl": "NULL:WGSL", "cuda": "NULL:CUDA:sm_75"}


def tinygrad_cases() -> list[tuple[Case, Callable]]:
    from tinygrad import Variable

    def elementwise_broadcast(t):
        return (t["a"] + t["b"]) * 2.0

    def reduce_rows(t):
        return t["a"].sum(axis=1)

    def reduce_all(t):
        return t["a"].sum()

    def matmul(t):
        return t["a"] @ t["b"]

    def softmax(t):
        return t["a"].softmax(-1)

    def conv2d(t):
        return t["x"].conv2d(t["w"], padding=1)

    def int32_ops(t):
        return (t["a"] * 3 + t["b"]).maximum(t["b"])

    def uint8_wrap(t):
        return t["a"] + t["b"]

    def half_ops(t):
        return t["a"] * 2.0 + 1.0

    def half_sum(t):
        return t["a"].sum(axis=1)

    def symbolic_scale(t):
        n = Variable("n", 1, 64).bind(37)
        return t["a"][:n] * 2.0

    def argmax(t):
        return t["a"].argmax(axis=1)

    def cumsum(t):
        return t["a"].cumsum()

    return [
        (SHARED["elementwise_broadcast"], elementwise_broadcast),
        (Case("reduce_rows", {"a": f32((16, 128), 3)}, "a.sum(axis=1)", rtol=1e-4), reduce_rows),
        # Without local memory: over 2048 rows tinygrad does not group the
        # reduction, so each work-item sums its rows alone.
        (
            Case("reduce_rows_ungrouped", {"a": f32((4096, 8), 3)}, "a.sum(axis=1)", rtol=1e-4),
            reduce_rows,
        ),
        (Case("reduce_all", {"a": f32((4096,), 4)}, "a.sum()", rtol=1e-4, atol=1e-3), reduce_all),
        (Case("matmul", {"a": f32((32, 64), 5), "b": f32((64, 16), 6)}, "a @ b", rtol=1e-4, atol=1e-4), matmul),
        (SHARED["softmax"], softmax),
        (SHARED["conv2d"], conv2d),
        (SHARED["int32_ops"], int32_ops),
        (SHARED["uint8_wrap"], uint8_wrap),
        (SHARED["half_ops"], half_ops),
        (
            Case("half_sum", {"a": {**f32((8, 32), 15), "dtype": "float16"}}, "a.sum(axis=1)", rtol=1e-2, atol=1e-2),
            half_sum,
        ),
        (Case("symbolic_scale", {"a": f32((64,), 16)}, "a[:n] * 2", vars={"n": 37}), symbolic_scale),
        (SHARED["argmax"], argmax),
        (Case("cumsum", {"a": f32((64,), 18)}, "np.cumsum(a)", rtol=1e-4, atol=1e-4), cumsum),
    ]


def tinygrad_dtype(dtype: Any) -> str:
    """modrt's name of a tinygrad scalar dtype ("unsigned char" -> "uint8")."""
    return np.dtype(dtype.fmt).name


def tinygrad_render(fmt: str) -> None:
    """Runs in a child process whose DEV selects the renderer (see main)."""
    import itertools

    import tinygrad.engine.realize as realize
    from tinygrad import Tensor
    from tinygrad.runtime import ops_null

    # The NULL device allocates nothing; give each buffer (and each view of
    # one) an identity so the recorded launches say which buffer they take.
    counter = itertools.count()

    class Handle:
        def __init__(self) -> None:
            self.index = next(counter)

    ops_null.NullAllocator._alloc = lambda self, size, options: Handle()
    ops_null.NullAllocator._offset = lambda self, buf, size, offset: Handle()

    launches: list[tuple[Any, tuple, tuple, tuple | None, tuple]] = []
    get_runtime = realize.get_runtime

    def recording_runtime(device: str, ast: Any, cache: bool = True) -> Callable:
        runtime = get_runtime(device, ast, cache)

        def launch(*bufs: Any, global_size: tuple, local_size: tuple | None, vals: tuple, **kwargs: Any) -> Any:
            # Uncached runtimes are tinygrad's trial launches that time local
            # sizes (optimize_local_size); only the launches that follow count.
            if cache:
                launches.append((ast, bufs, global_size, local_size, vals))
            return runtime(*bufs, global_size=global_size, local_size=local_size, vals=vals, **kwargs)

        return launch

    realize.get_runtime = recording_runtime

    for case, build in tinygrad_cases():
        if fmt not in case.formats:
            continue
        tensors = {name: Tensor(make_input(recipe)).realize() for name, recipe in case.inputs.items()}
        names = {id(t.uop.base.buffer._buf): name for name, t in tensors.items()}
        launches.clear()
        out = build(tensors).realize()
        names[id(out.uop.base.buffer._buf)] = "out"
        buffers: dict[str, dict] = {
            name: {"dtype": recipe["dtype"], "shape": recipe["shape"], "role": "input"}
            for name, recipe in case.inputs.items()
        }
        buffers["out"] = {"dtype": tinygrad_dtype(out.dtype), "shape": [out.uop.base.buffer.size], "role": "output"}
        kernels, sources = [], {}
        for index, (ast, bufs, global_size, local_size, vals) in enumerate(launches):
            info = ast.arg
            args: list[dict] = []
            if fmt == "wgsl":
                # tinygrad's WebGPU runtime binds this uniform at @binding(0), before the buffers.
                args.append({"scalar": "INFINITY", "dtype": "float32", "value": "inf"})
            for buf in bufs:
                key = id(buf)
                if key not in names:
                    names[key] = f"tmp{len(names) - len(case.inputs) - 1}"
                    buffers[names[key]] = {"dtype": None, "shape": None, "role": "intermediate"}
                args.append({"buffer": names[key]})
            for var, value in zip(info.vars, vals):
                args.append({"scalar": var.expr, "dtype": tinygrad_dtype(var.dtype), "value": value})
            # Buffer dtypes and sizes of intermediates from the kernel's own parameters.
            params = [u for u in ast.src[0].toposort() if u.op.name == "PARAM" and u.addrspace.name != "ALU"]
            params.sort(key=lambda u: u.arg.slot)
            for param, arg in zip(params, [a for a in args if "buffer" in a]):
                entry = buffers[arg["buffer"]]
                if entry["role"] == "intermediate":
                    entry["dtype"] = tinygrad_dtype(param.dtype)
                    entry["shape"] = [int(np.prod(param.max_shape))]
            # The element types the kernel declares, after the renderer's own
            # lowering (half as ushort where the target has no fp16).
            if fmt == "wgsl":
                declared = wgsl_storage_types(ast.src[2].arg)
            else:
                rendered = [u for u in ast.src[1].src if u.op.name == "PARAM" and u.arg.slot in info.globals]
                rendered.sort(key=lambda u: u.arg.slot)
                declared = [tinygrad_dtype(u.dtype) for u in rendered]
            set_declared_types(args, declared)
            if local_size is None:
                # No local size: global_size counts work-items and the driver picks
                # the work-group; one work-item per group is a launch of the same items.
                grid, block = list(global_size), [1, 1, 1]
            else:
                grid, block = list(global_size), list(local_size)
            filename = f"{index}_{info.function_name}.{EXTENSION[fmt]}"
            sources[filename] = ast.src[2].arg
            kernels.append({"name": info.function_name, "source": filename, "args": args, "grid": grid, "block": block})
        write_case("tinygrad", case, fmt, kernels, buffers, sources)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--tinygrad":
        tinygrad_render(sys.argv[2])
        return
    for compiler in ("tvm",) if os.environ.get("CORPUS_TVM_ONLY") else ("tinygrad", "tvm"):
        shutil.rmtree(os.path.join(ROOT, compiler), ignore_errors=True)
    for fmt in [] if os.environ.get("CORPUS_TVM_ONLY") else FORMATS:
        # tinygrad picks its renderer from DEV when it is imported: one process per format.
        env = {**os.environ, "DEV": TINYGRAD_RENDERER[fmt]}
        subprocess.run([sys.executable, os.path.abspath(__file__), "--tinygrad", fmt], env=env, check=True)
    for fmt in FORMATS:
        tvm_render(fmt)


if __name__ == "__main__":
    main()
