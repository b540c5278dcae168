"""tinygrad's device `MODRT` (`DEV=MODRT:opencl`, `Device["MODRT:webgpu"]`).

tinygrad finds a device NAME by importing `tinygrad.runtime.ops_<name>` and
taking its `<Name>Device` class; the `modrt-tinygrad` wheel installs this file
there. The device itself lives in modrt_tinygrad.device.
"""

from modrt_tinygrad.device import ModrtDevice

__all__ = ["ModrtDevice"]
