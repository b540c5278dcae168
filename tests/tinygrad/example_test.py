"""examples/tinygrad_train.py, as the README runs it: trains on each backend here and says where."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import modrt

EXAMPLE = Path(os.environ["TEST_SRCDIR"], "_main", "examples", "tinygrad_train.py")


@pytest.mark.parametrize("backend", ["cpu", "opencl", "vulkan"])
def test_the_example_trains_and_says_where(backend: str) -> None:
    if not modrt.device(backend).exist:
        pytest.skip(f"modrt has no {backend} device in this build: {modrt.device(backend).unavailable_reason}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), f"MODRT:{backend}"], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"MODRT:{backend}" in proc.stdout and f"ran on modrt {backend}(0)" in proc.stdout, proc.stdout
    assert proc.stdout.rstrip().endswith("ok"), proc.stdout


def test_a_device_that_cannot_run_is_reported_not_fatal_to_the_others() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "MODRT:nosuch", "MODRT:cpu"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("MODRT:nosuch") and "failed: ValueError" in lines[0] and "nosuch" in lines[0], lines
    assert lines[1].startswith("MODRT:cpu") and lines[1].endswith("ok"), lines
