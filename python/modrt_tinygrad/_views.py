"""Keeps tinygrad 0.14 from making buffer views on MODRT devices.

tinygrad makes views (a buffer at a byte offset inside another) in two places:
its memory planner, which packs a schedule's intermediate buffers into one
allocation, and `UOp.contiguous_view`, which turns a slice of a realized
buffer into a view. Both ask the device's *name*: they skip devices whose name
starts with CL or WEBGPU, because neither API can bind a buffer at an
arbitrary offset. modrt's OpenCL and WebGPU buffers are the same (a launch
refuses a tensor with a byte offset there), and tinygrad has no device
property to ask instead, so the two checks are extended here to the MODRT
device name. tinygrad then copies where it would have made a view, as on CL.

One view is kept: the one at byte offset 0 (a buffer's first bytes, or all of
them under another shape). It needs no offset binding (the allocator's
`_offset` hands out the same memory), and without it tinygrad 0.14 cannot
copy a tensor to several devices (`Tensor.to(devices)`, `shard` with no
axis): it would materialize the copy's source with a kernel over the device
axis that its own verifier rejects (on its CL device too).
"""

from __future__ import annotations

from typing import Any


def _devices(device: Any) -> tuple[str, ...]:
    return (device,) if isinstance(device, str) else tuple(device)


def forbid_views_on(prefix: str) -> None:
    """Makes tinygrad treat devices named `prefix...` like CL and WEBGPU (no views)."""
    from tinygrad.schedule import memory
    from tinygrad.uop.ops import UOp

    if getattr(memory._can_plan, "_no_views_on", None) == prefix:
        return

    def has_views(device: Any) -> bool:
        return device is None or not any(d.upper().startswith(prefix) for d in _devices(device))

    can_plan = memory._can_plan

    def _can_plan(b: Any, held_bufs: Any) -> bool:
        return has_views(b.device) and can_plan(b, held_bufs)

    _can_plan._no_views_on = prefix  # type: ignore[attr-defined]
    memory._can_plan = _can_plan

    contiguous_view = UOp.contiguous_view

    def _contiguous_view(self: UOp) -> Any:
        view = contiguous_view(self)
        return view if has_views(self.device) or (view is not None and view[1] == 0) else None

    UOp.contiguous_view = _contiguous_view  # type: ignore[method-assign]
