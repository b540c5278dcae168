"""A GPT-2-shaped decoder in tinygrad: pre-norm blocks, learned positions, tied embeddings.

    cfg = DecoderConfig.gpt2_small()          # 12 layers, d=768, 12 heads, 50257 tokens
    model = Decoder(cfg)
    place_seeded(model, seed=0, device="MODRT:opencl")
    for token in model.generate([1, 2, 3], steps=16):
        ...

Attention keeps a KV cache per block, written in place with `assign`. A
prompt runs as one prefill (every position at once, causal mask); each later
token is one decode step, jitted (TinyJit) with its position a tinygrad
Variable, so every step replays the same kernels. Decoding is greedy.

Query, key and value have a projection each (GPT-2 fuses them) so that the
model shards over devices by heads (`shard_axis`): q, k, v and the first MLP
layer split their outputs, the attention and MLP output projections their
inputs, and tinygrad sums the partial results across devices.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from tinygrad import Tensor, TinyJit, UOp, nn

from .weights import place, seeded_arrays


@dataclass(frozen=True)
class DecoderConfig:
    vocab: int
    context: int
    dim: int
    layers: int
    heads: int

    @staticmethod
    def gpt2_small() -> DecoderConfig:
        """GPT-2 small's shape: 12 layers, d=768, 12 heads, 50257 tokens, 1024 positions."""
        return DecoderConfig(vocab=50257, context=1024, dim=768, layers=12, heads=12)

    @staticmethod
    def tiny() -> DecoderConfig:
        """A few-kernel version for tests: 2 layers, d=32, 4 heads, 96 tokens, 32 positions."""
        return DecoderConfig(vocab=96, context=32, dim=32, layers=2, heads=4)


class Attention:
    def __init__(self, cfg: DecoderConfig) -> None:
        self.heads, self.head_dim, self.context = cfg.heads, cfg.dim // cfg.heads, cfg.context
        self.query, self.key, self.value = (nn.Linear(cfg.dim, cfg.dim) for _ in range(3))
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.cache: Tensor | None = None

    def __call__(self, x: Tensor, start_pos: int | UOp) -> Tensor:
        batch, length, _ = x.shape
        q, k, v = (p(x).reshape(batch, length, self.heads, self.head_dim) for p in (self.query, self.key, self.value))
        if self.cache is None:
            self.cache = self._empty_cache(batch, k)
        self.cache[:, :, start_pos : start_pos + length].assign(Tensor.stack(k, v))
        keys = self.cache[0, :, : start_pos + length].transpose(1, 2)
        values = self.cache[1, :, : start_pos + length].transpose(1, 2)
        mask = None
        if length > 1:  # a prefill: each position sees the cache and the positions up to its own
            mask = Tensor.ones(length, start_pos + length, dtype="bool", device=x.device).tril(start_pos)
        attended = q.transpose(1, 2).scaled_dot_product_attention(keys, values, attn_mask=mask)
        return self.out(attended.transpose(1, 2).reshape(batch, length, self.heads * self.head_dim))

    def _empty_cache(self, batch: int, k: Tensor) -> Tensor:
        """Zeros for every position's key and value, on k's device(s), split by heads as k is."""
        shape = (2, batch, self.context, self.heads, self.head_dim)
        if isinstance(k.device, str):
            return Tensor.zeros(*shape, device=k.device).contiguous().realize()
        return Tensor.zeros(*shape, device=k.device[0]).contiguous().shard(k.device, k.uop.axis + 1).realize()


class Block:
    def __init__(self, cfg: DecoderConfig) -> None:
        self.attention_norm, self.attention = nn.LayerNorm(cfg.dim), Attention(cfg)
        self.mlp_norm = nn.LayerNorm(cfg.dim)
        self.mlp_up, self.mlp_down = nn.Linear(cfg.dim, 4 * cfg.dim), nn.Linear(4 * cfg.dim, cfg.dim)

    def __call__(self, x: Tensor, start_pos: int | UOp) -> Tensor:
        h = x + self.attention(self.attention_norm(x), start_pos)
        return h + self.mlp_down(self.mlp_up(self.mlp_norm(h)).gelu())


class Decoder:
    def __init__(self, cfg: DecoderConfig) -> None:
        self.cfg = cfg
        self.tokens, self.positions = nn.Embedding(cfg.vocab, cfg.dim), nn.Embedding(cfg.context, cfg.dim)
        self.blocks = [Block(cfg) for _ in range(cfg.layers)]
        self.norm = nn.LayerNorm(cfg.dim)
        self._decode = TinyJit(self._next)

    def __call__(self, tokens: Tensor, start_pos: int | UOp) -> Tensor:
        """The logits of the position after `tokens` (batch, length) placed at `start_pos`: (batch, vocab)."""
        length = tokens.shape[1]
        x = self.tokens(tokens) + self.positions.weight[start_pos : start_pos + length]
        for block in self.blocks:
            x = block(x, start_pos)
        # The output projection is the token embedding (tied, as in GPT-2).
        return self.norm(x[:, -1]) @ self.tokens.weight.T

    def _next(self, tokens: Tensor, start_pos: int | UOp) -> tuple[Tensor, Tensor]:
        logits = self(tokens, start_pos)
        return logits.realize(), logits.argmax(-1).realize()

    def prefill(self, prompt: list[int], device: str | tuple[str, ...]) -> tuple[Tensor, Tensor]:
        """Runs `prompt` from position 0 (not jitted: its length varies): (logits, next token)."""
        if not 0 < len(prompt) < self.cfg.context:
            raise ValueError(f"a prompt of {len(prompt)} tokens: the model takes 1 to {self.cfg.context - 1}")
        return self._next(_tokens([prompt], device), 0)

    def decode(self, token: int, pos: int, device: str | tuple[str, ...]) -> tuple[Tensor, Tensor]:
        """One jitted decode step of `token` at position `pos`: (logits, next token)."""
        if not 0 < pos < self.cfg.context:
            raise ValueError(f"position {pos}: the model has {self.cfg.context} positions")
        start_pos = UOp.variable("start_pos", 1, self.cfg.context - 1).bind(pos)
        return self._decode(_tokens([[token]], device), start_pos)

    def generate(self, prompt: list[int], steps: int, device: str | tuple[str, ...]) -> Iterator[tuple[int, Tensor]]:
        """Greedy decoding: yields each new token and the logits it was chosen from."""
        if len(prompt) + steps > self.cfg.context:
            raise ValueError(f"{len(prompt)} prompt tokens + {steps} steps exceed the {self.cfg.context} positions")
        logits, token = self.prefill(prompt, device)
        for pos in range(len(prompt), len(prompt) + steps):
            chosen = int(token.item())
            yield chosen, logits
            if pos + 1 < len(prompt) + steps:
                logits, token = self.decode(chosen, pos, device)


def _tokens(rows: list[list[int]], device: str | tuple[str, ...]) -> Tensor:
    array = np.array(rows, dtype=np.int32)
    if isinstance(device, str):
        return Tensor(array, device=device)
    return Tensor(array, device=device[0]).shard(device)


def initial_value(name: str, shape: tuple[int, ...], rng: np.random.Generator, layers: int) -> np.ndarray:
    """GPT-2's initialisation: normal(0, 0.02) weights (the projections into the
    residual stream scaled down by the depth, `layers`), zero biases, unit norm scales."""
    if name.endswith("bias"):
        return np.zeros(shape)
    if "norm" in name:
        return np.ones(shape)
    std = 0.02
    if name.endswith(("attention.out.weight", "mlp_down.weight")):
        std /= math.sqrt(2 * layers)
    return rng.normal(0.0, std, shape)


def shard_axis(name: str) -> int | None:
    """The axis each weight is split on for tensor parallelism (None: a copy on every device)."""
    if name.endswith(("query.weight", "key.weight", "value.weight", "mlp_up.weight")):
        return 0  # (out, in): each device computes some heads / some hidden units
    if name.endswith(("query.bias", "key.bias", "value.bias", "mlp_up.bias")):
        return 0
    if name.endswith(("attention.out.weight", "mlp_down.weight")):
        return 1  # each device's partial sum over its heads / hidden units
    return None


def place_seeded(model: Decoder, seed: int, device: str | tuple[str, ...]) -> None:
    """Gives `model` the weights of `seed`, on `device` (several: tensor-parallel, see shard_axis)."""
    arrays = seeded_arrays(model, seed, lambda name, shape, rng: initial_value(name, shape, rng, model.cfg.layers))
    place(model, arrays, device, shard_axis)
