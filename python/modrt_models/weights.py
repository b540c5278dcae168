"""Model weights from a fixed seed: numpy draws, set on a tinygrad device.

Every parameter is drawn from numpy's generator seeded with (seed, the
parameter's name), so the same seed gives the same weights on every device
and in every process, whatever order the parameters are visited in.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np
from tinygrad import Tensor, nn
from tinygrad.dtype import _to_np_dtype

# (parameter name, shape, generator) -> initial value.
Initializer = Callable[[str, tuple[int, ...], np.random.Generator], np.ndarray]


def seeded_arrays(model: object, seed: int, init: Initializer) -> dict[str, np.ndarray]:
    """The initial value of each of `model`'s tensors (its tinygrad state dict), by name."""
    arrays = {}
    for name, tensor in nn.state.get_state_dict(model).items():
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        value = np.asarray(init(name, tuple(tensor.shape), rng))
        arrays[name] = value.astype(_to_np_dtype(tensor.dtype))
    return arrays


def place(
    model: object,
    arrays: dict[str, np.ndarray],
    device: str | tuple[str, ...],
    shard_axis: Callable[[str], int | None] | None = None,
) -> None:
    """Replaces each of `model`'s tensors with its value from `arrays`, realized on `device`.

    `device` is one device, or several: then each tensor is sharded over them
    on the axis `shard_axis(name)` gives (None: a full copy on each)."""
    for name, value in arrays.items():
        tensor = Tensor(value, device=device if isinstance(device, str) else device[0])
        if not isinstance(device, str):
            tensor = tensor.shard(device, shard_axis(name) if shard_axis else None)
        _set(model, name, tensor.realize())


def _set(model: object, name: str, tensor: Tensor) -> None:
    *path, last = name.split(".")
    owner = model
    for part in path:
        owner = owner[int(part)] if isinstance(owner, (list, tuple)) else getattr(owner, part)
    old = getattr(owner, last)
    if tuple(old.shape) != tuple(tensor.shape) or old.dtype != tensor.dtype:
        raise ValueError(f"{name}: the model has {old.shape} {old.dtype}, the weights {tensor.shape} {tensor.dtype}")
    # A parameter stays one, a buffer (batch norm's running statistics) a buffer.
    setattr(owner, last, tensor.is_param_(old.is_param))
