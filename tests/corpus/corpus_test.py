"""Kernels as tinygrad 0.14.0 and TVM 0.27.0 emit them run through modrt (issue 26).

The corpus beside this file is made by generate.py (its docstring has the
command): per compiler, case and format, the kernels exactly as emitted and a
manifest of their launches. For the target in MODRT_CORPUS_TARGET this test:

- opencl / webgpu / vulkan (the WGSL kernels, through tint, called exactly
  as on webgpu: one kernel, one interface): compiles every kernel unchanged with modrt.compile, runs the
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
import os
import re
from typing import Any

import pytest
from corpus_run import load, run_case

import modrt
import modrt.backend

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.environ.get("MODRT_CORPUS_TARGET", "opencl")
FORMAT = {"opencl": "opencl", "webgpu": "wgsl", "vulkan": "wgsl", "cuda": "cuda"}[TARGET]
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


def signature(manifest: dict, kernel: dict) -> str:
    types = []
    for arg in kernel["args"]:
        if "buffer" in arg:
            types.append(arg["dtype"] + "*")
        else:
            types.append(arg["dtype"])
    return f"{kernel['name']}({', '.join(types)}; {LAUNCH_TAGS})"


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
