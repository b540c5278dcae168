"""Every command in the README and in docs/ is exercised: `modrt` commands
and scripts are run here as written, Python blocks are run as scripts, and
the rest (tests, the wheel) are listed with the test that runs them."""

from __future__ import annotations

import os
import platform
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import modrt

ROOT = Path(os.environ["TEST_SRCDIR"], "_main")
DOCS = ["README.md", "docs/ARTIFACT.md", "docs/BACKEND_GUIDE.md", "docs/C_ABI.md"]
MODRT_COMMAND = re.compile(r"^tools/bazel run (?:--config=(\S+) )?//tools:modrt -- (.*)$")
PYTHON_COMMAND = re.compile(r"^tools/bazel run (?:--config=(\S+) )?//tools:python -- (\S+)$")
# Commands that cannot run inside a test (Bazel in Bazel), each with what runs it.
COVERED_ELSEWHERE = {
    "tools/bazel test //... --config=all-runtimes": ".ci/run runs the suite with the runtimes off and on",
    "tools/bazel test //examples/out_of_tree:all": "//examples/out_of_tree:out_of_tree_test, part of //...",
    "tools/bazel build //python:wheels": "tests/wheel_test.py installs the wheels it builds",
    "python3 -m venv /opt/modrt": "tests/wheel_test.py (in a temporary directory)",
    "/opt/modrt/bin/pip install numpy absl-py": "tools/wheel_smoke.sh, run by .ci/run on the host's python3",
    (
        "/opt/modrt/bin/pip install --no-index --find-links bazel-bin/python/wheels modrt modrt-opencl modrt-vulkan"
    ): "tests/wheel_test.py; tools/wheel_smoke.sh",
    "/opt/modrt/bin/modrt info": "tests/wheel_test.py",
    "/opt/modrt/bin/modrt demo": "tests/wheel_test.py; tools/wheel_smoke.sh",
    "pip install --find-links bazel-bin/python/wheels modrt[tinygrad] modrt-opencl": "tools/wheel_smoke.sh",
    "/opt/modrt/bin/pip install --find-links bazel-bin/python/wheels modrt 'modrt-cuda[ptxas]'": (
        "tools/readme_installs_test.py, run by tools/wheel_smoke.sh (it needs PyPI)"
    ),
    (
        "/opt/modrt/bin/pip download --dest /opt/modrt/nvidia-wheels nvidia-cuda-nvrtc-cu12==12.9.86 "
        "nvidia-cuda-runtime-cu12==12.9.79 nvidia-cuda-cccl-cu12==12.9.27 nvidia-cuda-nvcc-cu12==12.9.86 numpy absl-py"
    ): "tools/readme_installs_test.py, run by tools/wheel_smoke.sh",
    (
        "/opt/modrt/bin/pip install --no-index --find-links bazel-bin/python/wheels --find-links "
        "/opt/modrt/nvidia-wheels modrt 'modrt-cuda[ptxas]'"
    ): "tools/readme_installs_test.py, run by tools/wheel_smoke.sh",
    "DEV=MODRT:opencl python -m pytest test/test_tiny.py": (
        ".ci/run: tools/tinygrad_tests.sh and //tests/tinygrad:tiny_modrt_opencl_test "
        "(the installed extra: tools/wheel_smoke.sh)"
    ),
    "tools/bazel run --config=cpu-runtimes //examples:tinygrad_train": "//tests/tinygrad:example_test",
    "tools/bazel run --config=cpu-runtimes //examples:generate_text -- --device MODRT:opencl": (
        "//tests/models:examples_test (the small configuration)"
    ),
    "tools/bazel run --config=cpu-runtimes //examples:train_cnn -- --device MODRT:opencl": (
        "//tests/models:examples_test (the small configuration)"
    ),
}


def blocks(doc: str, language: str) -> list[str]:
    text = (ROOT / doc).read_text()
    return [m.group(2) for m in re.finditer(r"^```(\S*)\n(.*?)^```", text, re.S | re.M) if m.group(1) == language]


def commands(doc: str) -> list[str]:
    lines = [line.strip() for block in blocks(doc, "sh") for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def cpu_runtimes_loaded() -> bool:
    # What --config=cpu-runtimes selects that this build may lack.
    return modrt.backend.runtime_status("opencl").loaded


def check(proc: subprocess.CompletedProcess, config: str | None, command: str) -> None:
    if proc.returncode == 0:
        return
    # Without the runtimes that --config asks for, a command that needs them
    # must fail with a message, not a crash.
    assert config and not cpu_runtimes_loaded(), f"{command}\n{proc.stdout}\n{proc.stderr}"
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "opencl" in proc.stderr, proc.stderr


@pytest.mark.parametrize("doc", DOCS)
def test_every_shell_command_runs_or_is_covered(doc: str, tmp_path: Path) -> None:
    for command in commands(doc):
        command = command.replace("/tmp/", f"{tmp_path}/")
        modrt_match = MODRT_COMMAND.match(command)
        python_match = PYTHON_COMMAND.match(command)
        if modrt_match:
            config, args = modrt_match.groups()
            proc = subprocess.run(
                [str(ROOT / "tools" / "modrt"), *shlex.split(args)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=600,
            )
            check(proc, config, command)
        elif python_match:
            config, script = python_match.groups()
            proc = subprocess.run([sys.executable, script], cwd=ROOT, capture_output=True, text=True, timeout=600)
            check(proc, config, command)
        else:
            assert command in COVERED_ELSEWHERE, f"{doc}: no test runs `{command}`"


@pytest.mark.parametrize("doc", DOCS)
def test_every_python_block_runs(doc: str, tmp_path: Path) -> None:
    for i, code in enumerate(blocks(doc, "python")):
        proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{doc}, Python block {i}:\n{proc.stderr}"


def test_documented_wheel_name_is_the_built_one() -> None:
    (wheel,) = (ROOT / "python").glob("modrt-*.whl")
    if platform.machine() == "x86_64":
        assert f"`{wheel.name}`" in (ROOT / "README.md").read_text()


def test_the_readme_has_its_commands_and_blocks() -> None:
    readme = commands("README.md")
    assert readme[:2] == [
        "tools/bazel run --config=all-runtimes //tools:modrt -- demo",
        "tools/bazel test //... --config=all-runtimes",
    ]
    assert len(blocks("README.md", "python")) == 7
    assert any(c.startswith("tools/bazel test") for c in commands("docs/BACKEND_GUIDE.md"))
