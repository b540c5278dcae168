"""The runs the model tests compare: the tiny decoder's greedy generation and
the tiny CNN's training steps, on one tinygrad device or several (a tuple:
tinygrad's multi-device tensors), from the same seeded weights and inputs.

models_test.py and multi_device_test.py each compare these runs on MODRT
devices with the same runs on tinygrad's own CPU device.
"""

from __future__ import annotations

import numpy as np
from modrt_models import decoder, resnet
from tinygrad import Tensor
from tinygrad.nn.state import get_state_dict

Placement = str | tuple[str, ...]  # one tinygrad device, or several (multi-device tensors)

PROMPT = [3, 14, 15, 92, 65]
# The parameters and batch-norm statistics a training run hands back.
TRAINED_STATE = ("stem.weight", "classifier.weight", "stem_bn.running_mean", "stem_bn.running_var")


def generated(device: Placement, steps: int) -> tuple[decoder.Decoder, list[int], list[np.ndarray]]:
    """The tiny decoder (seed 0) on `device`, and the `steps` greedy tokens it
    generates after PROMPT with the logits each was chosen from."""
    model = decoder.Decoder(decoder.DecoderConfig.tiny())
    decoder.place_seeded(model, seed=0, device=device)
    tokens, logits = [], []
    for token, step_logits in model.generate(PROMPT, steps, device):
        tokens.append(token)
        logits.append(step_logits.numpy())
    return model, tokens, logits


def trained(device: Placement, steps: int, batch: int) -> tuple[Tensor, list[float], dict[str, np.ndarray]]:
    """The tiny CNN (seed 0) trained on `device` for `steps` jitted SGD steps on
    one synthetic batch (seed 1): the images as placed, each step's loss, and
    TRAINED_STATE afterwards."""
    cfg = resnet.ResNetConfig.tiny()
    model = resnet.ResNet(cfg)
    resnet.place_seeded(model, seed=0, device=device)
    trainer = resnet.Trainer(model)
    images, labels = resnet.synthetic_batch(cfg, batch, seed=1)
    x, y = resnet.to_device(images, device), resnet.to_device(labels, device)
    losses = [trainer.step(x, y).item() for _ in range(steps)]
    state = get_state_dict(model)
    return x, losses, {name: state[name].numpy() for name in TRAINED_STATE}
