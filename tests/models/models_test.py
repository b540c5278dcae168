"""The models of python/modrt_models on a MODRT device (MODRT_TINYGRAD_DEVICE), against tinygrad's own CPU device.

Small configurations of the GPT-2-shaped decoder and the ResNet-18-shaped
CNN, the same seeded weights on both devices: the decoder's logits (prefill,
then jitted decode steps with the KV cache) agree within LOGITS_TOLERANCE and
its greedy tokens are the same; the CNN's losses over a few jitted SGD steps
agree within LOSS_TOLERANCE, and so do the weights and batch-norm statistics
they leave.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tinygrad_testing

tinygrad_testing.setup()

from model_runs import PROMPT, generated, trained  # noqa: E402
from modrt_models import decoder  # noqa: E402
from tinygrad import Device  # noqa: E402

DEVICE = os.environ["MODRT_TINYGRAD_DEVICE"]
REFERENCE = "CPU"  # tinygrad's own CPU device (its C, compiled by clang)

# float32 on both sides, kernels fused and ordered differently: measured
# differences are ~1e-7 for the logits and ~1e-6 for the losses.
LOGITS_TOLERANCE = 1e-4
LOSS_TOLERANCE = 1e-4
WEIGHT_TOLERANCE = 1e-4

DECODE_STEPS = 5
TRAIN_STEPS = 3
BATCH = 4


@pytest.fixture(scope="module")
def decoder_reference() -> tuple[list[int], list[np.ndarray]]:
    return generated(REFERENCE, DECODE_STEPS)[1:]


@pytest.fixture(scope="module")
def decoder_on_device() -> tuple[list[int], list[np.ndarray]]:
    return generated(DEVICE, DECODE_STEPS)[1:]


def test_the_device_is_modrt() -> None:
    assert type(Device[DEVICE]).__name__ == "ModrtDevice", type(Device[DEVICE])


def test_decoder_logits_and_greedy_tokens_match_tinygrad_cpu(decoder_reference, decoder_on_device) -> None:
    want_tokens, want_logits = decoder_reference
    got_tokens, got_logits = decoder_on_device
    for step, (got, want) in enumerate(zip(got_logits, want_logits)):
        np.testing.assert_allclose(got, want, rtol=LOGITS_TOLERANCE, atol=LOGITS_TOLERANCE, err_msg=f"step {step}")
        # The chosen token wins by far more than the tolerance, so equal tokens are a real check.
        top2 = np.sort(want[0])[-2:]
        assert top2[1] - top2[0] > 10 * LOGITS_TOLERANCE, f"step {step}: a near tie {top2}"
    assert got_tokens == want_tokens


def test_decoder_kv_cache_steps_equal_one_prefill_of_the_whole_sequence(decoder_on_device) -> None:
    # On the device: the last decode step (KV cache, jitted) against a fresh
    # model that runs prompt + generated tokens as one prefill.
    tokens, got_logits = decoder_on_device
    model = decoder.Decoder(decoder.DecoderConfig.tiny())
    decoder.place_seeded(model, seed=0, device=DEVICE)
    logits, _ = model.prefill(PROMPT + tokens[:-1], DEVICE)
    np.testing.assert_allclose(got_logits[-1], logits.numpy(), rtol=LOGITS_TOLERANCE, atol=LOGITS_TOLERANCE)


def test_resnet_training_steps_match_tinygrad_cpu() -> None:
    _, want_losses, want_state = trained(REFERENCE, TRAIN_STEPS, BATCH)
    _, got_losses, got_state = trained(DEVICE, TRAIN_STEPS, BATCH)
    np.testing.assert_allclose(got_losses, want_losses, rtol=LOSS_TOLERANCE, atol=LOSS_TOLERANCE)
    # The steps changed the model (a step that trained nothing would agree too).
    assert want_losses[-1] < want_losses[0]
    for name, want in want_state.items():
        np.testing.assert_allclose(got_state[name], want, rtol=WEIGHT_TOLERANCE, atol=WEIGHT_TOLERANCE, err_msg=name)
