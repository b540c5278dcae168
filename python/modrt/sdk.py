"""modrt.sdk: what a backend's Python hook builds on, in one public module.

A hook (`modrt.backend.<x>`, in-tree under backends/<x>/python/ or installed
from its own distribution) imports this module only: the backend record and
its registration, the payload and target types, the codegen helpers (running
a compiler, per-function sources, signatures) and the compile-time check
helpers. docs/BACKEND_GUIDE.md lists the files a backend writes.
"""

from __future__ import annotations

from ._codegen import Source as Source
from ._codegen import ToolError as ToolError
from ._codegen import find_tool as find_tool
from ._codegen import per_function as per_function
from ._codegen import run_tool as run_tool
from ._codegen import text_of as text_of
from ._codegen import text_shaders as text_shaders
from ._compile_errors import CompileError as CompileError
from ._compile_errors import CompileWarning as CompileWarning
from ._compile_errors import SignatureError as SignatureError
from ._ffi import Function as Function
from ._ffi import call as call
from ._ffi import get_global_func as get_global_func
from ._ffi import register_func as register_func
from ._locate import WHEEL_ROOTS as WHEEL_ROOTS
from ._registry import Backend as Backend
from ._registry import Reflector as Reflector
from ._signature import Arg as Arg
from ._signature import check_signature as check_signature
from ._signature import dtype_bytes as dtype_bytes
from ._signature import normalize_signature as normalize_signature
from ._signature import parse_signature as parse_signature
from ._validate import display_name as display_name
from ._validate import enabled as checks_enabled
from ._validate import function_names as function_names
from ._validate import not_checked as not_checked
from ._validate import tool_failed as tool_failed
from .backend import load_runtime as load_runtime
from .backend import register_in_tree as register_in_tree
from .backend import runtime_status as runtime_status
from .devices import Device as Device
from .devices import device as device
from .modules import Module as Module
from .modules import Payload as Payload
from .target import Target as Target
from .target import device_limits as device_limits

__all__ = [
    "Arg",
    "Backend",
    "call",
    "check_signature",
    "checks_enabled",
    "CompileError",
    "CompileWarning",
    "Device",
    "device",
    "device_limits",
    "display_name",
    "dtype_bytes",
    "find_tool",
    "Function",
    "function_names",
    "get_global_func",
    "load_runtime",
    "Module",
    "normalize_signature",
    "not_checked",
    "parse_signature",
    "Payload",
    "per_function",
    "Reflector",
    "register_func",
    "register_in_tree",
    "run_tool",
    "runtime_status",
    "SignatureError",
    "Source",
    "Target",
    "text_of",
    "text_shaders",
    "tool_failed",
    "ToolError",
    "WHEEL_ROOTS",
]
