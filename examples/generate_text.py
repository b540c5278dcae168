"""Greedy text generation with the GPT-2-shaped decoder of modrt_models, on any tinygrad device.

With the extra installed (`pip install modrt[tinygrad]`) and a checkout's python/ on PYTHONPATH:

    python examples/generate_text.py --device MODRT:opencl            # GPT-2 small's shape (124M weights)
    python examples/generate_text.py --device MODRT:vulkan --tiny     # the tests' 2-layer model

From a checkout (tinygrad from the toolchain root):

    tools/bazel run --config=cpu-runtimes //examples:generate_text -- --device MODRT:opencl

The weights come from a fixed seed, not from training, so the text is noise:
what the example shows is the model running (prefill, then one jitted decode
step per token with a KV cache) and how fast. Tokens are bytes (the tiny
model: printable ASCII). At the end it prints the first-token latency
(prefill, compiles included) and the decode rate in tokens/s.
"""

from __future__ import annotations

import argparse
import sys
import time


def encode(text: str, vocab: int) -> list[int]:
    """Byte tokens; a vocabulary under 256 holds printable ASCII (32..32+vocab)."""
    if vocab >= 256:
        return list(text.encode())
    return [min(max(ord(c) - 32, 0), vocab - 1) for c in text]


def decode(token: int, vocab: int) -> str:
    if vocab >= 256:
        return chr(token) if 32 <= token < 127 else f"<{token}>"
    return chr(32 + token)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="MODRT:cpu", help="a tinygrad device (MODRT:opencl, MODRT:webgpu, CL, ...)")
    parser.add_argument("--tiny", action="store_true", help="the 2-layer test configuration instead of GPT-2 small's")
    parser.add_argument("--steps", type=int, default=32, help="tokens to generate")
    parser.add_argument("--prompt", default="modrt runs tinygrad")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from modrt_models import decoder
    from tinygrad import Device
    from tinygrad.helpers import tqdm

    cfg = decoder.DecoderConfig.tiny() if args.tiny else decoder.DecoderConfig.gpt2_small()
    prompt = encode(args.prompt, cfg.vocab)[: cfg.context - args.steps]
    model = decoder.Decoder(cfg)
    decoder.place_seeded(model, seed=args.seed, device=args.device)
    Device[args.device].synchronize()
    print(
        f"{args.device}: {cfg.layers} layers, d={cfg.dim}, {cfg.heads} heads, {cfg.vocab} tokens; "
        f"prompt of {len(prompt)} tokens"
    )

    text, times = [], []
    start = time.perf_counter()
    for token, _ in tqdm(
        model.generate(prompt, args.steps, args.device), total=args.steps, desc="generating", unit="tok"
    ):
        times.append(time.perf_counter() - start)
        text.append(decode(token, cfg.vocab))
    decode_rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else float("nan")
    print(f"{args.prompt!r} -> {''.join(text)!r}")
    print(
        f"first token {times[0] * 1e3:.0f} ms (prefill of {len(prompt)} tokens, compiles included); "
        f"decode {decode_rate:.1f} tokens/s over {len(times) - 1} steps"
    )
    return 0


if __name__ == "__main__":
    try:
        import tinygrad.runtime.ops_modrt  # noqa: F401  (installed by the modrt-tinygrad wheel)
    except ImportError:
        # A source tree: the toolchain root's tinygrad, the device from python/.
        sys.path.append("/opt/modrt/pip")
        import modrt_tinygrad

        modrt_tinygrad.register()
    sys.exit(main(sys.argv[1:]))
