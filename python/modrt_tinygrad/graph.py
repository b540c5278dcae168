"""TinyJit's graph on modrt: a batch of jitted kernels replays as one modrt.Graph.

tinygrad hands a device's graph class each batch of kernels its JIT captured
(a GraphRunner, see tinygrad/engine/jit.py); every later call of the jitted
function runs the batch through `__call__` with that call's input buffers
and variable values. Here the batch is recorded once with
`stream.capture()` and replayed with `Graph.replay`, which rebinds the
captured input buffers to this call's.

modrt.Graph rebinds tensors, not scalars, and a recorded launch keeps its grid:
kernels whose variables (symbolic shapes) or launch sizes depend on tinygrad
Variables are therefore recorded again for each distinct set of variable
values, and the last `MAX_GRAPHS` recordings are kept.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from tinygrad.device import Buffer, Device
from tinygrad.engine.jit import GraphRunner
from tinygrad.uop.ops import UOp

import modrt

from .memory import ModrtBuffer
from .program import LaunchDevice, ModrtProgram


class ModrtGraph(GraphRunner):
    """One tinygrad JIT batch on one MODRT device, replayed as a modrt.Graph.

    `captures` counts recordings and `replays` counts replays (a call of the
    jitted function is one replay per batch), so a caller can tell that the
    batch ran as a graph and how often it had to be recorded."""

    MAX_GRAPHS = 8

    def __init__(self, linear: UOp, input_uops: tuple[UOp, ...] = ()) -> None:
        super().__init__(linear, input_uops)
        first: Buffer = self.calls[0][2][0]
        self.dev: LaunchDevice = Device[first.device]
        self.stream = modrt.Stream(self.dev.modrt_device)
        self.graphs: OrderedDict[tuple[int, ...], modrt.Graph] = OrderedDict()
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
        self.captures += 1
        return graph

    def _graph(self, var_vals: dict[str, int]) -> modrt.Graph:
        key = tuple(var_vals[v] for v in self.vars)
        graph = self.graphs.get(key)
        if graph is None:
            graph = self.graphs[key] = self._capture(var_vals)
            if len(self.graphs) > self.MAX_GRAPHS:
                self.graphs.popitem(last=False)
        else:
            self.graphs.move_to_end(key)
        return graph

    def __call__(self, input_uops: tuple[UOp, ...], var_vals: dict[str, int], wait: bool = False) -> float | None:
        graph = self._graph(var_vals)
        bindings: dict[modrt.Tensor, modrt.Tensor] = {}
        for captured, slot, dtype in self.rebind:
            current: ModrtBuffer = input_uops[slot].buffer.ensure_allocated()._buf
            if current is not captured:
                bindings[captured.typed(dtype)] = current.typed(dtype)
        # On the stream this thread launches on now: ordered with the
        # kernels and copies tinygrad runs outside the graph.
        stream = modrt.current_stream(self.dev.modrt_device)

        def replay() -> None:
            graph.replay(bindings, stream=stream)

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
