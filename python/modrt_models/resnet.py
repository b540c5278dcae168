"""A ResNet-18-shaped CNN in tinygrad, and its jitted SGD training step.

    cfg = ResNetConfig.resnet18()              # 4 stages of 2 basic blocks, 64..512 channels
    model = ResNet(cfg)
    place_seeded(model, seed=0, device="MODRT:opencl")
    trainer = Trainer(model)
    loss = trainer.step(images, labels)       # a Tensor on the device

A 7x7 stride-2 stem with batch norm and a 3x3 max pool, four stages of basic
blocks (two 3x3 convolutions with batch norm and a shortcut, a strided 1x1
convolution where the shape changes), global average pooling, a linear
classifier. Batch norm uses the batch's statistics while training (and updates
its running ones). For data parallelism the images and labels are split over
devices on the batch axis and every weight is copied to each device
(`place_seeded` with several devices); tinygrad reduces the statistics and
gradients across them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from tinygrad import Tensor, TinyJit, nn
from tinygrad.helpers import Context

from .weights import place, seeded_arrays


@dataclass(frozen=True)
class ResNetConfig:
    widths: tuple[int, ...]
    blocks: tuple[int, ...]
    classes: int
    image: int  # input images are 3 x image x image

    @staticmethod
    def resnet18() -> ResNetConfig:
        """ResNet-18's layers and widths, for 64x64 images and 10 classes."""
        return ResNetConfig(widths=(64, 128, 256, 512), blocks=(2, 2, 2, 2), classes=10, image=64)

    @staticmethod
    def tiny() -> ResNetConfig:
        """The same structure for tests: one block per stage, 4 to 16 channels, 16x16 images."""
        return ResNetConfig(widths=(4, 8, 8, 16), blocks=(1, 1, 1, 1), classes=10, image=16)


class BasicBlock:
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm(cout)
        self.shortcut: list = []
        if stride != 1 or cin != cout:
            self.shortcut = [nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm(cout)]

    def __call__(self, x: Tensor) -> Tensor:
        h = self.bn2(self.conv2(self.bn1(self.conv1(x)).relu()))
        return (h + x.sequential(self.shortcut)).relu()


class ResNet:
    def __init__(self, cfg: ResNetConfig) -> None:
        self.cfg = cfg
        self.stem = nn.Conv2d(3, cfg.widths[0], 7, stride=2, padding=3, bias=False)
        self.stem_bn = nn.BatchNorm(cfg.widths[0])
        self.stages: list[list[BasicBlock]] = []
        cin = cfg.widths[0]
        for i, (width, count) in enumerate(zip(cfg.widths, cfg.blocks)):
            stride = 1 if i == 0 else 2
            self.stages.append(
                [BasicBlock(cin if j == 0 else width, width, stride if j == 0 else 1) for j in range(count)]
            )
            cin = width
        self.classifier = nn.Linear(cfg.widths[-1], cfg.classes)

    def __call__(self, x: Tensor) -> Tensor:
        """The class logits of images `x` (batch, 3, image, image)."""
        x = self.stem_bn(self.stem(x)).relu().max_pool2d(kernel_size=(3, 3), stride=2, padding=1)
        for stage in self.stages:
            x = x.sequential(stage)
        return self.classifier(x.mean(axis=(2, 3)))


class Trainer:
    """SGD with momentum on the model's cross-entropy; `step` is jitted (TinyJit)."""

    def __init__(self, model: ResNet, lr: float = 0.05, momentum: float = 0.9) -> None:
        self.model = model
        self.optimizer = nn.optim.SGD(nn.state.get_parameters(model), lr=lr, momentum=momentum)
        self.step = TinyJit(self._step)

    def _step(self, images: Tensor, labels: Tensor) -> Tensor:
        with Context(TRAINING=1):
            self.optimizer.zero_grad()
            loss = self.model(images).sparse_categorical_crossentropy(labels).backward()
            self.optimizer.step()
        return loss.realize()


def synthetic_batch(cfg: ResNetConfig, batch: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Images and labels from numpy's generator seeded with `seed`: each class
    is a fixed pattern plus noise, so there is something to learn."""
    rng = np.random.default_rng(seed)
    patterns = np.random.default_rng(0).standard_normal((cfg.classes, 3, cfg.image, cfg.image))
    labels = rng.integers(0, cfg.classes, batch)
    images = patterns[labels] + rng.standard_normal((batch, 3, cfg.image, cfg.image))
    return images.astype(np.float32), labels.astype(np.int32)


def to_device(array: np.ndarray, device: str | tuple[str, ...]) -> Tensor:
    """`array` on `device`, or split over several devices on its first (batch) axis."""
    if isinstance(device, str):
        return Tensor(array, device=device)
    return Tensor(array, device=device[0]).shard(device, axis=0)


def initial_value(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """He (fan-in) normal convolutions, a uniform classifier, batch norm at
    identity (scale 1, shift 0, running mean 0 and variance 1)."""
    last = name.rsplit(".", 1)[-1]
    if last in ("bias", "running_mean", "num_batches_tracked"):
        return np.zeros(shape)
    if last == "running_var" or (last == "weight" and len(shape) == 1):
        return np.ones(shape)
    fan_in = math.prod(shape[1:])
    if len(shape) == 4:
        return rng.normal(0.0, math.sqrt(2.0 / fan_in), shape)
    bound = 1 / math.sqrt(fan_in)
    return rng.uniform(-bound, bound, shape)


def place_seeded(model: ResNet, seed: int, device: str | tuple[str, ...]) -> None:
    """Gives `model` the weights of `seed`, on `device` (several: a full copy on each)."""
    place(model, seeded_arrays(model, seed, initial_value), device)
