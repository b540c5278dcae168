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

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.abspath(__file__))
FORMATS = ("opencl", "wgsl", "cuda")
EXTENSION = {"opencl": "cl", "wgsl": "wgsl", "cuda": "cu"}
TINYGRAD_RENDERER = {"opencl": "NULL:OPENCL", "wgsl": "NULL:WGSL", "cuda": "NULL:CUDA:sm_75"}


@dataclass
class Case:
    """A computation: seeded inputs, and the numpy expression it must equal."""

    name: str
    inputs: dict[str, dict[str, Any]]  # name -> {"dtype", "shape", "seed", ["low", "high"]}
    expected: str  # numpy expression over the inputs (and vars)
    vars: dict[str, int] = field(default_factory=dict)
    rtol: float = 1e-5
    atol: float = 1e-5
    formats: tuple[str, ...] = FORMATS
    # TVM: the dlight rules that schedule the case (None: the default set).
    dlight_rules: tuple[str, ...] | None = None


def make_input(recipe: dict[str, Any]) -> np.ndarray:
    """The input data of a recipe; corpus_test.py has the same function."""
    rng = np.random.default_rng(recipe["seed"])
    if "low" in recipe:
        return rng.integers(recipe["low"], recipe["high"], recipe["shape"]).astype(recipe["dtype"])
    return rng.standard_normal(recipe["shape"]).astype(recipe["dtype"])


def f32(shape: tuple[int, ...], seed: int) -> dict[str, Any]:
    return {"dtype": "float32", "shape": list(shape), "seed": seed}


def ints(dtype: str, shape: tuple[int, ...], seed: int, low: int, high: int) -> dict[str, Any]:
    return {"dtype": dtype, "shape": list(shape), "seed": seed, "low": low, "high": high}


def write_case(
    compiler: str, case: Case, fmt: str, kernels: list[dict], buffers: dict, sources: dict[str, str]
) -> None:
    out_dir = os.path.join(ROOT, compiler, case.name, fmt)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    for filename, text in sources.items():
        with open(os.path.join(out_dir, filename), "w") as f:
            f.write(text)
    manifest = {
        "compiler": compiler,
        "case": case.name,
        "format": fmt,
        "kernels": kernels,
        "buffers": buffers,
        "inputs": case.inputs,
        "expected": {"out": case.expected},
        "vars": case.vars,
        "rtol": case.rtol,
        "atol": case.atol,
    }
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


# ---------------------------------------------------------------- tinygrad


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
        (Case("elementwise_broadcast", {"a": f32((4, 8), 1), "b": f32((8,), 2)}, "(a + b) * 2"), elementwise_broadcast),
        (Case("reduce_rows", {"a": f32((16, 128), 3)}, "a.sum(axis=1)", rtol=1e-4), reduce_rows),
        (
            # Without local memory: over 2048 rows tinygrad does not group the
            # reduction, so each work-item sums its rows alone.
            Case("reduce_rows_ungrouped", {"a": f32((4096, 8), 3)}, "a.sum(axis=1)", rtol=1e-4),
            reduce_rows,
        ),
        (Case("reduce_all", {"a": f32((4096,), 4)}, "a.sum()", rtol=1e-4, atol=1e-3), reduce_all),
        (Case("matmul", {"a": f32((32, 64), 5), "b": f32((64, 16), 6)}, "a @ b", rtol=1e-4, atol=1e-4), matmul),
        (
            Case(
                "softmax",
                {"a": f32((8, 32), 7)},
                "np.exp(a - a.max(-1, keepdims=True)) / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)",
            ),
            softmax,
        ),
        (
            Case(
                "conv2d",
                {"x": f32((1, 3, 8, 8), 8), "w": f32((4, 3, 3, 3), 9)},
                "conv2d_nchw(x, w, padding=1)",
                rtol=1e-4,
                atol=1e-4,
            ),
            conv2d,
        ),
        (
            Case(
                "int32_ops",
                {"a": ints("int32", (64,), 10, -1000, 1000), "b": ints("int32", (64,), 11, -1000, 1000)},
                "np.maximum(a * 3 + b, b)",
            ),
            int32_ops,
        ),
        (
            Case(
                "uint8_wrap",
                {"a": ints("uint8", (64,), 12, 0, 256), "b": ints("uint8", (64,), 13, 0, 256)},
                "a + b",
            ),
            uint8_wrap,
        ),
        (
            Case(
                "half_ops",
                {"a": {**f32((64,), 14), "dtype": "float16"}},
                "a * np.float16(2) + np.float16(1)",
                rtol=1e-3,
            ),
            half_ops,
        ),
        (
            Case("half_sum", {"a": {**f32((8, 32), 15), "dtype": "float16"}}, "a.sum(axis=1)", rtol=1e-2, atol=1e-2),
            half_sum,
        ),
        (Case("symbolic_scale", {"a": f32((64,), 16)}, "a[:n] * 2", vars={"n": 37}), symbolic_scale),
        (Case("argmax", {"a": f32((16, 32), 17)}, "a.argmax(axis=1).astype(np.int32)"), argmax),
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


# ---------------------------------------------------------------- TVM

TVM_TARGET = {"opencl": "opencl", "wgsl": "webgpu", "cuda": "cuda"}


def tvm_cases() -> list[tuple[Case, Callable]]:
    from tvm import te, topi

    def elementwise_broadcast():
        a, b = te.placeholder((4, 8), name="a"), te.placeholder((8,), name="b")
        return [a, b], topi.multiply(topi.add(a, b), 2.0)

    def reduce_rows():
        a = te.placeholder((16, 128), name="a")
        return [a], topi.sum(a, axis=1)

    def reduce_cols():
        a = te.placeholder((128, 16), name="a")
        return [a], topi.sum(a, axis=0)

    def matmul():
        a, b = te.placeholder((64, 64), name="a"), te.placeholder((64, 64), name="b")
        return [a, b], topi.matmul(a, b)

    def softmax():
        a = te.placeholder((8, 32), name="a")
        return [a], topi.nn.softmax(a, axis=-1)

    def conv2d():
        x, w = te.placeholder((1, 3, 8, 8), name="x"), te.placeholder((4, 3, 3, 3), name="w")
        return [x, w], topi.nn.conv2d_nchw(x, w, stride=1, padding=1, dilation=1)

    def int32_ops():
        a, b = te.placeholder((64,), "int32", name="a"), te.placeholder((64,), "int32", name="b")
        return [a, b], topi.maximum(topi.add(topi.multiply(a, 3), b), b)

    def uint8_wrap():
        a, b = te.placeholder((64,), "uint8", name="a"), te.placeholder((64,), "uint8", name="b")
        return [a, b], topi.add(a, b)

    def half_ops():
        a = te.placeholder((64,), "float16", name="a")
        return [a], te.compute((64,), lambda i: a[i] * te.const(2, "float16") + te.const(1, "float16"), name="out")

    def symbolic_scale():
        n = te.var("n")
        a = te.placeholder((n,), name="a")
        return [a], te.compute((n,), lambda i: a[i] * 2.0, name="out")

    def argmax():
        a = te.placeholder((16, 32), name="a")
        return [a], topi.argmax(a, axis=1)

    return [
        (Case("elementwise_broadcast", {"a": f32((4, 8), 1), "b": f32((8,), 2)}, "(a + b) * 2"), elementwise_broadcast),
        (Case("reduce_rows", {"a": f32((16, 128), 3)}, "a.sum(axis=1)", rtol=1e-4, atol=1e-4), reduce_rows),
        (Case("reduce_cols", {"a": f32((128, 16), 4)}, "a.sum(axis=0)", rtol=1e-4, atol=1e-4), reduce_cols),
        (
            # Without shared memory: dlight's fallback rule, a thread per row.
            Case(
                "reduce_rows_fallback",
                {"a": f32((16, 128), 3)},
                "a.sum(axis=1)",
                rtol=1e-4,
                atol=1e-4,
                dlight_rules=("Fallback",),
            ),
            reduce_rows,
        ),
        (Case("matmul", {"a": f32((64, 64), 5), "b": f32((64, 64), 6)}, "a @ b", rtol=1e-4, atol=1e-4), matmul),
        (
            Case(
                "softmax",
                {"a": f32((8, 32), 7)},
                "np.exp(a - a.max(-1, keepdims=True)) / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)",
            ),
            softmax,
        ),
        (
            Case(
                "conv2d",
                {"x": f32((1, 3, 8, 8), 8), "w": f32((4, 3, 3, 3), 9)},
                "conv2d_nchw(x, w, padding=1)",
                rtol=1e-4,
                atol=1e-4,
            ),
            conv2d,
        ),
        (
            Case(
                "int32_ops",
                {"a": ints("int32", (64,), 10, -1000, 1000), "b": ints("int32", (64,), 11, -1000, 1000)},
                "np.maximum(a * 3 + b, b)",
            ),
            int32_ops,
        ),
        (
            # Not in WGSL: TVM 0.27 declares array<u8>, which WGSL does not have.
            Case(
                "uint8_wrap",
                {"a": ints("uint8", (64,), 12, 0, 256), "b": ints("uint8", (64,), 13, 0, 256)},
                "a + b",
                formats=("opencl", "cuda"),
            ),
            uint8_wrap,
        ),
        (
            Case(
                "half_ops",
                {"a": {**f32((64,), 14), "dtype": "float16"}},
                "a * np.float16(2) + np.float16(1)",
                rtol=1e-3,
            ),
            half_ops,
        ),
        (Case("symbolic_scale", {"a": f32((37,), 16)}, "a[:n] * 2", vars={"n": 37}), symbolic_scale),
        (Case("argmax", {"a": f32((16, 32), 17)}, "a.argmax(axis=1).astype(np.int32)"), argmax),
    ]


def tvm_launches(host_script: str) -> list[tuple[str, list[str], list[str], list[str]]]:
    """(kernel, argument expressions, launch tags, launch extent expressions)
    of each T.call_ffi_kernel in the lowered host function, in launch order."""
    import ast

    found = []
    for node in ast.walk(ast.parse(host_script)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "call_ffi_kernel":
            tags = next(ast.literal_eval(k.value) for k in node.keywords if k.arg == "launch_params")
            values = [ast.unparse(a) for a in node.args[1:]]
            extents = values[len(values) - len(tags) :] if tags else []
            found.append((ast.literal_eval(node.args[0]), values[: len(values) - len(tags)], tags, extents))
    found.sort(key=lambda launch: host_script.index(f'call_ffi_kernel("{launch[0]}"'))
    return found


def tvm_eval(expr: str, env: dict[str, int]) -> int:
    value = eval(expr, {"__builtins__": {}, "T": _TvmScriptInts}, dict(env))
    return int(value)


class _TvmScriptInts:
    """The few T.* integer forms a lowered launch extent may use."""

    @staticmethod
    def int32(v: int) -> int:
        return int(v)

    int64 = int32

    @staticmethod
    def Cast(dtype: str, v: int) -> int:
        return int(v)


WGSL_SCALAR = {"i32": "int32", "u32": "uint32", "f32": "float32", "f16": "float16"}


def tvm_render(fmt: str) -> None:
    import tvm
    import tvm.s_tir.dlight as dl
    from tvm import te
    from tvm.target import Target
    from tvm.tirx.build import split_host_device_mods

    target = Target(TVM_TARGET[fmt])
    for case, build in tvm_cases():
        if fmt not in case.formats:
            continue
        print(f"tvm {case.name} ({fmt})", flush=True)
        with target:
            placeholders, out = build()
        func = te.create_prim_func([*placeholders, out]).with_attr("global_symbol", case.name)
        mod = tvm.IRModule({case.name: func})
        rules = case.dlight_rules or ("Matmul", "GEMV", "Reduction", "GeneralReduction", "Fallback")
        with target:
            mod = dl.ApplyDefaultSchedule(*[getattr(dl.gpu, rule)() for rule in rules])(mod)
        imports = tvm.compile(mod, target=target).mod.imports
        if not imports:
            raise ValueError(f"tvm {case.name} ({fmt}): dlight left no device kernel")
        device_module = imports[0]
        text = device_module.inspect_source()
        lowered = tvm.tirx.transform.BindTarget(Target(target, host="c"))(mod)
        pipeline, _, _ = tvm.tirx.get_default_tir_pipeline(target)
        host_mod, device_mods = split_host_device_mods(pipeline(lowered))
        params = {
            gv.name_hint: [
                (p.name, "handle", str(p.ty.element_type.dtype))
                if isinstance(p.ty, tvm.ir.PointerType)
                else (p.name, str(p.ty.dtype), "")
                for p in fn.params
            ]
            for dmod in device_mods.values()
            for gv, fn in dmod.functions.items()
        }
        dtypes = {t.op.name: str(t.dtype) for t in [*placeholders, out]}
        buffers = {t.op.name: {"dtype": str(t.dtype), "shape": [], "role": "input"} for t in placeholders}
        buffers[out.op.name] = {"dtype": str(out.dtype), "shape": [], "role": "output"}
        env = dict(case.vars)
        for t in [*placeholders, out]:
            buffers[t.op.name]["shape"] = [tvm_eval(str(s), env) for s in t.shape]
        # The output is named "out" in the manifest (expected is keyed by it).
        rename = {out.op.name: "out"}
        buffers["out"] = buffers.pop(out.op.name)
        per_function = split_tvm_source(text, fmt)
        kernels = []
        for index, (name, arg_exprs, tags, extents) in enumerate(tvm_launches(host_mod.script())):
            args: list[dict] = []
            for (pname, pdtype, _), expr in zip(params[name], arg_exprs):
                if pdtype == "handle":
                    buffer = pname.removesuffix("_ptr")
                    if buffer not in dtypes:
                        raise ValueError(f"{case.name}: kernel {name} takes {pname}, not a buffer of the function")
                    args.append({"buffer": rename.get(buffer, buffer)})
                else:
                    args.append({"scalar": pname, "dtype": pdtype, "value": tvm_eval(expr, env)})
            grid, block = [1, 1, 1], [1, 1, 1]
            for tag, extent in zip(tags, extents):
                axis = "xyz".index(tag[-1])
                if tag.startswith("blockIdx"):
                    grid[axis] = tvm_eval(extent, env)
                elif tag.startswith("threadIdx"):
                    block[axis] = tvm_eval(extent, env)
                else:
                    raise ValueError(f"{case.name}: kernel {name} has launch parameter {tag}")
            source = per_function[name] if fmt == "wgsl" else text
            if fmt == "wgsl":
                args = wgsl_pod_args(source, args, grid)
                set_declared_types(args, wgsl_storage_types(source))
            else:
                set_declared_types(args, [element for _, kind, element in params[name] if kind == "handle"])
            filename = f"{index}_{name}.{EXTENSION[fmt]}" if fmt == "wgsl" else f"{case.name}.{EXTENSION[fmt]}"
            kernels.append({"name": name, "source": filename, "args": args, "grid": grid, "block": block})
        sources = {k["source"]: (per_function[k["name"]] if fmt == "wgsl" else text) for k in kernels}
        write_case("tvm", case, fmt, kernels, buffers, sources)


WGSL_STORAGE = re.compile(r"@binding\((\d+)\)\s*var<storage[^>]*>\s*\w+\s*:\s*array<(?:atomic<)?(\w+)>")


def wgsl_storage_types(source: str) -> list[str]:
    """The element types of a WGSL shader's storage buffers, in binding order."""
    bindings = sorted((int(binding), WGSL_SCALAR[element]) for binding, element in WGSL_STORAGE.findall(source))
    return [element for _, element in bindings]


def set_declared_types(args: list[dict], declared: list[str]) -> None:
    """Records on each buffer argument the element type the kernel declares
    for it, which may differ from the data's (tinygrad passes half as ushort
    where the target has no fp16, and packs bytes into u32 in WGSL)."""
    buffer_args = [a for a in args if "buffer" in a]
    if len(buffer_args) != len(declared):
        raise ValueError(f"{len(buffer_args)} buffer arguments, but the kernel declares {len(declared)} buffers")
    for arg, dtype in zip(buffer_args, declared):
        arg["dtype"] = dtype


def split_tvm_source(text: str, fmt: str) -> dict[str, str]:
    """TVM's WebGPU module holds one WGSL shader per function; its
    inspect_source joins them, each under a '// Function: <name>' header."""
    if fmt != "wgsl":
        return {}
    shaders: dict[str, str] = {}
    parts = re.split(r"^// Function: (\w+)\n//-+\n", text, flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2]):
        if body.strip():
            shaders[name] = body
    return shaders


def wgsl_pod_args(source: str, args: list[dict], grid: list[int]) -> list[dict]:
    """TVM's WGSL takes its scalars in a PODArgs uniform struct, with the
    hidden packGridDimX last: the highest workgroup index that runs."""
    match = re.search(r"struct PODArgs \{([^}]*)\}", source)
    if match is None:
        return args
    fields = re.findall(r"(\w+)\s*:\s*(\w+)", match.group(1))
    scalars = {a["scalar"]: a for a in args if "scalar" in a}
    pod = []
    for name, wgsl_type in fields:
        if name == "packGridDimX":
            pod.append({"scalar": name, "dtype": WGSL_SCALAR[wgsl_type], "value": grid[0] - 1})
        else:
            pod.append(scalars[name])
    return [a for a in args if "buffer" in a] + pod


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
