"""TVM's part of the corpus (see generate.py): TE/topi functions scheduled by
dlight, built for each format, and the launches read from the lowered host function."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from cases import (
    EXTENSION,
    SHARED,
    WGSL_SCALAR,
    Case,
    f32,
    set_declared_types,
    wgsl_storage_types,
    write_case,
)

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
        (SHARED["elementwise_broadcast"], elementwise_broadcast),
        (Case("reduce_rows", {"a": f32((16, 128), 3)}, "a.sum(axis=1)", rtol=1e-4, atol=1e-4), reduce_rows),
        (Case("reduce_cols", {"a": f32((128, 16), 4)}, "a.sum(axis=0)", rtol=1e-4, atol=1e-4), reduce_cols),
        # Without shared memory: dlight's fallback rule, a thread per row.
        (
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
        (SHARED["softmax"], softmax),
        (SHARED["conv2d"], conv2d),
        (SHARED["int32_ops"], int32_ops),
        # Not in WGSL: TVM 0.27 declares array<u8>, which WGSL does not have.
        (dataclasses.replace(SHARED["uint8_wrap"], formats=("opencl", "cuda")), uint8_wrap),
        (SHARED["half_ops"], half_ops),
        (Case("symbolic_scale", {"a": f32((37,), 16)}, "a[:n] * 2", vars={"n": 37}), symbolic_scale),
        (SHARED["argmax"], argmax),
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
