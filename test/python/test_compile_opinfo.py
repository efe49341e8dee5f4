"""torch.compile's generated OpenCL C (torch_backend/inductor_opencl.py) against eager, on
PyTorch's own sample inputs (OpInfo): each operator below compiled alone on the device and
compared with the same call in eager mode there, for float32, int64 and half where the operator
takes them.  The list covers what the generator writes: math functions, integer division and
remainders, comparisons and casts, masks and padding, gathers, reductions (argmax, var_mean,
prod, any, amax), normalisations, atomic adds (scatter_add, index_add), and an operator it
hands back to the vendor (i0).  Runs where Inductor generates OpenCL C (the opencl vendor)."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV
from torch.testing._internal.common_methods_invocations import op_db

from torch_backend import compile as tb_compile

OPS = [
    "abs", "acos", "add", "addcmul", "amax", "any", "argmax", "argmin", "atan2", "bitwise_and",
    "bitwise_left_shift", "ceil", "clamp", "cos", "cumsum", "div", "eq", "erf", "exp", "expm1",
    "floor_divide", "fmod", "gather", "hypot", "i0", "index_add", "index_select", "isnan",
    "lerp", "log1p", "log_softmax", "logical_xor", "masked_fill", "maximum", "mean", "minimum",
    "mul", "neg", "nn.functional.embedding", "nn.functional.gelu", "nn.functional.group_norm",
    "nn.functional.hardswish", "nn.functional.interpolate", "nn.functional.layer_norm",
    "nn.functional.pad", "nn.functional.silu", "nn.functional.softplus", "pow", "prod",
    "remainder", "round", "rsqrt", "scatter_add", "sigmoid", "sign", "softmax", "sqrt", "sum",
    "tanh", "tril", "trunc", "var_mean", "where",
]  # fmt: skip
DTYPES = (torch.float32, torch.int64, torch.float16)
CASES = [op for op in op_db if op.name in OPS and "complex" not in op.variant_test_name]

pytestmark = pytest.mark.skipif(
    not tb_compile.opencl_programs(), reason=f"Inductor generates no OpenCL C for {DEV}"
)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("op", CASES, ids=lambda op: f"{op.name}.{op.variant_test_name}".strip("."))
def test_compiled_operator_equals_eager(op):
    ran = 0
    for dtype in DTYPES:
        if dtype not in op.supported_dtypes(DEV):
            continue
        for sample in list(op.sample_inputs(DEV, dtype))[:2]:
            fn = op.get_op()
            try:
                eager = fn(sample.input, *sample.args, **sample.kwargs)
            except (RuntimeError, NotImplementedError):
                continue  # the device refuses it eagerly too (a dtype it lacks)
            torch._dynamo.reset()
            compiled = torch.compile(lambda x, *a, _fn=fn, **k: _fn(x, *a, **k), dynamic=False)
            got = compiled(sample.input, *sample.args, **sample.kwargs)
            tolerance = (
                {"atol": 1e-2, "rtol": 5e-3}
                if dtype == torch.float16
                else {"atol": 1e-4, "rtol": 1e-4}
            )
            torch.testing.assert_close(
                got, eager, equal_nan=True, **tolerance, msg=lambda m, d=dtype: f"{d}: {m}"
            )
            ran += 1
    assert ran, f"no sample of {op.name} ran on {DEV}"
