"""ROCm's native device layer against a TEST DOUBLE of the HIP runtime
(libhip_test_double.so, named by MODRT_ROCM_DRIVER_LIBRARY): which HIP calls
the runtime makes for modrt streams, events, async and device-to-device
copies, pinned memory, adopted streams and graphs by stream capture, on
which stream handle, in which order, and how HIP's errors reach Python. The
kernel is a real code object from hipcc; no kernel runs here (the double's
clock advances 1 ms per launch)."""

from __future__ import annotations

import ctypes
import gc
import os
import struct

import numpy as np
import pytest
from driver_doubles import DriverDoubleLog

import modrt
import modrt_testing

SCALE = """#include <hip/hip_runtime.h>
extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""
SIGNATURE = "scale(float32*, float32, int32; blockIdx.x, threadIdx.x)"
N = 256
HIP_STREAM_NON_BLOCKING = 1
HIP_HOST_MALLOC_PORTABLE = 1
HIP_ERROR_OUT_OF_MEMORY = 2
HIP_ERROR_ILLEGAL_ADDRESS = 700
HIP_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910
HIP_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1


class RuntimeLog(DriverDoubleLog):
    """What the HIP runtime's test double recorded (//tests/driver_doubles)."""

    def __init__(self) -> None:
        super().__init__("MODRT_ROCM_DRIVER_LIBRARY", "libhip_test_double.so", "modrt_hip_test_double")


@pytest.fixture(scope="module")
def dev() -> modrt.Device:
    d = modrt.device("rocm", 0)
    assert d.exist, d.unavailable_reason
    assert d.attr("gcn_arch") == "gfx90a"
    return d


@pytest.fixture(scope="module")
def mod(dev: modrt.Device) -> modrt.Module:
    m = modrt.compile(SCALE, modrt.target.detect_target_from_device(dev), [SIGNATURE])
    assert not m.is_fallback
    RuntimeLog().param_sizes("scale", [8, 4, 4])
    return m


@pytest.fixture
def log(dev: modrt.Device) -> RuntimeLog:
    runtime = RuntimeLog()
    runtime.reset()
    dev.sync(timeout=30)
    runtime.reset()
    return runtime


def new_stream(dev: modrt.Device, log: RuntimeLog) -> tuple[modrt.Stream, int]:
    s = modrt.Stream(dev)
    (created,) = log.calls("hipStreamCreateWithFlags")
    log.reset()
    return s, created["stream"]


def test_a_stream_is_a_non_blocking_hip_stream(dev, log):
    s = modrt.Stream(dev)
    (created,) = log.calls("hipStreamCreateWithFlags")
    assert created["flags"] == HIP_STREAM_NON_BLOCKING
    assert s.native and dev.default_stream.native
    assert s.implementation.startswith("native: a HIP stream (hipStreamNonBlocking)")
    assert "graphs recorded by the backend, rebound replays re-recorded" in s.implementation


def test_launches_go_to_the_current_streams_handle(dev, mod, log):
    s, sid = new_stream(dev, log)
    x = modrt.tensor(np.ones(N, "float32"), dev)
    mod["scale"](x, 2.0, N, 4, 64, stream=s)
    with modrt.stream(s):
        mod["scale"](x, 2.0, N, 4, 64)
    mod["scale"](x, 2.0, N, 4, 64)  # the default stream: HIP's null stream
    launches = log.calls("hipModuleLaunchKernel")
    assert [launch["stream"] for launch in launches] == [sid, sid, None]
    assert launches[0]["grid"] == [4, 1, 1] and launches[0]["block"] == [64, 1, 1]
    s.synchronize(timeout=30)
    assert {"call": "hipStreamSynchronize", "stream": sid} in log.entries()


def test_bad_arguments_and_grids_are_refused_naming_the_cause_before_the_runtime(dev, mod, log):
    """A launch goes down once (the core packs, then calls the module's
    launch): what packing refuses, and a grid HIP's unsigned int cannot
    hold, never reach hipModuleLaunchKernel."""
    x = modrt.tensor(np.ones(N, "float32"), dev)
    with pytest.raises(TypeError, match=r"scale takes 3 arguments and 2 launch parameters .*got 2 values"):
        mod["scale"](x, 2.0)
    with pytest.raises(TypeError, match=r"scale: argument 1 \(float32\): .*expected float, got str"):
        mod["scale"](x, "2", N, 4, 64)
    with pytest.raises(
        ValueError,
        match=r"scale: threadIdx\.x = 4294967297 exceeds the device's limit of 4294967295 "
        r"\(the driver's unsigned int, rocm\(0\)\)",
    ):
        mod["scale"](x, 2.0, N, 1, (1 << 32) + 1)
    assert log.calls("hipModuleLaunchKernel") == []
    mod["scale"](x, 2.0, N, 4, 64)
    (launch,) = log.calls("hipModuleLaunchKernel")
    assert (launch["grid"], launch["block"]) == ([4, 1, 1], [64, 1, 1])


def test_events_time_on_the_device_and_order_streams(dev, mod, log):
    first, first_id = new_stream(dev, log)
    second, second_id = new_stream(dev, log)
    x = modrt.tensor(np.ones(N, "float32"), dev)
    start = first.record()
    for _ in range(2):
        mod["scale"](x, 2.0, N, 4, 64, stream=first)
    end = first.record()
    second.wait(end)
    end.synchronize(timeout=30)
    assert end.elapsed_ms(start) == pytest.approx(2.0)
    assert all(e["timing"] for e in log.calls("hipEventCreateWithFlags"))
    recorded = log.calls("hipEventRecord")
    assert {e["stream"] for e in recorded} == {first_id}
    (wait,) = log.calls("hipStreamWaitEvent")
    assert (wait["stream"], wait["event"]) == (second_id, recorded[-1]["event"])
    second.synchronize(timeout=30)


def test_async_ranged_and_device_to_device_copies_on_a_stream(dev, log):
    s, sid = new_stream(dev, log)
    t = modrt.tensor(np.zeros(16, "int32"), dev)
    log.reset()
    t.copyfrom(np.arange(1, 5, dtype="int32"), offset=8, stream=s)
    copy = modrt.empty((16,), "int32", dev)
    copy.copyfrom(t, stream=s)
    np.testing.assert_array_equal(copy.numpy(stream=s), [0, 0, 1, 2, 3, 4] + [0] * 10)
    (h2d,) = log.calls("hipMemcpyHtoDAsync")
    (d2d,) = log.calls("hipMemcpyDtoDAsync")
    (d2h,) = log.calls("hipMemcpyDtoHAsync")
    assert (h2d["stream"], h2d["bytes"], h2d["pinned"]) == (sid, 16, False)
    assert (d2d["stream"], d2d["bytes"]) == (sid, 64)
    assert (d2h["stream"], d2h["bytes"]) == (sid, 64)


def test_pinned_host_memory_is_hip_host_malloc_used_in_place(dev, log):
    s, sid = new_stream(dev, log)
    host = modrt.pinned_empty(32, "float32", device=dev)
    assert host.pinned and "hipHostMalloc" in host.pinned_memory
    (alloc,) = log.calls("hipHostMalloc")
    assert (alloc["bytes"], alloc["flags"]) == (128, HIP_HOST_MALLOC_PORTABLE)
    host[:] = np.arange(32, dtype="float32")
    t = modrt.empty((32,), "float32", dev)
    back = modrt.pinned_empty(32, "float32", device=dev)
    log.reset()
    t.copyfrom(host, stream=s)
    t.copyto(back, stream=s)
    s.synchronize(timeout=30)
    np.testing.assert_array_equal(back, host)
    assert log.calls("hipMemcpyHtoDAsync")[0]["pinned"] is True
    assert log.calls("hipMemcpyDtoHAsync")[0]["pinned"] is True
    log.reset()
    del host, back
    gc.collect()
    assert [e["bytes"] for e in log.calls("hipHostFree")] == [128, 128]


def test_a_foreign_hip_stream_is_adopted_and_never_destroyed(dev, mod, log):
    handle = ctypes.c_void_p()
    assert log.lib.hipStreamCreateWithFlags(ctypes.byref(handle), HIP_STREAM_NON_BLOCKING) == 0
    (created,) = log.calls("hipStreamCreateWithFlags")
    log.reset()
    s = modrt.Stream.from_external(dev, handle.value)
    assert s.adopted and "adopted from another library" in s.implementation
    x = modrt.tensor(np.ones(N, "float32"), dev)
    mod["scale"](x, 3.0, N, 4, 64, stream=s)
    s.synchronize(timeout=30)
    (launch,) = log.calls("hipModuleLaunchKernel")
    assert launch["stream"] == created["stream"]
    del s
    gc.collect()
    dev.sync(timeout=30)
    assert created["stream"] not in [e["stream"] for e in log.calls("hipStreamDestroy")]
    assert log.lib.hipStreamDestroy(handle) == 0


@pytest.mark.parametrize("wait", ["stream", "event"])
def test_a_kernel_fault_surfaces_at_the_next_wait_naming_the_call_and_kernel(dev, mod, log, wait):
    s, _ = new_stream(dev, log)
    x = modrt.tensor(np.ones(N, "float32"), dev)
    log.reset()
    mod["scale"](x, 2.0, N, 4, 64, stream=s)
    call = "hipStreamSynchronize" if wait == "stream" else "hipEventSynchronize"
    log.fail_next(call, HIP_ERROR_ILLEGAL_ADDRESS)
    with pytest.raises(RuntimeError, match=rf"{call}.*hipErrorIllegalAddress") as caught:
        if wait == "stream":
            s.synchronize(timeout=30)
        else:
            s.record().synchronize(timeout=30)
    assert "scale (grid [4, 1, 1], block [64, 1, 1])" in str(caught.value)


def test_device_out_of_memory_is_a_memory_error(dev, log):
    log.fail_next("hipMalloc", HIP_ERROR_OUT_OF_MEMORY, times=2)  # the pool retries once
    with pytest.raises(MemoryError, match="hipErrorOutOfMemory"):
        modrt.empty((1 << 20,), "float32", dev)


def params_of(x: modrt.Tensor, a: float = 2.0, n: int = N) -> str:
    """The bytes of scale's parameters as the double logs them (hex, comma-separated)."""
    return ",".join(
        [int(x._dl().data).to_bytes(8, "little").hex(), struct.pack("<f", a).hex(), struct.pack("<i", n).hex()]
    )


def loaded_on_a_new_stream(
    dev: modrt.Device, mod: modrt.Module, log: RuntimeLog
) -> tuple[modrt.Stream, int, modrt.Tensor]:
    """A new stream, its HIP stream's id and a tensor, with the module loaded
    (one launch, done) so that a capture records launches only."""
    s, sid = new_stream(dev, log)
    x = modrt.tensor(np.ones(N, "float32"), dev)
    mod["scale"](x, 2.0, N, 4, 64, stream=s)
    s.synchronize(timeout=30)
    log.reset()
    return s, sid, x


# HIP's calls for a stream capture of three launches.
CAPTURE_OF_THREE = ["hipStreamBeginCapture", *["hipModuleLaunchKernel"] * 3, "hipStreamEndCapture"]


def test_graph_capture_calls_hip_in_order(dev, mod, log):
    s, sid, x = loaded_on_a_new_stream(dev, mod, log)
    with s.capture() as g:
        for _ in range(3):
            mod["scale"](x, 2.0, N, 4, 64)
    assert g.native and len(g) == 3
    calls = [e["call"] for e in log.entries()]
    assert calls == [*CAPTURE_OF_THREE, "hipGraphInstantiate", "hipGraphDestroy"], calls
    (begin,) = log.calls("hipStreamBeginCapture")
    assert (begin["stream"], begin["mode"]) == (sid, HIP_STREAM_CAPTURE_MODE_THREAD_LOCAL)
    assert all(launch["captured"] and launch["stream"] == sid for launch in log.calls("hipModuleLaunchKernel"))
    (instantiated,) = log.calls("hipGraphInstantiate")

    log.reset()
    g.replay()
    (launched,) = log.calls("hipGraphLaunch")
    assert launched == {
        "call": "hipGraphLaunch",
        "exec": instantiated["exec"],
        "stream": sid,
        "kernels": ["scale"] * 3,
        "params": [params_of(x)] * 3,
    }
    assert log.calls("hipModuleLaunchKernel") == []
    s.synchronize(timeout=30)

    # Rebound buffers: the launches are captured again and the executable
    # graph's parameters updated in place (hipGraphExecUpdate), then launched;
    # nothing runs launch by launch.
    log.reset()
    other = modrt.empty((N,), "float32", dev)
    g.replay({x: other})
    calls = [e["call"] for e in log.entries()]
    assert calls == [*CAPTURE_OF_THREE, "hipGraphExecUpdate", "hipGraphDestroy", "hipGraphLaunch"], calls
    assert all(launch["captured"] and launch["stream"] == sid for launch in log.calls("hipModuleLaunchKernel"))
    (updated,) = log.calls("hipGraphExecUpdate")
    assert updated["exec"] == instantiated["exec"] and updated["updated"]
    (launched,) = log.calls("hipGraphLaunch")
    assert launched["params"] == [params_of(other)] * 3
    assert len(g) == 3  # the core's list is unchanged

    # The same bindings again: no new capture. No bindings: back as captured.
    log.reset()
    g.replay({x: other})
    assert [e["call"] for e in log.entries()] == ["hipGraphLaunch"]
    log.reset()
    g.replay()
    assert log.calls("hipGraphExecUpdate") and log.calls("hipGraphLaunch")[0]["params"] == [params_of(x)] * 3
    s.synchronize(timeout=30)

    # A graph HIP cannot update replays the core's list instead.
    log.reset()
    log.fail_next("hipGraphExecUpdate", HIP_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    g.replay({x: other})
    assert log.calls("hipGraphLaunch") == []
    launches = [launch for launch in log.calls("hipModuleLaunchKernel") if not launch["captured"]]
    assert len(launches) == 3 and all(launch["stream"] == sid for launch in launches)
    assert all(launch["params"] == params_of(other) for launch in launches)
    s.synchronize(timeout=30)

    log.reset()
    del g
    dev.sync(timeout=30)
    assert [e["exec"] for e in log.calls("hipGraphExecDestroy")] == [instantiated["exec"]]


def test_a_launch_refused_in_a_capture_ends_the_capture_and_keeps_the_stream(dev, mod, log):
    s, sid, x = loaded_on_a_new_stream(dev, mod, log)
    log.fail_next("hipModuleLaunchKernel", HIP_ERROR_ILLEGAL_ADDRESS)
    with pytest.raises(RuntimeError, match="hipModuleLaunchKernel of scale"):
        with s.capture() as g:
            mod["scale"](x, 2.0, N, 4, 64)
    # HIP's capture was ended (the stream is not left capturing) and its
    # graph dropped: the graph is the core's list, and the stream works.
    assert len(log.calls("hipStreamEndCapture")) == 1
    assert not g.native
    assert g.why_not_native.startswith("the backend could not record a launch of scale: ")
    log.reset()
    mod["scale"](x, 2.0, N, 4, 64, stream=s)
    (launch,) = log.calls("hipModuleLaunchKernel")
    assert launch["stream"] == sid and not launch["captured"]
    s.synchronize(timeout=30)


def test_the_null_stream_is_not_captured_natively(dev, mod, log):
    x = modrt.tensor(np.ones(N, "float32"), dev)
    with dev.default_stream.capture() as g:
        mod["scale"](x, 2.0, N, 4, 64)
    # HIP's null stream cannot be captured: the core keeps its list.
    assert not g.native and len(g) == 1
    assert "default stream" in g.why_not_native and "modrt.Stream(device)" in g.why_not_native
    assert log.calls("hipStreamBeginCapture") == [] and log.calls("hipModuleLaunchKernel") == []
    g.replay()
    (launch,) = log.calls("hipModuleLaunchKernel")
    assert launch["stream"] is None and not launch["captured"]


# A HIP runtime without the graph entry points: every other part of the
# device works, and graphs are the core's list, replayed launch by launch.
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


def test_a_hip_runtime_without_graphs_replays_the_core_list(mod, tmp_path):
    saved = tmp_path / "scale.rocm"
    saved.write_bytes(mod.save_to_bytes())
    library = os.path.abspath(os.environ["MODRT_HIP_DOUBLE_WITHOUT_GRAPHS"])
    proc = modrt_testing.run_python(WITHOUT_GRAPHS, env={"MODRT_ROCM_DRIVER_LIBRARY": library}, args=[str(saved)])
    assert proc.returncode == 0, proc.stderr
    counts, why = proc.stdout.splitlines()
    assert counts == "False 1"
    assert why.startswith("the backend could not capture on this stream: ") and "lacks hip" in why
