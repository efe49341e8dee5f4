"""Errors at the call, as CUDA raises them: the checks ATen's CPU and CUDA kernels make on the
host -- argument values, enum strings, list lengths, dtypes, a boolean mask against the values
it writes -- run before any vendor kernel (csrc/aten/HostChecks.h, called by the generated
wrappers), so a bad call raises the CPU's exception at the call and leaves the device working.
Before, some of these reached a kernel that computed something else (uniform_(3, -1), an
unknown gelu approximation) or found the problem while it ran and faulted the device for every
later call (a mask put of the wrong length, a fused optimizer's missing state list).

Each case runs the bad call, then uses the device: a device fault would fail that use."""

from __future__ import annotations

import re
import warnings

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV as DEVICE

import torch_backend


def alive() -> None:
    """The device still computes: no fault was left behind."""
    x = torch.arange(4.0, device=DEVICE)
    assert (x * 2 + 1).cpu().tolist() == [1.0, 3.0, 5.0, 7.0]
    torch.accelerator.synchronize()


def raises_like_cpu(call, error=RuntimeError, match: str | None = None) -> None:
    """``call(device)`` raises the exception class ``call("cpu")`` raises, with ``match`` in
    both messages (the CPU's text, unless given), at the call; the device lives on."""
    with pytest.raises(error) as on_cpu:
        call("cpu")
    expected = match if match is not None else str(on_cpu.value).split("\n")[0]
    with pytest.raises(error, match=re.escape(expected)):
        call(DEVICE)
        torch.accelerator.synchronize()  # a fault found later would surface here instead
    alive()


def test_mask_put_of_the_wrong_length_raises_at_the_call():
    a = torch.arange(5.0)
    values = torch.tensor([1.0, 2.0, 3.0])  # 4 elements are > 0.5

    def put(device: str) -> None:
        x = a.to(device)
        x[x > 0.5] = values.to(device)

    raises_like_cpu(put, match="shape mismatch: value tensor of shape [3] cannot be broadcast")


@pytest.mark.parametrize(
    "case",
    ["1d mask, matching values", "2d mask", "mask and index", "mask, one value", "rows mask"],
)
def test_mask_puts_that_fit_match_the_cpu(case):
    torch.manual_seed(0)
    base = torch.randn(4, 5)

    def put(device: str) -> torch.Tensor:
        x = base.to(device)
        if case == "1d mask, matching values":
            flat = x.view(-1)
            mask = flat > 0
            flat[mask] = torch.arange(float(int(mask.sum())), device=device)
        elif case == "2d mask":
            mask = x > 0.5
            x[mask] = -torch.ones(int(mask.sum()), device=device)
        elif case == "mask and index":
            rows = torch.tensor([True, False, True, True], device=device)
            x[rows, torch.tensor([0, 4, 1], device=device)] = torch.tensor(
                [7.0, 8.0, 9.0], device=device
            )
        elif case == "mask, one value":
            x[x < 0] = torch.tensor([0.0], device=device)
        else:  # rows selected by a 1-d mask, the values broadcast along them
            x[torch.tensor([True, False, True, False], device=device)] = torch.arange(
                5.0, device=device
            )
        return x.cpu()

    torch.testing.assert_close(put(DEVICE), put("cpu"))
    alive()


def test_mask_of_the_wrong_shape_raises_index_error():
    def put(device: str) -> None:
        x = torch.zeros(3, 4, device=device)
        x[torch.tensor([True, False], device=device)] = torch.ones(4, device=device) * 2

    raises_like_cpu(put, IndexError, match="The shape of the mask [2] at index 0 does not match")


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("uniform_ from > to", lambda d: torch.empty(5, device=d).uniform_(3, -1)),
        ("uniform_ overflow", lambda d: torch.empty(5, device=d).uniform_(-3e38, 3e38)),
        ("normal_ std < 0", lambda d: torch.empty(5, device=d).normal_(0, -1)),
        ("bernoulli_ p > 1", lambda d: torch.empty(5, device=d).bernoulli_(1.5)),
        ("bernoulli_ p < 0", lambda d: torch.empty(5, device=d).bernoulli_(-0.5)),
    ],
)
def test_random_operators_refuse_their_invalid_ranges(name, call):
    raises_like_cpu(call)


@pytest.mark.parametrize("backward", [False, True], ids=["gelu", "gelu_backward"])
def test_gelu_refuses_an_unknown_approximation(backward):
    def call(device: str) -> None:
        x = torch.randn(4, device=device)
        if backward:
            torch.ops.aten.gelu_backward(x, x, approximate="asdf")
        else:
            F.gelu(x, approximate="asdf")

    raises_like_cpu(call, match="approximate argument must be either none or tanh.")


@pytest.mark.parametrize("loss", ["nll_loss", "nll_loss backward", "nll_loss2d"])
def test_nll_loss_refuses_a_weight_of_another_dtype(loss):
    def call(device: str) -> None:
        weight = torch.ones(3, dtype=torch.half, device=device)
        if loss == "nll_loss2d":
            x = torch.randn(2, 3, 4, 4, device=device)
            target = torch.zeros(2, 4, 4, dtype=torch.long, device=device)
            F.nll_loss(x, target, weight=weight)
            return
        x = torch.randn(4, 3, device=device).log_softmax(1)
        target = torch.tensor([0, 1, 2, 0], device=device)
        if loss == "nll_loss":
            F.nll_loss(x, target, weight=weight)
        else:
            torch.ops.aten.nll_loss_backward(
                torch.tensor(1.0, device=device), x, target, weight, 1, -100,
                torch.tensor(4.0, device=device),
            )  # fmt: skip

    raises_like_cpu(call, match="expected scalar type Float but found Half")


def _sgd(device: str, grads: int = 1, buffers: int = 0, momentum: float = 0.0) -> None:
    params = [torch.randn(3, device=device)]
    torch._fused_sgd_(
        params,
        [torch.randn(3, device=device) for _ in range(grads)],
        [torch.randn(3, device=device) for _ in range(buffers)],
        weight_decay=0.0, momentum=momentum, lr=0.1, dampening=0.0, nesterov=False,
        maximize=False, is_first_step=True,
    )  # fmt: skip


def _adam(device: str, steps: int = 1, max_sqs: int = 0, amsgrad: bool = False,
          grad_dtype: torch.dtype = torch.float32) -> None:  # fmt: skip
    def t() -> torch.Tensor:
        return torch.zeros(3, device=device)

    torch._fused_adam_(
        [t()], [torch.randn(3, dtype=grad_dtype, device=device)], [t()], [t()],
        [t() for _ in range(max_sqs)],
        [torch.tensor(1.0, device=device) for _ in range(steps)],
        lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=amsgrad,
        maximize=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("case", "call", "message"),
    [
        ("sgd: no grads", lambda d: _sgd(d, grads=0), "grads has 0 tensors, expected 1"),
        ("sgd: momentum, no buffers", lambda d: _sgd(d, momentum=0.9),
         "momentum_buffer_list has 0 tensors, expected 1"),
        ("sgd: buffers, no momentum", lambda d: _sgd(d, buffers=1),
         "momentum_buffer_list has 1 tensors, expected none (momentum is 0)"),
        ("adam: no steps", lambda d: _adam(d, steps=0), "state_steps has 0 tensors, expected 1"),
        ("adam: amsgrad, no max_exp_avg_sqs", lambda d: _adam(d, amsgrad=True),
         "max_exp_avg_sqs has 0 tensors, expected 1"),
        ("adam: max_exp_avg_sqs, no amsgrad", lambda d: _adam(d, max_sqs=1),
         "max_exp_avg_sqs has 1 tensors, expected none (amsgrad is False)"),
        ("adam: a grad of another dtype", lambda d: _adam(d, grad_dtype=torch.float64),
         "expected scalar type Float but found Double"),
    ],
    ids=lambda value: value if isinstance(value, str) and ":" in value else "",
)  # fmt: skip
def test_fused_optimizers_check_their_lists_at_the_call(case, call, message):
    # The wrapper's check names the list; where the vendor has no such kernel, the CPU fallback
    # runs the call and the CPU's kernel refuses it in its own words.
    op = "_fused_sgd_" if case.startswith("sgd") else "_fused_adam_"
    native = torch_backend.op_coverage().get(op) == "native"
    with pytest.raises(RuntimeError) as on_cpu:
        call("cpu")
    expected = message if native else str(on_cpu.value).split("\n")[0]
    del on_cpu  # its traceback holds the call's tensors
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        call(DEVICE)
        torch.accelerator.synchronize()
    alive()


@pytest.mark.parametrize("dtype", [torch.long, torch.bool])
def test_mean_refuses_an_out_its_result_cannot_cast_to(dtype):
    def call(device: str) -> None:
        x = torch.randn(3, 4, device=device)
        torch.mean(x, 0, out=torch.empty(4, dtype=dtype, device=device))

    raises_like_cpu(call)


def test_mean_into_an_out_it_casts_to_matches_the_cpu():
    x = torch.randn(3, 4)
    for dtype in (torch.half, torch.float64):
        got = torch.mean(x.to(DEVICE), 0, out=torch.empty(4, dtype=dtype, device=DEVICE))
        torch.testing.assert_close(got.cpu(), torch.mean(x, 0, out=torch.empty(4, dtype=dtype)))
    alive()


def test_a_uint8_mask_put_warns_as_on_the_cpu():
    def put(device: str) -> list[str]:
        x = torch.arange(4.0, device=device)
        mask = torch.tensor([1, 0, 1, 0], dtype=torch.uint8, device=device)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x[mask] = torch.tensor([5.0, 6.0], device=device)
        assert x.cpu().tolist() == [5.0, 1.0, 6.0, 3.0]
        # the text without "(Triggered internally at <file>:<line>.)"
        return [str(w.message).split(" (Triggered")[0] for w in caught if "uint8" in str(w.message)]

    on_device = put(DEVICE)
    assert on_device and set(on_device) == set(put("cpu"))
