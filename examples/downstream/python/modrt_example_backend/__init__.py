"""modrt_example_backend: an out-of-tree modrt backend.

modrt's autoloader calls `register_backend()` through the entry point
`example` in group `modrt.backends`; it loads the plugin DSO shipped beside
this file, which registers `example.axpy`.
"""

from __future__ import annotations

from pathlib import Path

# modrt is imported inside the functions: `import modrt` runs the autoloader,
# which calls register_backend() through the entry point, so a top-level
# import would find this module half-initialized when a user imports it first.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import modrt

PLUGIN = Path(__file__).with_name("libmodrt_example_backend.so")


def register_backend() -> None:
    import modrt

    modrt.backend.register("example", runtime=PLUGIN)


def axpy(alpha: float, x: modrt.Tensor, y: modrt.Tensor) -> None:
    """y += alpha * x, in place, on float32 CPU tensors."""
    import modrt

    modrt.get_global_func("example.axpy")(alpha, x, y)
