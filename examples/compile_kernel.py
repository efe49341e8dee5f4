"""A kernel written as a string, built and launched on the device: torch.<device>.compile_kernel
(vendor.h ABI 2.6, TB_EXTENSION_PROGRAMS), here in OpenCL C on the opencl vendor; and a kernel
that reports an index out of range as a device fault (TB_FAULT_PARAM, ABI 2.7).

    TORCH_BACKEND_VENDOR=opencl python examples/compile_kernel.py

The docs build runs this file (docs/compile_distributed.rst) and shows what it prints.
"""

import torch

import torch_backend

device = torch_backend.vendor_info()["device_type"]
module = getattr(torch, device)

# Device memory parameters are __global pointers; scalars are OpenCL C scalars, converted
# from Python numbers to the parameter's type.  Each work item checks its index: the grid may
# be rounded up to whole groups.
source = """
__kernel void swish(__global const float *x, __global float *y, float beta, ulong n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = x[i] / (1.0f + exp(-beta * x[i]));
}
"""
swish = module.compile_kernel(source, "swish")
print(swish)

x = torch.linspace(-4, 4, 9, device=device)
y = torch.empty_like(x)
swish(x, y, 1.0, x.numel(), threads=x.numel())  # on the current stream, like any kernel
print("kernel:", [round(v, 4) for v in y.tolist()])
print("silu:  ", [round(v, 4) for v in torch.nn.functional.silu(x.cpu()).tolist()])
torch.testing.assert_close(y.cpu(), torch.nn.functional.silu(x.cpu()))

# A source that does not compile raises with the compiler's log.
try:
    module.compile_kernel("__kernel void k(__global float *y) { y[0] = oops; }", "k")
except RuntimeError as error:
    print("build error:", next(line for line in str(error).splitlines() if "oops" in line))

# A kernel that may meet a bad index declares TB_FAULT_PARAM (the vendor's parameters: the
# call passes the others) and reports it with TB_FAULT_INDEX: the next synchronizing call
# raises naming the kernel, and the device stays faulted until reset_device, as after a
# failing kernel of the vendor's own.
source = """
__kernel void take(__global const float *x, __global const long *index, __global float *y,
                   long n, TB_FAULT_PARAM) {
  size_t i = get_global_id(0);
  long j = index[i];
  if (j < 0 || j >= n) {
    TB_FAULT_INDEX(j, n);
    return;
  }
  y[i] = x[j];
}
"""
take = module.compile_kernel(source, "take")
index = torch.tensor([8, 0, 42], device=device)
take(x, index, y, x.numel(), threads=index.numel())
try:
    module.synchronize()
except torch.AcceleratorError as error:
    print("fault:", str(error).splitlines()[0])
module.reset_device()
take(x, index[:2], y, x.numel(), threads=2)
print("after reset:", [round(v, 4) for v in y[:2].tolist()])
