"""CUDA's and ROCm's native device layer against TEST DOUBLES of their
drivers (libcuda_test_double.so, libhip_test_double.so, named by
MODRT_<X>_DRIVER_LIBRARY): which driver calls the runtime makes for modrt
streams, events, async and device-to-device copies, pinned memory, adopted
streams and graphs by stream capture, on which stream handle, in which order,
and how the driver's errors reach Python. One suite over both; what differs
(kernel, call names, error names, texts) is their record in driver_backends.
No kernel runs here: the doubles' device clock advances 1 ms per launch, so
elapsed times are exact; backends/cuda/gpu_test.py runs the same features on
a real GPU."""

from __future__ import annotations

import ctypes
import gc
import os

import numpy as np
import pytest
from driver_backends import (
    CAPTURE_MODE_THREAD_LOCAL,
    DRIVER_BACKENDS,
    ERROR_GRAPH_EXEC_UPDATE_FAILURE,
    ERROR_ILLEGAL_ADDRESS,
    ERROR_OUT_OF_MEMORY,
    HOST_ALLOC_PORTABLE,
    ROCM,
    STREAM_NON_BLOCKING,
    DriverBackend,
    N,
)
from driver_doubles import DriverDoubleLog

import modrt
import modrt_testing

GRID = (4, 64)  # blockIdx.x, threadIdx.x of every launch here


class DoubleLog(DriverDoubleLog):
    """The double's record, with the driver's call names looked up by role."""

    def __init__(self, backend: DriverBackend) -> None:
        super().__init__(backend.variable, backend.library, backend.prefix)
        self.backend = backend

    def of(self, role: str) -> list[dict]:
        return self.calls(self.backend.calls[role])


def launch_params(entry: dict) -> str:
    """A launch's parameter bytes as one text (the CUDA double logs a list)."""
    params = entry["params"]
    return ",".join(params) if isinstance(params, list) else params


@pytest.fixture(scope="module", params=DRIVER_BACKENDS, ids=str)
def backend(request: pytest.FixtureRequest) -> DriverBackend:
    if not modrt._selection.RUNTIMES.get(request.param.kind):
        pytest.skip(f"the {request.param.kind} runtime is not in this build")
    return request.param


@pytest.fixture(scope="module")
def dev(backend: DriverBackend) -> modrt.Device:
    d = modrt.device(backend.kind, 0)
    assert d.exist, d.unavailable_reason
    for name, value in backend.attributes.items():
        assert d.attr(name) == value, name
    return d


COMPILED: dict[str, modrt.Module] = {}  # by kind: hipcc takes seconds


def compile_kernel(backend: DriverBackend, dev: modrt.Device) -> modrt.Module:
    if backend.kind not in COMPILED:
        m = modrt.compile(backend.source, modrt.target.detect_target_from_device(dev), [backend.signature])
        assert not m.is_fallback
        if backend.param_sizes:
            DoubleLog(backend).param_sizes(backend.kernel, backend.param_sizes)
        COMPILED[backend.kind] = m
    return COMPILED[backend.kind]


@pytest.fixture(scope="module")
def mod(backend: DriverBackend, dev: modrt.Device) -> modrt.Module:
    return compile_kernel(backend, dev)


@pytest.fixture
def log(backend: DriverBackend, dev: modrt.Device) -> DoubleLog:
    driver = DoubleLog(backend)
    driver.reset()  # no failure left over from an earlier test
    dev.sync(timeout=30)
    driver.reset()
    return driver


def launch(backend: DriverBackend, mod: modrt.Module, ops: tuple, **kwargs) -> None:
    mod[backend.kernel](*backend.arguments(ops), *GRID, **kwargs)


def new_stream(dev: modrt.Device, log: DoubleLog) -> tuple[modrt.Stream, int]:
    """A modrt stream and the id of the driver stream it made."""
    s = modrt.Stream(dev)
    (created,) = log.of("stream_create")
    log.reset()
    return s, created["stream"]


def loaded_on_a_new_stream(backend, dev, mod, log) -> tuple[modrt.Stream, int, tuple]:
    """A new stream, its driver stream's id and the operands, with the module
    loaded (one launch, done) so that a capture records launches only."""
    s, sid = new_stream(dev, log)
    ops = backend.operands(dev)
    launch(backend, mod, ops, stream=s)
    s.synchronize(timeout=30)
    log.reset()
    return s, sid, ops


def test_a_stream_is_a_non_blocking_driver_stream(backend, dev, log):
    s = modrt.Stream(dev)
    (created,) = log.of("stream_create")
    assert created["flags"] == STREAM_NON_BLOCKING
    assert s.native and dev.default_stream.native and not s.adopted
    # The backend describes its own queues.
    assert s.implementation.startswith(backend.stream_text)
    assert "graphs recorded by the backend, rebound replays re-recorded" in s.implementation
    assert backend.default_stream_text in dev.default_stream.implementation


def test_launches_go_to_the_current_streams_handle(backend, dev, mod, log):
    s, sid = new_stream(dev, log)
    ops = backend.operands(dev)
    launch(backend, mod, ops, stream=s)
    with modrt.stream(s):
        launch(backend, mod, ops)
    launch(backend, mod, ops)  # the default stream: the driver's NULL stream
    launches = log.of("launch")
    assert [x["stream"] for x in launches] == [sid, sid, None]
    assert launches[0]["grid"] == [4, 1, 1] and launches[0]["block"] == [64, 1, 1]
    s.synchronize(timeout=30)
    assert {"call": backend.calls["stream_sync"], "stream": sid} in log.entries()


def test_bad_arguments_and_grids_are_refused_naming_the_cause_before_the_driver(backend, dev, mod, log):
    """A launch goes down once (the core packs, then calls the module's
    launch): what packing refuses, and a grid the driver cannot take, never
    reach the driver's launch."""
    ops = backend.operands(dev)
    for arguments, error, message in backend.refused:
        with pytest.raises(error, match=message):
            mod[backend.kernel](*arguments(ops))
    assert log.of("launch") == []
    launch(backend, mod, ops)
    (launched,) = log.of("launch")
    assert (launched["grid"], launched["block"]) == ([4, 1, 1], [64, 1, 1])


def test_events_read_elapsed_time_from_the_driver(backend, dev, mod, log):
    s, sid = new_stream(dev, log)
    ops = backend.operands(dev)
    start = s.record()
    for _ in range(3):
        launch(backend, mod, ops, stream=s)
    end = s.record()
    end.synchronize(timeout=30)
    assert end.query()
    assert all(e["timing"] for e in log.of("event_create"))  # timed events
    assert {e["stream"] for e in log.of("event_record")} == {sid}
    # The double's device clock: 1 ms per launch between the two events.
    assert end.elapsed_ms(start) == pytest.approx(3.0)
    assert start.elapsed_ms(end) == pytest.approx(-3.0)
    assert log.of("event_elapsed")


def test_a_stream_waits_on_another_streams_event(backend, dev, mod, log):
    first, first_id = new_stream(dev, log)
    second, second_id = new_stream(dev, log)
    ops = backend.operands(dev)
    launch(backend, mod, ops, stream=first)
    event = first.record()
    second.wait(event)
    (recorded,) = [e for e in log.of("event_record") if e["stream"] == first_id]
    (wait,) = log.of("stream_wait_event")
    assert (wait["stream"], wait["event"]) == (second_id, recorded["event"])
    second.synchronize(timeout=30)


def test_async_ranged_and_device_to_device_copies_on_a_stream(dev, log):
    s, sid = new_stream(dev, log)
    t = modrt.tensor(np.zeros(16, "int32"), dev)
    log.reset()
    t.copyfrom(np.arange(1, 5, dtype="int32"), offset=8, stream=s)  # elements 2..5
    part = np.empty(3, "int32")
    t.copyto(part, offset=12, stream=s)
    np.testing.assert_array_equal(part, [2, 3, 4])
    copy = modrt.empty((16,), "int32", dev)
    copy.copyfrom(t, stream=s)
    np.testing.assert_array_equal(copy.numpy(stream=s), [0, 0, 1, 2, 3, 4] + [0] * 10)
    (h2d,) = log.of("h2d")
    (d2d,) = log.of("d2d")
    d2h = log.of("d2h")
    assert (h2d["stream"], h2d["bytes"], h2d["pinned"]) == (sid, 16, False)
    assert (d2d["stream"], d2d["bytes"]) == (sid, 64)
    assert [(c["stream"], c["bytes"]) for c in d2h] == [(sid, 12), (sid, 64)]


def test_graph_capture_calls_the_driver_in_order(backend, dev, mod, log):
    c = backend.calls
    s, sid, ops = loaded_on_a_new_stream(backend, dev, mod, log)
    capture_of_three = [c["begin_capture"], *[c["launch"]] * 3, c["end_capture"]]
    with s.capture() as g:
        for _ in range(3):
            launch(backend, mod, ops)
    assert g.native and len(g) == 3
    calls = [e["call"] for e in log.entries()]
    assert calls == [*capture_of_three, c["instantiate"], c["graph_destroy"]], calls
    (begin,) = log.of("begin_capture")
    assert (begin["stream"], begin["mode"]) == (sid, CAPTURE_MODE_THREAD_LOCAL)
    assert all(x["captured"] and x["stream"] == sid for x in log.of("launch"))
    (instantiated,) = log.of("instantiate")

    log.reset()
    g.replay()
    (launched,) = log.of("graph_launch")
    assert launched == {
        "call": c["graph_launch"],
        "exec": instantiated["exec"],
        "stream": sid,
        "kernels": [backend.kernel] * 3,
        "params": [backend.params(ops)] * 3,
    }
    assert log.of("launch") == []
    s.synchronize(timeout=30)

    # Rebound buffers: the launches are captured again and the executable
    # graph's parameters updated in place (the driver's graph exec update),
    # then launched; nothing runs launch by launch.
    log.reset()
    other = modrt.empty((N,), "float32", dev)
    rebound = tuple(other if i == backend.rebound else t for i, t in enumerate(ops))
    g.replay({ops[backend.rebound]: other})
    calls = [e["call"] for e in log.entries()]
    assert calls == [*capture_of_three, c["exec_update"], c["graph_destroy"], c["graph_launch"]], calls
    assert all(x["captured"] and x["stream"] == sid for x in log.of("launch"))
    (updated,) = log.of("exec_update")
    assert updated["exec"] == instantiated["exec"] and updated["updated"]
    (launched,) = log.of("graph_launch")
    assert launched["params"] == [backend.params(rebound)] * 3
    assert len(g) == 3  # the core's list is unchanged

    # The same bindings again: no new capture. No bindings: back as captured.
    log.reset()
    g.replay({ops[backend.rebound]: other})
    assert [e["call"] for e in log.entries()] == [c["graph_launch"]]
    log.reset()
    g.replay()
    assert log.of("exec_update") and log.of("graph_launch")[0]["params"] == [backend.params(ops)] * 3
    s.synchronize(timeout=30)
    assert "rebound replays re-recorded" in s.implementation

    # A graph the driver cannot update replays the core's list instead.
    log.reset()
    log.fail_next(c["exec_update"], ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    g.replay({ops[backend.rebound]: other})
    assert log.of("graph_launch") == []
    launches = [x for x in log.of("launch") if not x["captured"]]
    assert len(launches) == 3 and all(x["stream"] == sid for x in launches)
    assert all(launch_params(x) == backend.params(rebound) for x in launches)
    s.synchronize(timeout=30)

    log.reset()
    del g
    dev.sync(timeout=30)
    assert [e["exec"] for e in log.of("exec_destroy")] == [instantiated["exec"]]


def test_a_replay_with_a_new_grid_updates_the_graph_in_place(backend, dev, mod, log):
    """Graph.replay(scalars=...) on the driver's graphs: the launches are
    captured again with the new value (here launch 1's grid) and the
    executable graph updated in place, as for rebound buffers."""
    c = backend.calls
    s, sid, ops = loaded_on_a_new_stream(backend, dev, mod, log)
    with s.capture() as g:
        for _ in range(3):
            launch(backend, mod, ops)
    log.reset()
    g.replay(scalars={(1, "blockIdx.x"): 2})
    calls = [e["call"] for e in log.entries()]
    capture_of_three = [c["begin_capture"], *[c["launch"]] * 3, c["end_capture"]]
    assert calls == [*capture_of_three, c["exec_update"], c["graph_destroy"], c["graph_launch"]], calls
    assert [x["grid"] for x in log.of("launch")] == [[4, 1, 1], [2, 1, 1], [4, 1, 1]]
    assert all(x["captured"] and x["stream"] == sid for x in log.of("launch"))
    # The same value again: the updated graph is launched as it is.
    log.reset()
    g.replay(scalars={(1, "blockIdx.x"): 2})
    assert [e["call"] for e in log.entries()] == [c["graph_launch"]]
    s.synchronize(timeout=30)


def test_a_launch_refused_in_a_capture_ends_the_capture_and_keeps_the_stream(backend, dev, mod, log):
    s, sid, ops = loaded_on_a_new_stream(backend, dev, mod, log)
    log.fail_next(backend.calls["launch"], ERROR_ILLEGAL_ADDRESS)
    with pytest.raises(RuntimeError, match=f"{backend.calls['launch']} of {backend.kernel}"):
        with s.capture() as g:
            launch(backend, mod, ops)
    # The driver's capture was ended (the stream is not left capturing) and
    # its graph dropped: the graph is the core's list, and the stream works.
    assert [e["call"] for e in log.of("end_capture")] == [backend.calls["end_capture"]]
    assert not g.native
    assert g.why_not_native.startswith(f"the backend could not record a launch of {backend.kernel}: ")
    log.reset()
    launch(backend, mod, ops, stream=s)
    (launched,) = log.of("launch")
    assert launched["stream"] == sid and not launched["captured"]
    s.synchronize(timeout=30)


def test_the_default_stream_is_not_captured_natively(backend, dev, mod, log):
    ops = backend.operands(dev)
    with dev.default_stream.capture() as g:
        launch(backend, mod, ops)
    # The driver's NULL stream cannot be captured: the core keeps its list.
    assert not g.native and len(g) == 1
    assert "default stream" in g.why_not_native and "modrt.Stream(device)" in g.why_not_native
    assert log.of("begin_capture") == [] and log.of("launch") == []
    g.replay()
    (launched,) = log.of("launch")
    assert launched["stream"] is None and not launched["captured"]


# However the core waits for a native stream (the stream's, an event's or
# the device's synchronize), the driver's error of that wait is raised by the
# user's wait, naming the call and the pending kernel.
WAITS = {"stream": "stream_sync", "event": "event_sync", "device": "device_sync"}


@pytest.mark.parametrize("wait", sorted(WAITS))
def test_a_kernel_fault_surfaces_at_the_next_wait_naming_the_call_and_kernel(backend, dev, mod, log, wait):
    s, _ = new_stream(dev, log)
    ops = backend.operands(dev)
    for role in WAITS.values():
        log.fail_next(backend.calls[role], ERROR_ILLEGAL_ADDRESS)
    launch(backend, mod, ops, stream=s)
    event = s.record()
    with pytest.raises(RuntimeError) as failure:
        {"stream": s.synchronize, "event": event.synchronize, "device": dev.sync}[wait](timeout=30)
    message = str(failure.value)
    assert any(backend.calls[role] in message for role in WAITS.values()), message
    if wait != "device":  # the device's wait may drain each stream first
        assert backend.calls[WAITS[wait]] in message, message  # the wait's own call
    assert backend.illegal_address in message, message
    assert f"{backend.kernel} (grid [4, 1, 1], block [64, 1, 1])" in message, message


def test_a_refused_launch_names_the_drivers_launch_and_the_kernel(backend, dev, mod, log):
    s, _ = new_stream(dev, log)
    log.fail_next(backend.calls["launch"], ERROR_ILLEGAL_ADDRESS)
    failed = f"{backend.calls['launch']} of {backend.kernel} failed: {backend.illegal_address}"
    with pytest.raises(RuntimeError, match=failed):
        launch(backend, mod, backend.operands(dev), stream=s)


def test_device_out_of_memory_is_a_memory_error_naming_the_drivers_alloc(backend, dev, log):
    # Twice: the core's pool retries once after giving its cache back.
    log.fail_next(backend.calls["alloc"], ERROR_OUT_OF_MEMORY, times=2)
    failed = rf"{backend.calls['alloc']} of \d+ bytes on {backend.kind}\(0\) failed: {backend.out_of_memory}"
    with pytest.raises(MemoryError, match=failed):
        modrt.empty((12345 * 1024,), "uint8", dev)
    assert len(log.of("alloc")) == 2


def test_a_foreign_driver_stream_is_adopted_and_never_destroyed(backend, dev, mod, log):
    # Another library's stream (as torch's .cuda_stream or CuPy's .ptr is):
    # made here straight through the driver.
    handle = ctypes.c_void_p()
    assert getattr(log.lib, backend.create_foreign_stream)(ctypes.byref(handle), STREAM_NON_BLOCKING) == 0
    (created,) = log.of("stream_create")
    log.reset()
    s = modrt.Stream.from_external(dev, handle.value)
    assert s.native and s.adopted and "adopted from another library" in s.implementation
    assert log.of("stream_create") == []
    launch(backend, mod, backend.operands(dev), stream=s)
    event = s.record()
    event.synchronize(timeout=30)
    (launched,) = log.of("launch")
    assert launched["stream"] == created["stream"]
    assert log.of("event_record")[0]["stream"] == created["stream"]
    s.synchronize(timeout=30)
    del s, event
    gc.collect()
    dev.sync(timeout=30)
    # modrt waited for its work there, but the stream is still its maker's.
    assert created["stream"] not in [e["stream"] for e in log.of("stream_destroy")]
    assert getattr(log.lib, backend.destroy_foreign_stream)(handle) == 0


def test_a_foreign_stream_handle_is_checked(backend, dev):
    with pytest.raises(TypeError, match="is an int"):
        modrt.Stream.from_external(dev, "0x1234")
    with pytest.raises(ValueError, match="legacy default stream"):
        modrt.Stream.from_external(dev, 0)
    with pytest.raises(ValueError, match="an address"):
        modrt.Stream.from_external(dev, -5)
    with pytest.raises(ValueError, match="has no native streams"):
        modrt.Stream.from_external(modrt.cpu(), 1234)


def test_pinned_host_memory_is_the_drivers_host_alloc_used_in_place(backend, dev, log):
    s, sid = new_stream(dev, log)
    n = 64
    host = modrt.pinned_empty(n, "float32", device=dev)
    assert host.pinned and backend.calls["host_alloc"] in host.pinned_memory
    assert modrt.pinned_memory(dev) == host.pinned_memory
    (alloc,) = log.of("host_alloc")
    assert (alloc["bytes"], alloc["flags"]) == (n * 4, HOST_ALLOC_PORTABLE)
    host[:] = np.arange(n, dtype="float32")
    t = modrt.empty((n,), "float32", dev)
    back = modrt.pinned_empty(n, "float32", device=dev)
    log.reset()
    t.copyfrom(host, stream=s)
    t.copyto(back, stream=s)
    # The driver got the pinned memory itself, on the stream: no staging copy.
    (h2d,) = log.of("h2d")
    (d2h,) = log.of("d2h")
    assert (h2d["stream"], h2d["bytes"], h2d["pinned"]) == (sid, n * 4, True)
    assert (d2h["stream"], d2h["bytes"], d2h["pinned"]) == (sid, n * 4, True)
    s.synchronize(timeout=30)
    np.testing.assert_array_equal(back, host)
    # An ordinary array is staged (pageable memory to the driver).
    log.reset()
    t.copyfrom(np.ones(n, "float32"), stream=s)
    assert log.of("h2d")[0]["pinned"] is False
    s.synchronize(timeout=30)
    # Freed once the array and every copy using it are gone.
    log.reset()
    del host, back
    gc.collect()
    assert [e["bytes"] for e in log.of("host_free")] == [n * 4, n * 4]


def test_pinned_allocation_failure_is_a_memory_error(backend, dev, log):
    log.fail_next(backend.calls["host_alloc"], ERROR_OUT_OF_MEMORY)
    with pytest.raises(MemoryError, match=f"{backend.calls['host_alloc']} of 4096 bytes"):
        modrt.pinned_empty(1024, "float32", device=dev)


# A HIP runtime without the graph entry points (the ROCm double built without
# them; the CUDA driver always has graphs): every other part of the device
# works, and graphs are the core's list, replayed launch by launch.
WITHOUT_GRAPHS = """
import sys
import numpy as np, modrt
dev = modrt.device("rocm", 0)
assert dev.exist, dev.unavailable_reason
with open(sys.argv[1], "rb") as f:
    mod = modrt.load_module_from_bytes("rocm", f.read())
s = modrt.Stream(dev)
x = modrt.tensor(np.ones(256, "float32"), dev)
with s.capture() as g:
    mod["scale"](x, 2.0, 256, 4, 64)
g.replay()
s.synchronize(timeout=30)
print(g.native, len(g))
print(g.why_not_native)
"""


def test_a_hip_runtime_without_graphs_replays_the_core_list(tmp_path):
    if not modrt._selection.RUNTIMES.get("rocm"):
        pytest.skip("the rocm runtime is not in this build")
    saved = tmp_path / "scale.rocm"
    saved.write_bytes(compile_kernel(ROCM, modrt.device("rocm", 0)).save_to_bytes())
    library = os.path.abspath(os.environ["MODRT_HIP_DOUBLE_WITHOUT_GRAPHS"])
    proc = modrt_testing.run_python(WITHOUT_GRAPHS, env={"MODRT_ROCM_DRIVER_LIBRARY": library}, args=[str(saved)])
    assert proc.returncode == 0, proc.stderr
    counts, why = proc.stdout.splitlines()
    assert counts == "False 1"
    assert why.startswith("the backend could not capture on this stream: ") and "lacks hip" in why
