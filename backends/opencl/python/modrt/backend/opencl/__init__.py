"""modrt.backend.opencl: OpenCL devices (PoCL here), OpenCL C codegen."""

from __future__ import annotations

from modrt import sdk

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def detect_target(dev: sdk.Device) -> sdk.Target:
    return sdk.Target(
        "opencl",
        device_name=dev.name,
        **sdk.device_limits(dev),
    )


def reflect(source: str | bytes) -> list[str] | None:
    """The canonical signature of every __kernel in OpenCL C `source`, read by
    clang's OpenCL front end (docs/formats/opencl.md); None where there is no clang."""
    from . import reflection  # imported on use: it costs milliseconds at `import modrt`

    return reflection.reflect(sdk.text_of(source))


def check(source: Any, functions: Sequence[str], filename: Any) -> None:
    """clang's OpenCL front end, then a build on a device where there is one (source_check)."""
    from . import source_check  # imported on use: it costs milliseconds at `import modrt`

    source_check.check(source, functions, filename)


def codegen(source: sdk.Source, functions: list[str], tgt: sdk.Target) -> sdk.Payload:
    """OpenCL C is carried as source (fmt "cl") and built by the runtime on first use."""
    text = sdk.text_of(source)
    return sdk.Payload.create("single-binary", "cl", functions, code=text.encode(), sources={"cl": text})


# `modrt demo`'s kernel (c = a + b over float32), in this backend's language.
DEMO_SOURCE = """\
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""
DEMO_SIGNATURE = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"

BACKEND = sdk.Backend(
    "opencl",
    codegen=codegen,
    detect=detect_target,
    check=check,
    reflector=sdk.Reflector(reflect),
    language="OpenCL C",
    demo=(DEMO_SOURCE, DEMO_SIGNATURE),
)


# The counts of submission_counts, by name.
SUBMISSION_COUNTS = ("launches", "graph_recordings", "graph_replays")


def submission_counts(device: sdk.Device) -> dict[str, int]:
    """What an opencl device has enqueued since the process began: launches
    one by one (`launches`), graph recordings (`graph_recordings`: one per
    capture and one per replay that rebinds buffers differently from the
    graph's last), and graph replays (`graph_replays`: a graph's launches
    enqueued together). A rebound replay that ran natively adds one replay
    (and one recording when its bindings changed) and no launch."""
    return {name: sdk.call("opencl.submission_count", device.index, name) for name in SUBMISSION_COUNTS}


def register_backend() -> None:
    sdk.register_in_tree(BACKEND)
