"""IREE's runtime running the graph rows' work: 1,000 add_one dispatches on its
Vulkan HAL (lavapipe), the vulkan-graph row's peer.

The dispatches are hand-authored (`flow.dispatch` of an external SPIR-V
executable, IREE's custom-dispatch path), so IREE cannot fuse them into one
kernel: left to itself it fuses 1,000 `x + 1` into a single dispatch, and with
`util.optimization_barrier` between them it awaits a fence after each (1,000
submissions), which is not the work of a replay either. This way IREE records
all 1,000 dispatches, each behind an execution barrier, into one command
buffer per invocation, and the SPIR-V is the same add_one body modrt runs.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from worker_common import N_ELEMENTS, VULKAN_SOURCE, WGPU_ROOT, Run, check_ran

IREE_DISPATCHES = 1000
# VULKAN_SOURCE with its work-group size fixed at 64 (IREE sets no
# specialization constants on a hand-authored executable): the same body,
# dispatched as one work-group of 64, as modrt dispatches it.
IREE_GLSL = VULKAN_SOURCE.replace("layout(local_size_x_id = 0) in;", "layout(local_size_x = 64) in;")
if IREE_GLSL == VULKAN_SOURCE:
    raise ValueError("VULKAN_SOURCE no longer declares local_size_x_id = 0; update IREE_GLSL")


def iree_program(spirv_path: str, dispatches: int = IREE_DISPATCHES) -> str:
    """`main(x)`: `dispatches` in-place add_one dispatches on x, one after another."""
    objects = f'#hal.executable.objects<{{#spirv = [#hal.executable.object<{{path = "{spirv_path}"}}>]}}>'
    lines = [
        '#spirv = #hal.executable.target<"vulkan-spirv", "vulkan-spirv-fb">',
        'module attributes {hal.device.targets = [#hal.device.target<"vulkan", [#spirv]> : !hal.device]} {',
        f"  hal.executable.source private @add_one <{{objects = {objects}}}> {{",
        "    hal.executable.export public @main ordinal(0)",
        "        layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>]>)",
        "        count(%device: !hal.device) -> (index, index, index) {",
        "      %c1 = arith.constant 1 : index",
        "      hal.return %c1, %c1, %c1 : index, index, index",
        "    }",
        "  }",
        f"  func.func @main(%x0: tensor<{N_ELEMENTS}xf32>) -> tensor<{N_ELEMENTS}xf32> {{",
        f"    %n = arith.constant {N_ELEMENTS} : i32",
    ]
    lines += [
        f"    %x{i + 1} = flow.dispatch @add_one::@main(%n, %x{i}) : (i32, tensor<{N_ELEMENTS}xf32>) -> %x{i}"
        for i in range(dispatches)
    ]
    lines += [f"    return %x{dispatches} : tensor<{N_ELEMENTS}xf32>", "  }", "}", ""]
    return "\n".join(lines)


def _compiled_program(dispatches: int) -> bytes:
    """The program's VM flatbuffer, compiled by iree-compile once per bench
    machine and kept in the temp directory (each sample is a fresh process)."""
    import iree.compiler  # type: ignore[import-not-found]
    from iree.compiler.version import VERSION  # type: ignore[import-not-found]

    key = hashlib.sha256(f"{VERSION}\n{IREE_GLSL}\n{dispatches}".encode()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"modrt-bench-iree-{key}"
    vmfb = cache / "graph.vmfb"
    if vmfb.exists():
        return vmfb.read_bytes()
    cache.mkdir(exist_ok=True)
    shader, spirv = cache / "add_one.comp", cache / "add_one.spv"
    shader.write_text(IREE_GLSL)
    done = subprocess.run(["glslangValidator", "-V", "-o", str(spirv), str(shader)], capture_output=True, text=True)
    if done.returncode != 0:
        raise ImportError(f"glslangValidator failed on the IREE shader: {done.stdout.strip()}")
    flatbuffer = iree.compiler.compile_str(iree_program(str(spirv), dispatches), target_backends=["vulkan-spirv"])
    partial = cache / f"graph.vmfb.{os.getpid()}"
    partial.write_bytes(flatbuffer)
    partial.replace(vmfb)
    return flatbuffer


def iree_vulkan_graph() -> Run:
    """One invocation of `main` on IREE's Vulkan device: IREE records the
    1,000 dispatches into one command buffer, submits it and waits (its
    synchronous Vulkan ABI); per dispatch."""
    main, x, _ = iree_graph(IREE_DISPATCHES)

    def run(n: int) -> float:
        invocations = max(1, n // IREE_DISPATCHES)
        start = time.perf_counter()
        for _ in range(invocations):
            main(x)
        return (time.perf_counter() - start) * n / (invocations * IREE_DISPATCHES)

    return run


def iree_graph(dispatches: int):  # type: ignore[no-untyped-def]
    """(main, x, read_back) of the program on IREE's Vulkan device, run once
    and checked: x (zeros before) holds `dispatches` in every element."""
    import numpy as np

    if WGPU_ROOT not in sys.path and os.path.isdir(WGPU_ROOT):
        sys.path.append(WGPU_ROOT)  # the toolchain root's pip packages
    import iree.runtime as rt  # type: ignore[import-not-found]

    flatbuffer = _compiled_program(dispatches)
    config = rt.Config("vulkan")
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, flatbuffer))
    main = context.modules.module["main"]
    device = config.device
    x = rt.asdevicearray(device, np.zeros(N_ELEMENTS, dtype="float32"))
    main(x)  # warm: pipelines made; the dispatches update x in place

    def read_back():  # type: ignore[no-untyped-def]
        return _read_back(rt, device, x)

    check_ran(read_back(), dispatches)
    return main, x, read_back


def _read_back(rt, device, array):  # type: ignore[no-untyped-def]
    """The array's values through a staging buffer. DeviceArray.to_host()
    imports a numpy allocation, which lavapipe refuses (its
    minImportedHostPointerAlignment is 4096)."""
    import numpy as np

    source = array._buffer_view.get_buffer()
    staging = device.allocator.allocate_buffer(
        memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED),
        allocation_size=source.byte_length(),
    )
    done = device.create_semaphore(0)
    device.queue_copy(
        source,
        staging,
        wait_semaphores=rt.HalFence.create_at(done, 0),
        signal_semaphores=rt.HalFence.create_at(done, 1),
    )
    rt.HalFence.create_at(done, 1).wait()
    return np.array(staging.map().asarray([N_ELEMENTS], np.dtype("float32")))
