"""Where the bench runs: the peers' venv, the modrt trees (nested Bazel
builds), the floors (C programs and a bare extension) and the run's Context."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import measure
from measure import Unavailable
from worker_common import WGPU_ROOT

HERE = Path(__file__).resolve().parent
VENV = Path("/opt/modrt/bench-venv")
REQUIREMENTS = [
    "apache-tvm==0.27.0.post1",
    "apache-tvm-ffi==0.1.15.post2",
    "pyopencl==2026.1.4",
    "matplotlib==3.11.2",
    # Dawn (libwebgpu_dawn): tinygrad's own WEBGPU device, the models rows' webgpu peer.
    "dawn-python==0.3.0",
]
# Repeats of every row; a row whose repeats disagree by more than
# report.UNSTABLE is unstable.
REPEATS = 3


def say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


# ---- the peers' venv -------------------------------------------------------


def ensure_venv() -> str:
    """The venv's python, creating the venv and installing REQUIREMENTS once."""
    python = VENV / "bin" / "python"
    marker = VENV / "modrt-bench-requirements.txt"
    wanted = "\n".join(REQUIREMENTS) + "\n"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return str(python)
    say(f"installing {', '.join(REQUIREMENTS)} into {VENV}")
    # System site-packages give the root's numpy, which the peers also use.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(VENV)], check=True)
    env = measure.python_env()
    cert = "/etc/ssl/certs/ca-certificates.crt"
    if os.path.exists(cert):
        env["PIP_CERT"] = cert
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS], check=True, env=env)
    marker.write_text(wanted)
    return str(python)


# ---- nested Bazel ----------------------------------------------------------


def bazel(args: Sequence[str], cwd: Path, output_base: Path | None = None, **kwargs) -> subprocess.CompletedProcess:
    """Bazel as tools/bazel runs it (same output root, so the install base is shared)."""
    cmd = ["bazel"]
    root = os.environ.get("MODRT_BAZEL_OUTPUT_ROOT")
    if root:
        cmd.append(f"--output_user_root={root}")
    if output_base:
        cmd.append(f"--output_base={output_base}")
    return subprocess.run(cmd + list(args), cwd=cwd, env=measure.python_env(), text=True, **kwargs)


@dataclass
class Tree:
    """A modrt tree built with some flags: the import roots to put on PYTHONPATH."""

    flags: str
    paths: list[str]


def build_tree(workspace: Path, configs: Sequence[str], dest: Path) -> Tree:
    """Builds modrt with the first of `configs` that builds ("" = flags off)
    and copies it to `dest`: builds with other flags reuse the same output
    directory, so the tree would not survive the next one."""
    for config in configs:
        flags = [f"--config={config}"] if config else []
        # Optimized, like the peers' release wheels.
        done = bazel(["run", "-c", "opt", *flags, "//tools/bench:modrt_paths"], workspace, capture_output=True)
        if done.returncode == 0:
            where = json.loads(done.stdout)
            shutil.copytree(where["root"], dest, symlinks=False)
            shown = " ".join(flags) or "all backend flags off"
            return Tree(
                flags=f"{shown} (-c opt)",
                paths=[str(dest / os.path.relpath(p, where["root"])) for p in where["paths"]],
            )
        say(f"--config={config} does not build here; trying the next ({done.stderr.strip().splitlines()[-1:]})")
    raise RuntimeError(f"modrt does not build with any of {configs}")


# ---- the run's context -----------------------------------------------------


@dataclass
class Context:
    python: str  # the interpreter every measured side runs in (the venv's)
    on: Tree  # every runtime flag that builds
    off: Tree  # every flag off
    reps: int | None  # rounds per repeat; None: each row's default
    workspace: Path | None
    floors: Floors
    repeats: int = REPEATS

    def rounds(self, default: int) -> int:
        return self.reps or default

    def env(self, tree: Tree | None, **extra: str) -> dict[str, str]:
        return measure.python_env(tree.paths if tree else (), extra)

    def available(self, module: str) -> str | None:
        """None when `module` imports in the venv, else why not."""
        done = subprocess.run(
            [self.python, "-c", f"import {module}"], env=self.env(None), capture_output=True, text=True
        )
        return None if done.returncode == 0 else (done.stderr.strip().splitlines() or ["fails"])[-1]


# ---- floors: C programs and a bare extension, built by the bench -----------

FLOORS_DIR = HERE / "floors"
# wgpu-native as the wgpu wheel ships it (headers and library).
WGPU_RESOURCES = f"{WGPU_ROOT}/wgpu/resources"
# name -> (source, compile and link flags)
C_FLOORS = {
    "opencl_launch": ("opencl_launch.c", ["-lOpenCL"]),
    "vulkan_dispatch": ("vulkan_dispatch.c", ["-lvulkan"]),
    "webgpu_dispatch": (
        "webgpu_dispatch.c",
        [
            f"-I{WGPU_RESOURCES}",
            f"{WGPU_RESOURCES}/libwgpu_native-release.so",
            f"-Wl,-rpath,{WGPU_RESOURCES}",
        ],
    ),
    "cuda_launch": ("cuda_launch.c", ["-ldl"]),
}


@dataclass
class Floors:
    """What build_floors made, in `dir`, and why anything is missing."""

    dir: Path
    missing: dict[str, str]

    def path(self, name: str) -> Path:
        if name in self.missing:
            raise Unavailable(f"floor {name} was not built: {self.missing[name]}")
        return self.dir / name


def build_floors(python: str, dest: Path) -> Floors:
    """Compiles floors/*.c with $CC (default cc), the nop_ext extension against
    `python`'s headers, and the add_one shader to SPIR-V with glslangValidator.
    A floor that does not build is recorded, not fatal."""
    dest.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    missing: dict[str, str] = {}

    def run(name: str, argv: list[str]) -> None:
        try:
            done = subprocess.run(argv, capture_output=True, text=True)
        except OSError as e:
            missing[name] = str(e)
            return
        if done.returncode != 0:
            missing[name] = (done.stderr.strip().splitlines() or [f"{argv[0]} failed"])[-1]

    for name, (source, libs) in C_FLOORS.items():
        run(name, [cc, "-O2", "-o", str(dest / name), str(FLOORS_DIR / source), *libs])
    config = subprocess.run(
        [
            python,
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))",
        ],
        capture_output=True,
        text=True,
    )
    if config.returncode == 0:
        include, suffix = config.stdout.split()
        run(
            "nop_ext",
            [
                cc,
                "-O2",
                "-shared",
                "-fPIC",
                f"-I{include}",
                "-o",
                str(dest / f"nop_ext{suffix}"),
                str(FLOORS_DIR / "nop_ext.c"),
            ],
        )
    else:
        missing["nop_ext"] = "the interpreter does not say where its headers are"
    import worker_common

    shader = dest / "add_one.comp"
    shader.write_text(worker_common.VULKAN_SOURCE)
    run("add_one.spv", ["glslangValidator", "-V", "-o", str(dest / "add_one.spv"), str(shader)])
    if "add_one.spv" in missing:
        missing.setdefault("vulkan_dispatch", "no SPIR-V for its shader: " + missing["add_one.spv"])
    for name, why in missing.items():
        say(f"floor {name} not built: {why}")
    return Floors(dest, missing)
