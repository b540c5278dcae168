"""modrt: a modular device runtime.

`import modrt` loads libmodrt_runtime.so (RTLD_GLOBAL), then
libmodrt_compiler.so unless MODRT_RUNTIME_ONLY=1, then runs the backend
autoloader once (see modrt.backend).
"""

from __future__ import annotations

import os as _os

from ._namespace import extend_path as _extend_path

__path__ = _extend_path(__path__, __name__)  # hooks add modrt/backend/<x> portions

from . import _ffi
from ._version import __version__
from ._ffi import Error, Function, get_global_func, register_func
from .devices import Device, cpu, device
from .streams import Event, Stream, current_stream, stream
from .tensors import Tensor, empty, from_dlpack, tensor
from .graphs import Graph
from .modules import Module, Payload, checked, load_module, load_module_from_bytes
from . import runtime as runtime  # modrt.runtime.device_kinds() and the other names it always had
from ._compile import compile
from ._compile_errors import CompileError, CompileWarning, SignatureError, SourceNotCheckedWarning
from . import backend, target

if _os.environ.get("MODRT_RUNTIME_ONLY") != "1":
    _compiler = _ffi.find_library(_ffi._selection.COMPILER)
    if _compiler is None:
        raise ImportError("modrt: cannot find libmodrt_compiler.so (set MODRT_RUNTIME_ONLY=1 to run without it)")
    # The core's ELF check, as for every DSO modrt loads: glibc's loader would
    # crash on a file an interrupted install cut short.
    _damage = _ffi.call("elf.file_problem", _compiler)
    if _damage:
        raise ImportError(
            f"modrt: {_compiler} is damaged ({_damage}); reinstall modrt, "
            "or set MODRT_RUNTIME_ONLY=1 to run without the compiler"
        )
    import ctypes as _ctypes

    _ctypes.CDLL(str(_compiler), mode=_ctypes.RTLD_GLOBAL)


def __getattr__(name: str) -> object:
    # modrt.artifact is imported on first use: json and hashing cost import time.
    if name == "artifact":
        import importlib

        return importlib.import_module(".artifact", __name__)
    # Pinned host memory needs numpy: imported on first use.
    if name in ("pinned_empty", "pinned_memory", "PinnedArray"):
        from . import pinned

        return getattr(pinned, name)
    raise AttributeError(f"module 'modrt' has no attribute '{name}'")


__all__ = [
    "CompileError",
    "__version__",
    "checked",
    "Device",
    "Error",
    "Event",
    "Graph",
    "Function",
    "Module",
    "Payload",
    "SignatureError",
    "PinnedArray",
    "SourceNotCheckedWarning",
    "CompileWarning",
    "Stream",
    "Tensor",
    "artifact",
    "backend",
    "compile",
    "cpu",
    "current_stream",
    "device",
    "empty",
    "from_dlpack",
    "get_global_func",
    "load_module",
    "load_module_from_bytes",
    "pinned_empty",
    "pinned_memory",
    "register_func",
    "stream",
    "target",
    "tensor",
]

# Last: entry points run by the autoloader see the whole modrt namespace
# (modrt.artifact and the rest).
backend.autoload()
