"""The device layer on every backend with a device here: streams, events,
recorded launches (graphs), the pool, and copies. Waits, timeouts and Ctrl-C
are device_layer_waits_test.py's; what every backend with native streams
does alike, native_streams_test.py's; with graphs it records itself,
native_graphs_test.py's.

Each backend runs the same three kernels (device_layer_kernels.py). Its own
folder tests what is its own (backends/<x>/native_streams_test.py)."""

import re

import numpy as np
import pytest
from device_layer_kernels import (
    KINDS,
    NATIVE_GRAPHS,
    NATIVE_STREAMS,
    compile_kernels,
    device_or_skip,
    inputs,
    launch_params,
    vadd,
)

import modrt


@pytest.fixture(scope="module", params=KINDS)
def kind(request):
    return device_or_skip(request.param)


@pytest.fixture(scope="module")
def mod(kind):
    # Compiled once per backend (on lavapipe ~0.8 s): every case launches it
    # as it is; checked mode compiles its own.
    return compile_kernels(kind)


def test_launches_on_a_stream_complete_in_order(kind, mod):
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev)
    c = modrt.empty((300,), "float32", dev)
    d = modrt.empty((300,), "float32", dev)
    s = modrt.Stream(dev)
    assert s.device == dev and not s.is_default and s.implementation
    assert s.native == dev.default_stream.native == (kind in NATIVE_STREAMS)
    with modrt.stream(s):
        assert modrt.current_stream(dev) == s
        vadd(mod, kind, a, b, c, 300)
        vadd(mod, kind, c, b, d, 300)  # reads what the launch before wrote
        done = s.record()
    assert modrt.current_stream(dev) == dev.default_stream
    done.synchronize(timeout=60)
    assert done.query() and s.pending == ""
    np.testing.assert_allclose(d.numpy(stream=s), x + 2 * y, rtol=1e-5)


def test_another_stream_waits_for_an_event(kind, mod):
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev)
    c = modrt.empty((300,), "float32", dev)
    d = modrt.empty((300,), "float32", dev)
    first, second = modrt.Stream(dev), modrt.Stream(dev)
    with modrt.stream(first):
        vadd(mod, kind, a, b, c, 300)
    second.wait(first.record())
    with modrt.stream(second):
        vadd(mod, kind, c, c, d, 300)
    second.synchronize(timeout=60)
    np.testing.assert_allclose(d.numpy(), 2 * (x + y), rtol=1e-5)


def test_event_timing_is_device_time_or_refused(kind, mod):
    dev = modrt.device(kind)
    _, _, a, b = inputs(dev)
    c = modrt.empty((300,), "float32", dev)
    s = dev.default_stream
    start = s.record()
    vadd(mod, kind, a, b, c, 300)
    end = s.record()
    end.synchronize(timeout=60)
    if kind == "cpu" or s.native:  # cpu: the worker thread is the device, its clock the device's
        assert end.elapsed_ms(start) >= 0.0
    else:
        with pytest.raises(RuntimeError, match="no device timestamps"):
            end.elapsed_ms(start)


def test_graph_replays_with_rebound_buffers(kind, mod):
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev)
    c = modrt.tensor(np.zeros(300, "float32"), dev)
    d = modrt.tensor(np.zeros(300, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        vadd(mod, kind, a, b, c, 300)
        vadd(mod, kind, c, b, d, 300)
    assert len(g) == 2
    assert g.native == (g.why_not_native is None) == (kind in NATIVE_GRAPHS)
    if kind == "cpu":
        assert g.why_not_native == "this backend does not record graphs itself (no graph extension)"
    s.synchronize(timeout=60)
    assert not d.numpy().any(), "a captured launch must not run while capturing"
    g.replay()
    np.testing.assert_allclose(d.numpy(), x + 2 * y, rtol=1e-5)
    ones = modrt.tensor(np.ones(300, "float32"), dev)
    out = modrt.tensor(np.zeros(300, "float32"), dev)
    g.replay({a: ones, d: out})
    np.testing.assert_allclose(out.numpy(), 1 + 2 * y, rtol=1e-5)
    np.testing.assert_allclose(d.numpy(), x + 2 * y, rtol=1e-5)  # the captured buffer untouched
    with pytest.raises(ValueError, match="shape, dtype and device"):
        g.replay({a: modrt.empty((7,), "float32", dev)})


def test_a_rebound_replay_leaves_the_captured_buffers_alone(kind, mod):
    """A replay that rebinds the input and the output, before any replay as
    captured, writes its own output only; the replay as captured after it
    writes the captured one."""
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev)
    t = modrt.tensor(np.zeros(300, "float32"), dev)
    c = modrt.tensor(np.zeros(300, "float32"), dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        vadd(mod, kind, a, b, t, 300)
        vadd(mod, kind, t, b, c, 300)  # c = a + 2 b
    ones = modrt.tensor(np.ones(300, "float32"), dev)
    out = modrt.tensor(np.zeros(300, "float32"), dev)
    g.replay({a: ones, c: out})
    np.testing.assert_allclose(out.numpy(stream=s, timeout=60), 1 + 2 * y, rtol=1e-5, atol=1e-6)
    assert not c.numpy().any(), "the rebound replay must not write the captured buffer"
    g.replay()
    np.testing.assert_allclose(c.numpy(stream=s, timeout=60), x + 2 * y, rtol=1e-5, atol=1e-6)


def test_a_rebinding_is_one_simultaneous_substitution(kind, mod):
    """g.replay(bindings) looks each captured argument up once: {x: z, z: x}
    swaps (it wrote x = 11, applying x->z then z->x), a cycle rotates, and a
    graph the backend recorded itself re-records and replays alike, twice in
    a row (the second replay reuses the re-recording) and back to as captured."""
    dev = modrt.device(kind)
    n = 300
    x, y, z = (modrt.tensor(np.full(n, v, "float32"), dev) for v in (1, 10, 100))
    s = modrt.Stream(dev)
    with s.capture() as g:
        vadd(mod, kind, x, y, z, n)  # z = x + y

    def values():
        s.synchronize(timeout=60)
        return [int(t.numpy()[0]) for t in (x, y, z)] + [int(t.numpy()[-1]) for t in (x, y, z)]

    for _ in range(2):
        g.replay({x: z, z: x})  # vadd(z, y, x): x = 100 + 10
        assert values() == [110, 10, 100] * 2
        x.copyfrom(np.full(n, 1, "float32"))
    g.replay({x: z, y: x, z: y})  # a cycle: vadd(z, x, y): y = 100 + 1
    assert values() == [1, 101, 100] * 2
    y.copyfrom(np.full(n, 10, "float32"))
    g.replay({x: x})  # a tensor bound to itself: as captured
    assert values() == [1, 10, 11] * 2
    z.copyfrom(np.full(n, 100, "float32"))
    g.replay()
    assert values() == [1, 10, 11] * 2


def test_a_binding_the_graph_cannot_use_is_refused_naming_it(kind, mod):
    """A key no captured launch took, a replacement of another shape, and
    bindings or a stream of the wrong type are refused before anything runs."""
    dev = modrt.device(kind)
    n = 300
    x, y, z = (modrt.tensor(np.full(n, v, "float32"), dev) for v in (1, 10, 100))
    s = modrt.Stream(dev)
    with s.capture() as g:
        vadd(mod, kind, x, y, z, n)
    stranger = modrt.tensor(np.full(n, 5, "float32"), dev)
    with pytest.raises(ValueError, match=rf"never captured: float32\[300\] on {kind}\(0\) \(bound to float32\[300\]"):
        g.replay({stranger: y})
    with pytest.raises(ValueError, match=rf"the captured float32\[300\] on {kind}\(0\) was bound to float32\[7\]"):
        g.replay({x: z, y: modrt.empty((7,), "float32", dev)})
    with pytest.raises(TypeError, match="stream= takes a modrt.Stream, not int"):
        g.replay(stream=3)
    with pytest.raises(TypeError, match="bindings is a dict .* not list"):
        g.replay([(x, z)])
    with pytest.raises(TypeError, match="binding's value is a modrt.Tensor, not ndarray"):
        g.replay({x: np.zeros(n, "float32")})
    s.synchronize(timeout=60)
    assert [int(t.numpy()[0]) for t in (x, y, z)] == [1, 10, 100], "a refused replay must run nothing"


def test_another_threads_launch_on_a_capturing_stream_is_refused_never_swallowed(kind, mod):
    """A capture records the capturing thread's launches only: a launch from
    another thread on the stream while it captures is a RuntimeError (it was
    recorded into the graph and never ran), an event recorded there too;
    after the capture the other thread's launches run, every one of them."""
    import threading

    dev = modrt.device(kind)
    n = 300
    x, y, a, b = inputs(dev, n)
    s = modrt.Stream(dev)
    capturing, refused, captured = threading.Event(), threading.Event(), threading.Event()
    errors, ran = [], []

    def other_thread():
        capturing.wait(60)
        for what in ("launch", "record"):
            try:
                if what == "launch":
                    mod["vadd"](a, b, modrt.empty((n,), "float32", dev), n, *launch_params(kind, n), stream=s)
                else:
                    s.record()
            except RuntimeError as e:
                errors.append(str(e))
        refused.set()
        captured.wait(60)
        for _ in range(5):
            out = modrt.empty((n,), "float32", dev)
            mod["vadd"](a, b, out, n, *launch_params(kind, n), stream=s)
            ran.append(out)

    worker = threading.Thread(target=other_thread)
    worker.start()
    mine = modrt.tensor(np.zeros(n, "float32"), dev)
    with s.capture() as g:
        vadd(mod, kind, a, b, mine, n)
        capturing.set()
        assert refused.wait(60)
    captured.set()
    worker.join(60)
    assert len(g) == 1, "only the capturing thread's launch is recorded"
    assert len(errors) == 2, errors
    for error, what in zip(errors, ("vadd", r"Stream.record\(\)")):
        assert re.fullmatch(
            rf"{what}: the stream of {kind}\(0\) is capturing a graph in another thread \(Stream.capture\(\)\), "
            r"which records only its own launches; from this thread it would never run\. Launch on another stream, "
            r"or capture on a stream of its own \(modrt.Stream\(device\)\)",
            error,
        ), error
    s.synchronize(timeout=60)
    assert len(ran) == 5
    for out in ran:
        np.testing.assert_allclose(out.numpy(stream=s), x + y, rtol=1e-6)
    assert not mine.numpy().any()
    g.replay()
    np.testing.assert_allclose(mine.numpy(), x + y, rtol=1e-6)


def test_an_event_inside_a_capture_is_refused_and_elapsed_ms_is_never_nan(kind, mod):
    """Stream.record() while the stream captures is a RuntimeError saying how
    to time a replay (elapsed_ms gave NaN); events around a replay time it;
    and an event keeps its time however many were recorded after it (cpu
    gave NaN after 5,000 records)."""
    dev = modrt.device(kind)
    if kind == "webgpu" and not dev.attr("supports_timestamp_query"):
        pytest.skip(f"{dev.name} has no timestamp queries")
    n = 300
    _, _, a, b = inputs(dev, n)
    c = modrt.empty((n,), "float32", dev)
    s = modrt.Stream(dev)
    with s.capture() as g:
        vadd(mod, kind, a, b, c, n)
        with pytest.raises(
            RuntimeError,
            match=r"capturing a graph, and a graph records launches, not events; to time a replay, record events "
            r"before and after g.replay\(\)",
        ):
            s.record()
    start = s.record()
    g.replay()
    end = s.record()
    for _ in range(5000):
        s.record()
    last = s.record()
    last.synchronize(timeout=120)
    for later, earlier in ((end, start), (last, start), (last, end)):
        ms = later.elapsed_ms(earlier)
        assert ms == ms and ms >= 0.0, (ms, kind)


def test_checked_mode_reports_an_out_of_bounds_write_at_the_replay_that_made_it(kind):
    """A graph captured in checked mode whose second launch writes past its
    buffer: the replay raises IndexError naming that launch (it was reported
    at the next ordinary launch, which was blamed), and the launches after it
    are checked again and pass."""
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev, 300)
    with modrt.checked():
        good = modrt.empty((300,), "float32", dev)
        short = modrt.empty((256,), "float32", dev)  # vadd of 300 writes 44 floats past it
        mod = compile_kernels(kind)
        s = modrt.Stream(dev)
        with s.capture() as g:
            vadd(mod, kind, a, b, good, 300)
            vadd(mod, kind, a, b, short, 300)
        with pytest.raises(
            IndexError,
            match=r"^vadd \(launch 2 of 2 in a graph replay\): argument 2 was written out of bounds: "
            r"bytes 1024 to 1199 of a buffer of 1024 bytes \(found by checked mode",
        ):
            g.replay()
        np.testing.assert_allclose(good.numpy(), x + y, rtol=1e-6)
        np.testing.assert_allclose(short.numpy(), (x + y)[:256], rtol=1e-6)
        vadd(mod, kind, a, b, good, 300)  # the next ordinary launch is not blamed
        s.synchronize(timeout=60)
        with s.capture() as fine:
            vadd(mod, kind, a, b, good, 300)
        fine.replay()
        s.synchronize(timeout=60)


def test_pool_reuses_freed_blocks(kind, mod):
    dev = modrt.device(kind)
    dev.sync(timeout=60)
    dev.empty_cache()
    nbytes = 4 * 12345
    modrt.empty((12345,), "float32", dev)  # made and dropped: its block is cached
    dev.sync(timeout=60)
    before = dev.memory_stats()
    assert before["pool_bytes"] >= nbytes and before["largest_free_block"] >= nbytes
    for _ in range(20):
        t = modrt.empty((12345,), "float32", dev)
        del t
    after = dev.memory_stats()
    assert after["driver_allocations"] == before["driver_allocations"]
    assert after["peak"] >= nbytes
    dev.empty_cache()
    assert dev.memory_stats()["pool_bytes"] == 0


def test_ranged_and_device_to_device_copies(kind):
    dev = modrt.device(kind)
    t = modrt.tensor(np.zeros(16, "int32"), dev)
    t.copyfrom(np.arange(4, dtype="int32"), offset=8)  # elements 2..5
    np.testing.assert_array_equal(t.numpy()[:7], [0, 0, 0, 1, 2, 3, 0])
    part = np.empty(3, "int32")
    t.copyto(part, offset=12)
    np.testing.assert_array_equal(part, [1, 2, 3])
    with pytest.raises(ValueError, match="outside the tensor"):
        t.copyfrom(np.arange(4, dtype="int32"), offset=56)
    same = modrt.empty((16,), "int32", dev)
    same.copyfrom(t)
    np.testing.assert_array_equal(same.numpy(), t.numpy())
    host = modrt.empty((16,), "int32")
    host.copyfrom(t)
    np.testing.assert_array_equal(host.numpy(), t.numpy())
    back = modrt.tensor(np.full(16, 9, "int32"), dev)
    t.copyfrom(modrt.tensor(np.full(16, 9, "int32")))
    np.testing.assert_array_equal(t.numpy(), back.numpy())


def test_copies_of_bytes_that_are_not_whole_words_keep_the_bytes_beside_them(kind):
    """Ranged copies at offsets and of sizes that are not whole 4-byte words,
    and a device-to-device copy of 7 bytes on a stream."""
    dev = modrt.device(kind)
    t = modrt.tensor(np.arange(11, dtype="uint8"), dev)
    t.copyfrom(np.array([100, 101, 102], "uint8"), offset=3)
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 100, 101, 102, 6, 7, 8, 9, 10])
    part = np.empty(5, "uint8")
    t.copyto(part, offset=1)
    np.testing.assert_array_equal(part, [1, 2, 100, 101, 102])
    s = modrt.Stream(dev)
    odd = modrt.tensor(np.arange(7, dtype="uint8"), dev)
    copy = modrt.tensor(np.zeros(7, "uint8"), dev)
    copy.copyfrom(odd, stream=s)
    np.testing.assert_array_equal(copy.numpy(stream=s), np.arange(7, dtype="uint8"))


def test_cross_backend_copy_stages_through_host():
    devices = [modrt.device(k) for k in KINDS if k != "cpu" and modrt.device(k).exist]
    if len(devices) < 2:
        pytest.skip("needs two backend devices")
    src = modrt.tensor(np.arange(10, dtype="float32"), devices[0])
    dst = modrt.empty((10,), "float32", devices[1])
    dst.copyfrom(src)
    np.testing.assert_array_equal(dst.numpy(), np.arange(10, dtype="float32"))


def test_wrong_argument_types_to_streams_events_and_graphs_name_the_argument(kind, mod):
    """None, an int or a stream where an event is expected, an event never
    recorded, an int for a stream or a device: a TypeError (RuntimeError
    for the unrecorded event) naming the argument, never an AttributeError."""
    dev = modrt.device(kind)
    s = modrt.Stream(dev)
    done = s.record()
    t = modrt.tensor(np.arange(8, dtype="float32"), dev)
    with s.capture() as g:
        vadd(mod, kind, t, t, t if kind != "webgpu" else modrt.empty((8,), "float32", dev), 8)
    takes_an_event = r"takes a modrt.Event \(from Stream.record\(\)\), not "
    cases = [
        (lambda: s.wait(None), TypeError, r"Stream.wait\(event\) " + takes_an_event + "NoneType"),
        (lambda: s.wait(3), TypeError, r"Stream.wait\(event\) " + takes_an_event + "int"),
        (lambda: s.wait(s), TypeError, r"Stream.wait\(event\) " + takes_an_event + "Stream"),
        (lambda: done.elapsed_ms(None), TypeError, r"Event.elapsed_ms\(start\) " + takes_an_event + "NoneType"),
        (lambda: done.elapsed_ms(3), TypeError, r"Event.elapsed_ms\(start\) " + takes_an_event + "int"),
        (lambda: done.synchronize(timeout="1"), TypeError, "timeout is a number of seconds or None, not str"),
        (lambda: modrt.Stream(3), TypeError, r"modrt.Stream\(device\) takes a modrt.Device, not int"),
        (lambda: modrt.current_stream(None), TypeError, r"current_stream\(device\) takes a modrt.Device"),
        (lambda: modrt.stream(3), TypeError, r"modrt.stream\(s\) takes a modrt.Stream, not int"),
        (lambda: g.replay(stream=3), TypeError, "Graph.replay: stream= takes a modrt.Stream, not int"),
        (lambda: t.numpy(stream=3), TypeError, "stream= takes a modrt.Stream, not int"),
        (lambda: t.copyfrom(t, stream="s"), TypeError, "stream= takes a modrt.Stream, not str"),
    ]
    never = r"the event was never recorded \(modrt.Event\(\) is an empty event\); an event comes from Stream.record"
    for method in ("synchronize", "query"):
        cases.append((getattr(modrt.Event(), method), RuntimeError, f"Event.{method}: {never}"))
    cases += [
        (lambda: modrt.Event().elapsed_ms(done), RuntimeError, f"Event.elapsed_ms: {never}"),
        (lambda: done.elapsed_ms(modrt.Event()), RuntimeError, rf"Event.elapsed_ms\(start\): {never}"),
        (lambda: s.wait(modrt.Event()), RuntimeError, rf"Stream.wait\(event\): {never}"),
    ]
    for call, error, words in cases:
        with pytest.raises(error, match=words):
            call()
    done.synchronize(timeout=60)
    assert len(g) == 1


def test_a_tensor_copied_onto_itself_is_left_as_it_is(kind):
    """t.copyfrom(t) is a no-op on every backend, on the default stream and
    on a stream (OpenCL answered "OpenCL error -8", CL_MEM_COPY_OVERLAP)."""
    dev = modrt.device(kind)
    values = np.arange(64, dtype="float32")
    t = modrt.tensor(values, dev)
    s = modrt.Stream(dev)
    assert t.copyfrom(t) is t
    assert t.copyfrom(t, stream=s) is t
    np.testing.assert_array_equal(t.numpy(stream=s, timeout=60), values)
    np.testing.assert_array_equal(t.numpy(), values)


def test_a_copy_between_overlapping_bytes_is_refused_naming_them():
    """Host memory shared with numpy (from_dlpack of two overlapping slices):
    a copy between them is a ValueError, not memcpy's undefined result."""
    base = np.arange(10, dtype="float32")
    head, tail = modrt.from_dlpack(base[0:8]), modrt.from_dlpack(base[2:10])
    with pytest.raises(
        ValueError,
        match=r"overlapping bytes of one buffer on cpu\(0\): source bytes \[8, 40\), destination bytes \[0, 32\)",
    ):
        head.copyfrom(tail)
    np.testing.assert_array_equal(base, np.arange(10, dtype="float32"))
