"""The names `modrt.runtime` always had, from the modules that define them
(nothing inside the package imports this module): devices (modrt.devices),
tensors (modrt.tensors), modules, payloads and checked mode (modrt.modules)."""

from __future__ import annotations

from .devices import Device as Device
from .devices import cpu as cpu
from .devices import device as device
from .devices import device_attribute_names as device_attribute_names
from .devices import device_kinds as device_kinds
from .devices import device_type_of as device_type_of
from .modules import Module as Module
from .modules import Payload as Payload
from .modules import checked as checked
from .modules import load_module as load_module
from .modules import load_module_from_bytes as load_module_from_bytes
from .tensors import DLPACK_VERSION as DLPACK_VERSION
from .tensors import Tensor as Tensor
from .tensors import empty as empty
from .tensors import from_dlpack as from_dlpack
from .tensors import tensor as tensor
