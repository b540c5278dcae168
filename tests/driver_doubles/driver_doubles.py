"""What the tests of the CUDA and HIP driver TEST DOUBLES share: the double's
record of the driver calls it received (the same loaded library as the
runtime's, named by the backend's MODRT_<X>_DRIVER_LIBRARY), and failures
injected into its next calls. The doubles themselves are built from
driver_test_double.{h,cc} here and each driver's entry points in its
backend's testing/ folder."""

from __future__ import annotations

import ctypes
import json
import os


class DriverDoubleLog:
    """The record of the double loaded from `os.environ[variable]` (a file
    named `library`), whose C functions are named `<prefix>_log`, `_reset`,
    `_fail_next` and, where the double has it, `_param_sizes`."""

    def __init__(self, variable: str, library: str, prefix: str) -> None:
        path = os.path.abspath(os.environ[variable])
        assert os.path.basename(path) == library, path
        self.lib = ctypes.CDLL(path)
        self._log = getattr(self.lib, f"{prefix}_log")
        self._log.restype = ctypes.c_char_p
        self._reset = getattr(self.lib, f"{prefix}_reset")
        self._fail_next = getattr(self.lib, f"{prefix}_fail_next")
        self._fail_next.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        self._prefix = prefix

    def reset(self) -> None:
        self._reset()

    def entries(self) -> list[dict]:
        return [json.loads(line) for line in self._log().decode().splitlines()]

    def calls(self, name: str) -> list[dict]:
        return [entry for entry in self.entries() if entry["call"] == name]

    def fail_next(self, call: str, code: int, times: int = 1) -> None:
        """The next `times` calls of `call` into the double return `code`."""
        self._fail_next(call.encode(), code, times)

    def param_sizes(self, kernel: str, sizes: list[int]) -> None:
        """Launches of `kernel` log their parameters' bytes (these sizes)."""
        getattr(self.lib, f"{self._prefix}_param_sizes")(
            kernel.encode(), (ctypes.c_size_t * len(sizes))(*sizes), len(sizes)
        )
