"""Random numbers: per-device Philox generators, seeding, determinism and state round-trips."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import DEV, MODULE
from test_graphs import needs_graphs

import torch_backend


def test_manual_seed_is_deterministic():
    MODULE.manual_seed(1234)
    a = torch.randn(100, device=DEV).cpu()
    MODULE.manual_seed(1234)
    b = torch.randn(100, device=DEV).cpu()
    c = torch.randn(100, device=DEV).cpu()
    assert torch.equal(a, b)
    assert not torch.equal(b, c)
    assert MODULE.initial_seed() == 1234


def test_torch_manual_seed_seeds_the_device():
    torch.manual_seed(7)
    a = torch.rand(50, device=DEV).cpu()
    torch.manual_seed(7)
    assert torch.equal(torch.rand(50, device=DEV).cpu(), a)


def test_state_round_trip():
    MODULE.manual_seed(99)
    torch.randn(10, device=DEV)
    state = MODULE.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu" and state.numel() == 16
    first = torch.randn(20, device=DEV).cpu()
    MODULE.set_rng_state(state)
    assert torch.equal(torch.randn(20, device=DEV).cpu(), first)


def test_explicit_generator():
    g = torch.Generator(device=DEV)
    assert g.device.type == DEV
    g.manual_seed(5)
    a = torch.randn(30, device=DEV, generator=g).cpu()
    g.manual_seed(5)
    b = torch.randn(30, device=DEV, generator=g).cpu()
    assert torch.equal(a, b)
    assert g.initial_seed() == 5
    clone = torch.Generator(device=DEV)
    clone.set_state(g.get_state())
    assert torch.equal(
        torch.rand(5, device=DEV, generator=g).cpu(),
        torch.rand(5, device=DEV, generator=clone).cpu(),
    )


def test_generator_offset_advances():
    g = torch.Generator(device=DEV)
    g.manual_seed(1)
    assert g.get_offset() == 0
    torch.rand(3, device=DEV, generator=g)
    assert g.get_offset() > 0


def test_dropout_and_random_ops_follow_the_seed():
    x = torch.ones(1000, device=DEV)
    MODULE.manual_seed(3)
    a = torch.nn.functional.dropout(x, 0.5).cpu()
    p = torch.randperm(10, device=DEV).cpu()
    MODULE.manual_seed(3)
    assert torch.equal(torch.nn.functional.dropout(x, 0.5).cpu(), a)
    assert torch.equal(torch.randperm(10, device=DEV).cpu(), p)


def test_seed_gives_fresh_seeds():
    MODULE.seed()
    first = MODULE.initial_seed()
    MODULE.seed()
    assert MODULE.initial_seed() != first


def test_per_device_generators(two_devices):
    MODULE.manual_seed_all(11)
    states = MODULE.get_rng_state_all()
    assert len(states) == MODULE.device_count()
    a0 = torch.randn(10, device=f"{DEV}:0").cpu()
    with MODULE.device(1):
        a1 = torch.randn(10, device=DEV).cpu()
    assert torch.equal(a0, a1)  # same seed, independent generators
    MODULE.set_rng_state_all(states)
    assert torch.equal(torch.randn(10, device=f"{DEV}:1").cpu(), a1)
    assert len(MODULE.default_generators) == MODULE.device_count()
    assert MODULE.default_generators[1].device == torch.device(DEV, 1)


def test_randint_stays_in_range_follows_the_seed_and_covers_int64():
    """torch.randint (random_.from): every value in [low, high), each value drawn, the same
    draws from the same seed, and Inductor's seed range (all of int64) without overflow."""
    MODULE.manual_seed(5)
    a = torch.randint(3, 9, (4000,), device=DEV)
    counts = torch.bincount(a.cpu(), minlength=9).tolist()
    assert counts[:3] == [0, 0, 0] and all(c > 400 for c in counts[3:]), counts
    MODULE.manual_seed(5)
    assert torch.equal(torch.randint(3, 9, (4000,), device=DEV).cpu(), a.cpu())
    f = torch.randint(-4, 4, (1000,), device=DEV, dtype=torch.float32).cpu()
    assert f.min() >= -4 and f.max() <= 3 and torch.equal(f, f.round())
    wide = torch.randint(-(2**63), 2**63 - 1, (1000,), device=DEV).cpu()
    assert (wide < 0).any() and (wide > 0).any() and wide.unique().numel() == 1000
    # the vendor's kernel or, through the fallback, ATen's CPU kernel says what is wrong
    with pytest.raises(RuntimeError, match=r"from 5 must be less than to 5|'from' to be less"):
        torch.randint(5, 5, (3,), device=DEV)


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.float32])
def test_bernoulli_masks_follow_the_seed_and_the_probability(dtype):
    """Dropout draws its mask into a bool tensor: every dtype keeps p of the elements."""
    MODULE.manual_seed(11)
    a = torch.empty(100_000, dtype=dtype, device=DEV).bernoulli_(0.3).cpu()
    MODULE.manual_seed(11)
    b = torch.empty(100_000, dtype=dtype, device=DEV).bernoulli_(0.3).cpu()
    assert torch.equal(a, b)
    assert set(a.double().unique().tolist()) <= {0.0, 1.0}
    assert abs(a.double().mean().item() - 0.3) < 0.01


@pytest.mark.skipif(DEV != "emu", reason="emu's draws depend only on seed, offset and shape")
def test_emu_bernoulli_is_the_same_in_every_dtype_and_layout():
    """emu's fast paths (contiguous float32, bool and uint8) and its general path (any layout)
    give element i the same bits."""
    masks = []
    for dtype, transposed in [(torch.float32, False), (torch.bool, False), (torch.uint8, False),
                              (torch.bool, True)]:  # fmt: skip
        MODULE.manual_seed(5)
        if transposed:
            t = torch.empty(301, 257, dtype=dtype, device=DEV).t()
        else:
            t = torch.empty(257, 301, dtype=dtype, device=DEV)
        masks.append(t.bernoulli_(0.5).cpu().bool())
    for mask in masks[1:]:
        assert torch.equal(mask, masks[0])


needs_philox_state = pytest.mark.skipif(
    not hasattr(torch.Generator, "philox_state"), reason="torch.Generator.philox_state: torch 2.14"
)


@needs_philox_state
def test_philox_state_reserves_from_the_generators_stream():
    g = torch.Generator(device=DEV)
    g.manual_seed(7)
    seed, offset, intragraph = g.philox_state(6)
    for tensor in (seed, offset, intragraph):
        assert (tensor.device.type, tensor.dtype, tensor.shape) == ("cpu", torch.int64, (1,))
    assert (seed.item(), offset.item(), intragraph.item()) == (7, 0, 0)
    assert g.philox_state(1)[1].item() == 8  # 6 values rounded up to a multiple of 4
    assert g.get_offset() == 12
    # Built-in random operators draw from the same stream, after the reservations.
    torch.rand(3, device=DEV, generator=g)
    after = g.get_offset()
    assert after > 12 and g.philox_state(4)[1].item() == after
    g.manual_seed(2**63 + 5)  # a uint64 seed, returned bit for bit
    assert g.philox_state(4)[0].item() & (2**64 - 1) == 2**63 + 5


@needs_philox_state
@needs_graphs
def test_philox_state_in_a_capture_is_the_state_each_replay_writes():
    g = MODULE.default_generators[0]
    MODULE.manual_seed(11)
    side = torch.Stream(device=DEV)
    graph = torch.accelerator.Graph()
    with side, graph:
        torch.rand(8, device=DEV)
        seed, offset, intragraph = g.philox_state(4)
        kept = (seed + offset) * 1  # device work reading them at replay
    assert seed.device.type == DEV and offset.device.type == DEV
    assert intragraph.device.type == "cpu" and intragraph.item() == 32  # after rand's 4 * 8
    MODULE.manual_seed(21)
    before = g.get_offset()
    graph.replay()
    assert seed.item() == 21 and offset.item() == before
    assert kept.item() == 21 + before


def _randint_runs_a_vendor_kernel() -> bool:
    torch_backend.reset_kernel_counts()
    torch.randint(0, 10, (8,), device=DEV)
    return "random_.from" in torch_backend.kernel_counts()


@needs_graphs
def test_randint_in_a_capture_is_refused():
    """Without a vendor kernel, random_ draws on the host (so that it never waits for the
    stream): a captured graph would replay the numbers drawn at capture, so capturing it is
    refused with the way out named.  (A vendor kernel, like emu's, reads the generator state
    each replay writes.)"""
    if _randint_runs_a_vendor_kernel():
        pytest.skip(f"{DEV} has a random_.from kernel of its own")
    side = torch.Stream(device=DEV)
    graph = torch.accelerator.Graph()
    with pytest.raises(
        RuntimeError, match=r"random_ .* cannot be captured into a graph; draw before"
    ):
        with side, graph:
            torch.randint(0, 10, (8,), device=DEV)
    # the device still works, and randint outside a capture too
    assert torch.randint(0, 10, (8,), device=DEV).cpu().max() < 10


def test_random_with_an_empty_range_is_refused_naming_it():
    # random_(from, to) with from == to: the vendor's kernel (or the host draw) refuses it.
    x = torch.zeros(4, dtype=torch.long, device=DEV)
    with pytest.raises(RuntimeError, match=r"from.*5.*(less than|>=).*5"):
        x.random_(5, 5)
        MODULE.synchronize()
    torch.testing.assert_close(x.cpu(), torch.zeros(4, dtype=torch.long))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rand_and_randn_draw_on_the_device_with_their_distributions(dtype):
    """uniform_ and normal_ (torch.rand, torch.randn, nn.init): a million draws lie in [from,
    to) with the uniform's mean and the normal's mean and deviation (each within ten standard
    errors), follow the seed, and -- on a vendor with the kernels -- never leave the device."""
    torch_backend.reset_fallback_counts()
    torch.manual_seed(5)
    u = torch.empty(1 << 20, device=DEV, dtype=dtype).uniform_(-2.0, 5.0).cpu()
    z = torch.empty(1 << 20, device=DEV, dtype=dtype).normal_(3.0, 0.5).cpu()
    assert u.min() >= -2.0 and u.max() < 5.0
    assert abs(u.mean().item() - 1.5) < 10 * 7 / 12**0.5 / 2**10
    assert abs(z.mean().item() - 3.0) < 10 * 0.5 / 2**10
    assert abs(z.std().item() - 0.5) < 10 * 0.5 / 2**10.5
    torch.manual_seed(5)
    assert torch.equal(torch.empty(1 << 20, device=DEV, dtype=dtype).uniform_(-2.0, 5.0).cpu(), u)
    native = [op for op, how in torch_backend.op_coverage(["uniform_", "normal_"]).items()
              if how == "native"]  # fmt: skip
    assert not any(f"aten::{op}" in torch_backend.fallback_counts() for op in native)
    # a transposed view: the vendor's kernel may decline it; the draws still land in range
    t = torch.empty(64, 32, device=DEV, dtype=dtype).t().uniform_(0.25, 0.5).cpu()
    assert t.min() >= 0.25 and t.max() < 0.5 and t.std() > 0.05


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_exponential_draws_on_the_device_and_never_zero(dtype):
    """exponential_ (multinomial divides by its draws): a million draws are positive -- never 0
    -- with mean 1 / lambda within ten standard errors, follow the seed, stay on the device
    where the vendor has the kernel; a lambda that is not positive raises at the call, and an
    infinite one gives zeros, as on the CPU."""
    torch_backend.reset_fallback_counts()
    torch.manual_seed(9)
    x = torch.empty(1 << 20, device=DEV, dtype=dtype).exponential_(4.0).cpu()
    assert x.min() > 0
    assert abs(x.mean().item() - 0.25) < 10 * 0.25 / 2**10
    torch.manual_seed(9)
    assert torch.equal(torch.empty(1 << 20, device=DEV, dtype=dtype).exponential_(4.0).cpu(), x)
    if torch_backend.op_coverage(["exponential_"])["exponential_"] == "native":
        assert torch_backend.fallback_counts() == {}
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(RuntimeError, match=r"exponential_ expects lambda > 0\.0"):
            torch.empty(4, device=DEV).exponential_(bad)
    assert torch.equal(torch.ones(4, device=DEV).exponential_(math.inf).cpu(), torch.zeros(4))


def test_multinomial_samples_the_distribution_on_the_device():
    """multinomial (generate()'s sampling): one sample per row follows the probabilities
    (frequencies within ten standard errors) and never picks a zero; samples without
    replacement are distinct; with replacement it still works; the seed repeats it; invalid
    probabilities raise ATen's error.  Where the vendor draws exponential_, nothing falls back
    to the CPU but the with-replacement draw (ATen's kernel for it is the CPU's and CUDA's)."""
    rows = 20000
    p = torch.tensor([[0.1, 0.0, 0.6, 0.3]], device=DEV).expand(rows, 4).contiguous()
    torch_backend.reset_fallback_counts()
    torch.manual_seed(3)
    one = torch.multinomial(p, 1).cpu().flatten()
    frequencies = torch.bincount(one, minlength=4).double() / rows
    for k, probability in enumerate((0.1, 0.0, 0.6, 0.3)):
        assert (
            abs(frequencies[k] - probability)
            <= 10 * (probability * (1 - probability) / rows) ** 0.5
        )
    three = torch.multinomial(p[:500] * torch.tensor([1.0, 1, 1, 1], device=DEV), 3).cpu()
    assert (three != 1).all() and all(len(set(r.tolist())) == 3 for r in three)
    torch.manual_seed(3)
    assert torch.equal(torch.multinomial(p, 1).cpu().flatten(), one)
    if torch_backend.op_coverage(["exponential_"])["exponential_"] == "native":
        assert torch_backend.fallback_counts() == {}
    with_replacement = torch.multinomial(p[:10], 5, replacement=True).cpu()
    assert with_replacement.shape == (10, 5) and (with_replacement != 1).all()
    with pytest.raises(RuntimeError, match="probability tensor contains"):
        torch.multinomial(torch.tensor([0.5, -1.0], device=DEV), 1)
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        torch.multinomial(torch.zeros(2, 3, device=DEV), 1)
