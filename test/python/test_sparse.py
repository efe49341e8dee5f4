"""Sparse tensors on the device: built there, kept there, computed as on the CPU.

A sparse COO tensor on the device holds its indices and values as device tensors. A
compressed one (CSR, CSC, BSR, BSC) holds its compressed indices, plain indices and values the
same way. Their operators run on the CPU's sparse kernels through the sparse keys' fallback
(csrc/aten/Sparse.cpp), and their results come back to the device. Every test compares the
device's result, its layout and its placement with the CPU's.
"""

from __future__ import annotations

import pytest
import torch
from conftest import DEV

INDICES = torch.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])  # (0, 2) twice: uncoalesced
VALUES = torch.tensor([3.0, 4.0, 5.0, 1.0])
SIZE = (2, 3)


def sparse(device: str, values: torch.Tensor = VALUES) -> torch.Tensor:
    return torch.sparse_coo_tensor(INDICES, values, SIZE, device=device)


def check(device_result: torch.Tensor, cpu_result: torch.Tensor) -> None:
    assert device_result.device.type == DEV
    assert device_result.layout == cpu_result.layout
    if device_result.is_sparse:
        assert device_result._indices().device == device_result.device
        assert device_result._values().device == device_result.device
        device_result, cpu_result = device_result.to_dense(), cpu_result.to_dense()
    torch.testing.assert_close(device_result.cpu(), cpu_result)


def test_construction_keeps_the_parts_on_the_device():
    s = sparse(DEV)
    assert s.is_sparse and s.device.type == DEV
    assert s._indices().device == s.device and s._values().device == s.device
    assert (s.sparse_dim(), s.dense_dim(), s._nnz(), s.is_coalesced()) == (2, 0, 4, False)
    check(s, sparse("cpu"))


def test_to_and_from_the_cpu_and_dense():
    cpu = sparse("cpu")
    moved = cpu.to(DEV)
    check(moved, cpu)
    back = moved.cpu()
    assert back.device.type == "cpu" and back.is_sparse
    torch.testing.assert_close(back.to_dense(), cpu.to_dense())
    dense = torch.randn(3, 4)
    check(dense.to(DEV).to_sparse(), dense.to_sparse())
    check(sparse(DEV).to_dense(), cpu.to_dense())


def test_coalesce_sums_duplicates():
    s = sparse(DEV).coalesce()
    assert s.is_coalesced() and s._nnz() == 3
    check(s, sparse("cpu").coalesce())
    torch.testing.assert_close(s._indices().cpu(), sparse("cpu").coalesce()._indices())


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a * b,
        lambda a, b: a * 2.5,
        lambda a, b: a - b,
        lambda a, b: torch.sparse.sum(a),
        lambda a, b: a.t(),
        lambda a, b: a.neg(),
    ],
    ids=["add", "mul", "mul_scalar", "sub", "sparse_sum", "t", "neg"],
)
def test_arithmetic_matches_the_cpu(op):
    other = torch.tensor([1.0, -2.0, 0.5, 2.0])
    check(op(sparse(DEV), sparse(DEV, other)), op(sparse("cpu"), sparse("cpu", other)))


def test_in_place_updates_the_device_tensor():
    s, c = sparse(DEV), sparse("cpu")
    s.mul_(3.0)
    c.mul_(3.0)
    check(s, c)
    s.zero_()
    assert s._nnz() == 0 and s.device.type == DEV


def test_mm_with_a_dense_operand():
    dense = torch.randn(3, 4)
    for fn in (
        torch.sparse.mm,
        torch.mm,
        lambda a, b: torch.sparse.addmm(torch.ones(2, 4, device=b.device), a, b),
    ):
        check(fn(sparse(DEV), dense.to(DEV)), fn(sparse("cpu"), dense))


def test_sparse_mm_backward_matches_the_cpu():
    dense = torch.randn(3, 4)
    grads = {}
    for device in ("cpu", DEV):
        s = sparse(device).coalesce().requires_grad_()
        d = dense.to(device, copy=True).requires_grad_()
        torch.sparse.mm(s, d).pow(2).sum().backward()
        grads[device] = (s.grad, d.grad)
    check(grads[DEV][0], grads["cpu"][0])
    check(grads[DEV][1], grads["cpu"][1])


def test_a_sparse_tensor_on_another_device_is_refused():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.sparse.mm(sparse(DEV), torch.randn(3, 4))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mm(torch.randn(3, 2), sparse(DEV))  # the host operand first


CROW, COL, CSR_VALUES = (
    torch.tensor([0, 2, 3]),
    torch.tensor([0, 2, 1]),
    torch.tensor([1.0, 2.0, 3.0]),
)


def csr(device: str) -> torch.Tensor:
    return torch.sparse_csr_tensor(CROW, COL, CSR_VALUES, SIZE, device=device)


def check_compressed(device_result: torch.Tensor, cpu_result: torch.Tensor) -> None:
    assert device_result.device.type == DEV and device_result.layout == cpu_result.layout
    for part in ("crow_indices", "col_indices", "ccol_indices", "row_indices"):
        if cpu_result.layout in (torch.sparse_csr, torch.sparse_bsr) and part.startswith(
            ("ccol", "row")
        ):
            continue
        if cpu_result.layout in (torch.sparse_csc, torch.sparse_bsc) and part.startswith(
            ("crow", "col")
        ):
            continue
        torch.testing.assert_close(
            getattr(device_result, part)().cpu(), getattr(cpu_result, part)()
        )
    assert device_result.values().device == device_result.device
    torch.testing.assert_close(device_result.to_dense().cpu(), cpu_result.to_dense())


def test_csr_construction_and_copies():
    s = csr(DEV)
    assert s.crow_indices().device == s.device and s._nnz() == 3
    check_compressed(s, csr("cpu"))
    check_compressed(csr("cpu").to(DEV), csr("cpu"))
    back = s.cpu()
    assert back.layout == torch.sparse_csr and back.device.type == "cpu"
    torch.testing.assert_close(back.to_dense(), csr("cpu").to_dense())


def test_dense_to_compressed_layouts():
    dense = torch.tensor(
        [[0.0, 1.0, 0.0, 2.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 4.0, 5.0], [0.0, 6.0, 0.0, 0.0]]
    )
    device = dense.to(DEV)
    check_compressed(device.to_sparse_csr(), dense.to_sparse_csr())
    check_compressed(device.to_sparse_csc(), dense.to_sparse_csc())
    check_compressed(device.to_sparse_bsr((2, 2)), dense.to_sparse_bsr((2, 2)))
    check(device.to_sparse_csr().to_sparse(), dense.to_sparse_csr().to_sparse())


def test_csr_arithmetic_and_mm():
    dense = torch.randn(3, 4)
    check(csr(DEV) @ dense.to(DEV), csr("cpu") @ dense)
    check_compressed(csr(DEV) * 2.0, csr("cpu") * 2.0)
    check_compressed(csr(DEV) + csr(DEV), csr("cpu") + csr("cpu"))
    s, c = csr(DEV), csr("cpu")
    s.mul_(-1.5)
    c.mul_(-1.5)
    check_compressed(s, c)
