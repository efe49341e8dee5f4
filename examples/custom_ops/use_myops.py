"""The custom-operator tutorial from Python (docs/custom_ops.rst): myops::mymuladd, declared in C
by myops_vendor.c, used like any PyTorch operator.

    TORCH_BACKEND_VENDOR=path/to/libtb_vendor_myops.so python use_myops.py
"""

from __future__ import annotations

import torch
from torch.library import opcheck

import torch_backend

# Loading the vendor defined the operator: torch.ops.<namespace>.<name>.
print(torch_backend.custom_ops()["myops::mymuladd"])
a = torch.randn(3, 4)
b = torch.randn(3, 4)
x = a.to("myops").requires_grad_()
y = b.to("myops").requires_grad_()

# Forward on the device, against the same math on the CPU.
out = torch.ops.myops.mymuladd(x, y, 2.0)
torch.testing.assert_close(out.cpu(), a * b + 2.0)

# Backward through myops::mymuladd_backward (the autograd formula torch_backend registered).
out.sum().backward()
torch.testing.assert_close(x.grad.cpu(), b)
torch.testing.assert_close(y.grad.cpu(), a)

# The checks PyTorch runs on custom operators: schema, fake tensors, AOT autograd.
# (test_autograd_registration supports CPU, CUDA and XPU tensors only.)
print(
    opcheck(
        torch.ops.myops.mymuladd.default,
        (x, y, 2.0),
        test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"),
    )
)

# torch.compile traces it with fake tensors, through the vendor's shape function.
compiled = torch.compile(
    lambda p, q: torch.ops.myops.mymuladd(p, q, 1.0).relu(), backend="aot_eager"
)
torch.testing.assert_close(compiled(x, y).cpu(), (a * b + 1.0).relu())

# Errors come from the shape function, named after the operator.
try:
    torch.ops.myops.mymuladd(x, y.t(), 2.0)
except RuntimeError as error:
    print("refused:", str(error).splitlines()[0])
print("launches:", torch_backend.kernel_counts())
print("myops ok")
