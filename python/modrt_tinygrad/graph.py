"""TinyJit's graph on modrt: a batch of jitted kernels replays as one modrt.Graph.

tinygrad hands a device's graph class each batch of kernels its JIT captured
(a GraphRunner, see tinygrad/engine/jit.py); every later call of the jitted
function runs the batch through `__call__` with that call's input buffers
and variable values. Here the batch is recorded once with
`stream.capture()` and replayed with `Graph.replay`, which rebinds the
captured input buffers to this call's and gives the kernels that depend on
tinygrad Variables (their values, symbolic global and local sizes) this
call's values (`Graph.replay(scalars=...)`): a change of variable values is
a replay, as on tinygrad's own CUDA and Metal graphs, not a new recording.
"""

from __future__ import annotations

from typing import Any

from tinygrad.device import Buffer, Device
from tinygrad.engine.jit import GraphRunner
from tinygrad.uop.ops import UOp

import modrt

from .memory import ModrtBuffer
from .program import LaunchDevice, ModrtProgram


class ModrtGraph(GraphRunner):
    """One tinygrad JIT batch on one MODRT device, replayed as a modrt.Graph.

    `captures` counts recordings (one, at the first call) and `replays`
    counts replays (a call of the jitted function is one replay per batch),
    so a caller can tell that the batch ran as a graph, recorded once."""

    def __init__(self, linear: UOp, input_uops: tuple[UOp, ...] = ()) -> None:
        super().__init__(linear, input_uops)
        first: Buffer = self.calls[0][2][0]
        self.dev: LaunchDevice = Device[first.device]
        self.stream = modrt.Stream(self.dev.modrt_device)
        self.graph: modrt.Graph | None = None
        self.captures = self.replays = 0
        # (captured buffer, input slot, element type) of every kernel argument
        # that is one of the jitted function's inputs: rebound per replay.
        rebind: dict[tuple[int, int, str], tuple[ModrtBuffer, int, str]] = {}
        for (_, ast, bufs, _), program, replace in zip(self.calls, self.runtimes, self.uop_replace):
            assert isinstance(program, ModrtProgram)
            for pos, slot in replace:
                for k, arg in enumerate(ast.arg.globals):
                    if arg == pos:
                        dtype = program.buffer_dtypes[k]
                        rebind[(id(bufs[pos]._buf), slot, dtype)] = (bufs[pos]._buf, slot, dtype)
        self.rebind = list(rebind.values())
        # The launches whose scalars depend on the variables (their values,
        # symbolic sizes), and the scalars each was recorded with.
        self.variable_launches = sorted({*self.var_vals_replace, *self.launch_dims_replace})
        self.recorded_scalars: dict[int, list[int]] = {}

    def _scalars(self, j: int, var_vals: dict[str, int]) -> list[int]:
        """The scalars launch `j` takes with these variable values."""
        _, ast, _, device_vars = self.calls[j]
        values = {**var_vals, **device_vars}
        global_size, local_size = ast.arg.launch_dims(values)
        return self.runtimes[j].scalars(global_size, local_size, ast.arg.vals(values))

    def _capture(self, var_vals: dict[str, int]) -> modrt.Graph:
        with self.stream.capture() as graph:
            for (_, ast, bufs, device_vars), program in zip(self.calls, self.runtimes):
                values = {**var_vals, **device_vars}
                global_size, local_size = ast.arg.launch_dims(values)
                program(
                    *(bufs[i]._buf for i in ast.arg.globals),
                    global_size=global_size,
                    local_size=local_size,
                    vals=ast.arg.vals(values),
                )
        self.recorded_scalars = {j: self._scalars(j, var_vals) for j in self.variable_launches}
        self.captures += 1
        return graph

    def _changed_scalars(self, var_vals: dict[str, int]) -> dict[tuple[int, int], int]:
        """{(launch, value index): value} for every scalar that differs from
        the recorded one with these variable values."""
        changed: dict[tuple[int, int], int] = {}
        for j in self.variable_launches:
            first = self.runtimes[j].first_scalar
            for k, (now, then) in enumerate(zip(self._scalars(j, var_vals), self.recorded_scalars[j])):
                if now != then:
                    changed[(j, first + k)] = now
        return changed

    def __call__(self, input_uops: tuple[UOp, ...], var_vals: dict[str, int], wait: bool = False) -> float | None:
        if self.graph is None:
            self.graph = self._capture(var_vals)
        graph = self.graph
        scalars = self._changed_scalars(var_vals)
        bindings: dict[modrt.Tensor, modrt.Tensor] = {}
        for captured, slot, dtype in self.rebind:
            current: ModrtBuffer = input_uops[slot].buffer.ensure_allocated()._buf
            if current is not captured:
                bindings[captured.typed(dtype)] = current.typed(dtype)
        # On the stream this thread launches on now: ordered with the
        # kernels and copies tinygrad runs outside the graph.
        stream = modrt.current_stream(self.dev.modrt_device)

        def replay() -> None:
            graph.replay(bindings, scalars=scalars, stream=stream)

        self.replays += 1
        if wait:
            return self.dev.time_launch(replay)
        replay()
        return None


def graph_runners(jit: Any) -> list[ModrtGraph]:
    """The ModrtGraphs a captured TinyJit `jit` replays its batches with."""
    from tinygrad.engine.realize import graph_cache
    from tinygrad.uop.ops import Ops

    captured = jit.captured
    if captured is None:
        return []
    runners = []
    for call in captured.linear.src:
        ast = call.src[0]
        if ast.op is Ops.CUSTOM_FUNCTION and ast.arg == "graph" and isinstance(graph_cache.get(ast), ModrtGraph):
            runners.append(graph_cache[ast])
    return runners
