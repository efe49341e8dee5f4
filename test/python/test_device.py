"""Loading the vendor as a PyTorch device: naming, device queries, tensors on the device."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV, MODULE, ONCE, run_python

import torch_backend


def test_vendor_info():
    info = torch_backend.vendor_info()
    assert info["device_type"] == DEV
    assert info["abi_version"] == "2.7"
    assert info["library"].endswith(".so")
    assert info["device_count"] == MODULE.device_count() >= 1
    assert info["vendor"] and info["version"]


def test_device_is_registered_under_the_vendor_name():
    assert torch._C._get_privateuse1_backend_name() == DEV
    assert torch.device(DEV).type == DEV
    assert getattr(torch, DEV) is MODULE
    assert MODULE.is_available()


def test_device_queries():
    assert MODULE.current_device() == 0
    props = MODULE.get_device_properties(0)
    assert props.name == MODULE.get_device_name(0) and props.name
    assert props.total_memory > 0
    free, total = MODULE.mem_get_info(0)
    assert 0 <= free <= total
    with pytest.raises(torch.AcceleratorError, match=rf"{DEV}: invalid device index 99"):
        MODULE.get_device_properties(99)


def test_tensor_and_module_methods():
    x = torch.arange(6.0)
    y = getattr(x, DEV)()
    assert getattr(y, f"is_{DEV}") and not getattr(x, f"is_{DEV}")
    assert y.device == torch.device(DEV, 0)
    module = getattr(torch.nn.Linear(2, 3), DEV)()
    assert module.weight.device.type == DEV


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]
)
def test_roundtrip_dtypes(dtype):
    x = (torch.arange(37) % 5).to(dtype)
    assert torch.equal(x.to(DEV).cpu(), x)


def test_roundtrip_layouts():
    x = torch.randn(5, 7, 3)
    on_device = x.to(DEV)
    assert torch.equal(on_device.permute(2, 0, 1).cpu(), x.permute(2, 0, 1))
    assert torch.equal(on_device[1:4, ::2].cpu(), x[1:4, ::2])
    assert torch.equal(on_device.transpose(0, 1).contiguous().cpu(), x.transpose(0, 1))
    strided = torch.empty(7, 5, device=DEV).t()
    strided.copy_(x[:, :, 0])
    assert torch.equal(strided.cpu(), x[:, :, 0])
    half = torch.empty(5, 7, dtype=torch.float16, device=DEV)
    half.copy_(x[:, :, 1])  # dtype conversion on the way in
    assert torch.equal(half.cpu(), x[:, :, 1].half())


def test_copies_between_device_tensors():
    x = torch.randn(64, 33)
    a = x.to(DEV)
    b = torch.empty_like(a)
    b.copy_(a)
    assert torch.equal(b.cpu(), x)
    c = torch.empty(33, 64, device=DEV).t()
    c.copy_(a)
    assert torch.equal(c.cpu(), x)
    assert torch.equal(a.double().cpu(), x.double())


def test_copies_of_conjugate_and_negative_views():
    x = torch.randn(6, dtype=torch.complex64)
    r = torch.randn(6)
    # host -> device, device -> host and device -> device, with the bit on either side
    assert torch.equal(x.conj().to(DEV).cpu(), x.conj().resolve_conj())
    assert torch.equal(x.to(DEV).conj().cpu().resolve_conj(), x.conj().resolve_conj())
    target = torch.empty(6, dtype=torch.complex64, device=DEV)
    target.copy_(x.to(DEV).conj())
    assert torch.equal(target.cpu(), x.conj().resolve_conj())
    assert torch.equal(torch._neg_view(r).to(DEV).cpu(), -r)
    negated = torch.empty(6, device=DEV)
    negated.copy_(torch._neg_view(r.to(DEV)))
    assert torch.equal(negated.cpu(), -r)
    into_view = torch.zeros(6, dtype=torch.complex64, device=DEV)
    into_view.conj().copy_(x)  # writes conj(x) into the storage
    assert torch.equal(into_view.cpu(), x.conj().resolve_conj())


def test_scalars_fills_and_resize():
    x = torch.zeros(4, 5, device=DEV)
    assert x.sum().item() == 0.0
    x.fill_(2.5)
    assert torch.equal(x.cpu(), torch.full((4, 5), 2.5))
    x[:, 1].fill_(-1)  # strided fill
    expected = torch.full((4, 5), 2.5)
    expected[:, 1] = -1
    assert torch.equal(x.cpu(), expected)
    x.zero_()
    assert torch.equal(x.cpu(), torch.zeros(4, 5))
    assert torch.tensor(7, device=DEV).item() == 7
    y = torch.arange(4.0, device=DEV)
    y.resize_(9)
    assert torch.equal(y[:4].cpu(), torch.arange(4.0))
    assert y.shape == (9,)


def test_views_share_storage():
    x = torch.zeros(3, 4, device=DEV)
    v = x.view(12)
    v[5] = 9  # index_put through the fallback writes back into the view
    assert x.cpu()[1, 1] == 9
    assert x.reshape(2, 6).data_ptr() == x.data_ptr()
    assert x.as_strided((2, 2), (4, 1), 1).cpu().tolist() == [[0, 0], [9, 0]]


def test_compute_matches_cpu():
    torch.manual_seed(0)
    a, b = torch.randn(8, 5), torch.randn(5, 3)
    got = (getattr(a, DEV)() @ getattr(b, DEV)()).relu().sum(dim=0).cpu()
    torch.testing.assert_close(got, (a @ b).relu().sum(dim=0))


def test_empty_and_factory_functions():
    assert torch.empty(0, device=DEV).numel() == 0
    assert torch.ones(2, 3, device=DEV).cpu().sum() == 6
    assert torch.full((3,), 4, device=DEV, dtype=torch.int32).cpu().tolist() == [4, 4, 4]


@ONCE  # autograd's device thread and the interpreter's exit: the same for every vendor
def test_process_exits_cleanly_right_after_backward():
    """A script whose last statement is a backward pass on the device exits with status 0
    (PyTorch's autograd device thread releases the graph after waking the caller; at exit it
    must get the GIL before finalization, see torch_backend._let_autograd_threads_finish)."""
    script = f"""
        import torch
        x = torch.randn(64, device="{DEV}", requires_grad=True)
        (x * x).sum().backward()
        """
    for _ in range(6):  # the race lost about every other run
        result = run_python(script)
        assert result.returncode == 0, result.stderr[-2000:]
