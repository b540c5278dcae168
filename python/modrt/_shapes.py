"""Shapes and host dtypes as users give them, checked before anything is
allocated: a dimension that is not an integer is a TypeError naming it (it
was truncated: `modrt.empty((3.7,))` made 3 elements), and a numpy dtype
modrt has no tensors of (object, str, void, complex) is a ValueError (a
pinned array of `object` filled with uninitialised pointers crashed numpy)."""

from __future__ import annotations

import operator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The dtypes a host array may have to be copied to and from modrt tensors
# (bfloat16 has no numpy dtype).
HOST_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
)


def dims(shape: Any, where: str) -> tuple[int, ...]:
    """`shape` (an integer, or a sequence of them) as a tuple of ints: a
    dimension that is not an integer (a float, a bool, a string) is a
    TypeError naming it, a negative one a ValueError. numpy integers are
    integers."""
    given = tuple(shape) if hasattr(shape, "__iter__") else (shape,)
    out = []
    for i, d in enumerate(given):
        if isinstance(d, bool) or not hasattr(type(d), "__index__"):
            raise TypeError(f"{where}: dimension {i} of shape {given!r} is {d!r} ({type(d).__name__}), not an integer")
        value = operator.index(d)
        if value < 0:
            raise ValueError(f"{where}: dimension {i} of shape {given!r} is negative")
        out.append(value)
    return tuple(out)


def host_dtype(dtype: Any, where: str) -> Any:
    """`dtype` as a numpy dtype that modrt tensors have (HOST_DTYPES, native
    byte order); ValueError naming it otherwise, before any allocation."""
    import numpy as np

    dt = np.dtype(dtype)
    if dt.name not in HOST_DTYPES or not dt.isnative:
        raise ValueError(
            f"{where}: modrt has no dtype {dt.str!r} ({dt.name}, numpy kind {dt.kind!r}); "
            f"host arrays for modrt hold one of {', '.join(HOST_DTYPES)}"
        )
    return dt
