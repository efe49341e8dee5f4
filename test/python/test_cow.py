"""Copy-on-write clones on the device (``torch._lazy_clone``), as ATen's COW storages give them.

A lazy clone shares its source's device memory until one of the two is written. Then the
written one gets its own copy, and the other keeps the values it had. Reads do not copy:
``.cpu()``, copies out of the tensor, views, and operators run by the CPU fallback. A kernel
call copies a shared storage before the kernel sees it, because the call does not say which
tensors the kernel writes. The values are right either way.
"""

from __future__ import annotations

import torch
from conftest import DEV, MODULE, fallback_ops

is_cow = torch._C._is_cow_tensor
address = torch._C._data_address  # Tensor.data_ptr() would take the mutable pointer: a copy


def pair() -> tuple[torch.Tensor, torch.Tensor]:
    cpu = torch.arange(12.0).view(3, 4) / 16
    return cpu, cpu.to(DEV)


def test_a_lazy_clone_shares_memory_until_written():
    cpu, dev = pair()
    MODULE.synchronize()
    before = MODULE.memory_allocated()
    clone = torch._lazy_clone(dev)
    assert is_cow(clone) and is_cow(dev)
    assert address(clone) == address(dev)
    assert MODULE.memory_allocated() == before, "a lazy clone allocated device memory"
    clone.mul_(2)  # the write gives the clone its own memory
    assert not is_cow(clone) and address(clone) != address(dev)
    torch.testing.assert_close(clone.cpu(), cpu * 2)
    torch.testing.assert_close(dev.cpu(), cpu)


def test_writing_the_source_leaves_the_clone():
    cpu, dev = pair()
    clone = torch._lazy_clone(dev.t())
    dev.add_(100)
    assert clone.stride() == (1, 4)
    torch.testing.assert_close(clone.cpu(), cpu.t())
    torch.testing.assert_close(dev.cpu(), cpu + 100)


def test_reads_do_not_copy():
    cpu, dev = pair()
    clone = torch._lazy_clone(dev)
    torch.testing.assert_close(clone.cpu(), cpu)
    torch.testing.assert_close(clone[1:].cpu(), cpu[1:])
    target = torch.empty_like(dev)
    target.copy_(clone)
    torch.testing.assert_close(target.cpu(), cpu)
    assert is_cow(clone) and is_cow(dev)
    for name, _ in fallback_ops(1):
        torch.testing.assert_close(getattr(torch, name)(clone).cpu(), getattr(torch, name)(cpu))
    assert is_cow(clone) and is_cow(dev), "the CPU fallback copied a storage it only read"


def test_a_kernel_call_gets_its_own_copy():
    cpu, dev = pair()
    clone = torch._lazy_clone(dev)
    out = torch.empty_like(dev)
    torch.mul(clone, 3, out=out)
    torch.testing.assert_close(out.cpu(), cpu * 3)
    clone.zero_()
    torch.testing.assert_close(dev.cpu(), cpu)
    torch.testing.assert_close(clone.cpu(), torch.zeros_like(cpu))


def test_the_last_holder_keeps_the_memory_without_a_copy():
    cpu, dev = pair()
    clone = torch._lazy_clone(dev)
    pointer = address(dev)
    del dev
    clone.add_(1)  # the only reference left: it takes the memory, no copy
    assert address(clone) == pointer and not is_cow(clone)
    torch.testing.assert_close(clone.cpu(), cpu + 1)
