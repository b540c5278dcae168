"""One side of an in-process comparison, run in its own interpreter.

`python worker.py CASE` sets the case up, prints `ready` (or `unavailable:
REASON` when a package or device it needs is missing), then answers each line
`N` on stdin with the seconds that N repetitions took. The driver
(measure.fresh_worker) starts a fresh worker for every sample, runs a warm-up
batch and a few measured batches in it, and stops it: effects fixed for the
life of a process (address layout, the core it runs on) vary between samples
instead of biasing a whole row.

The cases live in cases_*.py by what they measure; worker_common.py holds
the kernels they share.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from cases_basic import (
    floor_nop,
    modrt_artifact,
    modrt_launch,
    modrt_nop,
    pyopencl_artifact,
    pyopencl_launch,
    tvm_ffi_nop,
)
from cases_device_layer import (
    modrt_driver_alloc,
    modrt_event_timing,
    modrt_host_timing,
    modrt_opencl_graph_replay,
    modrt_opencl_one_by_one,
    modrt_pool_alloc,
    modrt_vulkan_graph_replay,
    modrt_vulkan_one_by_one,
    modrt_webgpu_graph_replay,
    modrt_webgpu_one_by_one,
)
from cases_devices import (
    cupy_d2h,
    cupy_h2d,
    cupy_launch,
    modrt_cuda_d2h,
    modrt_cuda_h2d,
    modrt_cuda_launch,
    modrt_cuda_pageable_h2d,
    modrt_cuda_pinned_h2d,
    modrt_opencl_d2h,
    modrt_opencl_h2d,
    modrt_vulkan_d2h,
    modrt_vulkan_dispatch,
    modrt_vulkan_h2d,
    modrt_webgpu_dispatch,
    pyopencl_d2h,
    pyopencl_h2d,
    wgpu_d2h,
    wgpu_dispatch,
    wgpu_graph,
    wgpu_h2d,
)
from cases_iree import iree_vulkan_graph
from cases_models import CASES as MODEL_CASES
from cases_tinygrad import (
    tinygrad_cl_conv_forward,
    tinygrad_cl_launch,
    tinygrad_cl_mlp_step,
    tinygrad_modrt_conv_forward,
    tinygrad_modrt_launch,
    tinygrad_modrt_mlp_step,
)
from worker_common import Run


def testing_pid() -> Run:
    """For bench_test: answers with this process's id instead of a time."""
    return lambda n: float(os.getpid())


CASES: dict[str, Callable[[], Run]] = {
    "testing-pid": testing_pid,
    "modrt-nop": modrt_nop,
    "tvm_ffi-nop": tvm_ffi_nop,
    "floor-nop": floor_nop,
    "modrt-launch": modrt_launch,
    "modrt-checked-launch": lambda: modrt_launch(checked=True),
    "pyopencl-launch": pyopencl_launch,
    "modrt-artifact": modrt_artifact,
    "pyopencl-artifact": pyopencl_artifact,
    "modrt-vulkan-dispatch": modrt_vulkan_dispatch,
    "wgpu-dispatch": wgpu_dispatch,
    "modrt-webgpu-dispatch": modrt_webgpu_dispatch,
    "modrt-opencl-h2d": modrt_opencl_h2d,
    "modrt-opencl-d2h": modrt_opencl_d2h,
    "pyopencl-h2d": pyopencl_h2d,
    "pyopencl-d2h": pyopencl_d2h,
    "modrt-vulkan-h2d": modrt_vulkan_h2d,
    "modrt-vulkan-d2h": modrt_vulkan_d2h,
    "wgpu-h2d": wgpu_h2d,
    "wgpu-d2h": wgpu_d2h,
    "modrt-cuda-launch": modrt_cuda_launch,
    "cupy-launch": cupy_launch,
    "modrt-cuda-h2d": modrt_cuda_h2d,
    "modrt-cuda-d2h": modrt_cuda_d2h,
    "cupy-h2d": cupy_h2d,
    "modrt-cuda-pinned-h2d": modrt_cuda_pinned_h2d,
    "modrt-cuda-pageable-h2d": modrt_cuda_pageable_h2d,
    "cupy-d2h": cupy_d2h,
    "modrt-vulkan-graph-replay": modrt_vulkan_graph_replay,
    "modrt-vulkan-one-by-one": modrt_vulkan_one_by_one,
    "modrt-webgpu-graph-replay": modrt_webgpu_graph_replay,
    "modrt-webgpu-one-by-one": modrt_webgpu_one_by_one,
    "wgpu-graph": wgpu_graph,
    "iree-vulkan-graph": iree_vulkan_graph,
    "modrt-opencl-graph-replay": modrt_opencl_graph_replay,
    "modrt-opencl-one-by-one": modrt_opencl_one_by_one,
    "modrt-pool-alloc": modrt_pool_alloc,
    "modrt-driver-alloc": modrt_driver_alloc,
    "modrt-event-timing": modrt_event_timing,
    "modrt-host-timing": modrt_host_timing,
    "tinygrad-modrt-launch": tinygrad_modrt_launch,
    "tinygrad-cl-launch": tinygrad_cl_launch,
    "tinygrad-modrt-mlp-step": tinygrad_modrt_mlp_step,
    "tinygrad-cl-mlp-step": tinygrad_cl_mlp_step,
    "tinygrad-modrt-conv-forward": tinygrad_modrt_conv_forward,
    "tinygrad-cl-conv-forward": tinygrad_cl_conv_forward,
    **MODEL_CASES,
}


def main() -> None:
    case = sys.argv[1]
    try:
        run = CASES[case]()
    except ImportError as e:
        print(f"unavailable: {e}", flush=True)
        return
    print("ready", flush=True)
    for line in sys.stdin:
        print(repr(run(int(line))), flush=True)


if __name__ == "__main__":
    main()
