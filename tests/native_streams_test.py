"""What every backend with native streams (plugin_api.h,
ModrtStreamExtension) does alike, each with its own kernels
(device_layer_kernels.py): launches, events, waits and copies on a
modrt.Stream of its own. What is a backend's own is in its folder
(backends/<x>/native_streams_test.py); a spinning kernel on a stream is
device_layer_waits_test.py's; graphs a backend records itself,
native_graphs_test.py's."""

import numpy as np
import pytest
from device_layer_kernels import (
    BLOCK,
    KERNELS,
    KINDS,
    SLOW_ROUNDS,
    compile_kernels,
    device_or_skip,
    inputs,
    launch_params,
    run_child,
    vadd,
)

import modrt


@pytest.fixture(scope="module", params=KINDS)
def native_kind(request):
    """A backend whose device says its streams are native; device_layer_test.py
    holds that answer to what the backend declares (NATIVE_STREAMS)."""
    kind = device_or_skip(request.param)
    s = modrt.Stream(modrt.device(kind))
    if not s.native:
        pytest.skip(f"{kind}'s streams are not native: {s.implementation}")
    return kind


@pytest.fixture(scope="module")
def mod(native_kind):
    return compile_kernels(native_kind)  # once per backend: every case launches it as it is


N = 4096


def slow_add(mod, kind, a, b, c, stream):
    mod["slow_add"](a, b, c, N, SLOW_ROUNDS[kind], *launch_params(kind, N), stream=stream)


def test_a_launch_on_a_stream_is_pending_there_until_a_wait(native_kind, mod):
    dev = modrt.device(native_kind)
    x, y, a, b = inputs(dev, N)
    c = modrt.empty((N,), "float32", dev)
    s = modrt.Stream(dev)
    dev.sync(timeout=60)
    mod["vadd"](a, b, c, N, *launch_params(native_kind, N), stream=s)
    # Pending until a wait learns otherwise: recorded on `s`, not the default stream.
    assert f"vadd (grid [{N // BLOCK}, 1, 1], block [{BLOCK}, 1, 1])" in s.pending
    assert dev.default_stream.pending == ""
    s.synchronize(timeout=60)
    assert s.pending == ""
    np.testing.assert_allclose(c.numpy(stream=s), x + y, rtol=1e-6)
    with pytest.raises(TypeError, match="modrt.Stream"):
        mod["vadd"](a, b, c, N, *launch_params(native_kind, N), stream=3)


def test_a_stream_waits_for_another_streams_event(native_kind, mod):
    dev = modrt.device(native_kind)
    _, _, a, b = inputs(dev, N)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    d = modrt.tensor(np.zeros(N, "float32"), dev)
    first, second = modrt.Stream(dev), modrt.Stream(dev)
    for _ in range(3):
        slow_add(mod, native_kind, a, b, c, first)
    second.wait(first.record())
    mod["vadd"](c, c, d, N, *launch_params(native_kind, N), stream=second)
    doubled = d.numpy(stream=second, timeout=120)  # waits for `second` only
    expected = c.numpy(stream=first, timeout=120)
    assert not np.all(expected == 0)
    np.testing.assert_allclose(doubled, 2 * expected, rtol=1e-5)


def test_events_carry_device_time_in_order(native_kind, mod):
    dev = modrt.device(native_kind)
    if native_kind == "webgpu" and not dev.attr("supports_timestamp_query"):
        pytest.skip(f"{dev.name} has no timestamp queries (backends/webgpu/native_streams_test.py tests the refusal)")
    _, _, a, b = inputs(dev, N)
    c = modrt.empty((N,), "float32", dev)
    s = modrt.Stream(dev)
    start = s.record()
    slow_add(mod, native_kind, a, b, c, s)
    middle = s.record()
    slow_add(mod, native_kind, a, b, c, s)
    end = s.record()
    end.synchronize(timeout=120)
    assert start.query() and middle.query() and end.query()
    first, both = middle.elapsed_ms(start), end.elapsed_ms(start)
    assert first > 0.0 and both > first
    assert start.elapsed_ms(end) == pytest.approx(-both)
    # The default stream has device time too.
    e0 = dev.default_stream.record()
    vadd(mod, native_kind, a, b, c, N)
    e1 = dev.default_stream.record()
    e1.synchronize(timeout=60)
    assert e1.elapsed_ms(e0) >= 0.0


def test_async_ranged_copies_on_a_stream(native_kind):
    dev = modrt.device(native_kind)
    s = modrt.Stream(dev)
    t = modrt.tensor(np.zeros(16, "int32"), dev)
    src = np.arange(4, dtype="int32")
    t.copyfrom(src, offset=8, stream=s)  # elements 2..5
    src[:] = -1  # staged when the copy was made: it keeps the values it was given
    np.testing.assert_array_equal(t.numpy(stream=s)[:7], [0, 0, 0, 1, 2, 3, 0])
    part = np.empty(3, "int32")
    assert t.copyto(part, offset=12, stream=s) is part
    np.testing.assert_array_equal(part, [1, 2, 3])
    whole = np.arange(16, dtype="int32") * 3
    t.copyfrom(whole, stream=s)
    np.testing.assert_array_equal(t.numpy(stream=s, timeout=60), whole)
    with pytest.raises(ValueError, match="outside the tensor"):
        t.copyfrom(np.arange(4, dtype="int32"), offset=56, stream=s)
    with pytest.raises(ValueError, match="cannot run on a stream of"):
        t.numpy(stream=modrt.Stream(modrt.device("cpu")))


def test_device_to_device_copies_on_a_stream(native_kind, mod):
    dev = modrt.device(native_kind)
    x, y, a, b = inputs(dev, N)
    s = modrt.Stream(dev)
    c = modrt.empty((N,), "float32", dev)
    copy = modrt.empty((N,), "float32", dev)
    mod["vadd"](a, b, c, N, *launch_params(native_kind, N), stream=s)
    copy.copyfrom(c, stream=s)  # after the launch: ordered on `s`
    np.testing.assert_allclose(copy.numpy(stream=s), x + y, rtol=1e-6)
    again = modrt.empty((N,), "float32", dev)
    again.copyfrom(copy)  # on the current (default) stream
    np.testing.assert_allclose(again.numpy(), x + y, rtol=1e-6)
    with pytest.raises(ValueError, match="bytes into one of"):
        modrt.empty((3,), "float32", dev).copyfrom(copy, stream=s)


def test_a_launch_makes_no_call_back_into_the_core(native_kind):
    """A launch goes down once (plugin ABI 1.2): the core hands the plugin its
    packed arguments with the stream and whether it captures, and the plugin
    calls nothing in the core. With MODRT_COUNT_CORE_CALLS=1 every plugin is
    given a core table that counts each call made through it on the calling
    thread; compiling a module (the plugin makes it through the core) shows
    the count counts."""
    r = run_child(
        native_kind,
        f"""
        calls = modrt.get_global_func("testing.core_calls_from_plugins")
        params = (1, 4)
        a = modrt.tensor(np.ones(4, "float32"), dev)
        out = modrt.empty((4,), "float32", dev)
        vadd = mod["vadd"]
        vadd(a, a, out, 4, *params)  # its first launch may build a pipeline
        dev.sync(timeout=60)
        before_compile = calls()
        modrt.compile({KERNELS[native_kind][0]!r}, kind, {KERNELS[native_kind][1]!r})
        print("COMPILE", calls() - before_compile)

        def counted(launch):
            before = calls()
            launch()
            return calls() - before

        s = modrt.Stream(dev)
        counts = [counted(lambda: vadd(a, a, out, 4, *params)) for _ in range(5)]
        counts += [counted(lambda: vadd(a, a, out, 4, *params, stream=s)) for _ in range(5)]
        with modrt.stream(s):
            counts += [counted(lambda: vadd(a, a, out, 4, *params)) for _ in range(5)]
        with s.capture() as g:
            counts += [counted(lambda: vadd(a, a, out, 4, *params)) for _ in range(3)]
        g.replay(stream=s)
        s.synchronize(timeout=60)
        print("LAUNCHES", counts)
        np.testing.assert_allclose(out.numpy(timeout=60), 2.0)
        """,
        {"MODRT_COUNT_CORE_CALLS": "1"},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert int(lines["COMPILE"]) > 0, r.stdout
    assert lines["LAUNCHES"] == str([0] * 18), r.stdout


def test_every_stream_is_native_and_says_so(native_kind):
    dev = modrt.device(native_kind)
    s = modrt.Stream(dev)
    assert s.native and dev.default_stream.native
    assert s.implementation.startswith("native:") and dev.default_stream.implementation.startswith("native:")


def test_launches_on_one_stream_run_in_order_behind_a_slow_one(native_kind, mod):
    """Six launches adding 1, queued behind a slow launch on one stream, wait
    for it: the result is the slow launch's plus 6, each time."""
    dev = modrt.device(native_kind)
    _, _, a, b = inputs(dev, N)
    ones = modrt.tensor(np.ones(N, "float32"), dev)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    d = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    slow_add(mod, native_kind, a, b, c, s)
    for _ in range(3):
        mod["vadd"](c, ones, d, N, *launch_params(native_kind, N), stream=s)
        mod["vadd"](d, ones, c, N, *launch_params(native_kind, N), stream=s)
    slow = c.numpy(stream=s, timeout=120) - 6
    slow_add(mod, native_kind, a, b, c, s)
    np.testing.assert_allclose(c.numpy(stream=s, timeout=120), slow, rtol=1e-5, atol=1e-5)


def test_a_copy_on_a_stream_comes_after_its_launches(native_kind, mod):
    dev = modrt.device(native_kind)
    _, _, a, b = inputs(dev, N)
    c = modrt.tensor(np.zeros(N, "float32"), dev)
    s = modrt.Stream(dev)
    slow_add(mod, native_kind, a, b, c, s)
    tail = np.empty(8, "float32")
    c.copyto(tail, offset=(N - 8) * 4, stream=s)
    np.testing.assert_allclose(tail, c.numpy()[-8:], rtol=1e-6)
    assert tail.any()


def test_async_copies_with_offsets_after_a_launch_on_a_stream(native_kind, mod):
    dev = modrt.device(native_kind)
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(300, "float32"), dev)
    s = modrt.Stream(dev)
    with modrt.stream(s):
        vadd(mod, native_kind, a, b, c, 300)
    # Ordered after the launch on the same stream: it overwrites elements 10..13.
    patch = np.array([7, 8, 9, 10], "float32")
    c.copyfrom(patch, offset=40, stream=s)
    patch[:] = 0  # the copy took its bytes already
    expected = x + y
    expected[10:14] = [7, 8, 9, 10]
    part = np.empty(20, "float32")
    c.copyto(part, offset=20, stream=s)  # elements 5..24, after both
    np.testing.assert_allclose(part, expected[5:25], rtol=1e-6)
    np.testing.assert_allclose(c.numpy(stream=s), expected, rtol=1e-6)
    # Bytes that are not whole 4-byte words keep their neighbours.
    u = modrt.tensor(np.arange(11, dtype="uint8"), dev)
    u.copyfrom(np.array([200, 201], "uint8"), offset=5, stream=s)
    got = np.empty(6, "uint8")
    u.copyto(got, offset=3, stream=s)
    np.testing.assert_array_equal(got, [3, 4, 200, 201, 7, 8])
