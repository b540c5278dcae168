"""The device layer on every backend with a device here: streams, events,
bounded waits, recorded launches (graphs), the pool, and copies.

Each backend runs the same three kernels (device_layer_kernels.py). Cases
that leave a kernel spinning run in a child process. The cases at the end
hold for every backend with native streams; its own folder tests what is its
own (backends/<x>/native_streams_test.py, device_layer_test.py)."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from device_layer_kernels import BLOCK, KERNELS, KINDS, NATIVE_STREAMS

import modrt


def launch_params(kind, n):
    return () if kind == "cpu" else ((n + BLOCK - 1) // BLOCK, BLOCK)


def spin_params(kind):
    return () if kind == "cpu" else (1, 1)


@pytest.fixture(params=KINDS)
def kind(request):
    d = modrt.device(request.param, 0)
    if not d.exist:
        pytest.skip(f"{request.param}: {d.unavailable_reason}")
    return request.param


@pytest.fixture(params=sorted(NATIVE_STREAMS))
def native_kind(request):
    d = modrt.device(request.param, 0)
    if not d.exist:
        pytest.skip(f"{request.param}: {d.unavailable_reason}")
    return request.param


def compile_kernels(kind):
    source, signatures = KERNELS[kind]
    return modrt.compile(source, kind, signatures)


@pytest.fixture
def mod(kind):
    return compile_kernels(kind)


def vadd(mod, kind, a, b, c, n):
    mod["vadd"](a, b, c, n, *launch_params(kind, n))


def inputs(dev, n=300):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    return x, y, modrt.tensor(x, dev), modrt.tensor(y, dev)


def test_launches_on_a_stream_complete_in_order(kind, mod):
    dev = modrt.device(kind)
    x, y, a, b = inputs(dev)
    c = modrt.empty((300,), "float32", dev)
    d = modrt.empty((300,), "float32", dev)
    s = modrt.Stream(dev)
    assert s.device == dev and not s.is_default and s.implementation
    assert s.native == (kind in NATIVE_STREAMS)
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
    assert g.native == (g.why_not_native is None)
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


def run_child(kind, body, env_extra=None):
    source, signatures = KERNELS[kind]
    code = textwrap.dedent(
        f"""
        import os, signal, sys, threading, numpy as np, modrt
        kind = {kind!r}
        dev = modrt.device(kind)
        mod = modrt.compile({source!r}, kind, {signatures!r})
        flag = modrt.tensor(np.zeros(1, "int32"), dev)
        spin_params = {spin_params(kind)!r}
        """
    ) + textwrap.dedent(body)
    env = dict(os.environ, MODRT_EXIT_TIMEOUT="1", **(env_extra or {}))
    # The guard against a hang of the test itself, not a timed assertion.
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=240)


def assert_waits_time_out_on_a_spin(kind, launch, waits):
    """In a child: `launch` starts the never-ending spin kernel, then each of
    `waits` (lambdas) must raise TimeoutError naming it, and the process must
    exit with status 1 saying that work was still pending."""
    body = (
        f"{launch}\n"
        f"for wait in ({', '.join(waits)},):\n"
        "    try:\n"
        "        wait()\n"
        "        print('RETURNED')\n"
        "    except TimeoutError as e:\n"
        "        print('TIMEOUT', e)\n"
        "print('DONE', flush=True)\n"
    )
    r = run_child(kind, body)
    lines = r.stdout.splitlines()
    assert lines and lines[-1] == "DONE" and len(lines) == len(waits) + 1, r.stdout + r.stderr
    for line in lines[:-1]:
        assert line.startswith("TIMEOUT") and "spin (grid [1, 1, 1], block [1, 1, 1])" in line, line
    assert r.returncode == 1 and "exiting with work still pending" in r.stderr and "spin" in r.stderr, r.stderr


def test_spinning_kernel_times_out_and_the_process_exits(kind):
    assert_waits_time_out_on_a_spin(
        kind,
        'mod["spin"](flag, *spin_params)',
        [
            "lambda: dev.sync(timeout=0.5)",
            "lambda: dev.default_stream.synchronize(timeout=0.2)",
            "lambda: dev.default_stream.record().synchronize(timeout=0.2)",
            "lambda: flag.numpy(timeout=0.2)",
        ],
    )


def test_ctrl_c_interrupts_a_wait(kind):
    r = run_child(
        kind,
        """
        mod["spin"](flag, *spin_params)
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            dev.sync()
        except KeyboardInterrupt:
            print("INTERRUPTED", flush=True)
        """,
    )
    assert r.stdout.strip() == "INTERRUPTED", r.stdout + r.stderr
    assert "exiting with work still pending" in r.stderr


def test_a_shape_that_is_not_integral_or_a_dtype_modrt_lacks_is_refused_before_allocating(kind):
    """modrt.empty and modrt.pinned_empty: a dimension that is not an
    integer is a TypeError naming it (it was truncated: (3.7,) made 3
    elements), and object, str, void or complex a ValueError before anything
    is allocated (a pinned array of object crashed the process). In a child
    process: a regression to the crash must not take the test run with it."""
    r = run_child(
        kind,
        """
        makers = {
            "modrt.empty": lambda shape, dtype="float32": modrt.empty(shape, dtype, dev),
            "pinned_empty": lambda shape, dtype="float32": modrt.pinned_empty(shape, dtype, device=dev),
        }
        for where, make in makers.items():
            for shape in [(3.7,), (2, 2.5), (4, np.float64(2.0)), ("3",), (2, True)]:
                try:
                    make(shape)
                    print("MADE", where, shape)
                except TypeError as e:
                    print("TYPE", e)
            for dtype in [object, "object", str, "U4", "V8", "complex64"]:
                try:
                    make((4,), dtype)
                    print("MADE", where, dtype)
                except ValueError as e:
                    print("VALUE", e)
            assert make((np.int64(3), 2)).shape == (3, 2) and make(5).shape == (5,)
        assert modrt.pinned_empty((3,), np.float16, device=dev).dtype == np.float16
        print("END", flush=True)
        """,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert not [line for line in lines if line.startswith("MADE")], r.stdout
    for where in ("modrt.empty", "pinned_empty"):
        for message in [
            "dimension 0 of shape (3.7,) is 3.7 (float), not an integer",
            "dimension 1 of shape (2, 2.5) is 2.5 (float), not an integer",
            "dimension 1 of shape (4, np.float64(2.0)) is np.float64(2.0) (float64), not an integer"
            if np.__version__ >= "2"
            else "dimension 1 of shape (4, 2.0) is 2.0 (float64), not an integer",
            "dimension 0 of shape ('3',) is '3' (str), not an integer",
            "dimension 1 of shape (2, True) is True (bool), not an integer",
        ]:
            assert f"TYPE {where}: {message}" in lines, (message, r.stdout)
    values = [line for line in lines if line.startswith("VALUE")]
    known = (
        " (modrt's dtypes: bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32,"
        " float64, bfloat16; a vector of them as in float32x4)"
    )
    assert values[:6] == [
        f"VALUE unknown dtype '{name}'{known}" for name in ("object", "object", "str", "U4", "V8", "complex64")
    ], r.stdout
    assert len(values) == 12 and all(
        line.startswith("VALUE pinned_empty: modrt has no dtype") and "host arrays for modrt hold one of bool" in line
        for line in values[6:]
    ), r.stdout
    assert lines[-1] == "END", r.stdout


# After a wait raised TimeoutError on a spinning kernel: each call that then
# waits for the device, and whether Ctrl-C ends it (cpu: the two that have
# nothing to wait for there return at once).
WAITS_AFTER_A_TIMEOUT = {
    "dev.sync()": "lambda: dev.sync()",
    "numpy() of another tensor": "lambda: out.numpy()",
    "a new tensor": "lambda: modrt.tensor(np.ones(4, 'float32'), dev)",
    "copyfrom() into another tensor": "lambda: out.copyfrom(np.zeros(4, 'float32'))",
    "a launch held at the in-flight limit": "lambda: [mod['vadd'](a, a, out, 4, *params) for _ in range(4)]",
    "an allocation in checked mode": "checked_allocation",
    "another backend's stream waiting for its event": (
        "lambda: modrt.Stream(modrt.device(OTHER)).wait(dev.default_stream.record())"
    ),
    "empty_cache()": "lambda: dev.empty_cache()",
    # On a stream of its own: not held at the in-flight limit the launches before reached.
    "the first launch of another kernel": "lambda: mod['slow_add'](a, a, out, 4, 1, *params, stream=modrt.Stream(dev))",
    "a launch in checked mode": "lambda: checked_vadd(a, a, guarded, 4, *params, stream=modrt.Stream(dev))",
    # Recording waits for nothing, even behind the wait the interrupted launch left
    # running (on webgpu it blocked inside wgpu-native's device poll).
    "an event recorded after the interrupted launch": "lambda: dev.default_stream.record()",
    "asking whether an event is complete": (  # not complete while the spin runs
        "lambda: None if dev.default_stream.record().query() is False else 1 / 0"
    ),
    "a launch on a stream of its own": "lambda: launched_vadd(a, a, out, 4, *params, stream=modrt.Stream(dev))",
    "dropping a module": "lambda: (modules.clear(), gc.collect())",
}
# Waits inside the core (not Python's slices): the KeyboardInterrupt names the spin.
CORE_WAITS = {
    "a new tensor",
    "a launch held at the in-flight limit",
    "an allocation in checked mode",
    "a launch in checked mode",
    "another backend's stream waiting for its event",
    "empty_cache()",
    "the first launch of another kernel",
}


def test_ctrl_c_ends_every_wait_after_a_timeout(kind):
    """A spinning kernel, a wait that timed out on it, then each call that
    waits for the device: SIGINT ends every one with KeyboardInterrupt (a
    launch held at the in-flight limit, a checked-mode allocation, a stream
    waiting for another backend's event, empty_cache(), a kernel's first
    launch and dropping a module waited in the driver or without a bound,
    and ignored it), and the process goes on."""
    others = [k for k in sorted(NATIVE_STREAMS) if k != kind and modrt.device(k).exist]
    if not others:
        pytest.skip("needs a second backend with a device")
    cases = "".join(f"    {name!r}: {case},\n" for name, case in WAITS_AFTER_A_TIMEOUT.items())
    body = textwrap.dedent(
        """
        import gc, time
        OTHER = {other!r}
        params = () if kind == "cpu" else (1, 4)
        a = modrt.tensor(np.ones(4, "float32"), dev)
        out = modrt.tensor(np.ones(4, "float32"), dev)
        launched_vadd = mod["vadd"]
        launched_vadd(a, a, out, 4, *params)  # its first launch is behind it
        modules = [modrt.compile({source!r}, kind, {signatures!r})]
        modules[0]["vadd"](a, a, out, 4, *params)  # a module with a pipeline built
        with modrt.checked():
            guarded = modrt.empty((4,), "float32", dev)
            checked_vadd = modules[0]["vadd"]
        checked_vadd(a, a, guarded, 4, *params)
        modrt.empty((4096,), "float32", dev)  # a block in the pool's cache
        dev.sync(timeout=60)

        def checked_allocation():
            with modrt.checked():
                modrt.empty((4,), "float32", dev)

        mod["spin"](flag, *spin_params)
        try:
            dev.sync(timeout=0.3)
        except TimeoutError:
            print("TIMEOUT", flush=True)
        cases = {{
        {cases}}}
        for name, case in cases.items():
            timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
            timer.start()
            try:
                case()
                print("RETURNED", name, flush=True)
            except KeyboardInterrupt as e:
                print("INTERRUPTED", name, "|", e, flush=True)
            try:  # a SIGINT that comes after a call returned
                timer.join()
                time.sleep(0.1)
            except KeyboardInterrupt:
                pass

        def handler(*_):
            raise LookupError("raised by the handler")

        signal.signal(signal.SIGINT, handler)  # a handler of one's own keeps its exception
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            modrt.tensor(np.ones(4, "float32"), dev)
        except LookupError as e:
            print("HANDLER", e, flush=True)
        timer.join()
        print("DONE", flush=True)
        """
    ).format(other=others[0], cases=cases, source=KERNELS[kind][0], signatures=KERNELS[kind][1])
    r = run_child(kind, body, {"MODRT_MAX_IN_FLIGHT": "3"})
    lines = r.stdout.splitlines()
    assert lines[0] == "TIMEOUT" and lines[-2:] == ["HANDLER raised by the handler", "DONE"], r.stdout + r.stderr
    lines = lines[:-1]
    outcomes = {line.split(" |")[0].split(" ", 1)[1]: line.split(" ", 1)[0] for line in lines[1:-1]}
    expected = {name: "INTERRUPTED" for name in WAITS_AFTER_A_TIMEOUT}
    # A module dropped while the device may be stuck is destroyed on a thread of its own.
    expected["dropping a module"] = "RETURNED"
    # Calls that wait for nothing return (the runtime stays usable).
    for name in (
        "an event recorded after the interrupted launch",
        "asking whether an event is complete",
        "a launch on a stream of its own",
    ):
        expected[name] = "RETURNED"
    if kind == "cpu":  # host memory and host launches: nothing to wait for
        for name in ("an allocation in checked mode", "empty_cache()", "the first launch of another kernel"):
            expected[name] = "RETURNED"
    assert outcomes == expected, r.stdout + r.stderr
    for line in lines[1:-1]:
        name = line.split(" |")[0].split(" ", 1)[1]
        if name in CORE_WAITS and line.startswith("INTERRUPTED"):
            assert "interrupted while waiting for" in line and "spin (grid [1, 1, 1], block [1, 1, 1])" in line, line
    assert r.returncode == 1 and "exiting with work still pending" in r.stderr, r.stderr


def test_in_flight_launches_are_bounded():
    """A launcher faster than the device blocks at the in-flight limit
    (MODRT_MAX_IN_FLIGHT) instead of queueing without end."""
    r = run_child(
        "cpu",
        """
        host_flag = np.zeros(1, "int32")
        shared_flag = modrt.from_dlpack(host_flag)  # the same memory: set from here, seen by the kernel
        s = modrt.Stream(dev)
        most = 0
        ones = modrt.tensor(np.ones(4, "float32"))
        with modrt.stream(s):
            mod["spin"](shared_flag)
            threading.Timer(0.5, host_flag.__setitem__, (0, 1)).start()
            for _ in range(20):
                mod["vadd"](ones, ones, modrt.empty((4,), "float32"), 4)
                pending = s.pending
                most = max(most, int(pending.split()[0]) if pending else 0)
        s.synchronize(timeout=60)
        print("MOST", most)
        """,
        {"MODRT_MAX_IN_FLIGHT": "4"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "MOST" and 1 <= int(r.stdout.split()[1]) <= 4, r.stdout


# Every backend with native streams: launches, events, waits and copies on a
# modrt.Stream of its own. N elements, one per item, in blocks of BLOCK.
N = 4096
# Rounds of slow_add's busy work: long enough to be seen unfinished, short
# enough on each device here (PoCL's is the fastest of the three).
SLOW_ROUNDS = {"opencl": 20000, "vulkan": 2000, "webgpu": 2000}


def slow_add(mod, kind, a, b, c, stream):
    mod["slow_add"](a, b, c, N, SLOW_ROUNDS[kind], *launch_params(kind, N), stream=stream)


def test_a_launch_on_a_stream_is_pending_there_until_a_wait(native_kind):
    dev, mod = modrt.device(native_kind), compile_kernels(native_kind)
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


def test_a_stream_waits_for_another_streams_event(native_kind):
    dev, mod = modrt.device(native_kind), compile_kernels(native_kind)
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


def test_events_carry_device_time_in_order(native_kind):
    dev, mod = modrt.device(native_kind), compile_kernels(native_kind)
    if native_kind == "webgpu" and not dev.attr("supports_timestamp_query"):
        pytest.skip(f"{dev.name} has no timestamp queries (backends/webgpu/device_layer_test.py tests the refusal)")
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


def test_device_to_device_copies_on_a_stream(native_kind):
    dev, mod = modrt.device(native_kind), compile_kernels(native_kind)
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


def test_a_spinning_kernel_on_a_stream_times_out_naming_it(native_kind):
    assert_waits_time_out_on_a_spin(
        native_kind,
        's = modrt.Stream(dev)\nmod["spin"](flag, *spin_params, stream=s)',
        [
            "lambda: s.synchronize(timeout=0.3)",
            "lambda: s.record().synchronize(timeout=0.3)",
            "lambda: dev.sync(timeout=0.3)",
        ],
    )


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
