"""Trains a tiny tinygrad model on every modrt backend and says where it ran.

With the extra installed (`pip install modrt[tinygrad]`):

    python examples/tinygrad_train.py               # every MODRT backend with a device
    python examples/tinygrad_train.py MODRT:opencl  # one

From a checkout (tinygrad from the toolchain root):

    tools/bazel run --config=cpu-runtimes //examples:tinygrad_train

A two-layer MLP learns which of two Gaussian blobs a point comes from, with a
jitted SGD step; the script checks that the loss falls and the accuracy is high.
"""

from __future__ import annotations

import sys

import numpy as np


def blobs(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.integers(0, 2, n)
    points = rng.standard_normal((n, 8)).astype(np.float32) + (labels[:, None] * 2.0 - 1.0).astype(np.float32)
    return points, labels.astype(np.int32)


def train(device: str, steps: int = 60) -> bool:
    from tinygrad import Device, Tensor, TinyJit, nn
    from tinygrad.helpers import Context

    rng = np.random.default_rng(0)
    x_np, y_np = blobs(256, rng)

    class Model:
        def __init__(self) -> None:
            self.l1, self.l2 = nn.Linear(8, 32), nn.Linear(32, 2)

        def __call__(self, x: Tensor) -> Tensor:
            return self.l2(self.l1(x).relu())

    model = Model()
    params = nn.state.get_parameters(model)
    for p in params:
        p.to_(device)
    opt = nn.optim.SGD(params, lr=0.1)

    @TinyJit
    def step(x: Tensor, y: Tensor) -> Tensor:
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = model(x).sparse_categorical_crossentropy(y).backward()
            opt.step()
        return loss.realize()

    x, y = Tensor(x_np, device=device), Tensor(y_np, device=device)
    losses = [step(x, y).item() for _ in range(steps)]
    accuracy = float((model(x).argmax(axis=1).numpy() == y_np).mean())
    modrt_device = Device[device].modrt_device
    good = losses[-1] < losses[0] * 0.5 and accuracy > 0.9
    print(
        f"{device:14s} ran on modrt {modrt_device} ({modrt_device.name}): loss {losses[0]:.3f} -> {losses[-1]:.3f}, "
        f"accuracy {accuracy:.2f} {'ok' if good else 'DID NOT LEARN'}"
    )
    return good


def main(argv: list[str]) -> int:
    import modrt

    devices = argv or [f"MODRT:{b}" for b in ("opencl", "webgpu", "vulkan", "cpu") if modrt.device(b).exist]
    ok = True
    for device in devices:
        try:
            ok &= train(device)
        except Exception as e:  # noqa: BLE001  (one backend failing, with any error, is reported; the rest run)
            print(f"{device:14s} failed: {type(e).__name__}: {str(e).splitlines()[0]}")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        import tinygrad.runtime.ops_modrt  # noqa: F401  (installed by the modrt-tinygrad wheel)
    except ImportError:
        # A source tree: the toolchain root's tinygrad, the device from python/.
        sys.path.append("/opt/modrt/pip")
        import modrt_tinygrad

        modrt_tinygrad.register()
    sys.exit(main(sys.argv[1:]))
