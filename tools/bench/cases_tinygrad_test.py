"""The tinygrad step rows time the jitted step and nothing else.

A TinyJit replays whatever its capture ran: parameters left as lazy copies
from tinygrad's default device made every conv forward on MODRT:opencl run
their initialisation on CL and six CL -> MODRT copies (2.8x CL's time, all of
it copies). Here each captured step is checked to be the model's kernels
only: on MODRT one modrt graph per batch, on CL its programs.
"""

from __future__ import annotations

import cases_tinygrad
import numpy as np
import pytest

STEPS = {
    "conv-forward": cases_tinygrad.captured_conv_forward,
    "mlp-step": cases_tinygrad.captured_mlp_step,
}


def _replayed_ops(jit) -> list[str]:  # type: ignore[no-untyped-def]
    """What the captured `jit` runs per call: PROGRAM, COPY, graph, ..."""
    from tinygrad.uop.ops import Ops

    ops = []
    for call in jit.captured.linear.src:
        ast = call.src[0]
        ops.append("graph" if ast.op is Ops.CUSTOM_FUNCTION and ast.arg == "graph" else ast.op.name)
    return ops


@pytest.mark.parametrize("step", sorted(STEPS))
def test_on_modrt_a_step_replays_as_modrt_graphs_only(step):
    jit, args = STEPS[step]("MODRT:opencl")  # puts the root's tinygrad on the path
    from modrt_tinygrad.graph import graph_runners

    assert set(_replayed_ops(jit)) == {"graph"}
    runners = graph_runners(jit)
    assert runners and all(r.captures == 1 for r in runners)
    replays = [r.replays for r in runners]
    jit(*args).numpy()
    assert [r.replays for r in runners] == [n + 1 for n in replays]
    assert all(r.captures == 1 for r in runners)  # replayed, not recorded again


@pytest.mark.parametrize("step", sorted(STEPS))
def test_on_cl_a_step_runs_its_programs_only(step):
    jit, _ = STEPS[step]("CL")
    assert set(_replayed_ops(jit)) == {"PROGRAM"}


def test_the_conv_forward_computes_the_same_on_modrt_and_cl():
    from tinygrad import Tensor

    outputs = []
    for device in ("MODRT:opencl", "CL"):
        Tensor.manual_seed(0)
        jit, args = cases_tinygrad.captured_conv_forward(device)
        outputs.append(jit(*args).numpy())
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-5, atol=1e-5)
