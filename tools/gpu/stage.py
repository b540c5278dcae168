"""Stages what the CUDA end-to-end tests need on a GPU machine that cannot
build: run by tools/gpu/cuda_e2e.sh as

    tools/bazel run --config=portable --//backends:cuda=on //tools/gpu:stage -- DEST [--compress]

DEST/_main   this binary's runfiles tree: the modrt package, the hooks, the
             portable core/compiler/CUDA runtime DSOs, the tests
DEST/site    NVRTC and the CUDA headers NVRTC compiles real compilers' kernels
             with (cuda_fp16.h, <cuda/std/...>), in the layout of the
             nvidia-cuda-nvrtc, -runtime and -cccl wheels (found on sys.path)
DEST/pytest  a pure-Python pytest, for machines without one
DEST/MANIFEST what was staged, from where

--compress stores NVRTC and the headers as .xz (a GPU machine's copy step may limit size);
cuda_e2e.sh unpacks it. Every staged DSO is checked: no libstdc++ import, and
no glibc symbol version newer than MAX_GLIBC.
"""

from __future__ import annotations

import argparse
import importlib
import lzma
import os
import shutil
import sys
from pathlib import Path

from portability import MAX_GLIBC, glibc_problems

import modrt
import modrt._ffi
from modrt.backend.cuda import nvrtc

# pytest and what it imports, all pure Python.
PYTEST_MODULES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py")


def copy_runfiles(dest: Path) -> list[Path]:
    root = modrt._ffi.package_root()
    shutil.copytree(root, dest, symlinks=False, ignore=shutil.ignore_patterns("__pycache__", "*.runfiles"))
    return sorted(p for p in dest.rglob("*.so") if p.is_file())


def copy_nvrtc(site: Path, compress: bool) -> str:
    found = nvrtc.find_library()
    if found is None or not os.path.isabs(found):
        raise SystemExit("stage: no NVRTC found to stage (install the nvidia-cuda-nvrtc-cu12 wheel)")
    source_dir = Path(os.path.realpath(found)).parent
    lib = site / "nvidia" / "cuda_nvrtc" / "lib"
    lib.mkdir(parents=True)
    names = [Path(found).name] + sorted(p.name for p in source_dir.glob("libnvrtc-builtins.so.*"))
    for name in names:
        data = (source_dir / name).read_bytes()
        if compress:
            (lib / (name + ".xz")).write_bytes(lzma.compress(data, preset=1))
        else:
            (lib / name).write_bytes(data)
    return f"NVRTC {nvrtc.load().version} from {source_dir}: {', '.join(names)}"


# The header directories staged from each wheel: all of cuda_runtime's, and
# CCCL's libcu++ (<cuda/std/...>, <nv/...>) without Thrust and CUB.
HEADER_PARTS = {"cuda_runtime": ("",), "cuda_cccl": ("cuda", "nv")}


def copy_headers(site: Path, compress: bool) -> str:
    staged = []
    for found in nvrtc.header_dirs():
        include = Path(found)
        wheel = include.parent.name
        for part in HEADER_PARTS.get(wheel, ()):
            for path in sorted((include / part).rglob("*")):
                if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".py":
                    continue
                dest = site / "nvidia" / wheel / "include" / path.relative_to(include)
                dest.parent.mkdir(parents=True, exist_ok=True)
                if compress:
                    dest.with_name(dest.name + ".xz").write_bytes(lzma.compress(path.read_bytes(), preset=1))
                else:
                    shutil.copy2(path, dest)
        staged.append(str(include))
    if len(staged) != len(HEADER_PARTS):
        raise SystemExit(
            "stage: the CUDA header wheels were not found (install nvidia-cuda-runtime-cu12 and nvidia-cuda-cccl-cu12)"
        )
    return "CUDA headers from " + ", ".join(staged)


def copy_pytest(site: Path) -> list[str]:
    site.mkdir()
    copied = []
    for name in PYTEST_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        origin = Path(module.__file__)
        if origin.name == "__init__.py":
            shutil.copytree(origin.parent, site / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(origin, site / origin.name)
        copied.append(f"{name} {getattr(module, '__version__', '')}".strip())
    return copied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--compress", action="store_true", help="store NVRTC as .xz")
    args = parser.parse_args()

    status = modrt.backend.runtime_status("cuda")
    if not status.loaded:
        raise SystemExit(
            f"stage: the CUDA runtime is not in this build ({status.reason}); "
            "build with --//backends:cuda=on --config=portable"
        )
    dest = args.dest.resolve()
    if dest.exists():
        shutil.rmtree(dest)
    dsos = copy_runfiles(dest / "_main")
    problems = {str(p.relative_to(dest)): glibc_problems(p) for p in dsos}
    problems = {k: v for k, v in problems.items() if v}
    if problems:
        shutil.rmtree(dest)
        lines = [f"  {k}: {'; '.join(v)}" for k, v in problems.items()]
        raise SystemExit("stage: these DSOs would not load on glibc {}.{}:\n{}".format(*MAX_GLIBC, "\n".join(lines)))
    site = dest / "site"
    site.mkdir()
    manifest = [
        f"staged by {sys.argv[0]} with Python {sys.version.split()[0]}",
        f"DSOs (no glibc symbol newer than {MAX_GLIBC[0]}.{MAX_GLIBC[1]}, no libstdc++ import):",
        *[f"  {p.relative_to(dest)}" for p in dsos],
        copy_nvrtc(site, args.compress),
        copy_headers(site, args.compress),
        "pytest: " + ", ".join(copy_pytest(dest / "pytest")),
    ]
    (dest / "MANIFEST").write_text("\n".join(manifest) + "\n")
    print("\n".join(manifest))


if __name__ == "__main__":
    main()
