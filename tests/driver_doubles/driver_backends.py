"""What differs between the CUDA driver's and the HIP runtime's TEST DOUBLES,
as the shared suite (streams_driver_test_double_test.py) sees it: one record
per backend with its kernel, its driver calls by role, its error names and
the texts the backend writes. Everything else the two share."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import modrt

N = 256
# The CUDA and HIP enumerators the tests pass or compare have the same values.
STREAM_NON_BLOCKING = 1  # CU_STREAM_NON_BLOCKING, hipStreamNonBlocking
CAPTURE_MODE_THREAD_LOCAL = 1  # CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, hipStreamCaptureModeThreadLocal
HOST_ALLOC_PORTABLE = 1  # CU_MEMHOSTALLOC_PORTABLE, hipHostMallocPortable
ERROR_OUT_OF_MEMORY = 2  # CUDA_ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory
ERROR_ILLEGAL_ADDRESS = 700  # CUDA_ERROR_ILLEGAL_ADDRESS, hipErrorIllegalAddress
ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910  # CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, hipErrorGraphExecUpdateFailure

# Driver calls by role: the same role has these names in each driver.
ROLES = (
    "stream_create",
    "stream_destroy",
    "stream_sync",
    "event_sync",
    "device_sync",
    "event_create",
    "event_record",
    "event_elapsed",
    "stream_wait_event",
    "launch",
    "h2d",
    "d2d",
    "d2h",
    "alloc",
    "host_alloc",
    "host_free",
    "begin_capture",
    "end_capture",
    "instantiate",
    "graph_destroy",
    "graph_launch",
    "exec_update",
    "exec_destroy",
)


def pointer(t: modrt.Tensor) -> str:
    return int(t._dl().data or 0).to_bytes(8, "little").hex()


def int32(n: int) -> str:
    return n.to_bytes(4, "little", signed=True).hex()


@dataclass(frozen=True)
class DriverBackend:
    kind: str
    # The double: MODRT_<X>_DRIVER_LIBRARY names it; its C functions are <prefix>_log, ...
    variable: str
    library: str
    prefix: str
    # The kernel the suite launches, with its operands (tensors) and the
    # arguments before the launch parameters.
    source: str
    signature: str
    kernel: str
    operands: Callable[[modrt.Device], tuple[modrt.Tensor, ...]]
    arguments: Callable[[tuple[modrt.Tensor, ...]], tuple[Any, ...]]
    # The bytes of the kernel's parameters as the double logs them (hex, comma-separated).
    params: Callable[[tuple[modrt.Tensor, ...]], str]
    rebound: int  # which operand a replay rebinds
    calls: dict[str, str]
    illegal_address: str
    out_of_memory: str
    stream_text: str  # how the backend describes its streams
    default_stream_text: str
    # Launches refused before the driver: (arguments after the operands, error, message).
    refused: tuple[tuple[Callable[[tuple[modrt.Tensor, ...]], tuple[Any, ...]], type, str], ...]
    attributes: dict[str, Any] = field(default_factory=dict)
    param_sizes: list[int] | None = None  # told to a double that cannot read them from the code object
    create_foreign_stream: str = ""  # the double's entry point another library would call
    destroy_foreign_stream: str = ""

    def __post_init__(self) -> None:
        assert set(self.calls) == set(ROLES), set(ROLES) ^ set(self.calls)

    def __str__(self) -> str:
        return self.kind


CUDA = DriverBackend(
    kind="cuda",
    variable="MODRT_CUDA_DRIVER_LIBRARY",
    library="libcuda_test_double.so",
    prefix="modrt_cuda_test_double",
    source=r"""
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
""",
    signature="vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
    kernel="vadd",
    operands=lambda dev: tuple(modrt.tensor(np.full(N, i, "float32"), dev) for i in (1, 2, 0)),
    arguments=lambda ops: (*ops, N),
    params=lambda ops: ",".join([*map(pointer, ops), int32(N)]),
    rebound=2,
    calls={
        "stream_create": "cuStreamCreate",
        "stream_destroy": "cuStreamDestroy",
        "stream_sync": "cuStreamSynchronize",
        "event_sync": "cuEventSynchronize",
        "device_sync": "cuCtxSynchronize",
        "event_create": "cuEventCreate",
        "event_record": "cuEventRecord",
        "event_elapsed": "cuEventElapsedTime",
        "stream_wait_event": "cuStreamWaitEvent",
        "launch": "cuLaunchKernel",
        "h2d": "cuMemcpyHtoDAsync",
        "d2d": "cuMemcpyDtoDAsync",
        "d2h": "cuMemcpyDtoHAsync",
        "alloc": "cuMemAlloc",
        "host_alloc": "cuMemHostAlloc",
        "host_free": "cuMemFreeHost",
        "begin_capture": "cuStreamBeginCapture",
        "end_capture": "cuStreamEndCapture",
        "instantiate": "cuGraphInstantiateWithFlags",
        "graph_destroy": "cuGraphDestroy",
        "graph_launch": "cuGraphLaunch",
        "exec_update": "cuGraphExecUpdate",
        "exec_destroy": "cuGraphExecDestroy",
    },
    illegal_address="CUDA_ERROR_ILLEGAL_ADDRESS",
    out_of_memory="CUDA_ERROR_OUT_OF_MEMORY",
    stream_text="native: a CUDA stream (CU_STREAM_NON_BLOCKING)",
    default_stream_text="legacy default stream",
    refused=(
        (lambda ops: ops[:2], TypeError, r"vadd takes 4 arguments and 2 launch parameters .*got 2 values"),
        (lambda ops: (*ops, "2", 4, 64), TypeError, r"vadd: argument 'n' \(int32\): .*expected int, got str"),
        (
            lambda ops: (*ops, N, 1, (1 << 32) + 1),
            ValueError,
            r"vadd: threadIdx\.x = 4294967297 exceeds the device's limit of 4294967295 "
            r"\(the driver's unsigned int, cuda\(0\)\)",
        ),
    ),
    create_foreign_stream="cuStreamCreate",
    destroy_foreign_stream="cuStreamDestroy_v2",
)

ROCM = DriverBackend(
    kind="rocm",
    variable="MODRT_ROCM_DRIVER_LIBRARY",
    library="libhip_test_double.so",
    prefix="modrt_hip_test_double",
    source="""#include <hip/hip_runtime.h>
extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
""",
    signature="scale(float32*, float32, int32; blockIdx.x, threadIdx.x)",
    kernel="scale",
    operands=lambda dev: (modrt.tensor(np.ones(N, "float32"), dev),),
    arguments=lambda ops: (ops[0], 2.0, N),
    params=lambda ops: ",".join([pointer(ops[0]), struct.pack("<f", 2.0).hex(), int32(N)]),
    rebound=0,
    calls={
        "stream_create": "hipStreamCreateWithFlags",
        "stream_destroy": "hipStreamDestroy",
        "stream_sync": "hipStreamSynchronize",
        "event_sync": "hipEventSynchronize",
        "device_sync": "hipDeviceSynchronize",
        "event_create": "hipEventCreateWithFlags",
        "event_record": "hipEventRecord",
        "event_elapsed": "hipEventElapsedTime",
        "stream_wait_event": "hipStreamWaitEvent",
        "launch": "hipModuleLaunchKernel",
        "h2d": "hipMemcpyHtoDAsync",
        "d2d": "hipMemcpyDtoDAsync",
        "d2h": "hipMemcpyDtoHAsync",
        "alloc": "hipMalloc",
        "host_alloc": "hipHostMalloc",
        "host_free": "hipHostFree",
        "begin_capture": "hipStreamBeginCapture",
        "end_capture": "hipStreamEndCapture",
        "instantiate": "hipGraphInstantiate",
        "graph_destroy": "hipGraphDestroy",
        "graph_launch": "hipGraphLaunch",
        "exec_update": "hipGraphExecUpdate",
        "exec_destroy": "hipGraphExecDestroy",
    },
    illegal_address="hipErrorIllegalAddress",
    out_of_memory="hipErrorOutOfMemory",
    stream_text="native: a HIP stream (hipStreamNonBlocking)",
    default_stream_text="null stream",
    refused=(
        (lambda ops: (ops[0], 2.0), TypeError, r"scale takes 3 arguments and 2 launch parameters .*got 2 values"),
        (lambda ops: (ops[0], "2", N, 4, 64), TypeError, r"scale: argument 1 \(float32\): .*expected float, got str"),
        (
            lambda ops: (ops[0], 2.0, N, 1, (1 << 32) + 1),
            ValueError,
            r"scale: threadIdx\.x = 4294967297 exceeds the device's limit of 4294967295 "
            r"\(the driver's unsigned int, rocm\(0\)\)",
        ),
    ),
    attributes={"gcn_arch": "gfx90a"},
    param_sizes=[8, 4, 4],
    create_foreign_stream="hipStreamCreateWithFlags",
    destroy_foreign_stream="hipStreamDestroy",
)

DRIVER_BACKENDS = (CUDA, ROCM)
