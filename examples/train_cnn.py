"""A few jitted SGD steps of the ResNet-18-shaped CNN of modrt_models, on any tinygrad device.

With the extra installed (`pip install modrt[tinygrad]`) and a checkout's python/ on PYTHONPATH:

    python examples/train_cnn.py --device MODRT:opencl               # ResNet-18's layers, 64x64 images
    python examples/train_cnn.py --device MODRT:webgpu --tiny        # the tests' small model

From a checkout (tinygrad from the toolchain root):

    tools/bazel run --config=cpu-runtimes //examples:train_cnn -- --device MODRT:opencl

The data is synthetic (one noisy pattern per class, from a fixed seed), so
the loss falls within a few steps. At the end it prints the loss before and
after and the training rate in images/s, counted from the third step (the
first two compile and capture the jitted step).
"""

from __future__ import annotations

import argparse
import sys
import time

CAPTURE_STEPS = 2  # TinyJit runs a step twice before it replays the captured one


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="MODRT:cpu", help="a tinygrad device (MODRT:opencl, MODRT:webgpu, CL, ...)")
    parser.add_argument("--tiny", action="store_true", help="the small test configuration instead of ResNet-18's")
    parser.add_argument("--steps", type=int, default=8, help=f"training steps (more than {CAPTURE_STEPS})")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.steps <= CAPTURE_STEPS:
        parser.error(f"--steps must be more than {CAPTURE_STEPS} to time the replayed step")

    from modrt_models import resnet
    from tinygrad import Device
    from tinygrad.helpers import tqdm

    cfg = resnet.ResNetConfig.tiny() if args.tiny else resnet.ResNetConfig.resnet18()
    model = resnet.ResNet(cfg)
    resnet.place_seeded(model, seed=args.seed, device=args.device)
    trainer = resnet.Trainer(model)
    images, labels = resnet.synthetic_batch(cfg, args.batch, seed=args.seed + 1)
    x, y = resnet.to_device(images, args.device), resnet.to_device(labels, args.device)
    print(f"{args.device}: widths {cfg.widths}, blocks {cfg.blocks}, batch {args.batch} of 3x{cfg.image}x{cfg.image}")

    losses = []
    progress = tqdm(range(args.steps), desc="training", unit="step")
    for i in progress:
        if i == CAPTURE_STEPS:
            Device[args.device].synchronize()
            start = time.perf_counter()
        losses.append(trainer.step(x, y).item())
        progress.set_description(f"training, loss {losses[-1]:.3f}")
    elapsed = time.perf_counter() - start
    timed = args.steps - CAPTURE_STEPS
    print(
        f"loss {losses[0]:.3f} -> {losses[-1]:.3f}; {timed * args.batch / elapsed:.1f} images/s, "
        f"{elapsed / timed * 1e3:.0f} ms per step over {timed} steps"
    )
    return 0 if losses[-1] < losses[0] else 1


if __name__ == "__main__":
    try:
        import tinygrad.runtime.ops_modrt  # noqa: F401  (installed by the modrt-tinygrad wheel)
    except ImportError:
        # A source tree: the toolchain root's tinygrad, the device from python/.
        sys.path.append("/opt/modrt/pip")
        import modrt_tinygrad

        modrt_tinygrad.register()
    sys.exit(main(sys.argv[1:]))
