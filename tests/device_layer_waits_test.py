"""The device layer's waits on every backend with a device here: a spinning
kernel times out naming itself, Ctrl-C ends every wait (in Python's slices
and inside the core), the process exits with work pending, launches in
flight are bounded, and a bad shape or dtype is refused before allocating.
Cases that leave a kernel spinning run in a child process."""

import textwrap

import numpy as np
import pytest
from device_layer_kernels import KERNELS, KINDS, NATIVE_STREAMS, device_or_skip, run_child

import modrt


@pytest.fixture(params=KINDS)
def kind(request):
    return device_or_skip(request.param)


@pytest.fixture(params=sorted(NATIVE_STREAMS))
def native_kind(request):
    return device_or_skip(request.param)


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


# The child's MODRT_MAX_IN_FLIGHT: room for the 200 launches below.
IN_FLIGHT_LIMIT = 256
# After a wait raised TimeoutError on a spinning kernel: each call that then
# waits for the device, and whether Ctrl-C ends it (cpu: the two that have
# nothing to wait for there return at once).
WAITS_AFTER_A_TIMEOUT = {
    "dev.sync()": "lambda: dev.sync()",
    "numpy() of another tensor": "lambda: out.numpy()",
    "a new tensor": "lambda: modrt.tensor(np.ones(4, 'float32'), dev)",
    "copyfrom() into another tensor": "lambda: out.copyfrom(np.zeros(4, 'float32'))",
    # Fewer than the in-flight limit: none is held, and they return (on webgpu the
    # 64th filled the batch and submitted it behind the spin, in the driver).
    "200 launches after the timeout": "lambda: [launched_vadd(a, a, out, 4, *params) for _ in range(200)]",
    # The limit on the default stream, whatever is pending there already.
    "a launch held at the in-flight limit": (
        f"lambda: [mod['vadd'](a, a, out, 4, *params) for _ in range({IN_FLIGHT_LIMIT})]"
    ),
    "an allocation in checked mode": "checked_allocation",
    "another backend's stream waiting for its event": ("lambda: other_stream.wait(dev.default_stream.record())"),
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
    # On a stream of its own, behind the launches above (on webgpu a submission
    # of theirs waited in the driver): a copy in, and a copy out into pinned memory.
    "a copy into a tensor on a stream": "lambda: out.copyfrom(np.zeros(4, 'float32'), stream=copy_stream)",
    "a copy out of a tensor on a stream": "lambda: out.copyto(pinned, stream=copy_stream)",
    "dropping a module": "lambda: (modules.clear(), gc.collect())",
}
# The SIGINT comes 0.5 s into each call that waits for the spin, and 20 s into
# each call that must return: only one that hangs outlasts that (the spinning
# kernel takes a core of the loaded machine, and 200 launches or a gc.collect()
# may take longer than 0.5 s there, which must not read as a hang; one that
# hangs ignoring the SIGINT meets run_child's guard).
SIGINT_INTO_A_WAIT, SIGINT_INTO_A_RETURNING_CALL = 0.5, 20.0


def outcomes_after_a_timeout(kind: str) -> dict[str, str]:
    """What each of WAITS_AFTER_A_TIMEOUT ends in on `kind`."""
    expected = {name: "INTERRUPTED" for name in WAITS_AFTER_A_TIMEOUT}
    # A module dropped while the device may be stuck is destroyed on a thread of its own.
    expected["dropping a module"] = "RETURNED"
    # Calls that wait for nothing return (the runtime stays usable).
    for name in (
        "200 launches after the timeout",
        "an event recorded after the interrupted launch",
        "asking whether an event is complete",
        "a launch on a stream of its own",
    ):
        expected[name] = "RETURNED"
    if kind == "cpu":  # host memory and host launches: nothing to wait for
        for name in ("an allocation in checked mode", "empty_cache()", "the first launch of another kernel"):
            expected[name] = "RETURNED"
    if kind in NATIVE_STREAMS:  # a copy on a native stream is queued there
        expected["a copy into a tensor on a stream"] = "RETURNED"
        # A copy out waits for the stream unless its pinned memory is used in place.
        if modrt.pinned_empty((4,), "float32", device=modrt.device(kind)).pinned:
            expected["a copy out of a tensor on a stream"] = "RETURNED"
    return expected


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
    expected = outcomes_after_a_timeout(kind)
    sigint_after = {
        name: SIGINT_INTO_A_RETURNING_CALL if outcome == "RETURNED" else SIGINT_INTO_A_WAIT
        for name, outcome in expected.items()
    }
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
        # The other backend's device starts now: the SIGINT must find its stream
        # waiting, not its driver starting (slow on a loaded machine).
        other_stream = modrt.Stream(modrt.device(OTHER))
        copy_stream = modrt.Stream(dev)
        pinned = modrt.pinned_empty((4,), "float32", device=dev)
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
            timer = threading.Timer({sigint_after!r}[name], os.kill, (os.getpid(), signal.SIGINT))
            timer.start()
            try:
                case()
                print("RETURNED", name, flush=True)
            except KeyboardInterrupt as e:
                print("INTERRUPTED", name, "|", e, flush=True)
            try:  # a SIGINT that comes after a call returned
                timer.cancel()
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
    ).format(
        other=others[0], cases=cases, sigint_after=sigint_after, source=KERNELS[kind][0], signatures=KERNELS[kind][1]
    )
    r = run_child(kind, body, {"MODRT_MAX_IN_FLIGHT": str(IN_FLIGHT_LIMIT)})
    lines = r.stdout.splitlines()
    assert lines[0] == "TIMEOUT" and lines[-2:] == ["HANDLER raised by the handler", "DONE"], r.stdout + r.stderr
    lines = lines[:-1]
    outcomes = {line.split(" |")[0].split(" ", 1)[1]: line.split(" ", 1)[0] for line in lines[1:-1]}
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
