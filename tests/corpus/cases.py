"""The corpus's computations, and what its generators and its test share.

A Case is a computation: seeded inputs, and the numpy expression its output
must equal. SHARED declares once those both compilers build alike;
generate.py (tinygrad) and generate_tvm.py (TVM) list their cases from it,
with their own sizes where they differ. corpus_test.py makes the inputs with
make_input, as the generators do.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.abspath(__file__))
FORMATS = ("opencl", "wgsl", "cuda")
EXTENSION = {"opencl": "cl", "wgsl": "wgsl", "cuda": "cu"}


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
    """The input data of a recipe (the generators' and corpus_test's)."""
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


SHARED: dict[str, Case] = {
    case.name: case
    for case in [
        Case("elementwise_broadcast", {"a": f32((4, 8), 1), "b": f32((8,), 2)}, "(a + b) * 2"),
        Case(
            "softmax",
            {"a": f32((8, 32), 7)},
            "np.exp(a - a.max(-1, keepdims=True)) / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)",
        ),
        Case(
            "conv2d",
            {"x": f32((1, 3, 8, 8), 8), "w": f32((4, 3, 3, 3), 9)},
            "conv2d_nchw(x, w, padding=1)",
            rtol=1e-4,
            atol=1e-4,
        ),
        Case(
            "int32_ops",
            {"a": ints("int32", (64,), 10, -1000, 1000), "b": ints("int32", (64,), 11, -1000, 1000)},
            "np.maximum(a * 3 + b, b)",
        ),
        Case(
            "uint8_wrap",
            {"a": ints("uint8", (64,), 12, 0, 256), "b": ints("uint8", (64,), 13, 0, 256)},
            "a + b",
        ),
        Case(
            "half_ops",
            {"a": {**f32((64,), 14), "dtype": "float16"}},
            "a * np.float16(2) + np.float16(1)",
            rtol=1e-3,
        ),
        Case("argmax", {"a": f32((16, 32), 17)}, "a.argmax(axis=1).astype(np.int32)"),
    ]
}


WGSL_SCALAR = {"i32": "int32", "u32": "uint32", "f32": "float32", "f16": "float16"}
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
