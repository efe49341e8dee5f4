"""Graph capture and replay: ``torch.accelerator.Graph`` on the device (vendor.h ABI 2.3,
``TB_EXTENSION_GRAPHS``; csrc/runtime/Graph.cpp).

What a CUDA-graphs user relies on: a replay computes what an eager run of the captured code
computes, from the current contents of the captured inputs; random operators draw new numbers
at each replay, the ones an eager run from the same generator state draws; what cannot be
captured raises, naming the operation, and invalidates the capture; graphs can share a memory
pool, which stays reserved while a graph uses it.  A vendor without the extension says so.
"""

from __future__ import annotations

import copy
import sys

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV, MODULE, REPO, fallback_ops

import torch_backend

_ops = torch.ops.torch_backend
HAS_GRAPHS = DEV in ("emu", "npu", "ocl")

needs_graphs = pytest.mark.skipif(not HAS_GRAPHS, reason=f"{DEV} has no graphs extension")


def capture(fn, stream: torch.Stream | None = None, **graph_args):
    """Capture ``fn()`` on a side stream; returns (graph, fn's result)."""
    stream = stream or torch.Stream(device=DEV)
    graph = torch.accelerator.Graph(**graph_args)
    with stream, graph:
        result = fn()
    return graph, result


@needs_graphs
def test_replay_reads_the_inputs_current_contents():
    x = torch.zeros(1000, device=DEV)
    graph, y = capture(lambda: (x * 2 + 1).relu_())
    for value in (3.0, -5.0, 0.25):
        x.fill_(value)
        graph.replay()
        torch.testing.assert_close(y.cpu(), torch.full((1000,), max(2 * value + 1, 0.0)))


@needs_graphs
def test_capture_runs_nothing_until_replay():
    x = torch.ones(64, device=DEV)
    graph, _ = capture(lambda: x.mul_(3))
    torch.testing.assert_close(x.cpu(), torch.ones(64))
    graph.replay()
    graph.replay()
    torch.testing.assert_close(x.cpu(), torch.full((64,), 9.0))


@needs_graphs
def test_replay_on_another_stream_follows_that_streams_order():
    x = torch.zeros(4096, device=DEV)
    graph, y = capture(lambda: x + 1)
    other = torch.Stream(device=DEV)
    with other:
        x.fill_(41.0)
        graph.replay()
        result = y.cpu()
    torch.testing.assert_close(result, torch.full((4096,), 42.0))


@needs_graphs
def test_dropout_draws_new_numbers_each_replay_and_matches_a_seed():
    a = torch.ones(4096, device=DEV)
    graph, b = capture(lambda: F.dropout(a, 0.5))
    graph.replay()
    first = b.cpu()
    graph.replay()
    second = b.cpu()
    assert not torch.equal(first, second), "two replays drew the same dropout mask"
    assert 0.4 < (first != 0).float().mean().item() < 0.6
    torch.manual_seed(1234)
    graph.replay()
    replayed = b.cpu()
    torch.manual_seed(1234)
    eager = F.dropout(a, 0.5).cpu()
    torch.testing.assert_close(replayed, eager, rtol=0, atol=0)


def _vendor_draws_integers() -> bool:
    """Whether random_.from (randint, torch.compile's seeds) runs a vendor kernel."""
    before = torch_backend.kernel_counts().get("random_.from", 0)
    torch.randint(0, 10, (4,), device=DEV)
    return torch_backend.kernel_counts().get("random_.from", 0) > before


# The random factories, by the vendor kernel each runs: torch.randint (and torch.compile's seeds
# for its random kernels), torch.rand and torch.randn.
DRAWS = {
    "random_.from": lambda: torch.randint(0, 1 << 40, (64,), device=DEV),
    "uniform_": lambda: torch.rand(64, device=DEV),
    "normal_": lambda: torch.randn(64, device=DEV, dtype=torch.float64),
}


@needs_graphs
@pytest.mark.parametrize("op", list(DRAWS))
def test_random_factories_draw_new_numbers_each_replay_and_match_a_seed(op):
    # A vendor kernel reads the generator state at each replay; a host draw could not be
    # captured (test_rng.py: the capture is refused).
    before = torch_backend.kernel_counts().get(op, 0)
    DRAWS[op]()
    if torch_backend.kernel_counts().get(op, 0) == before:
        pytest.skip(f"{DEV} draws {op} on the host (no vendor kernel)")
    graph, r = capture(DRAWS[op])
    graph.replay()
    first = r.cpu()
    graph.replay()
    assert not torch.equal(first, r.cpu()), "two replays drew the same numbers"
    torch.manual_seed(99)
    graph.replay()
    replayed = r.cpu()
    torch.manual_seed(99)
    assert torch.equal(replayed, DRAWS[op]().cpu())


def _mlp_step(model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=False)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


@needs_graphs
def test_mlp_training_step_replays_like_eager():
    torch.manual_seed(0)
    layers = [torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Dropout(0.1)]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(32, 4)).to(DEV)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
    static_x = torch.randn(8, 16, device=DEV)
    static_y = torch.randn(8, 4, device=DEV)
    side = torch.Stream(device=DEV)
    side.wait_stream(torch.accelerator.current_stream())
    with side:  # warm-up: the optimizer's state exists before the capture, as with CUDA graphs
        for _ in range(2):
            _mlp_step(model, optimizer, static_x, static_y)
    torch.accelerator.current_stream().wait_stream(side)
    reference = copy.deepcopy(model)
    reference_optimizer = torch.optim.AdamW(reference.parameters(), lr=1e-2, fused=True)
    reference_optimizer.load_state_dict(copy.deepcopy(optimizer.state_dict()))

    graph, static_loss = capture(lambda: _mlp_step(model, optimizer, static_x, static_y), side)
    for i in range(3):
        x, y = torch.randn(8, 16), torch.randn(8, 4)
        torch.manual_seed(100 + i)
        static_x.copy_(x.to(DEV))
        static_y.copy_(y.to(DEV))
        graph.replay()
        torch.manual_seed(100 + i)
        loss = _mlp_step(reference, reference_optimizer, x.to(DEV), y.to(DEV))
        assert static_loss.item() == loss.item(), f"step {i}"
    for (name, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.cpu(), q.cpu(), rtol=0, atol=0, msg=name)


@needs_graphs
def test_gpt2_decode_step_replays_like_eager():
    sys.path.insert(0, str(REPO / "examples"))
    import zoo

    transformers = pytest.importorskip("transformers")
    model, _ = zoo._gpt2()
    model = model.to(DEV).eval()
    torch.manual_seed(0)
    with torch.no_grad():
        past = model(torch.randint(0, 256, (1, 8), device=DEV), use_cache=True).past_key_values
        prompt_cache = [(layer.keys.clone(), layer.values.clone()) for layer in past.layers]
        token = torch.zeros(1, 1, dtype=torch.long, device=DEV)
        cache = transformers.DynamicCache(prompt_cache)
        # The graph reads the cache's tensors as they were at capture: keep them alive (the
        # cache object replaces them with the concatenations it captured).
        static_cache = [(layer.keys, layer.values) for layer in cache.layers]

        def decode(c):
            return model(token, past_key_values=c, use_cache=True).logits

        graph, static_logits = capture(lambda: decode(cache))
        for value in (5, 77, 200):
            token.fill_(value)
            graph.replay()
            fresh = transformers.DynamicCache([(k.clone(), v.clone()) for k, v in prompt_cache])
            eager = decode(fresh)
            torch.testing.assert_close(static_logits.cpu(), eager.cpu(), rtol=0, atol=0)
    assert static_cache  # alive until here


# ---- what cannot be captured ----


def _refused(body, match: str) -> None:
    x = torch.ones(16, device=DEV)
    with pytest.raises((RuntimeError, NotImplementedError), match=match) as raised:
        capture(lambda: body(x))
    assert "captur" in str(raised.value)
    # The device is usable afterwards, and a new capture works.
    graph, y = capture(lambda: x + 1)
    graph.replay()
    torch.testing.assert_close(y.cpu(), torch.full((16,), 2.0))


@needs_graphs
def test_cpu_fallback_is_refused():
    ((fn, op),) = fallback_ops(1)
    _refused(lambda x: getattr(torch, fn)(x * 0.5), f"{op.split('.')[0]}.*CPU fallback")


@pytest.mark.parametrize(
    "body, match",
    [
        (lambda x: x.sum().item(), "copy from the device to host memory"),
        (lambda x: x.cpu(), "copy from the device to host memory"),
        (lambda x: x + torch.ones(16).to(DEV), "copy from host memory to the device"),
    ],
    ids=["item", "cpu", "to_device"],
)
@needs_graphs
def test_blocking_copies_are_refused(body, match):
    _refused(body, match)


@needs_graphs
def test_synchronize_is_refused():
    _refused(lambda x: MODULE.synchronize(), "synchronizing device")
    _refused(lambda x: torch.accelerator.current_stream().synchronize(), "synchronizing stream")


@needs_graphs
def test_query_of_an_event_recorded_in_the_capture_is_refused():
    def body(x):
        event = torch.Event(device=DEV)
        event.record()
        return event.query()

    _refused(body, "event query")


# ---- multi-stream capture (CUDA's fork and join) ----


@needs_graphs
def test_a_side_stream_forked_and_joined_is_captured_and_replayed():
    x = torch.zeros(4096, device=DEV)
    side = torch.Stream(device=DEV)

    def body():
        a = x * 2
        side.wait_stream(torch.accelerator.current_stream())  # the fork: side joins the capture
        with side:
            b = x + 1  # allocated on side, from the graph's pool
            b.mul_(3)
        torch.accelerator.current_stream().wait_stream(side)  # the join
        return a + b

    graph, y = capture(body)
    for value in (1.0, -2.0):
        x.fill_(value)
        graph.replay()
        torch.testing.assert_close(y.cpu(), torch.full((4096,), 2 * value + 3 * (value + 1)))
    # Outside the capture the side stream runs its own work again (read on it, in its order).
    with side:
        z = (x * 5).cpu()
    torch.testing.assert_close(z, torch.full((4096,), -10.0))


@needs_graphs
def test_a_side_stream_not_joined_back_fails_capture_end():
    x = torch.ones(16, device=DEV)
    side = torch.Stream(device=DEV)

    def body():
        side.wait_stream(torch.accelerator.current_stream())
        with side:
            return x * 2  # never joined back

    with pytest.raises(RuntimeError, match="cudaErrorStreamCaptureUnjoined"):
        capture(body)
    side.synchronize()  # the capture ended for the side stream too
    graph, y = capture(lambda: x + 1)
    graph.replay()
    torch.testing.assert_close(y.cpu(), torch.full((16,), 2.0))


@needs_graphs
def test_a_block_freed_during_the_capture_waits_for_its_streams_after_it():
    # A tensor of the general pool, used on the capturing stream (record_stream) and freed
    # during the capture: the event that makes its block reusable would be captured, never
    # completing outside a replay, so the allocator records it once the capture has ended
    # (CUDA's needs_events_deferred_until_no_capture) and the block returns to the cache.
    device = torch.accelerator.current_device_index()

    def active() -> int:  # a pending block stays active until its events complete
        return MODULE.memory_stats(device)["active_bytes.all.current"]

    stream = torch.Stream(device=DEV)
    x = torch.ones(1 << 16, device=DEV)
    graph = torch.accelerator.Graph()
    with stream, graph:
        y = x * 2
        x.record_stream(stream)
        del x
        z = y + 1  # an allocation after the free: no event of the capture is queried
    pending = active()
    graph.replay()
    stream.synchronize()
    torch.empty(1, device=DEV)  # no capture under way: the deferred free records its event
    MODULE.synchronize()
    torch.empty(1, device=DEV)  # the event has completed: the block goes back
    assert active() == pending - (1 << 18), "the block freed during the capture never came back"
    torch.testing.assert_close(z.cpu(), torch.full((1 << 16,), 3.0))


def _regression_step(model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=True)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def _dropout_net(capturable: bool = False) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Dropout(0.25), torch.nn.Linear(32, 4)
    ).to(DEV)
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-2, capturable=capturable, fused=True)
    return net, optimizer


@pytest.mark.filterwarnings("ignore:The AccumulateGrad node's stream does not match")
@needs_graphs
def test_whole_network_capture_as_the_cuda_graphs_notes_write_it():
    # PyTorch's CUDA Graphs notes, "whole-network capture", with the device string changed:
    # warm-up on a side stream, then forward, backward and step captured by MODULE.graph.  The
    # parameters' AccumulateGrad nodes keep the warm-up stream (the loss of the last warm-up
    # iteration holds them), so the backward forks onto it and joins back, as on CUDA.
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(32, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8)
    ).to(DEV)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    static_input = torch.randn(64, 32, device=DEV)
    static_target = torch.randn(64, 8, device=DEV)
    side = MODULE.Stream()
    side.wait_stream(MODULE.current_stream())
    with MODULE.stream(side):
        for _ in range(3):
            loss = _regression_step(model, optimizer, static_input, static_target)
    MODULE.current_stream().wait_stream(side)
    reference = copy.deepcopy(model)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    reference_optimizer.load_state_dict(copy.deepcopy(optimizer.state_dict()))

    g = MODULE.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with MODULE.graph(g):
        static_loss = F.mse_loss(model(static_input), static_target)
        static_loss.backward()
        optimizer.step()
    for _ in range(4):
        data, target = torch.randn(64, 32), torch.randn(64, 8)
        static_input.copy_(data.to(DEV))
        static_target.copy_(target.to(DEV))
        g.replay()
        expected = _regression_step(reference, reference_optimizer, data.to(DEV), target.to(DEV))
        assert static_loss.item() == expected.item()
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.cpu(), q.cpu(), rtol=0, atol=0)
    assert loss is not None


@pytest.mark.filterwarnings("ignore:The AccumulateGrad node's stream does not match")
@needs_graphs
def test_a_compiled_training_step_captured_whole_replays_like_uncaptured_steps():
    # The whole step by hand, optimizer included (docs/graphs.rst): the step of a
    # torch.compile'd model with dropout, captured whole after a warm-up that compiles it.
    # Each replay draws its dropout from the generator's state at replay time, so it computes
    # what the same compiled step run without a graph computes from that state.  (Inductor
    # draws its seeds with random_.from: a vendor without that kernel draws them on the host,
    # which a capture refuses.)
    if not _vendor_draws_integers():
        pytest.skip(f"{DEV} draws random_.from on the host (no vendor kernel)")
    model, optimizer = _dropout_net(capturable=True)
    reference, reference_optimizer = _dropout_net(capturable=True)
    compiled, compiled_reference = torch.compile(model), torch.compile(reference)
    static_x, static_y = torch.randn(8, 16, device=DEV), torch.randn(8, 4, device=DEV)
    side = torch.Stream(device=DEV)
    side.wait_stream(torch.accelerator.current_stream())
    with side:
        for seed in (10, 11):
            torch.manual_seed(seed)
            _regression_step(compiled, optimizer, static_x, static_y)
    torch.accelerator.current_stream().wait_stream(side)
    for seed in (10, 11):
        torch.manual_seed(seed)
        _regression_step(compiled_reference, reference_optimizer, static_x, static_y)
    graph = torch.accelerator.Graph()
    with MODULE.graph(graph):
        static_loss = _regression_step(compiled, optimizer, static_x, static_y)
    for seed in (1, 2, 3):
        x, y = torch.randn(8, 16, device=DEV), torch.randn(8, 4, device=DEV)
        static_x.copy_(x)
        static_y.copy_(y)
        torch.manual_seed(seed)
        graph.replay()
        torch.manual_seed(seed)
        expected = _regression_step(compiled_reference, reference_optimizer, x, y)
        torch.testing.assert_close(static_loss.cpu(), expected.cpu())
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.cpu(), q.cpu())


@pytest.mark.parametrize(
    "make",
    [
        lambda p: torch.optim.Adam(p, lr=1e-2, capturable=True),
        lambda p: torch.optim.Adam(p, lr=1e-2, capturable=True, foreach=False),
        lambda p: torch.optim.AdamW(p, lr=1e-2, capturable=True),
        lambda p: torch.optim.AdamW(p, lr=1e-2, capturable=True, fused=True),
        lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9),
    ],
    ids=["Adam", "Adam-single-tensor", "AdamW", "AdamW-fused", "SGD-momentum"],
)
@needs_graphs
def test_capturable_optimizers_step_inside_the_graph(make):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4).to(DEV)
    optimizer = make(model.parameters())
    x, y = torch.randn(16, 8, device=DEV), torch.randn(16, 4, device=DEV)
    side = torch.Stream(device=DEV)
    side.wait_stream(torch.accelerator.current_stream())
    with side:
        for _ in range(2):
            _regression_step(model, optimizer, x, y)
    torch.accelerator.current_stream().wait_stream(side)
    reference = copy.deepcopy(model)
    reference_optimizer = make(reference.parameters())
    reference_optimizer.load_state_dict(copy.deepcopy(optimizer.state_dict()))
    graph = torch.accelerator.Graph()
    optimizer.zero_grad(set_to_none=True)
    with MODULE.graph(graph):
        static_loss = F.mse_loss(model(x), y)
        static_loss.backward()
        optimizer.step()
    for _ in range(3):
        graph.replay()
        expected = _regression_step(reference, reference_optimizer, x, y)
        assert static_loss.item() == expected.item()
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.cpu(), q.cpu(), rtol=0, atol=0)


@needs_graphs
def test_capture_under_autocast_with_a_grad_scaler():
    # The notes' AMP recipe: forward, loss and scaled backward captured under autocast with
    # cache_enabled=False; the scaler's step and update (which read the found-inf flag on the
    # host) run eagerly after each replay.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    model = model.to(DEV)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler(DEV, init_scale=256.0)
    x, y = torch.randn(8, 16, device=DEV), torch.randn(8, 4, device=DEV)
    reference = copy.deepcopy(model)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.05)
    reference_scaler = torch.amp.GradScaler(DEV, init_scale=256.0)

    def forward_backward(net, scale):
        with torch.autocast(DEV, dtype=torch.bfloat16, cache_enabled=False):
            loss = F.mse_loss(net(x).float(), y)
        scale.scale(loss).backward()
        return loss

    side = torch.Stream(device=DEV)
    side.wait_stream(torch.accelerator.current_stream())
    with side:
        optimizer.zero_grad(set_to_none=False)
        forward_backward(model, scaler)
    torch.accelerator.current_stream().wait_stream(side)
    optimizer.zero_grad(set_to_none=False)
    graph = torch.accelerator.Graph()
    if DEV == "ocl":
        # The opencl vendor has no 16-bit kernels: autocast's casts stage through the host,
        # which a capture refuses, naming the copy (docs/graphs.rst).
        with pytest.raises(RuntimeError, match="copy from the device to host memory"):
            with MODULE.graph(graph):
                forward_backward(model, scaler)
        return
    with MODULE.graph(graph):
        static_loss = forward_backward(model, scaler)
    reference_optimizer.zero_grad(set_to_none=False)
    forward_backward(reference, reference_scaler)  # the warm-up's gradients, discarded
    for _ in range(3):
        optimizer.zero_grad(set_to_none=False)
        graph.replay()
        scaler.step(optimizer)
        scaler.update()
        reference_optimizer.zero_grad(set_to_none=False)
        expected = forward_backward(reference, reference_scaler)
        reference_scaler.step(reference_optimizer)
        reference_scaler.update()
        assert static_loss.item() == expected.item()
    assert scaler.get_scale() == reference_scaler.get_scale()
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.cpu(), q.cpu(), rtol=0, atol=0)


# ---- make_graphed_callables ----


@needs_graphs
def test_make_graphed_callables_trains_like_eager():
    # The notes' partial-network example: two modules and a function, graphed together.
    torch.manual_seed(0)
    module1 = torch.nn.Linear(16, 32).to(DEV)
    module2 = torch.nn.Linear(32, 8).to(DEV)

    def head(t):
        return torch.tanh(t) * 2

    reference1, reference2 = copy.deepcopy(module1), copy.deepcopy(module2)
    x = torch.randn(4, 16, device=DEV)
    h = torch.randn(4, 32, device=DEV, requires_grad=True)
    z = torch.randn(4, 8, device=DEV, requires_grad=True)
    graphed1, graphed2, graphed_head = MODULE.make_graphed_callables(
        (module1, module2, head), ((x,), (h,), (z,))
    )
    assert graphed1 is module1 and graphed2 is module2
    parameters = [*module1.parameters(), *module2.parameters()]
    reference_parameters = [*reference1.parameters(), *reference2.parameters()]
    optimizer = torch.optim.SGD(parameters, lr=0.1)
    reference_optimizer = torch.optim.SGD(reference_parameters, lr=0.1)
    for _ in range(3):
        data = torch.randn(4, 16, device=DEV)
        optimizer.zero_grad(set_to_none=True)
        out = graphed_head(graphed2(graphed1(data)))
        out.square().mean().backward()
        optimizer.step()
        reference_optimizer.zero_grad(set_to_none=True)
        expected = head(reference2(reference1(data)))
        expected.square().mean().backward()
        reference_optimizer.step()
        torch.testing.assert_close(out.cpu(), expected.cpu(), rtol=0, atol=0)
    for p, q in zip(parameters, reference_parameters, strict=True):
        torch.testing.assert_close(p.cpu(), q.cpu(), rtol=0, atol=0)
    # A module switched out of the training state it was graphed in runs its own forward.
    module1.eval()
    data = torch.randn(4, 16, device=DEV)
    torch.testing.assert_close(module1(data).cpu(), reference1.eval()(data).cpu())


@needs_graphs
def test_make_graphed_callables_unused_inputs_and_misuse():
    def uses_only_a(a, b):
        return a * 2

    a = torch.randn(8, device=DEV, requires_grad=True)
    b = torch.randn(8, device=DEV, requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        MODULE.make_graphed_callables(uses_only_a, (a, b))
    graphed = MODULE.make_graphed_callables(uses_only_a, (a, b), allow_unused_input=True)
    a2, b2 = torch.randn(8, device=DEV, requires_grad=True), torch.randn(8, device=DEV)
    graphed(a2, b2.requires_grad_()).sum().backward()
    torch.testing.assert_close(a2.grad.cpu(), torch.full((8,), 2.0))
    assert b2.grad is None
    hooked = torch.nn.Linear(2, 2).to(DEV)
    hooked.register_forward_hook(lambda *args: None)
    with pytest.raises(AssertionError, match="hooks"):
        MODULE.make_graphed_callables(hooked, (torch.randn(1, 2, device=DEV),))
    with pytest.raises(AssertionError, match="only Tensors"):
        MODULE.make_graphed_callables(lambda t, n: t * n, (torch.ones(2, device=DEV), 3))
    with torch.autocast(DEV, dtype=torch.bfloat16), pytest.raises(RuntimeError, match="cache"):
        MODULE.make_graphed_callables(uses_only_a, (a, b), allow_unused_input=True)


@needs_graphs
def test_allocation_outside_the_graph_pool_is_refused_in_global_mode():
    def body(x):
        with torch.Stream(device=DEV):
            return torch.empty(1 << 16, device=DEV)

    _refused(body, "allocation of .* outside the graph's private pool")
    # 'relaxed' allows it: the memory comes from the general pools.
    x = torch.ones(8, device=DEV)
    graph, y = capture(lambda: (body(x), x * 4)[1], capture_error_mode="relaxed")
    graph.replay()
    torch.testing.assert_close(y.cpu(), torch.full((8,), 4.0))


# ---- memory pools ----


@needs_graphs
def test_graphs_share_a_pool_that_stays_reserved_while_used():
    device = torch.accelerator.current_device_index()
    x = torch.ones(1 << 12, device=DEV)
    stream = torch.Stream(device=DEV)  # blocks are kept per stream, in a pool as elsewhere
    first, y1 = capture(lambda: x * 2, stream)
    pool = first.pool()
    reserved = _ops._graph_pool_reserved(device, *pool)
    assert reserved > 0
    second, y2 = capture(lambda: x * 3, stream, pool=pool)
    assert second.pool() == pool
    assert _ops._graph_pool_reserved(device, *pool) == reserved, "sharing the pool grew it"
    first.replay()
    second.replay()
    torch.testing.assert_close(y1.cpu(), torch.full((1 << 12,), 2.0))
    torch.testing.assert_close(y2.cpu(), torch.full((1 << 12,), 3.0))
    first.reset()
    assert _ops._graph_pool_reserved(device, *pool) == reserved, "released while still used"
    second.replay()
    del y1, y2
    second.reset()
    assert _ops._graph_pool_reserved(device, *pool) == 0, "the pool outlived its graphs"


@needs_graphs
def test_a_user_pool_handle_is_shared():
    handle = MODULE.graph_pool_handle()
    x = torch.ones(32, device=DEV)
    first, _ = capture(lambda: x * 2, pool=handle)
    second, _ = capture(lambda: x * 3, pool=handle)
    assert first.pool() == second.pool() == handle


@needs_graphs
def test_keep_graph_instantiate_and_debug_dump(tmp_path):
    x = torch.ones(8, device=DEV)
    graph = torch.accelerator.Graph(keep_graph=True)
    graph.enable_debug_mode()
    with torch.Stream(device=DEV), graph:
        y = (x + 1) * 2
    graph.instantiate()
    graph.replay()
    torch.testing.assert_close(y.cpu(), torch.full((8,), 4.0))
    dump = tmp_path / "graph.txt"
    graph.debug_dump(str(dump))
    text = dump.read_text()
    assert "2 operators" in text and "add" in text and "mul" in text, text


@needs_graphs
def test_reset_then_capture_again():
    x = torch.ones(8, device=DEV)
    graph, y = capture(lambda: x + 1)
    graph.reset()
    with torch.Stream(device=DEV), graph:
        z = x * 5
    graph.replay()
    torch.testing.assert_close(z.cpu(), torch.full((8,), 5.0))
    assert y is not None


@pytest.fixture
def fresh_dynamo():
    """Compiled functions (and the recorded graphs, with their memory) go with Dynamo's cache."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.filterwarnings("ignore:The AccumulateGrad node's stream does not match")
@needs_graphs
def test_reduce_overhead_replays_device_graphs_like_the_compiled_step(fresh_dynamo):
    # torch.compile(mode="reduce-overhead") as CUDA users write it: forward and backward are
    # recorded into device graphs on their second call (torch_backend/reduce_overhead.py) and
    # replayed after; every step computes what the same step compiled without graphs computes
    # from the same seed, dropout included.
    from torch._dynamo.utils import counters

    if not _vendor_draws_integers():
        pytest.skip(f"{DEV} draws random_.from on the host: its dropout cannot be recorded")
    counters.clear()
    model, optimizer = _dropout_net()
    reference, reference_optimizer = _dropout_net()
    graphed = torch.compile(model, mode="reduce-overhead")
    compiled = torch.compile(reference)
    for seed in range(5):
        x, y = torch.randn(8, 16, device=DEV), torch.randn(8, 4, device=DEV)
        torch.manual_seed(seed)
        loss = _regression_step(graphed, optimizer, x, y).item()
        torch.manual_seed(seed)
        assert loss == _regression_step(compiled, reference_optimizer, x, y).item()
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.cpu(), q.cpu(), rtol=0, atol=0)
    assert counters["inductor"][f"{DEV}_graphs_recorded"] == 2  # forward and backward
    assert counters["inductor"][f"{DEV}_graph_replays"] == 8  # calls 2 to 5 of each


@needs_graphs
def test_reduce_overhead_copies_new_inputs_and_reuses_its_outputs(fresh_dynamo):
    from torch._dynamo.utils import counters

    counters.clear()
    fn = torch.compile(lambda t: (t * 2).relu() + 1, mode="reduce-overhead")
    results = []
    for value in (1.0, -3.0, 4.0, 0.5):
        x = torch.full((64,), value, device=DEV)  # a new tensor each call: copied in
        y = fn(x)
        torch.testing.assert_close(y.cpu(), torch.full((64,), max(2 * value, 0.0) + 1))
        results.append(y)
    assert counters["inductor"][f"{DEV}_graphs_recorded"] == 1
    # As with Inductor's graphs without trees: the outputs are the graph's tensors, which the
    # next call overwrites (docs/graphs.rst: clone what you keep).
    assert results[-1].data_ptr() == results[-2].data_ptr()
    torch.testing.assert_close(results[-2].cpu(), torch.full((64,), 2.0))


@needs_graphs
def test_reduce_overhead_runs_a_graph_a_capture_refuses_as_compiled(fresh_dynamo):
    # A vendor without a random_.from kernel draws Inductor's seeds on the host, which a capture
    # refuses: the graph keeps running as compiled, with a warning, and computes the same.
    from torch._dynamo.utils import counters

    if _vendor_draws_integers():
        pytest.skip(f"{DEV} records dropout (random_.from is a vendor kernel)")
    counters.clear()
    model, optimizer = _dropout_net()
    reference, reference_optimizer = _dropout_net()
    graphed = torch.compile(model, mode="reduce-overhead")
    compiled = torch.compile(reference)
    x, y = torch.randn(8, 16, device=DEV), torch.randn(8, 4, device=DEV)
    with pytest.warns(UserWarning, match="runs without a device graph: .*random_"):
        for seed in range(3):
            torch.manual_seed(seed)
            loss = _regression_step(graphed, optimizer, x, y).item()
            torch.manual_seed(seed)
            assert loss == _regression_step(compiled, reference_optimizer, x, y).item()
    assert counters["inductor"]["cudagraph_skips"] >= 1


@pytest.mark.skipif(HAS_GRAPHS, reason="the vendor has graphs")
def test_a_vendor_without_graphs_says_so():
    with pytest.raises(NotImplementedError, match=f"{DEV}: graph capture is not supported") as e:
        torch.accelerator.Graph()
    assert "TB_EXTENSION_GRAPHS" in str(e.value)


assert torch_backend  # the package registers the device
