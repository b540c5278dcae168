"""CUDA's native device layer against a TEST DOUBLE of the driver
(libcuda_test_double.so, named by MODRT_CUDA_DRIVER_LIBRARY): which driver
calls the runtime makes for modrt streams, events, async and device-to-device
copies and graphs, on which stream handle, in which order, and how the
driver's errors reach Python. No kernel runs here: the double's device clock
advances 1 ms per launch, so elapsed times are exact; gpu_test.py runs the
same features on a real GPU."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
from cuda_testing import KERNELS, SIGNATURES, DriverLog

import modrt

N = 256

CU_STREAM_NON_BLOCKING = 1
CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_ILLEGAL_ADDRESS = 700
CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910
CU_MEMHOSTALLOC_PORTABLE = 1


@pytest.fixture(scope="module")
def dev() -> modrt.Device:
    d = modrt.device("cuda", 0)
    assert d.exist, d.unavailable_reason
    return d


@pytest.fixture(scope="module")
def mod(dev: modrt.Device) -> modrt.Module:
    m = modrt.compile(KERNELS, modrt.target.detect_target_from_device(dev), SIGNATURES)
    assert not m.is_fallback
    return m


@pytest.fixture
def log(dev: modrt.Device) -> DriverLog:
    driver = DriverLog()
    driver.reset()  # no failure left over from an earlier test
    dev.sync(timeout=30)
    driver.reset()
    return driver


def params_of(*tensors: modrt.Tensor, n: int = N) -> str:
    """The bytes of vadd's parameters as the double logs them (hex, comma-separated)."""
    pointers = [int(t._dl().data or 0).to_bytes(8, "little").hex() for t in tensors]
    return ",".join([*pointers, n.to_bytes(4, "little", signed=True).hex()])


def operands(dev: modrt.Device) -> tuple[modrt.Tensor, modrt.Tensor, modrt.Tensor]:
    return tuple(modrt.tensor(np.full(N, i, "float32"), dev) for i in (1, 2, 0))  # type: ignore[return-value]


def new_stream(dev: modrt.Device, log: DriverLog) -> tuple[modrt.Stream, int]:
    """A modrt stream and the id of the driver stream it made."""
    s = modrt.Stream(dev)
    (created,) = log.calls("cuStreamCreate")
    log.reset()
    return s, created["stream"]


def test_a_stream_is_a_non_blocking_cuda_stream(dev, log):
    s = modrt.Stream(dev)
    (created,) = log.calls("cuStreamCreate")
    assert created["flags"] == CU_STREAM_NON_BLOCKING
    assert s.native and dev.default_stream.native and not s.adopted
    # The backend describes its own queues.
    assert s.implementation.startswith("native: a CUDA stream (CU_STREAM_NON_BLOCKING)")
    assert "legacy default stream" in dev.default_stream.implementation


def test_launches_go_to_the_current_streams_handle(dev, mod, log):
    s, sid = new_stream(dev, log)
    a, b, c = operands(dev)
    mod["vadd"](a, b, c, N, 4, 64, stream=s)
    with modrt.stream(s):
        mod["vadd"](a, b, c, N, 4, 64)
    mod["vadd"](a, b, c, N, 4, 64)  # the default stream: the legacy NULL stream
    assert [launch["stream"] for launch in log.calls("cuLaunchKernel")] == [sid, sid, None]
    s.synchronize(timeout=30)
    assert {"call": "cuStreamSynchronize", "stream": sid} in log.entries()


def test_events_read_elapsed_time_from_the_driver(dev, mod, log):
    s, sid = new_stream(dev, log)
    a, b, c = operands(dev)
    start = s.record()
    for _ in range(3):
        mod["vadd"](a, b, c, N, 4, 64, stream=s)
    end = s.record()
    end.synchronize(timeout=30)
    assert end.query()
    created = log.calls("cuEventCreate")
    recorded = log.calls("cuEventRecord")
    assert all(e["timing"] for e in created)  # CU_EVENT_DEFAULT: timed
    assert {e["stream"] for e in recorded} == {sid}
    # The double's device clock: 1 ms per launch between the two events.
    assert end.elapsed_ms(start) == pytest.approx(3.0)
    assert start.elapsed_ms(end) == pytest.approx(-3.0)
    assert log.calls("cuEventElapsedTime")


def test_a_stream_waits_on_another_streams_event(dev, mod, log):
    first, first_id = new_stream(dev, log)
    second, second_id = new_stream(dev, log)
    a, b, c = operands(dev)
    mod["vadd"](a, b, c, N, 4, 64, stream=first)
    event = first.record()
    second.wait(event)
    (recorded,) = [e for e in log.calls("cuEventRecord") if e["stream"] == first_id]
    waits = log.calls("cuStreamWaitEvent")
    assert {"call": "cuStreamWaitEvent", "stream": second_id, "event": recorded["event"]} in waits
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
    (h2d,) = log.calls("cuMemcpyHtoDAsync")
    (d2d,) = log.calls("cuMemcpyDtoDAsync")
    d2h = log.calls("cuMemcpyDtoHAsync")
    assert (h2d["stream"], h2d["bytes"]) == (sid, 16)
    assert (d2d["stream"], d2d["bytes"]) == (sid, 64)
    assert [(c["stream"], c["bytes"]) for c in d2h] == [(sid, 12), (sid, 64)]


def test_graph_capture_calls_the_driver_in_order(dev, mod, log):
    s, sid = new_stream(dev, log)
    a, b, c = operands(dev)
    mod["vadd"](a, b, c, N, 4, 64, stream=s)  # loads the module before the capture
    s.synchronize(timeout=30)
    log.reset()
    with s.capture() as g:
        for _ in range(3):
            mod["vadd"](a, b, c, N, 4, 64)
    assert g.native and len(g) == 3
    calls = [e["call"] for e in log.entries()]
    assert calls == [
        "cuStreamBeginCapture",
        "cuLaunchKernel",
        "cuLaunchKernel",
        "cuLaunchKernel",
        "cuStreamEndCapture",
        "cuGraphInstantiateWithFlags",
        "cuGraphDestroy",
    ], calls
    (begin,) = log.calls("cuStreamBeginCapture")
    assert (begin["stream"], begin["mode"]) == (sid, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
    assert all(launch["captured"] and launch["stream"] == sid for launch in log.calls("cuLaunchKernel"))
    (instantiated,) = log.calls("cuGraphInstantiateWithFlags")

    log.reset()
    g.replay()
    (launched,) = log.calls("cuGraphLaunch")
    assert launched == {
        "call": "cuGraphLaunch",
        "exec": instantiated["exec"],
        "stream": sid,
        "kernels": ["vadd"] * 3,
        "params": [params_of(a, b, c)] * 3,
    }
    assert log.calls("cuLaunchKernel") == []
    s.synchronize(timeout=30)

    # Rebound buffers: the launches are captured again and the executable
    # graph's parameters updated in place (cuGraphExecUpdate), then launched;
    # nothing runs launch by launch.
    log.reset()
    other = modrt.empty((N,), "float32", dev)
    g.replay({c: other})
    calls = [e["call"] for e in log.entries()]
    assert calls == [
        "cuStreamBeginCapture",
        "cuLaunchKernel",
        "cuLaunchKernel",
        "cuLaunchKernel",
        "cuStreamEndCapture",
        "cuGraphExecUpdate",
        "cuGraphDestroy",
        "cuGraphLaunch",
    ], calls
    assert all(x["captured"] and x["stream"] == sid for x in log.calls("cuLaunchKernel"))
    (updated,) = log.calls("cuGraphExecUpdate")
    assert updated["exec"] == instantiated["exec"] and updated["updated"]
    (launched,) = log.calls("cuGraphLaunch")
    assert launched["params"] == [params_of(a, b, other)] * 3
    assert len(g) == 3  # the core's list is unchanged

    # The same bindings again: no new capture. No bindings: back as captured.
    log.reset()
    g.replay({c: other})
    assert [e["call"] for e in log.entries()] == ["cuGraphLaunch"]
    log.reset()
    g.replay()
    assert log.calls("cuGraphExecUpdate") and log.calls("cuGraphLaunch")[0]["params"] == [params_of(a, b, c)] * 3
    s.synchronize(timeout=30)
    assert "rebound replays re-recorded" in s.implementation

    # A graph the driver cannot update replays the core's list instead.
    log.reset()
    log.fail_next("cuGraphExecUpdate", CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    g.replay({c: other})
    assert log.calls("cuGraphLaunch") == []
    launches = [x for x in log.calls("cuLaunchKernel") if not x["captured"]]
    assert len(launches) == 3 and all(x["stream"] == sid for x in launches)
    s.synchronize(timeout=30)

    log.reset()
    del g
    dev.sync(timeout=30)
    assert [e["exec"] for e in log.calls("cuGraphExecDestroy")] == [instantiated["exec"]]


def test_a_launch_refused_in_a_capture_ends_the_capture_and_keeps_the_stream(dev, mod, log):
    s, sid = new_stream(dev, log)
    a, b, c = operands(dev)
    mod["vadd"](a, b, c, N, 4, 64, stream=s)  # loads the module before the capture
    s.synchronize(timeout=30)
    log.reset()
    log.fail_next("cuLaunchKernel", CUDA_ERROR_ILLEGAL_ADDRESS)
    with pytest.raises(RuntimeError, match="cuLaunchKernel of vadd"):
        with s.capture() as g:
            mod["vadd"](a, b, c, N, 4, 64)
    # The driver's capture was ended (the stream is not left capturing) and
    # its graph dropped: the graph is the core's list, and the stream works.
    assert [e["call"] for e in log.calls("cuStreamEndCapture")] == ["cuStreamEndCapture"]
    assert not g.native
    assert g.why_not_native.startswith("the backend could not record a launch of vadd: ")
    log.reset()
    mod["vadd"](a, b, c, N, 4, 64, stream=s)
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["stream"] == sid and not launch["captured"]
    s.synchronize(timeout=30)


def test_the_default_stream_is_not_captured_natively(dev, mod, log):
    a, b, c = operands(dev)
    with dev.default_stream.capture() as g:
        mod["vadd"](a, b, c, N, 4, 64)
    # The legacy NULL stream cannot be captured: the core keeps its list.
    assert not g.native and len(g) == 1
    assert "default stream" in g.why_not_native and "modrt.Stream(device)" in g.why_not_native
    assert log.calls("cuStreamBeginCapture") == [] and log.calls("cuLaunchKernel") == []
    g.replay()
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["stream"] is None and not launch["captured"]


# However the core waits for a native stream (cuStreamSynchronize,
# cuEventSynchronize or cuCtxSynchronize), the driver's error of that wait
# is raised by the user's wait, naming the call and the pending kernel.
WAIT_CALLS = ("cuStreamSynchronize", "cuEventSynchronize", "cuCtxSynchronize")


@pytest.mark.parametrize("wait", ["stream", "event", "device"])
def test_a_kernel_fault_surfaces_at_the_next_wait_naming_the_call_and_kernel(dev, mod, log, wait):
    s, _ = new_stream(dev, log)
    a, b, c = operands(dev)
    for call in WAIT_CALLS:
        log.fail_next(call, CUDA_ERROR_ILLEGAL_ADDRESS)
    mod["vadd"](a, b, c, N, 4, 64, stream=s)
    event = s.record()
    with pytest.raises(RuntimeError) as failure:
        {"stream": s.synchronize, "event": event.synchronize, "device": dev.sync}[wait](timeout=30)
    message = str(failure.value)
    assert any(call in message for call in WAIT_CALLS), message
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in message, message
    assert "vadd (grid [4, 1, 1], block [64, 1, 1])" in message, message


def test_a_refused_launch_names_cu_launch_kernel_and_the_kernel(dev, mod, log):
    s, _ = new_stream(dev, log)
    a, b, c = operands(dev)
    log.fail_next("cuLaunchKernel", CUDA_ERROR_ILLEGAL_ADDRESS)
    with pytest.raises(RuntimeError, match="cuLaunchKernel of vadd failed: CUDA_ERROR_ILLEGAL_ADDRESS"):
        mod["vadd"](a, b, c, N, 4, 64, stream=s)


def test_device_out_of_memory_is_a_memory_error_naming_cu_mem_alloc(dev, log):
    # Twice: the core's pool retries once after giving its cache back.
    log.fail_next("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY, times=2)
    with pytest.raises(MemoryError, match=r"cuMemAlloc of \d+ bytes on cuda\(0\) failed: CUDA_ERROR_OUT_OF_MEMORY"):
        modrt.empty((12345 * 1024,), "uint8", dev)
    assert len(log.calls("cuMemAlloc")) == 2


def test_a_foreign_cuda_stream_is_adopted_and_never_destroyed(dev, mod, log):
    # Another library's stream (as torch's .cuda_stream or CuPy's .ptr is):
    # made here straight through the driver.
    handle = ctypes.c_void_p()
    assert log.lib.cuStreamCreate(ctypes.byref(handle), CU_STREAM_NON_BLOCKING) == 0
    (created,) = log.calls("cuStreamCreate")
    log.reset()
    s = modrt.Stream.from_external(dev, handle.value)
    assert s.native and s.adopted and "adopted from another library" in s.implementation
    assert log.calls("cuStreamCreate") == []
    a, b, c = operands(dev)
    mod["vadd"](a, b, c, N, 4, 64, stream=s)
    event = s.record()
    event.synchronize(timeout=30)
    (launch,) = log.calls("cuLaunchKernel")
    assert launch["stream"] == created["stream"]
    assert log.calls("cuEventRecord")[0]["stream"] == created["stream"]
    s.synchronize(timeout=30)
    del s, event
    gc.collect()
    dev.sync(timeout=30)
    # modrt waited for its work there, but the stream is still its maker's.
    assert created["stream"] not in [e["stream"] for e in log.calls("cuStreamDestroy")]
    assert log.lib.cuStreamDestroy_v2(handle) == 0


def test_a_foreign_stream_handle_is_checked(dev):
    with pytest.raises(TypeError, match="is an int"):
        modrt.Stream.from_external(dev, "0x1234")
    with pytest.raises(ValueError, match="legacy default stream"):
        modrt.Stream.from_external(dev, 0)
    with pytest.raises(ValueError, match="an address"):
        modrt.Stream.from_external(dev, -5)
    with pytest.raises(ValueError, match="has no native streams"):
        modrt.Stream.from_external(modrt.cpu(), 1234)


def test_pinned_host_memory_is_cu_mem_host_alloc_used_in_place(dev, log):
    s, sid = new_stream(dev, log)
    n = 64
    host = modrt.pinned_empty(n, "float32", device=dev)
    assert host.pinned and "cuMemHostAlloc" in host.pinned_memory
    assert modrt.pinned_memory(dev) == host.pinned_memory
    (alloc,) = log.calls("cuMemHostAlloc")
    assert (alloc["bytes"], alloc["flags"]) == (n * 4, CU_MEMHOSTALLOC_PORTABLE)
    host[:] = np.arange(n, dtype="float32")
    t = modrt.empty((n,), "float32", dev)
    back = modrt.pinned_empty(n, "float32", device=dev)
    log.reset()
    t.copyfrom(host, stream=s)
    t.copyto(back, stream=s)
    # The driver got the pinned memory itself, on the stream: no staging copy.
    (h2d,) = log.calls("cuMemcpyHtoDAsync")
    (d2h,) = log.calls("cuMemcpyDtoHAsync")
    assert (h2d["stream"], h2d["bytes"], h2d["pinned"]) == (sid, n * 4, True)
    assert (d2h["stream"], d2h["bytes"], d2h["pinned"]) == (sid, n * 4, True)
    s.synchronize(timeout=30)
    np.testing.assert_array_equal(back, host)
    # An ordinary array is staged (pageable memory to the driver).
    log.reset()
    t.copyfrom(np.ones(n, "float32"), stream=s)
    assert log.calls("cuMemcpyHtoDAsync")[0]["pinned"] is False
    s.synchronize(timeout=30)
    # Freed once the array and every copy using it are gone.
    log.reset()
    del host, back
    gc.collect()
    assert [e["bytes"] for e in log.calls("cuMemFreeHost")] == [n * 4, n * 4]


def test_pinned_allocation_failure_is_a_memory_error(dev, log):
    log.fail_next("cuMemHostAlloc", CUDA_ERROR_OUT_OF_MEMORY)
    with pytest.raises(MemoryError, match="cuMemHostAlloc of 4096 bytes"):
        modrt.pinned_empty(1024, "float32", device=dev)
