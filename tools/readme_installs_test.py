"""Every install line of the README, run as written on the host's own python3
(tools/wheel_smoke.sh runs this with pytest after building the wheels).

Each ```sh block of README.md that installs with pip is one case. Its lines
run in order in a shell at the checkout's root, with two substitutions a
test needs: `/opt/modrt` is a fresh directory of the test's, and a bare
`pip`/`python` is that venv's (a block without its own `python3 -m venv` gets
one made first). `tools/bazel build` lines are left out (wheel_smoke.sh built
the wheels just before), and so is what needs files the README does not
provide (tinygrad's test/test_tiny.py, from its repository). After the block,
what it installed must import and say where it came from.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

WORKSPACE = Path(os.environ.get("MODRT_WORKSPACE", Path(__file__).resolve().parents[1]))
README = WORKSPACE / "README.md"
# Lines that are not installs and need what a README reader brings themselves.
LEFT_OUT = (re.compile(r"^tools/bazel build\b"), re.compile(r"test/test_tiny\.py"))


def install_blocks() -> list[list[str]]:
    """The README's ```sh blocks that run pip install, as lists of command lines."""
    blocks = re.findall(r"^```sh\n(.*?)^```", README.read_text(), re.M | re.S)
    commands = [[line for line in b.splitlines() if line.strip() and not line.startswith("#")] for b in blocks]
    return [b for b in commands if any(re.search(r"\bpip install\b", line) for line in b)]


BLOCKS = install_blocks()


def test_the_readme_has_install_lines_for_the_wheels_cuda_and_tinygrad() -> None:
    installed = " ".join(line for b in BLOCKS for line in b)
    for what in ("modrt-opencl", "modrt-vulkan", "modrt-cuda", "modrt[tinygrad]"):
        assert what in installed, what


def test_the_readme_downloads_the_nvidia_wheels_the_toolchain_root_tests_with() -> None:
    pinned = set(
        re.findall(r"^(nvidia-[\w-]+==[\w.]+)", (WORKSPACE / "tools/toolchain/pip-requirements.txt").read_text(), re.M)
    )
    downloaded = {w for b in BLOCKS for line in b if "pip download" in line for w in line.split() if "==" in w}
    assert downloaded and downloaded <= pinned, downloaded - pinned


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_an_install_block_runs_as_written(block: list[str], tmp_path: Path) -> None:
    prefix = tmp_path / "opt-modrt"
    lines = [line.replace("/opt/modrt", str(prefix)) for line in block if not any(p.search(line) for p in LEFT_OUT)]
    if not any("-m venv" in line for line in lines):
        lines.insert(0, f"python3 -m venv {prefix}")
    script = "set -euxo pipefail\n" + "\n".join(lines) + "\n"
    env = {**os.environ, "PATH": f"{prefix}/bin:{os.environ['PATH']}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run(["bash", "-c", script], cwd=WORKSPACE, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{script}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    check = subprocess.run(
        [str(prefix / "bin" / "python"), "-c", CHECK, " ".join(lines)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    print(check.stdout)


# Run in the block's venv: each backend wheel the block named loads from
# site-packages; with modrt-cuda, CUDA C++ compiles to PTX here (NVRTC and the
# headers came with it) and, with its ptxas extra, PTX is checked.
CHECK = r"""
import sys, warnings, modrt
installed = sys.argv[1]
for name in ("opencl", "vulkan", "cuda"):
    if f"modrt-{name}" in installed:
        status = modrt.backend.runtime_status(name)
        assert status.loaded and status.origin.startswith(f"wheel modrt-{name}"), (name, status)
if "modrt-cuda" in installed:
    with warnings.catch_warnings():
        warnings.simplefilter("error", modrt.SourceNotCheckedWarning)
        mod = modrt.compile('extern "C" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }',
                            "cuda", ["k(float32*; blockIdx.x, threadIdx.x)"])
        assert mod.inspect_source("ptx").lstrip().startswith("//"), "no PTX: NVRTC not found"
        if "ptxas" in installed:
            ptx = mod.inspect_source("ptx").replace("ret;", "this is not ptx;")
            try:
                modrt.compile(ptx, "cuda", ["k(float32*; blockIdx.x, threadIdx.x)"])
            except modrt.CompileError as e:
                assert "PTX of k" in str(e) and "ptxas" in str(e), e
            else:
                raise AssertionError("PTX that does not assemble was accepted")
if "tinygrad" in installed:
    import tinygrad, modrt_tinygrad
print("ok:", installed)
"""

if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
