"""Graph replays with new values for the scalars of the captured launches
(`Graph.replay(scalars={(launch, argument): value})`), on every backend with a
device: the same results as launching one by one with those values, replays
in flight keeping their own, and a value the launch would refuse refused
before anything runs, naming the argument. The kernels are the device
layer's (device_layer_kernels.py), their signatures naming the arguments."""

import importlib
import re

import numpy as np
import pytest
from device_layer_kernels import KERNELS, KINDS, SLOW_ROUNDS, device_or_skip, launch_params

import modrt

N = 300


@pytest.fixture(scope="module", params=KINDS)
def kind(request):
    return device_or_skip(request.param)


@pytest.fixture(scope="module")
def mod(kind):
    return named_kernels(kind)


def named_kernels(kind):
    """The device layer's kernels, their arguments named in the signatures
    (a, b, c, n, rounds), so that a replay can name them."""
    source, signatures = KERNELS[kind]
    named = []
    for sig in signatures:
        sig = re.sub(
            r"^(vadd|slow_add)\(float32\*, float32\*, float32\*, int32",
            r"\1(float32* a, float32* b, float32* c, int32 n",
            sig,
        )
        named.append(sig.replace("int32 n, int32", "int32 n, int32 rounds"))
    return modrt.compile(source, kind, named)


def submission_counts(dev):
    """The backend's counts of launches, graph replays and graph recordings,
    where it keeps them (Vulkan, WebGPU); None elsewhere."""
    try:
        backend = importlib.import_module(f"modrt.backend.{dev.kind}")
    except ImportError:
        return None
    counts = getattr(backend, "submission_counts", None)
    return counts(dev) if counts is not None else None


def zeros(dev, n=N):
    return modrt.tensor(np.zeros(n, "float32"), dev)


def test_a_replay_with_new_scalars_equals_launching_one_by_one(kind, mod):
    dev = modrt.device(kind)
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(N).astype("float32"), rng.standard_normal(N).astype("float32")
    a, b = modrt.tensor(x, dev), modrt.tensor(y, dev)
    c, d = zeros(dev), zeros(dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["vadd"](a, b, c, N, *launch_params(kind, N))  # c = a + b
        mod["vadd"](c, b, d, N, *launch_params(kind, N))  # d = c + b
    # (new values for launch 0, for launch 1): n by index and by name, and
    # on a backend with a grid, the grid by its launch parameter's tag.
    cases = [({(0, 3): 100}, (100, N)), ({(0, "n"): 250, (1, "n"): 40}, (250, 40))]
    if kind != "cpu":
        cases.append(({(1, "blockIdx.x"): 2}, (N, 128)))  # 2 blocks of 64 items: 128 written
    before = submission_counts(dev)
    for scalars, (n0, n1) in cases:
        for tensor in (c, d):
            tensor.copyfrom(np.zeros(N, "float32"), stream=s)
        for _ in range(2):  # the second replay reuses a recording of these values
            g.replay(scalars=scalars)
        got_c, got_d = c.numpy(stream=s, timeout=60), d.numpy(stream=s, timeout=60)
        # The same launches, one by one.
        e, f = zeros(dev), zeros(dev)
        mod["vadd"](a, b, e, n0, *launch_params(kind, N))
        if kind != "cpu" and n1 == 128:
            mod["vadd"](e, b, f, N, 2, launch_params(kind, N)[1])
        else:
            mod["vadd"](e, b, f, n1, *launch_params(kind, N))
        np.testing.assert_array_equal(got_c, e.numpy(timeout=60))
        np.testing.assert_array_equal(got_d, f.numpy(timeout=60))
        want_c = np.where(np.arange(N) < n0, x + y, 0)
        np.testing.assert_allclose(got_c, want_c, rtol=1e-6)
        np.testing.assert_allclose(got_d, np.where(np.arange(N) < n1, want_c + y, 0), rtol=1e-6)
    # As captured again: the captured values.
    g.replay(scalars={(0, "n"): N})
    np.testing.assert_allclose(d.numpy(stream=s, timeout=60), x + 2 * y, rtol=1e-5)
    after = submission_counts(dev)
    if g.native and after is not None:
        # Every replay was one submission of the backend's recording, recorded
        # again only when the values changed (each case's first replay, and
        # back to as captured).
        replays = 2 * len(cases) + 1
        assert after["graph_replays"] - before["graph_replays"] == replays
        assert after["graph_recordings"] - before["graph_recordings"] == len(cases) + 1


def test_replays_in_flight_keep_their_own_values(kind, mod):
    """Replays submitted back to back, each with its own n, rounds and
    output, none waited for before the next: each writes what its values say."""
    dev = modrt.device(kind)
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal(N).astype("float32"), rng.standard_normal(N).astype("float32")
    a, b, c = modrt.tensor(x, dev), modrt.tensor(y, dev), zeros(dev)
    rounds = SLOW_ROUNDS.get(kind, 20000)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["slow_add"](a, b, c, N, rounds, *launch_params(kind, N))
    sizes = [N, 60, 200, 10, 150]
    outs = [zeros(dev) for _ in sizes]
    for i, (n, out) in enumerate(zip(sizes, outs)):
        g.replay({c: out}, scalars={(0, "n"): n, (0, "rounds"): rounds // (i + 1)})
    s.synchronize(timeout=120)
    for n, out in zip(sizes, outs):
        np.testing.assert_allclose(out.numpy(), np.where(np.arange(N) < n, x + y, 0), rtol=1e-3, atol=1e-3)
    assert not c.numpy().any(), "the captured output is untouched by rebound replays"


def test_a_scalar_the_launch_would_refuse_is_refused_naming_it(kind, mod):
    """A value of the wrong type or out of its dtype's range, a tensor
    argument, a launch or name the graph lacks, and a malformed key are
    refused before anything runs or is recorded; the graph replays after."""
    dev = modrt.device(kind)
    a, b = modrt.tensor(np.ones(N, "float32"), dev), modrt.tensor(np.ones(N, "float32"), dev)
    c, d = zeros(dev), zeros(dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        mod["vadd"](a, b, c, N, *launch_params(kind, N))
        mod["vadd"](c, b, d, N, *launch_params(kind, N))  # d = a + 2b = 3
    refusals = [
        ({(1, "n"): 2.5}, TypeError, r"launch 1: vadd: argument 'n' \(int32\)"),
        ({(0, 3): 2**40}, OverflowError, r"argument 'n' \(int32\) must be in \[-2147483648, 2147483647\]"),
        ({(0, "a"): 1}, TypeError, r"value 0 of launch 0 \(vadd\) is a .*not a scalar"),
        ({(2, "n"): 1}, IndexError, r"launch 2, but the graph has 2 launches"),
        ({(0, 9): 1}, IndexError, r"launch 0 \(vadd\(.*\)\) took \d+ values; it has no value 9"),
        ({(0, "count"): 1}, KeyError, r"no argument or launch parameter named 'count'"),
        ({(0, "n"): "5"}, TypeError, r"scalars\[\(0, 'n'\)\] is an int or a float, not str"),
        ({"n": 5}, TypeError, r"every key of scalars is \(launch index, argument index or name\)"),
        ({(0, 3): 100, (0, "n"): 200}, ValueError, r"value 3 of launch 0 \(vadd\) is given two different values"),
    ]
    if kind != "cpu":
        refusals.append(
            ({(0, "blockIdx.x"): 0}, ValueError, r"launch 0: vadd: launch parameter blockIdx.x must be >= 1")
        )
    s.synchronize(timeout=60)
    before = submission_counts(dev)
    for scalars, error, message in refusals:
        with pytest.raises(error, match=message):
            g.replay(scalars=scalars)
    s.synchronize(timeout=60)
    assert not c.numpy().any() and not d.numpy().any(), "nothing ran"
    assert submission_counts(dev) == before
    g.replay(scalars={(0, 3): 100, (0, "n"): 100})  # the same value twice is one value
    np.testing.assert_array_equal(d.numpy(stream=s, timeout=60), np.where(np.arange(N) < 100, 3, 1))


def test_checked_mode_reports_a_write_out_of_bounds_that_new_scalars_make(kind):
    """In checked mode, a replay whose new n makes its launch write past the
    buffer raises IndexError naming that launch of the replay; a replay with
    values in bounds after it runs and is checked again."""
    dev = modrt.device(kind)
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(N).astype("float32"), rng.standard_normal(N).astype("float32")
    with modrt.checked():
        mod = named_kernels(kind)
        a, b = modrt.tensor(x, dev), modrt.tensor(y, dev)
        short = modrt.empty((256,), "float32", dev)
        s = modrt.Stream(dev)
        with s.capture() as g:
            mod["vadd"](a, b, short, 256, *launch_params(kind, N))  # in bounds as captured
        with pytest.raises(
            IndexError,
            match=r"^vadd \(launch 1 of 1 in a graph replay\): argument 2 was written out of bounds: "
            r"bytes 1024 to 1199 of a buffer of 1024 bytes \(found by checked mode",
        ):
            g.replay(scalars={(0, "n"): N})
        s.synchronize(timeout=60)
        short.copyfrom(np.zeros(256, "float32"))
        g.replay(scalars={(0, "n"): 200})
        s.synchronize(timeout=60)
        np.testing.assert_allclose(short.numpy(), np.where(np.arange(256) < 200, (x + y)[:256], 0), rtol=1e-6)
