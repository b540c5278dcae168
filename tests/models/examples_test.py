"""examples/generate_text.py and examples/train_cnn.py, run as their docstrings say (small configurations)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import modrt

EXAMPLES = Path(os.environ["TEST_SRCDIR"], "_main", "examples")


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True, env=env, timeout=600
    )


@pytest.mark.parametrize("backend", ["cpu", "vulkan"])
def test_generate_text_prints_the_text_and_its_rates(backend: str) -> None:
    if not modrt.device(backend).exist:
        pytest.skip(f"modrt has no {backend} device in this build: {modrt.device(backend).unavailable_reason}")
    proc = run("generate_text.py", "--device", f"MODRT:{backend}", "--tiny", "--steps", "6")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"MODRT:{backend}: 2 layers, d=32"), lines
    generated = re.fullmatch(r"'modrt runs tinygrad' -> '(.*)'", lines[1])
    assert generated and len(generated.group(1)) == 6, lines
    assert re.fullmatch(r"first token \d+ ms .*; decode [\d.]+ tokens/s over 5 steps", lines[2]), lines


def test_train_cnn_lowers_the_loss_and_prints_images_per_second() -> None:
    proc = run("train_cnn.py", "--device", "MODRT:cpu", "--tiny", "--steps", "5", "--batch", "8")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "MODRT:cpu: widths (4, 8, 8, 16), blocks (1, 1, 1, 1), batch 8 of 3x16x16", lines
    loss = re.fullmatch(r"loss ([\d.]+) -> ([\d.]+); [\d.]+ images/s, \d+ ms per step over 3 steps", lines[1])
    assert loss and float(loss.group(2)) < float(loss.group(1)), lines


def test_a_step_count_too_small_to_time_is_refused() -> None:
    proc = run("train_cnn.py", "--tiny", "--steps", "2")
    assert proc.returncode == 2 and "--steps must be more than 2" in proc.stderr, proc.stderr
