"""Kernels as tinygrad 0.14.0 and TVM 0.27.0 emit them run through modrt (issue 26).

The corpus beside this file is made by generate.py (its docstring has the
command): per compiler, case and format, the kernels exactly as emitted and a
manifest of their launches. For the target in MODRT_CORPUS_TARGET this test:

- opencl / webgpu: compiles every kernel unchanged with modrt.compile, runs the
  case's kernels in order over modrt tensors (intermediates stay on the device)
  and compares the output with the manifest's numpy expression;
- cuda: compiles every kernel unchanged (NVRTC, to PTX) and checks that each
  entry point the manifest launches is in the PTX; where a GPU is present
  (the CUDA runtime on, a device found) it also runs them like the others.

Each case runs with the signatures written from the manifest and, once
modrt.compile can read the interface from the kernel (reflection), also
without signatures. A case that cannot run yet because modrt lacks a feature
is a strict xfail naming the feature, so it fails once the feature lands.
"""

from __future__ import annotations

import glob
import json
import os
import re
from typing import Any

import numpy as np
import pytest
from cases import make_input

import modrt
import modrt.backend

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.environ.get("MODRT_CORPUS_TARGET", "opencl")
FORMAT = {"opencl": "opencl", "webgpu": "wgsl", "cuda": "cuda"}[TARGET]
LAUNCH_TAGS = "blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z"

# modrt.compile without signatures: the kernel is the interface (issue 26,
# item 1), where the target's hook registers a reflector for its format.
REFLECTION = getattr(modrt.backend.record(TARGET), "reflector", None) is not None

TINYGRAD_WGSL = (
    "tinygrad's WGSL binds a `var<uniform> INFINITY: f32` at @binding(0), its buffers at 1..n and one "
    "uniform per symbolic variable; modrt's WebGPU layout is fixed (buffers 0..n-1, one uniform block at n) "
    "until the binding layout is read from the shader (issue 26, item 1)"
)
CUDA_HEADERS = (
    "NVRTC gets no include directories from modrt, so {header} is not found (issue 26, item 2: "
    "the CUDA headers from the NVIDIA wheels)"
)

REFLECTION_MISSING = (
    f"modrt.compile needs signatures for {TARGET}: no reflector reads the kernel's interface yet (issue 26, item 1)"
)

# Why a case cannot run here yet, and the exception it fails with.
Gap = tuple[str, type[BaseException]]


def webgpu_has_f16() -> bool:
    dev = modrt.device("webgpu", 0)
    return dev.exist and bool(dev.attr("supports_float16"))


def cuda_headers_given() -> bool:
    """Whether modrt gives NVRTC the CUDA headers (issue 26, item 2) and finds them here."""
    from modrt.backend.cuda import nvrtc

    header_dirs = getattr(nvrtc, "header_dirs", None)
    return header_dirs is not None and bool(header_dirs())


def known_gap(compiler: str, sources: dict[str, str]) -> Gap | None:
    def uses(text: str) -> bool:
        return any(text in source for source in sources.values())

    if TARGET == "webgpu" and compiler == "tinygrad" and not REFLECTION:
        return TINYGRAD_WGSL, ValueError
    if TARGET == "webgpu" and uses("enable f16;") and not webgpu_has_f16():
        return "the WebGPU adapter here has no shader-f16, which the kernel enables", modrt.CompileError
    if TARGET == "opencl" and uses("cl_khr_fp16") and uses("#error"):
        return "PoCL's CPU device here has no cl_khr_fp16; TVM's half kernel stops with #error", modrt.CompileError
    if TARGET == "cuda" and not cuda_headers_given():
        for header in ("cuda/std/", "cuda_fp16.h", "cuda_bf16.h"):
            if uses(f"#include <{header}"):
                return CUDA_HEADERS.format(header=header), modrt.CompileError
    return None


def manifests() -> list[str]:
    found = sorted(glob.glob(os.path.join(HERE, "*", "*", FORMAT, "manifest.json")))
    assert found, f"no {FORMAT} manifests under {HERE}"
    return found


def case_id(path: str) -> str:
    return "/".join(os.path.relpath(os.path.dirname(path), HERE).split(os.sep)[:2])


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


def signature(manifest: dict, kernel: dict) -> str:
    types = []
    for arg in kernel["args"]:
        if "buffer" in arg:
            types.append(arg["dtype"] + "*")
        else:
            types.append(arg["dtype"])
    return f"{kernel['name']}({', '.join(types)}; {LAUNCH_TAGS})"


def load(path: str) -> tuple[dict, dict[str, str]]:
    with open(path) as f:
        manifest = json.load(f)
    sources = {}
    for kernel in manifest["kernels"]:
        with open(os.path.join(os.path.dirname(path), kernel["source"])) as f:
            sources[kernel["source"]] = f.read()
    return manifest, sources


def compile_sources(manifest: dict, sources: dict[str, str], reflected: bool) -> dict[str, Any]:
    """One modrt module per source file, holding the kernels launched from it."""
    modules = {}
    for filename, text in sources.items():
        kernels = [k for k in manifest["kernels"] if k["source"] == filename]
        if reflected:
            modules[filename] = modrt.compile(text, TARGET)
        else:
            # Several launches of one kernel need one signature.
            signatures = list(dict.fromkeys(signature(manifest, k) for k in kernels))
            modules[filename] = modrt.compile(text, TARGET, signatures, filename=filename)
    return modules


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


def ptx_entries(module: Any) -> list[str]:
    return re.findall(r"\.entry\s+(\w+)", module.inspect_source("ptx"))


def cases() -> list[Any]:
    """(manifest path, mode) pairs; a known gap makes the pair a strict xfail."""
    params = []
    for path in manifests():
        manifest, sources = load(path)
        for mode in ("manifest", "reflected"):
            gap = known_gap(manifest["compiler"], sources)
            if mode == "reflected" and not REFLECTION:
                gap = REFLECTION_MISSING, ValueError
            marks = [pytest.mark.xfail(strict=True, reason=gap[0], raises=gap[1])] if gap else []
            params.append(pytest.param(path, mode, marks=marks, id=f"{case_id(path)}-{mode}"))
    return params


@pytest.fixture(scope="module")
def dev():
    """The device the cases run on; for CUDA, a GPU where there is one (the
    GPU script), else None: the kernels are only compiled."""
    d = modrt.device(TARGET, 0)
    if TARGET == "cuda":
        return d if d.exist else None
    assert d.exist, d.unavailable_reason
    return d


@pytest.mark.parametrize(("path", "mode"), cases())
def test_kernels_run_as_emitted(path: str, mode: str, dev: Any) -> None:
    manifest, sources = load(path)
    modules = compile_sources(manifest, sources, reflected=mode == "reflected")
    if TARGET == "cuda":
        entries = {entry for module in modules.values() for entry in ptx_entries(module)}
        assert {k["name"] for k in manifest["kernels"]} <= entries, entries
        if dev is None:
            return
    run_case(manifest, modules, dev)
