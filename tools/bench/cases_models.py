"""Worker cases: the models of python/modrt_models in tinygrad, on a MODRT device against tinygrad's own.

Each case is one model figure on one tinygrad device (`DEVICES`): the
GPT-2-small-shaped decoder's jitted decode step and its prefill, its first
token in a fresh process, its peak memory, and the ResNet-18-shaped CNN's
jitted forward pass and training step. The same code, weights and inputs run
on both sides of a row; only the device differs.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cases_tinygrad import _tinygrad
from measure import PROBE_ENV
from worker_common import Run

# The decoder's prompt for the decode rows, and the prefill row's prompt length.
PROMPT_TOKENS = 16
PREFILL_TOKENS = 64
# The decode rows' first-token and peak-memory figures after this many steps.
MEMORY_DECODE_STEPS = 8
CNN_BATCH = 16
# tinygrad devices by the name the cases use.
DEVICES = {
    "modrt-opencl": "MODRT:opencl",
    "cl": "CL",
    "modrt-cpu": "MODRT:cpu",
    "cpu": "CPU",
    "modrt-webgpu": "MODRT:webgpu",
    "webgpu": "WEBGPU",
}


def _open(device: str) -> None:
    """tinygrad with `device` opened; for its own WEBGPU device, on the Dawn
    library that dawn-python ships (tinygrad loads it from WEBGPU_PATH)."""
    if device == "WEBGPU" and "WEBGPU_PATH" not in os.environ:
        spec = importlib.util.find_spec("pydawn")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("tinygrad's WEBGPU device needs Dawn: pip install dawn-python")
        library = Path(spec.submodule_search_locations[0]) / "lib" / f"libwebgpu_dawn_{platform.machine()}.so"
        if not library.is_file():
            raise ImportError(f"dawn-python has no Dawn library for this machine ({library} is missing)")
        os.environ["WEBGPU_PATH"] = str(library)
    _tinygrad(device)


def _models():  # type: ignore[no-untyped-def]
    """modrt_models, from the tree or, on the peer's side (no modrt on its path), from the source tree."""
    try:
        import modrt_models
    except ImportError:
        sys.path.append(str(Path(__file__).resolve().parents[2] / "python"))
        import modrt_models
    return modrt_models


def _decoder(device: str):  # type: ignore[no-untyped-def]
    _open(device)
    _models()
    from modrt_models import decoder

    model = decoder.Decoder(decoder.DecoderConfig.gpt2_small())
    decoder.place_seeded(model, seed=0, device=device)
    return model


def _prompt(length: int) -> list[int]:
    return [(7 * i + 3) % 50000 for i in range(length)]


def decode(device: str) -> Run:
    """n greedy decode steps (jitted, KV cache), each token fed back, positions advancing."""
    model = _decoder(device)
    limit = model.cfg.context - 1
    state = {"pos": PROMPT_TOKENS, "token": int(model.prefill(_prompt(PROMPT_TOKENS), device)[1].item())}

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            if state["pos"] >= limit:  # the cache is full: start again after the prompt (same kernels)
                state["pos"] = PROMPT_TOKENS
            state["token"] = int(model.decode(state["token"], state["pos"], device)[1].item())
            state["pos"] += 1
        return time.perf_counter() - start

    return run


def prefill(device: str) -> Run:
    """n prefills of a PREFILL_TOKENS prompt at position 0, each to its next token."""
    model = _decoder(device)
    prompt = _prompt(PREFILL_TOKENS)

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            model.prefill(prompt, device)[1].item()
        return time.perf_counter() - start

    return run


def first_token(device: str) -> Run:
    """The seconds from a fresh process's placed weights to its first token (a
    PROMPT_TOKENS prefill: every kernel compiled, then run), measured once
    while the case is set up; each batch reports that figure (n times it), so
    each sample is one fresh process's first token."""
    model = _decoder(device)
    _sync(device)
    start = time.perf_counter()
    model.prefill(_prompt(PROMPT_TOKENS), device)[1].item()
    seconds = time.perf_counter() - start
    return lambda n: seconds * n


def peak_memory(device: str) -> Run:
    """The process's peak resident memory in MB (the devices here are host
    memory: PoCL's CPU device, modrt's and tinygrad's CPU, lavapipe) after
    placing the weights, a prefill and MEMORY_DECODE_STEPS decode steps; reported as the
    decode rows' first-token figure is (n times it, scale 1)."""
    model = _decoder(device)
    generated = model.generate(_prompt(PROMPT_TOKENS), MEMORY_DECODE_STEPS, device)
    for _ in generated:
        pass
    _sync(device)
    megabytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return lambda n: megabytes * n


def _cnn(device: str):  # type: ignore[no-untyped-def]
    _open(device)
    _models()
    from modrt_models import resnet

    cfg = resnet.ResNetConfig.resnet18()
    model = resnet.ResNet(cfg)
    resnet.place_seeded(model, seed=0, device=device)
    images, labels = resnet.synthetic_batch(cfg, CNN_BATCH, seed=1)
    return resnet, model, resnet.to_device(images, device), resnet.to_device(labels, device)


def cnn_forward(device: str) -> Run:
    """n jitted inference passes (batch norm's running statistics) of CNN_BATCH images."""
    _, model, x, _ = _cnn(device)  # puts the root's tinygrad on the path
    from tinygrad import TinyJit

    forward = TinyJit(lambda images: model(images).realize())
    return _jitted(lambda: forward(x), device)


def cnn_train_step(device: str) -> Run:
    """n jitted SGD steps (forward, backward, update) on CNN_BATCH images."""
    resnet, model, x, y = _cnn(device)
    trainer = resnet.Trainer(model)
    return _jitted(lambda: trainer.step(x, y), device)


def _jitted(call: Callable[[], object], device: str) -> Run:
    for _ in range(3):  # TinyJit captures on its second call; the third replays
        call()
    _sync(device)

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            call()
        _sync(device)
        return time.perf_counter() - start

    return run


def _sync(device: str) -> None:
    import tinygrad

    tinygrad.Device[device].synchronize()


FIGURES: dict[str, Callable[[str], Run]] = {
    "decode": decode,
    "prefill": prefill,
    "first-token": first_token,
    "peak-memory": peak_memory,
    "cnn-forward": cnn_forward,
    "cnn-train-step": cnn_train_step,
}


def _case(figure: Callable[[str], Run], device: str) -> Run:
    """`figure` on `device`; in a probe (measure.PROBE_ENV) only the device is
    opened, which tells as much and spares setting a whole model up."""
    if os.environ.get(PROBE_ENV):
        _open(device)
        return lambda n: 0.0
    return figure(device)


# worker.py's cases: model-<figure>-<device>, e.g. model-decode-modrt-opencl, model-decode-cl.
CASES: dict[str, Callable[[], Run]] = {
    f"model-{figure}-{name}": (lambda f=case, d=device: _case(f, d))
    for figure, case in FIGURES.items()
    for name, device in DEVICES.items()
}
