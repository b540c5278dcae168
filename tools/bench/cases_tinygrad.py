"""Worker cases: tinygrad on its MODRT device (modrt_tinygrad) against its own CL device."""

from __future__ import annotations

import sys
import time

from worker_common import N_ELEMENTS, WGPU_ROOT, Run

# ---- tinygrad: its MODRT device (modrt_tinygrad) against its own CL device ----


def _tinygrad(device: str):  # type: ignore[no-untyped-def]
    """tinygrad (the toolchain root's), with the MODRT device registered for a MODRT device, and `device` opened."""
    if WGPU_ROOT not in sys.path:
        sys.path.append(WGPU_ROOT)  # the root installs tinygrad beside wgpu-py
    import tinygrad

    if device.startswith("MODRT"):  # the peer's side runs without modrt on its path
        import modrt_tinygrad

        modrt_tinygrad.register()
    try:
        tinygrad.Device[device]
    except Exception as e:  # noqa: BLE001  (tinygrad raises what its runtime raises: RuntimeError, AttributeError, ...)
        raise ImportError(f"tinygrad cannot open {device}: {e}") from None
    return tinygrad


def _resident(params: list, device: str) -> None:  # type: ignore[type-arg]
    """Moves a model's parameters to `device` and realizes them there, before any JIT.

    tinygrad makes them on its default device (CL here); left as lazy copies,
    a TinyJit captures their initialisation and the copies with the step and
    replays both on every call (on MODRT:opencl: 6 kernels on CL and 6
    CL -> MODRT copies per conv forward), which times tinygrad's cross-device
    copies, not the step."""
    from tinygrad import Tensor

    for p in params:
        p.to_(device)
    Tensor.realize(*params)


def _tinygrad_launch(device: str) -> Run:
    """One kernel as tinygrad launches it (its Program with its sizes), N times."""
    import numpy as np

    tinygrad = _tinygrad(device)
    from tinygrad.engine import realize

    calls = []
    runtime_of = realize.get_runtime

    def recording(dev: str, ast, cache: bool = True):  # type: ignore[no-untyped-def]
        program = runtime_of(dev, ast, cache)

        def launch(*bufs, **kw):  # type: ignore[no-untyped-def]
            calls.append((program, bufs, kw))
            return program(*bufs, **kw)

        return launch

    realize.get_runtime = recording
    a = tinygrad.Tensor(np.zeros(N_ELEMENTS, dtype="float32"), device=device).realize()
    (a + 1).realize()
    realize.get_runtime = runtime_of
    program, bufs, kw = calls[-1]
    kw = {**kw, "wait": False}
    dev = tinygrad.Device[device]

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            program(*bufs, **kw)
        dev.synchronize()
        return time.perf_counter() - start

    return run


def tinygrad_modrt_launch() -> Run:
    return _tinygrad_launch("MODRT:opencl")


def tinygrad_cl_launch() -> Run:
    return _tinygrad_launch("CL")


def captured_mlp_step(device: str):  # type: ignore[no-untyped-def]
    """A jitted SGD step of a 2-layer MLP (64 -> 128 -> 10, batch 32), captured:
    (the TinyJit, its arguments)."""
    import numpy as np

    _tinygrad(device)
    from tinygrad import Tensor, TinyJit, nn
    from tinygrad.helpers import Context

    l1, l2 = nn.Linear(64, 128), nn.Linear(128, 10)
    params = nn.state.get_parameters([l1, l2])
    _resident(params, device)
    opt = nn.optim.SGD(params, lr=0.01)

    @TinyJit
    def step(x: Tensor, y: Tensor) -> Tensor:
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
            opt.step()
        return loss.realize()

    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((32, 64)).astype("float32"), device=device)
    y = Tensor(rng.integers(0, 10, 32).astype("int32"), device=device)
    return _captured(step, (x, y), device)


def _captured(jit, args: tuple, device: str):  # type: ignore[no-untyped-def,type-arg]
    """`jit` called until it has captured (its second call) and run once more: (jit, args)."""
    import tinygrad

    for _ in range(3):
        jit(*args)
    tinygrad.Device[device].synchronize()
    return jit, args


def _jitted_steps(jit, args: tuple, device: str) -> Run:  # type: ignore[no-untyped-def,type-arg]
    """n calls of the captured `jit`, then a wait for the device."""
    import tinygrad

    dev = tinygrad.Device[device]

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            jit(*args)
        dev.synchronize()
        return time.perf_counter() - start

    return run


def _tinygrad_mlp_step(device: str) -> Run:
    return _jitted_steps(*captured_mlp_step(device), device)


def tinygrad_modrt_mlp_step() -> Run:
    return _tinygrad_mlp_step("MODRT:opencl")


def tinygrad_cl_mlp_step() -> Run:
    return _tinygrad_mlp_step("CL")


def captured_conv_forward(device: str):  # type: ignore[no-untyped-def]
    """A jitted forward pass of a small conv net on 8 28x28 images, captured:
    (the TinyJit, its arguments)."""
    import numpy as np

    _tinygrad(device)
    from tinygrad import Tensor, TinyJit, nn

    layers = [nn.Conv2d(1, 8, 3), nn.Conv2d(8, 16, 3), nn.Linear(16 * 12 * 12, 10)]
    _resident(nn.state.get_parameters(layers), device)

    @TinyJit
    def forward(x: Tensor) -> Tensor:
        h = layers[1](layers[0](x).relu()).relu().max_pool2d()
        return layers[2](h.flatten(1)).realize()

    x = Tensor(np.random.default_rng(0).standard_normal((8, 1, 28, 28)).astype("float32"), device=device)
    return _captured(forward, (x,), device)


def _tinygrad_conv_forward(device: str) -> Run:
    return _jitted_steps(*captured_conv_forward(device), device)


def tinygrad_modrt_conv_forward() -> Run:
    return _tinygrad_conv_forward("MODRT:opencl")


def tinygrad_cl_conv_forward() -> Run:
    return _tinygrad_conv_forward("CL")
