"""Operators csrc composes from the vendor's other kernels where the vendor publishes none of
its own (csrc/aten/Composite.cpp): matrix-vector products, activations, losses, padding,
statistics.  Each must give the CPU's results, gradients and errors, and must itself never be
the CPU fallback (the operators it is made of may be, on a vendor without them)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV

import torch_backend

# Every operator the composites serve: on a vendor without a kernel of its own each reports
# "composite", and none may appear among the fallback's calls.
COMPOSED = [
    "dot", "vdot", "addmv", "addmv_", "addmv.out", "trace", "glu", "glu.out", "glu_backward",
    "glu_backward.grad_input", "log_sigmoid_forward", "log_sigmoid_forward.output",
    "log_sigmoid_backward", "log_sigmoid_backward.grad_input", "elu", "elu_", "elu.out",
    "elu_backward", "elu_backward.grad_input", "smooth_l1_loss", "smooth_l1_loss.out",
    "smooth_l1_loss_backward.grad_input", "huber_loss", "huber_loss.out",
    "huber_loss_backward.out", "var.correction", "var.correction_out", "std.correction",
    "std.correction_out", "nan_to_num", "nan_to_num_", "nan_to_num.out", "flip",
    "reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad1d",
    "replication_pad2d", "replication_pad3d", "reflection_pad2d_backward",
    "replication_pad2d_backward", "nonzero", "nonzero.out", "masked_select",
    "masked_select.out", "masked_scatter_", "linspace.out", "randperm.generator_out",
    "_prelu_kernel", "_prelu_kernel_backward", "xlogy.OutTensor", "bernoulli_.Tensor", "prod",
    "linalg_cross.out", "_unique2", "im2col", "col2im", "searchsorted.Tensor",
    "searchsorted.Scalar", "bucketize.Tensor", "upsample_linear1d.out",
    "upsample_linear1d_backward.grad_input", "upsample_bicubic2d.out",
    "upsample_bicubic2d_backward.grad_input", "adaptive_max_pool2d.out",
    "adaptive_max_pool2d_backward.grad_input",
]  # fmt: skip


def composed_fallbacks() -> dict[str, int]:
    """The fallback's calls of operators the composites serve."""
    names = {"aten::" + op for op in COMPOSED}
    return {op: n for op, n in torch_backend.fallback_counts().items() if op in names}


def check(fn, *inputs: torch.Tensor, grad: bool = False, exact: bool = False) -> None:
    """fn on the device equals fn on the CPU (and so do the inputs' gradients of the sum of
    its output times fixed weights), without the composites falling back."""
    generator = torch.Generator().manual_seed(0)
    cpu_in = [x.detach().clone().requires_grad_(grad) for x in inputs]
    dev_in = [x.detach().to(DEV).requires_grad_(grad) for x in inputs]
    torch_backend.reset_fallback_counts()
    expected, actual = fn(*cpu_in), fn(*dev_in)
    tolerance = {"atol": 0, "rtol": 0} if exact else {}
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, **tolerance)
    if grad:
        weights = torch.randn(expected.shape, generator=generator, dtype=expected.dtype)
        (expected * weights).sum().backward()
        (actual * weights.to(DEV)).sum().backward()
        for c, d in zip(cpu_in, dev_in, strict=True):
            torch.testing.assert_close(d.grad.cpu(), c.grad, **tolerance)
    assert composed_fallbacks() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_matrix_vector_products(dtype):
    """dot, vdot, mv, addmv (also in place and with beta 0, which never reads self's NaNs),
    matmul of a matrix and a vector, strided vectors, an empty inner dimension, gradients."""
    g = torch.Generator().manual_seed(1)
    m, v, w = (torch.randn(s, generator=g, dtype=dtype) for s in [(5, 7), (7,), (14,)])
    check(torch.dot, v, w[::2], grad=True)
    check(torch.vdot, v, w[1::2])
    check(torch.mv, m, v, grad=True)
    check(torch.matmul, m.t(), torch.randn(5, generator=g, dtype=dtype), grad=True)
    check(lambda s, a, b: torch.addmv(s, a, b, beta=0.5, alpha=-2), v[:5], m, v, grad=True)
    check(lambda s, a, b: torch.addmv(s, a, b), torch.tensor(3.0, dtype=dtype), m, v)
    nan = torch.full((5,), float("nan"), dtype=dtype)
    check(lambda s, a, b: torch.addmv(s, a, b, beta=0), nan, m, v)
    check(lambda s, a, b: s.clone().addmv_(a, b, beta=2), v[:5], m, v)
    check(torch.mv, torch.empty(3, 0, dtype=dtype), torch.empty(0, dtype=dtype))
    check(torch.dot, torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype))
    out = torch.empty(5, device=DEV, dtype=dtype)
    torch.mv(m.to(DEV), v.to(DEV), out=out)
    torch.testing.assert_close(out.cpu(), torch.mv(m, v))


def test_integer_products_keep_the_cpus_rules():
    a = torch.arange(6)
    assert torch.dot(a.to(DEV), a.to(DEV)).item() == torch.dot(a, a).item()
    m = a.view(2, 3)
    assert torch.equal(torch.mv(m.to(DEV), a[:3].to(DEV)).cpu(), torch.mv(m, a[:3]))
    assert torch.trace(a.view(2, 3).to(DEV)).dtype == torch.int64


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda d: torch.dot(torch.ones(3, device=d), torch.ones(4, device=d)),
         r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
        (lambda d: torch.dot(torch.ones(3, 1, device=d), torch.ones(3, device=d)),
         "1D tensors expected, but got 2D and 1D tensors"),
        (lambda d: torch.dot(torch.ones(3, device=d), torch.ones(3, device=d, dtype=torch.float64)),
         "dot : expected both vectors to have same dtype, but found (Float|torch.float32) and "
         "(Double|torch.float64)"),  # the meta function's words where the vendor has dot.out
        (lambda d: torch.mv(torch.ones(3, 2, device=d), torch.ones(3, device=d)),
         r"size mismatch, got input \(3\), mat \(3x2\), vec \(3\)"),
        (lambda d: torch.addmv(torch.ones(2, device=d), torch.ones(3, 2, device=d),
                               torch.ones(2, device=d)),
         r"size mismatch, got input \(2\), mat \(3x2\), vec \(2\)"),
        (lambda d: torch.trace(torch.ones(3, device=d)),
         "trace: expected a matrix, but got tensor with dim 1"),
        (lambda d: F.glu(torch.ones(2, 3, device=d)),
         "Halving dimension must be even, but dimension 1 is size 3"),
        (lambda d: F.huber_loss(torch.ones(3, device=d), torch.ones(3, device=d), delta=0.0),
         "huber_loss does not support non-positive values for delta."),
        (lambda d: F.smooth_l1_loss(torch.ones(3, device=d), torch.ones(3, device=d), beta=-1.0),
         "smooth_l1_loss does not support negative values for beta."),
        (lambda d: F.pad(torch.ones(1, 1, 2, 2, device=d), (3, 3, 0, 0), mode="reflect"),
         "Padding size should be less than the corresponding input dimension"),
        (lambda d: torch.flip(torch.ones(3, 2, device=d), (0, 0)),
         "(dim 0 appears multiple times|duplicate value) in the list of dims"),
        (lambda d: F.elu(torch.arange(3, device=d)), "not implemented for 'Long'"),
        (lambda d: torch.ones(3, device=d).masked_select(torch.ones(3, device=d)),
         "masked_select: expected BoolTensor for mask"),
        (lambda d: torch.ones(4, device=d).masked_select(torch.ones(3, device=d) > 0),
         "The size of tensor a \\(3\\) must match the size of tensor b \\(4\\)"),
        (lambda d: torch.ones(2, 3, device=d).masked_scatter_(torch.ones(2, 3, device=d) > 0,
                                                              torch.ones(5, device=d)),
         "masked_scatter: expected source to have at least 6 elements|Number of elements of "
         "source < number of ones in mask"),
        (lambda d: torch.ones(3, device=d)[torch.ones(2, dtype=torch.bool, device=d)],
         r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed "
         r"tensor \[3\] at index 0"),
        (lambda d: torch.nonzero(torch.ones(3, device=d), out=torch.empty(0, device=d)),
         "nonzero: Expected out tensor to have scalar type Long"),
        (lambda d: torch.linspace(0, 1, -1, device=d), "number of steps must be non-negative"),
        (lambda d: torch.randperm(-1, out=torch.empty(0, dtype=torch.long, device=d)),
         "n must be non-negative"),
        (lambda d: torch.linalg.cross(torch.ones(2, 4, device=d), torch.ones(2, 4, device=d)),
         "must have length 3"),
        (lambda d: F.unfold(torch.ones(1, 2, 3, 3, device=d), 5),
         "calculated shape of the array of sliding blocks as \\(-1, -1\\)"),
        (lambda d: F.fold(torch.ones(1, 4, 3, device=d), (2, 2), 5),
         "Expected size of input's dimension 1 to be divisible by the product of kernel_size"),
        (lambda d: torch.searchsorted(torch.ones(2, 3, device=d), torch.ones(3, 2, device=d)),
         "boundaries tensor should be 1 dimension or the first N-1 dimensions"),
        (lambda d: torch.bucketize(torch.ones(3, device=d), torch.ones(2, 2, device=d)),
         "boundaries tensor must be 1 dimension"),
    ],
)  # fmt: skip
def test_errors_are_the_cpus(call, message):
    """The CPU's message for each bad call, raised at the call (the CPU's own words, so that
    what users search for finds it)."""
    with pytest.raises((RuntimeError, NotImplementedError, IndexError), match=message):
        call("cpu")  # the pattern is the CPU's
    with pytest.raises((RuntimeError, NotImplementedError, IndexError), match=message):
        call(DEV)


def test_cross_device_arguments_are_refused():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.dot(torch.ones(3, device=DEV), torch.ones(3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_activations(dtype):
    """glu, elu (and selu, celu, elu_ in place), log_sigmoid (binary_cross_entropy_with_logits),
    with gradients; log_sigmoid stays finite far from zero."""
    x = torch.randn(4, 6, dtype=dtype, generator=torch.Generator().manual_seed(2)) * 4
    x[0, :3] = torch.tensor([-200.0, 200.0, 0.0], dtype=dtype)
    check(lambda t: F.glu(t, 0), x, grad=True)
    check(F.glu, x, grad=True)
    check(F.elu, x, grad=True)
    check(lambda t: F.elu(t, alpha=0.5), x, grad=True)
    check(F.selu, x, grad=True)
    check(lambda t: F.celu(t, alpha=2.0), x, grad=True)
    check(lambda t: F.elu(t.clone(), inplace=True), x, grad=True)  # is_result in the backward
    check(F.logsigmoid, x, grad=True)
    target = torch.rand(4, 6, dtype=dtype, generator=torch.Generator().manual_seed(3))
    check(lambda a, b: F.binary_cross_entropy_with_logits(a, b), x, target, grad=True)
    pos_weight = torch.rand(6, dtype=dtype) + 0.5
    check(lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=pos_weight.to(a.device)),
          x, target, grad=True)  # fmt: skip


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction):
    """smooth_l1_loss (beta 0 is the L1 loss) and huber_loss with their gradients, targets that
    broadcast, and differences on both sides of beta / delta."""
    g = torch.Generator().manual_seed(4)
    x, y = torch.randn(5, 3, generator=g) * 2, torch.randn(5, 3, generator=g) * 2
    for beta in (1.0, 0.5, 0.0):
        check(
            lambda a, b, beta=beta: F.smooth_l1_loss(a, b, reduction=reduction, beta=beta),
            x,
            y,
            grad=True,
        )
    for delta in (1.0, 0.3):
        check(
            lambda a, b, delta=delta: F.huber_loss(a, b, reduction=reduction, delta=delta),
            x,
            y,
            grad=True,
        )
    check(lambda a, b: torch.ops.aten.huber_loss(a, b, 0, 1.0), x, y[:1], grad=True)


def test_statistics_and_nan_to_num():
    """var and std (the two-pass composite where the vendor has no kernel), nan_to_num with the
    dtype's extremes by default and given values, in place."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, 7, generator=g) * 3 + 10
    check(lambda t: t.var(1), x, grad=True)
    check(lambda t: t.std(), x, grad=True)
    check(lambda t: torch.var(t, 0, correction=0, keepdim=True), x)
    check(lambda t: torch.std(t.double(), (0, 1), correction=2), x)
    special = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), -2.0])
    for dtype in (torch.float32, torch.float64, torch.float16):
        check(torch.nan_to_num, special.to(dtype), exact=True)
    check(lambda t: torch.nan_to_num(t, nan=7.0, posinf=1e3, neginf=-5.0), special, exact=True)
    check(lambda t: t.clone().nan_to_num_(0.5), special, exact=True)
    check(torch.nan_to_num, torch.arange(4), exact=True)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_padding(mode):
    """reflection and replication padding in 1, 2 and 3 dimensions (fast_neural_style's
    ReflectionPad2d, torch.stft's centring), negative padding that crops, and the gradients
    that sum what the padding copied."""
    g = torch.Generator().manual_seed(6)
    x1, x2 = torch.randn(2, 3, 7, generator=g), torch.randn(2, 3, 5, 6, generator=g)
    x3 = torch.randn(1, 2, 3, 4, 5, generator=g)
    check(lambda t: F.pad(t, (2, 3), mode=mode), x1, grad=True, exact=mode == "replicate")
    check(lambda t: F.pad(t, (1, 2, 3, 1), mode=mode), x2, grad=True)
    check(lambda t: F.pad(t, (-1, 2, 0, 1), mode=mode), x2, grad=True)
    check(lambda t: F.pad(t, (1, 1, 2, 0, 1, 2), mode=mode), x3, grad=True)
    check(lambda t: F.pad(t, (1, 1, 1, 1), mode=mode), x2[0], grad=True)  # no batch
    check(lambda t: F.pad(t, (2, 2, 2, 2), mode=mode), x2.to(memory_format=torch.channels_last))


def test_flip_and_trace():
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(7))
    check(lambda t: torch.flip(t, (0, 2)), x, grad=True, exact=True)
    check(lambda t: torch.flip(t, (-1,)), x.transpose(0, 2), exact=True)
    check(lambda t: torch.trace(t[0]), x, grad=True)


def test_op_coverage_reports_composites():
    """op_coverage says "composite" for operators made of others -- csrc's on a vendor without
    its own kernel, and ATen's (isinf, masked_fill), which never reach the CPU fallback -- and
    "native" where the vendor's kernel serves them."""
    coverage = torch_backend.op_coverage([*COMPOSED, "isinf", "masked_fill.Scalar", "roll"])
    assert set(coverage.values()) <= {"native", "composite"}, coverage
    assert coverage["isinf"] == coverage["roll"] == coverage["masked_fill.Scalar"] == "composite"
    x = torch.tensor([1.0, float("inf")], device=DEV)
    torch_backend.reset_fallback_counts()
    assert torch.isinf(x).cpu().tolist() == [False, True]
    assert "aten::isinf" not in torch_backend.fallback_counts()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(reduction):
    """BCELoss with and without weights (the clamp of the logs at -100 included: inputs of 0 and
    1), its gradient, and the CPU's refusal of an input outside [0, 1]."""
    g = torch.Generator().manual_seed(8)
    x = torch.rand(4, 5, generator=g, dtype=torch.float64).clamp(0.05, 0.95)
    x[0, :2] = torch.tensor([0.0, 1.0], dtype=torch.float64)
    y = torch.rand(4, 5, generator=g, dtype=torch.float64)
    w = torch.rand(5, generator=g, dtype=torch.float64)
    check(lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction), x, y)
    check(lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction), x[1:], y[1:], grad=True)
    check(lambda a, b: F.binary_cross_entropy(a, b, w.to(a.device), reduction=reduction),
          x[1:].float(), y[1:].float(), grad=True)  # fmt: skip
    bad = torch.tensor([0.5, 1.5], device=DEV)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(bad, torch.ones(2, device=DEV))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(torch.tensor([float("nan")], device=DEV), torch.ones(1, device=DEV))


@pytest.mark.parametrize(
    "config",
    [
        {"stride": 2, "padding": 1, "output_padding": 1},
        {"stride": 1, "padding": 0, "dilation": 2, "groups": 2},
        {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2), "bias": False},
    ],
)
def test_transposed_convolution(config):
    """ConvTranspose2d (DCGAN's generator, U-Net decoders) where the vendor's convolution kernels
    decline transposed ones: its output and its three gradients equal the CPU's, and with 2-d
    convolution kernels of its own the vendor runs all of it."""
    torch.manual_seed(9)
    config = dict(config)
    bias = config.pop("bias", True)
    module = torch.nn.ConvTranspose2d(4, 6, 3, bias=bias, **config).double()
    x = torch.randn(2, 4, 5, 6, dtype=torch.float64)
    device_module = torch.nn.ConvTranspose2d(4, 6, 3, bias=bias, **config).double().to(DEV)
    device_module.load_state_dict(module.state_dict())
    xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
    torch_backend.reset_fallback_counts()
    expected, actual = module(xc), device_module(xd)
    torch.testing.assert_close(actual.cpu(), expected)
    weights = torch.randn(expected.shape, dtype=torch.float64)
    (expected * weights).sum().backward()
    (actual * weights.to(DEV)).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)
    for name, p in module.named_parameters():
        torch.testing.assert_close(dict(device_module.named_parameters())[name].grad.cpu(), p.grad)
    native = torch_backend.op_coverage(["convolution_overrideable"])["convolution_overrideable"]
    if native == "native":
        assert not any("convolution" in op for op in torch_backend.fallback_counts())


def test_index_fill_and_index_copy():
    """index_fill (a scalar or a 0-d tensor, negative positions) and index_copy in place, out of
    place and along each dimension (HF's static KV cache writes with index_copy_), with their
    gradients; the CPU's errors for bad shapes and dtypes."""
    g = torch.Generator().manual_seed(10)
    x = torch.randn(4, 5, 6, generator=g)
    check(lambda t: t.index_fill(1, torch.tensor([0, -1, 2], device=t.device), -2.5), x, grad=True)
    check(lambda t: t.clone().index_fill_(2, torch.tensor(3, device=t.device), 7.0), x, exact=True)
    value = torch.tensor(1.5)
    check(lambda t: t.index_fill(0, torch.tensor([1], device=t.device), value.to(t.device)), x)
    check(lambda t: t.long().index_fill(2, torch.tensor([0, 5], device=t.device), 9), x, exact=True)
    for dim in (0, 1, -1):
        index = torch.randperm(x.size(dim), generator=g)[:3]
        source = torch.randn(
            *[3 if d == dim % 3 else n for d, n in enumerate(x.shape)], generator=g
        )
        check(
            lambda t, s, dim=dim, index=index: t.index_copy(dim, index.to(t.device), s),
            x,
            source,
            grad=True,
        )
        check(
            lambda t, s, dim=dim, index=index: t.clone().index_copy_(dim, index.to(t.device), s),
            x,
            source,
            exact=True,
        )
    bad = [
        (lambda d: torch.zeros(3, 4, device=d).index_fill_(1, torch.tensor([[1]], device=d), 1.0),
         "Index has to be a vector/scalar"),
        (lambda d: torch.zeros(3, 4, device=d).index_copy_(
            1, torch.tensor([1, 2], device=d), torch.ones(3, 3, device=d)),
         r"Number of indices \(2\) should be equal to source.size\(dim\) \(3\)"),
        (lambda d: torch.zeros(3, 4, device=d).index_copy_(
            1, torch.tensor([1, 2], device=d), torch.ones(3, 2, device=d, dtype=torch.float64)),
         "same dtype"),
    ]  # fmt: skip
    for call, message in bad:
        for device in ("cpu", DEV):
            with pytest.raises((RuntimeError, IndexError), match=message):
                call(device)


def test_nonzero_and_boolean_indexing():
    """nonzero in the CPU's layout (a transposed [count, dims] tensor) for every rank, dtype and
    for no nonzero at all, and what calls it: x[mask], torch.where(cond), argwhere,
    masked_select, x[mask] = v and masked_scatter_ -- masks on the device or the CPU, uint8
    masks, a mask over leading dimensions."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 5, 3, generator=g)
    with_nan = x.clone()
    with_nan[0, 1, 2] = float("nan")  # NaN is nonzero
    for t in [with_nan, x > 0, (x * 3).to(torch.int32), x[:, 0], torch.tensor(2.5), torch.tensor(0),
              torch.zeros(3, 4), torch.zeros(3, 0), x.transpose(0, 2)]:  # fmt: skip
        torch_backend.reset_fallback_counts()
        got = t.to(DEV).nonzero()
        assert got.stride() == t.nonzero().stride()
        check(torch.nonzero, t, exact=True)
        check(torch.argwhere, t, exact=True)
    check(lambda t: torch.stack(torch.where(t > 0.3)), x, exact=True)
    check(lambda t: t[t > 0.3], x, exact=True)
    check(lambda t: t[t[:, 0, 0] > 0, 1:], x, exact=True)
    check(lambda t, m: t.masked_select(m), x, torch.rand(5, 1, generator=g) > 0.5, exact=True)
    check(lambda t: t.masked_select(t > 0), x, grad=True)  # the backward: masked_scatter_
    out = torch.empty(0, dtype=torch.long, device=DEV)
    torch.nonzero(x.to(DEV) > 0, out=out)
    torch.testing.assert_close(out.cpu(), torch.nonzero(x > 0), rtol=0, atol=0)

    def put(t: torch.Tensor, mask: torch.Tensor, value) -> torch.Tensor:
        t = t.clone()
        t[mask] = value
        return t

    # Where the vendor indexes natively, masks (declined by opencl's and npu's kernels) and
    # CPU masks reach its kernels as device positions, not the CPU fallback.
    coverage = torch_backend.op_coverage(["index.Tensor_out", "_index_put_impl_"])
    native = set(coverage.values()) == {"native"}
    mask = x > 0.3
    for value in [0.0, torch.tensor(2.0), x[mask] * 2]:
        expected = put(x, mask, value)
        for m in [mask.to(DEV), mask]:  # a CPU mask indexes a device tensor too
            torch_backend.reset_fallback_counts()
            v = value.to(DEV) if isinstance(value, torch.Tensor) and value.dim() else value
            torch.testing.assert_close(put(x.to(DEV), m, v).cpu(), expected, rtol=0, atol=0)
            torch.testing.assert_close(x.to(DEV)[m].cpu(), x[mask], rtol=0, atol=0)
            assert (torch_backend.fallback_counts() if native else composed_fallbacks()) == {}
    check(lambda t: t[t > 100], x)  # no element: nothing to gather
    check(lambda t: t[torch.tensor([], dtype=torch.long, device=t.device)], x)
    check(lambda t: put(t, t > 100, torch.ones(1)), x)
    with pytest.warns(UserWarning, match="uint8"):
        check(lambda t: t[(t > 0).to(torch.uint8)], x, exact=True)
    source = torch.randn(60, generator=g)
    check(lambda t, s: t.masked_scatter(t > 0, s), x, source, exact=True)
    check(lambda t, s: t.transpose(0, 2).masked_scatter(t.transpose(0, 2) > 0, s), x, source,
          exact=True)  # fmt: skip


def test_linspace_and_randperm():
    """linspace equals the CPU's in each floating dtype (both ends exact); randperm is a
    permutation drawn from the device's generator (the same for a seed)."""
    for dtype in [torch.float32, torch.float64]:
        for start, end, steps in [(-2.5, 7.0, 101), (0, 1, 1000), (3, 3, 5), (1, -1, 2), (4, 9, 1),
                                  (0, 1, 0)]:  # fmt: skip
            torch_backend.reset_fallback_counts()
            got = torch.linspace(start, end, steps, dtype=dtype, device=DEV)
            torch.testing.assert_close(got.cpu(), torch.linspace(start, end, steps, dtype=dtype))
            assert composed_fallbacks() == {}
    out = torch.empty(3, device=DEV)
    torch.linspace(0, 1, 7, out=out)
    torch.testing.assert_close(out.cpu(), torch.linspace(0, 1, 7))
    draws = []
    for _ in range(2):
        torch.manual_seed(5)
        torch_backend.reset_fallback_counts()
        draws.append(torch.randperm(1000, device=DEV).cpu())
        assert composed_fallbacks() == {}
    assert torch.equal(draws[0].sort().values, torch.arange(1000))
    assert torch.equal(draws[0], draws[1])
    assert not torch.equal(draws[0], torch.arange(1000))
    assert torch.randperm(0, device=DEV).shape == (0,)


def test_prelu_xlogy_cross_and_bernoulli():
    """prelu with its gradients (one weight and one per channel), xlogy's NaN/zero/inf rules
    with numbers and integers, kl_div, linalg.cross and torch.cross (broadcast), bernoulli with
    a tensor of probabilities, and its refusal of a p outside [0, 1]."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 4, generator=g)
    check(F.prelu, x, torch.rand(3, generator=g), grad=True)
    check(F.prelu, x, torch.rand(1, generator=g), grad=True)
    a = torch.tensor([0.0, 0.0, 1.0, 2.0, 0.0, 3.0, -1.0, float("nan")])
    b = torch.tensor([0.0, float("nan"), float("inf"), 3.0, float("inf"), -1.0, 0.0, 1.0])
    check(torch.xlogy, a, b, exact=True)
    check(torch.xlogy, torch.tensor([0, 2, 3]), torch.tensor([5, 2, 0]))
    check(lambda t: torch.xlogy(t, 2.0), x)
    check(lambda t: torch.xlogy(3, t.abs()), x)
    check(lambda t, u: F.kl_div(t.log_softmax(-1), u.softmax(-1), reduction="batchmean"), x,
          x.flip(0), grad=True)  # fmt: skip
    check(torch.linalg.cross, torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g),
          grad=True)  # fmt: skip
    check(lambda p, q: torch.linalg.cross(p, q, dim=0), torch.randn(3, 5, generator=g),
          torch.randn(3, 1, generator=g))  # fmt: skip
    check(lambda p, q: torch.cross(p, q, dim=1), torch.randn(2, 3, 4, generator=g),
          torch.randn(2, 3, 4, generator=g))  # fmt: skip
    p = torch.rand(200, 100, generator=g).to(DEV)
    torch_backend.reset_fallback_counts()
    drawn = torch.bernoulli(p)
    assert composed_fallbacks() == {}
    assert set(drawn.unique().cpu().tolist()) <= {0.0, 1.0}
    assert abs(drawn.mean().item() - p.mean().item()) < 0.02
    assert torch.bernoulli(torch.zeros(50, device=DEV)).sum().item() == 0
    assert torch.bernoulli(torch.ones(50, device=DEV)).sum().item() == 50
    with pytest.raises(RuntimeError, match=r"p to be in \[0, 1\]"):
        torch.bernoulli(torch.full((3,), 1.5, device=DEV))


def test_unique_unfold_search_and_linear_upsampling():
    """torch.unique with its inverse and counts (NaNs each their own, integers, empty), nn.Unfold
    and nn.Fold with padding, stride and dilation (and unbatched) and their gradients,
    searchsorted and bucketize on both sides, with NaN values, a sorter, rows of sequences and
    a number, and interpolate(mode="linear") with its gradient."""
    g = torch.Generator().manual_seed(6)
    with_nans = torch.tensor([1.0, math.nan, 2.0, 1.0, math.nan, 3.0])
    for t in [torch.randint(0, 5, (4, 6), generator=g), with_nans, torch.zeros(0, 3)]:
        for inverse, counts in [(False, False), (True, True)]:
            torch_backend.reset_fallback_counts()
            got = torch.unique(t.to(DEV), return_inverse=inverse, return_counts=counts)
            expected = torch.unique(t, return_inverse=inverse, return_counts=counts)
            pairs = zip(got, expected, strict=True) if inverse else [(got, expected)]
            for a, b in pairs:
                torch.testing.assert_close(a.cpu(), b, equal_nan=True, rtol=0, atol=0)
            assert composed_fallbacks() == {}
    image = torch.randn(2, 3, 9, 8, generator=g)
    check(lambda t: F.unfold(t, 3, padding=1, stride=2), image, grad=True, exact=True)
    check(lambda t: F.unfold(t, (2, 3), dilation=2), image, grad=True)
    check(lambda t: F.unfold(t, 2), image[0], exact=True)
    columns = F.unfold(image, 3, padding=1, stride=2)
    check(lambda t: F.fold(t, (9, 8), 3, padding=1, stride=2), columns, grad=True)
    boundaries = torch.tensor([0.1, 0.5, 0.5, 2.0, 3.0])
    values = torch.tensor([[0.0, 0.5, 2.5], [math.nan, 3.0, -1.0]])
    for right in [False, True]:
        check(lambda v, b, r=right: torch.bucketize(v, b, right=r), values, boundaries, exact=True)
        check(lambda b, v, r=right: torch.searchsorted(b, v, right=r, out_int32=True), boundaries,
              values, exact=True)  # fmt: skip
    rows = torch.sort(torch.randn(2, 7, generator=g)).values
    check(lambda b, v: torch.searchsorted(b, v, side="right"), rows, torch.randn(2, 4, generator=g),
          exact=True)  # fmt: skip
    shuffled = torch.randperm(5, generator=g)
    check(lambda b, v, s: torch.searchsorted(b, v, sorter=s), boundaries[shuffled], values,
          torch.argsort(boundaries[shuffled]), exact=True)  # fmt: skip
    check(lambda b: torch.searchsorted(b, 0.7).reshape(1), boundaries, exact=True)
    signal = torch.randn(2, 3, 7, generator=g)
    check(lambda t: F.interpolate(t, size=13, mode="linear"), signal, grad=True)
    check(lambda t: F.interpolate(t, scale_factor=2.5, mode="linear", align_corners=True), signal,
          grad=True)  # fmt: skip


def test_adaptive_max_pooling_with_equal_windows():
    """adaptive_max_pool2d where each side is a multiple of the output's (global pooling,
    halving), batched and not, with the CPU's indices and gradients; other sizes give the
    CPU's results through its fallback."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(2, 3, 8, 6, generator=g)
    for size in [(1, 1), (4, 3), (2, 6), (8, 6)]:
        check(lambda t, s=size: F.adaptive_max_pool2d(t, s), x, grad=True, exact=True)
        check(lambda t, s=size: F.adaptive_max_pool2d(t, s, return_indices=True)[1], x)
    check(lambda t: F.adaptive_max_pool2d(t, 2), x[0], grad=True, exact=True)
    expected = F.adaptive_max_pool2d(x, (3, 4))  # windows of unequal size: the CPU's
    torch.testing.assert_close(F.adaptive_max_pool2d(x.to(DEV), (3, 4)).cpu(), expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bicubic_upsampling(dtype):
    """interpolate(mode="bicubic") up and down, by size and by scale factor, with and without
    align_corners, to one pixel, and its gradient, as the CPU computes them."""
    g = torch.Generator().manual_seed(8)
    x = torch.randn(2, 3, 7, 9, generator=g, dtype=dtype)
    for options in [{"size": (13, 5)}, {"scale_factor": 2.0}, {"scale_factor": (1.7, 0.6)},
                    {"size": (1, 1)}, {"size": (13, 17), "align_corners": True},
                    {"size": (1, 4), "align_corners": True}]:  # fmt: skip
        check(lambda t, o=options: F.interpolate(t, mode="bicubic", **o), x, grad=True)
