"""Running a corpus case (tests/corpus/<compiler>/<case>/<format>/: kernels as
emitted and a manifest of their launches) through modrt, as corpus_test.py
does on every target and backends/cuda/gpu_test.py does on a GPU; and the
corpus's kernels by name, for the backends' own tests."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
from cases import ROOT, make_input

import modrt


def case_dir(compiler: str, case: str, fmt: str) -> str:
    """The folder of one compiler's kernels of `case` in format `fmt` (opencl, wgsl, cuda)."""
    return os.path.join(ROOT, compiler, case, fmt)


def kernel_source(compiler: str, case: str, fmt: str) -> str:
    """The source of the case's first kernel, as the compiler emitted it."""
    manifest, sources = load(os.path.join(case_dir(compiler, case, fmt), "manifest.json"))
    return sources[manifest["kernels"][0]["source"]]


def conv2d_nchw(x: np.ndarray, w: np.ndarray, padding: int) -> np.ndarray:
    """Cross-correlation, stride 1, as both compilers define conv2d."""
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    n, _, h, width = x.shape
    k = w.shape[2]
    out_h, out_w = h + 2 * padding - k + 1, width + 2 * padding - k + 1
    out = np.zeros((n, w.shape[0], out_h, out_w), np.float32)
    for i in range(k):
        for j in range(k):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i : i + out_h, j : j + out_w], w[:, :, i, j])
    return out


def load(path: str) -> tuple[dict, dict[str, str]]:
    with open(path) as f:
        manifest = json.load(f)
    sources = {}
    for kernel in manifest["kernels"]:
        with open(os.path.join(os.path.dirname(path), kernel["source"])) as f:
            sources[kernel["source"]] = f.read()
    return manifest, sources


def scalar_value(arg: dict) -> Any:
    return float("inf") if arg["value"] == "inf" else arg["value"]


def as_declared(data: np.ndarray, dtype: str) -> np.ndarray:
    """The bytes of `data` as the element type a kernel declares (tinygrad
    passes half as ushort, and packs bytes into u32 in WGSL), zero-padded to
    whole elements."""
    raw = np.frombuffer(data.tobytes(), np.uint8)
    size = np.dtype(dtype).itemsize
    return np.concatenate([raw, np.zeros(-len(raw) % size, np.uint8)]).view(dtype)


def launch_values(signature: str, kernel: dict) -> list[int]:
    """The manifest's launch for the launch parameters a module's function
    takes: all six with the manifest's signature; those the kernel uses
    when the signature was read from it."""
    inside = signature[signature.index("(") + 1 : signature.rindex(")")]
    tags = [t.strip() for t in inside.partition(";")[2].split(",") if t.strip()]
    values = []
    for tag in tags:
        if tag == "dyn_shared_mem":
            values.append(0)
        else:
            values.append((kernel["grid"] if tag.startswith("blockIdx") else kernel["block"])["xyz".index(tag[-1])])
    return values


def run_case(manifest: dict, modules: dict[str, Any], dev: Any) -> None:
    inputs = {name: make_input(recipe) for name, recipe in manifest["inputs"].items()}
    # Each buffer holds the element type of the first kernel argument it is.
    declared = {}
    for kernel in manifest["kernels"]:
        for arg in kernel["args"]:
            if "buffer" in arg:
                declared.setdefault(arg["buffer"], arg["dtype"])
    tensors = {}
    for name, buf in manifest["buffers"].items():
        data = inputs[name] if buf["role"] == "input" else np.zeros(buf["shape"], buf["dtype"])
        device_data = as_declared(data, declared[name])
        if buf["role"] == "input":
            tensors[name] = modrt.tensor(device_data, dev)
        else:
            tensors[name] = modrt.empty(device_data.shape, declared[name], dev)
    for kernel in manifest["kernels"]:
        module = modules[kernel["source"]]
        args = [tensors[a["buffer"]] if "buffer" in a else scalar_value(a) for a in kernel["args"]]
        module[kernel["name"]](*args, *launch_values(module.signature(kernel["name"]), kernel))
    scope = {"np": np, "conv2d_nchw": conv2d_nchw, **inputs, **manifest["vars"]}
    expected = np.asarray(eval(manifest["expected"]["out"], scope))
    out = manifest["buffers"]["out"]
    got = np.frombuffer(tensors["out"].numpy().tobytes(), out["dtype"], int(np.prod(out["shape"])))
    got = got[: expected.size].reshape(expected.shape)
    np.testing.assert_allclose(
        got.astype(np.float64), expected.astype(np.float64), rtol=manifest["rtol"], atol=manifest["atol"]
    )
