"""The demo's kernel, c = a + b over float32: the host's here, each backend's
in its record (`modrt.backend.record(name).demo`, written in its hook)."""

from __future__ import annotations

from typing import Any, NamedTuple


class DemoKernel(NamedTuple):
    source: Any
    signature: str
    launched: bool  # takes (grid, block) launch parameters


HOST = DemoKernel(
    """\
void vadd(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
""",
    "vadd(float32*, float32*, float32*, int32)",
    launched=False,
)


def demo_kernel(modrt: Any, name: str) -> DemoKernel | None:
    """The demo kernel of `name` (cpu, or a backend whose record has one)."""
    if name == "cpu":
        return HOST
    record = modrt.backend.record(name)
    if record is None or record.demo is None:
        return None
    source, signature = record.demo
    return DemoKernel(source, signature, launched=";" in signature)
