"""The models of python/modrt_models over several MODRT devices in one process (MODRT_TINYGRAD_DEVICES).

tinygrad's multi-device tensors (`Tensor.shard`): the tiny decoder
tensor-parallel (attention heads and MLP units split over the devices, KV
cache split by heads) and the tiny CNN data-parallel (each device a part of
the batch, a full copy of the weights), both equal to one device, tinygrad's
own CPU device, within the tolerances of models_test.py.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tinygrad_testing

tinygrad_testing.setup()

from model_runs import generated, trained  # noqa: E402
from tinygrad import Device, Tensor  # noqa: E402

# As tinygrad names them (MODRT:opencl:0 is MODRT:opencl).
DEVICES = tuple(Device.canonicalize(d) for d in os.environ["MODRT_TINYGRAD_DEVICES"].split(","))
REFERENCE = "CPU"  # one device: tinygrad's own CPU device

LOGITS_TOLERANCE = 1e-4
LOSS_TOLERANCE = 1e-4
WEIGHT_TOLERANCE = 1e-4

DECODE_STEPS = 4
TRAIN_STEPS = 2
BATCH = 4  # split over the devices


def test_the_devices_are_distinct_modrt_devices() -> None:
    devices = [Device[d] for d in DEVICES]
    assert all(type(d).__name__ == "ModrtDevice" for d in devices)
    assert len({str(d.modrt_device) for d in devices}) == len(DEVICES), [str(d.modrt_device) for d in devices]


def test_decoder_tensor_parallel_equals_one_device() -> None:
    _, want_tokens, want_logits = generated(REFERENCE, DECODE_STEPS)
    model, got_tokens, got_logits = generated(DEVICES, DECODE_STEPS)
    # Really split: each device holds some heads' weights and KV cache.
    attention = model.blocks[0].attention
    assert attention.query.weight.device == DEVICES and attention.query.weight.uop.axis == 0
    assert attention.out.weight.uop.axis == 1
    assert attention.cache is not None and attention.cache.uop.axis == 3
    for step, (got, want) in enumerate(zip(got_logits, want_logits)):
        np.testing.assert_allclose(got, want, rtol=LOGITS_TOLERANCE, atol=LOGITS_TOLERANCE, err_msg=f"step {step}")
    assert got_tokens == want_tokens


def test_resnet_data_parallel_training_equals_one_device() -> None:
    _, want_losses, want_state = trained(REFERENCE, TRAIN_STEPS, BATCH)
    x, got_losses, got_state = trained(DEVICES, TRAIN_STEPS, BATCH)
    assert x.device == DEVICES and x.uop.axis == 0  # each device trained on part of the batch
    np.testing.assert_allclose(got_losses, want_losses, rtol=LOSS_TOLERANCE, atol=LOSS_TOLERANCE)
    for name, want in want_state.items():
        np.testing.assert_allclose(got_state[name], want, rtol=WEIGHT_TOLERANCE, atol=WEIGHT_TOLERANCE, err_msg=name)


def test_backends_with_different_renderers_are_refused_by_name() -> None:
    # tinygrad runs one rendering of a multi-device kernel on all its devices.
    if all(Device[d].backend in ("webgpu", "vulkan") for d in DEVICES) or Device[DEVICES[0]].backend == "cpu":
        other = "MODRT:opencl"
    else:
        other = "MODRT:cpu"
    import modrt

    if not modrt.device(other.split(":")[1]).exist:
        pytest.skip(f"no {other} here to mix with {DEVICES[0]}")
    x = Tensor(np.ones((4, 4), np.float32), device=DEVICES[0]).shard((DEVICES[0], other), axis=0)
    with pytest.raises(ValueError, match="different backends needs backends with the same tinygrad renderer"):
        (x * 2).realize()
