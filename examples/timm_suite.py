"""Whole model libraries: the TIMM models PyTorch's dynamo benchmarks run, on the device.

Each model is created by timm with random weights (seed 0, eval mode: no dropout, batch norm
from its running statistics), given a batch of 2 at a small input size, and run forward and
backward -- ``out.sum().backward()`` -- on the device and on the CPU from the same weights.  A
model passes when

- in float64, its output and every parameter's gradient on the device equal the CPU's to
  ``EXACT_TOLERANCE`` (normwise): a kernel defect shows there, and rounding cannot hide it;
- in float32, the device's errors from that float64 answer are at most ``FACTOR`` times the
  CPU's float32 errors, plus ``FLOAT32_TOLERANCE``.

A plain comparison of the two float32 results cannot tell a defect from float32 noise: some of
levit_128's gradients are 1e-19 in float64 (zero up to cancellation) and rounding noise in
float32 on the CPU and on any device alike, and in inception_v3 and mobilenetv2_100 a value
within 1e-5 of a ReLU's threshold lands on the other side of it on the device, moving the
early layers' gradients by 1e-3 -- the CPU's float32 would do the same with another summation
order.  The operators the float32 run sent through the CPU fallback are counted.

The list is torch's ``benchmarks/dynamo/timm_models_list.txt`` (``MODELS``), plus levit_128,
which an earlier list held and whose gradients were once reported wrong.  ``make timm`` runs
it all and prints the table; ``test/python/test_timm.py`` runs ``FAST`` in make test.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import sys
import time
from pathlib import Path

import torch

import torch_backend

# torch's benchmarks/dynamo/timm_models_list.txt (its model names), and levit_128.
MODELS = [
    "adv_inception_v3",
    "beit_base_patch16_224",
    "convnextv2_nano.fcmae_ft_in22k_in1k",
    "deit_base_distilled_patch16_224",
    "deit_tiny_patch16_224.fb_in1k",
    "dm_nfnet_f0",
    "ghostnet_100",
    "inception_v3",
    "mobilenetv2_100",
    "mobilenetv3_large_100",
    "mobilevit_s",
    "nfnet_l0",
    "repvgg_a2",
    "swin_base_patch4_window7_224",
    "tf_efficientnet_b0",
    "visformer_small",
    "vit_base_patch14_dinov2.lvd142m",
    "vit_base_patch16_siglip_256",
    "levit_128",
]
# What make test runs: small models of different families (a vision transformer with attention
# biases, a depthwise/squeeze-excite CNN, a ghost-module CNN).
FAST = ["levit_128", "mobilenetv3_large_100", "deit_tiny_patch16_224.fb_in1k"]

# Input sizes below the models' defaults where the architecture allows it (convolutional nets
# take any size, dinov2 is made for 224 instead of 518); other transformers keep theirs.
CREATE_ARGS = {"vit_base_patch14_dinov2.lvd142m": {"img_size": 224}}
SMALL_INPUT = {
    "vit_base_patch14_dinov2.lvd142m": 224,
    "adv_inception_v3": 160,
    "inception_v3": 160,
    "dm_nfnet_f0": 128,
    "nfnet_l0": 128,
    "ghostnet_100": 128,
    "mobilenetv2_100": 128,
    "mobilenetv3_large_100": 128,
    "repvgg_a2": 128,
    "tf_efficientnet_b0": 128,
    "convnextv2_nano.fcmae_ft_in22k_in1k": 128,
    "mobilevit_s": 128,
}

# float64 on the device against float64 on the CPU: what rounding alone allows.
EXACT_TOLERANCE = 1e-9
# float32 against the float64 answer: at most FACTOR times the CPU's own error, plus what one
# value landing on the other side of a ReLU or a max-pool tie moves (a float32 rounding
# difference near 0 that the CPU may make as well; PyTorch's own benchmarks allow 1e-2 of
# float32 training error for such models).
FACTOR = 4.0
FLOAT32_TOLERANCE = 2e-2


@dataclasses.dataclass
class Result:
    name: str
    exact_error: float  # float64 on the device vs the CPU's, worst of output and gradients
    output_error: float  # float32: normwise error from float64, the device's
    cpu_output_error: float  # ... and the CPU's
    worst_gradient: str  # the parameter whose float32 gradient error ratio is largest
    gradient_error: float
    cpu_gradient_error: float
    fallbacks: dict[str, int]  # of the float32 run
    seconds: float
    failures: list[str]

    @property
    def passed(self) -> bool:
        return not self.failures


def make_model(name: str) -> tuple[torch.nn.Module, torch.Tensor]:
    from zoo import import_torchvision  # examples/zoo.py: timm imports torchvision

    import_torchvision()
    import timm

    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, **CREATE_ARGS.get(name, {})).eval()
    config = model.pretrained_cfg
    size = SMALL_INPUT.get(name, config.get("input_size", (3, 224, 224))[-1])
    channels = config.get("input_size", (3, 224, 224))[0]
    torch.manual_seed(1)
    return model, torch.randn(2, channels, size, size)


def forward_backward(model: torch.nn.Module, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The output (key "") and every parameter's gradient, on the CPU in float64."""
    model.zero_grad(set_to_none=True)
    out = model(x)
    out.sum().backward()
    torch.accelerator.synchronize()
    found = {"": out.detach()}
    found.update({n: p.grad for n, p in model.named_parameters() if p.grad is not None})
    return {k: v.detach().double().cpu() for k, v in found.items()}


class Scale:
    """Normwise errors, each against the larger of the reference's own norm and 1e-4 of the
    largest gradient norm: some gradients are zero up to cancellation -- levit's q branch is
    1e-19 in float64, and dinov2's position embedding 1e-13, since out.sum() of a LayerNorm's
    output does not depend on its input -- and their rounding noise is judged against the
    model's scale, not their own.  A defect in such a gradient still shows: wrong by its own
    size, it is 1e-4 of the scale, far above EXACT_TOLERANCE."""

    def __init__(self, exact: dict[str, torch.Tensor]) -> None:
        self.floor = 1e-4 * max(t.norm().item() for k, t in exact.items() if k)

    def error(self, actual: torch.Tensor, exact: torch.Tensor) -> float:
        return (actual - exact).norm().item() / max(exact.norm().item(), self.floor, 1e-300)


def check(name: str, device: str, compiled: bool = False) -> Result:
    """``name`` forward and backward: float64 on the device against float64 on the CPU (any
    kernel defect shows; rounding does not), and float32 on the device and the CPU against
    that float64 answer.  ``compiled``: the device's models and the CPU's float64 one run
    ``Module.compile()`` (forward and backward through Inductor), so that the generated kernels
    are held to the same bounds.  The float64 reference is compiled too: Inductor's
    decompositions are not eager ATen's to the last bit in float64 (hardswish's backward
    multiplies by an exact 1/6, ATen's kernel by float(1/6): mobilenetv3's gradients move by
    3e-8 on the CPU itself)."""
    start = time.perf_counter()
    model, x = make_model(name)
    # Copies before any forward: some models cache tensors derived from their weights then
    # (levit's attention biases), which deepcopy refuses.
    exact_model = copy.deepcopy(model).double()
    device_exact_model = copy.deepcopy(model).double().to(device)
    device_model = copy.deepcopy(model).to(device)
    if compiled:
        torch._dynamo.reset()
        exact_model.compile()
        device_exact_model.compile()
        device_model.compile()
    exact = forward_backward(exact_model, x.double())
    scale = Scale(exact)
    failures: list[str] = []
    device_exact = forward_backward(device_exact_model, x.double().to(device))
    exact_error = 0.0
    for key, reference in exact.items():
        if key not in device_exact:
            failures.append(f"float64: no gradient of {key} on the device")
            continue
        error = scale.error(device_exact[key], reference)
        exact_error = max(exact_error, error)
        if not error <= EXACT_TOLERANCE:
            what = f"gradient of {key}" if key else "output"
            failures.append(f"float64: {what} differs from the CPU's by {error:.1e} (normwise)")
    cpu = forward_backward(model, x)
    torch_backend.reset_fallback_counts()
    ours = forward_backward(device_model, x.to(device))
    fallbacks = torch_backend.fallback_counts()
    worst, worst_ratio = "", -1.0
    errors = {"": (0.0, 0.0)}
    for key, reference in exact.items():
        if key not in ours:
            failures.append(f"float32: no gradient of {key} on the device")
            continue
        error, cpu_error = scale.error(ours[key], reference), scale.error(cpu[key], reference)
        errors[key] = (error, cpu_error)
        if not error <= FACTOR * cpu_error + FLOAT32_TOLERANCE:
            what = f"gradient of {key}" if key else "output"
            failures.append(
                f"float32: {what}: error {error:.1e} from float64, the CPU's {cpu_error:.1e}"
            )
        ratio = error / (cpu_error + 1e-12)
        if key and ratio > worst_ratio:
            worst, worst_ratio = key, ratio
    return Result(
        name,
        exact_error,
        *errors[""],
        worst,
        *errors.get(worst, (0.0, 0.0)),
        fallbacks,
        time.perf_counter() - start,
        failures,
    )


def table(results: list[Result], device: str, compiled: bool = False) -> str:
    how = " under torch.compile" if compiled else ""
    lines = [
        f"TIMM on {device}{how}: batch 2, random init, eval, out.sum().backward().  f64: the "
        f"device's float64 output and gradients vs the CPU's (worst normwise; pass <= "
        f"{EXACT_TOLERANCE:g}).  f32: normwise errors from the float64 answer, device / CPU "
        f"(pass: device <= {FACTOR:g} x CPU + {FLOAT32_TOLERANCE:g}); the gradient shown is "
        f"the one whose device/CPU ratio is largest.",
        f"| {'model':<36} | {'f64 max':>7} | {'f32 output dev / cpu':>20} | "
        f"{'f32 worst gradient dev / cpu':>28} | {'fallbacks':>9} | {'s':>5} | result |",
        f"|{'-' * 38}|{'-' * 9}|{'-' * 22}|{'-' * 30}|{'-' * 11}|{'-' * 7}|--------|",
    ]
    for r in results:
        lines.append(
            f"| {r.name:<36} | {r.exact_error:7.1e} | {r.output_error:9.1e} / "
            f"{r.cpu_output_error:8.1e} | {r.gradient_error:13.1e} / "
            f"{r.cpu_gradient_error:12.1e} | "
            f"{sum(r.fallbacks.values()):>9} | {r.seconds:5.1f} | "
            f"{'pass' if r.passed else 'FAIL':>6} |"
        )
    for r in results:
        for failure in r.failures[:5]:
            lines.append(f"  {r.name}: {failure}")
        if r.fallbacks:
            ops = ", ".join(f"{op} x{n}" for op, n in sorted(r.fallbacks.items()))
            lines.append(f"  {r.name}: CPU fallback: {ops}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=torch._C._get_privateuse1_backend_name())
    parser.add_argument("--models", nargs="*", default=MODELS)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--compile", action="store_true", help="the device's models under torch.compile"
    )
    args = parser.parse_args(argv)
    results = []
    for name in args.models:
        results.append(check(name, args.device, args.compile))
        print(f"{name}: {'pass' if results[-1].passed else 'FAIL'} "
              f"({results[-1].seconds:.1f} s)", flush=True)  # fmt: skip
    print(table(results, args.device, args.compile))
    if args.json:
        args.json.write_text(json.dumps([dataclasses.asdict(r) for r in results], indent=1))
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
