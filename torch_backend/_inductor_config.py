"""What torch_backend's Inductor backend generates for the device, as a torch ConfigModule.

Registered as the device's ``device_custom_config``: Inductor puts it in the key of its graph
caches, so a graph compiled while generated kernels were run one way is never reused by a
process that runs them another way, nor by another torch_backend release.
"""

import sys

from torch.utils._config_module import install_config_module

#: How generated kernels run: "queued" (host functions on the stream), "barrier" (the host
#: waits for the stream, then runs them) or "none" (no generated kernels: ATen graphs).
kernels: str = "none"

#: torch_backend's version and a hash of its code generation (compile.py).
version: str = ""

install_config_module(sys.modules[__name__])
