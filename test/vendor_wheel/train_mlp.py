"""Train the demo's MLP on the device an installed vendor wheel brings up, beside the CPU.

Run by run.sh in a fresh virtual environment holding only torch, torch_backend's wheel and the
vendor's wheel, with no TORCH_BACKEND_VENDOR: `import torch` must find the vendor through its
torch_backend.vendors entry point.  Fails unless the device is EXPECTED (argv[1]), its library
comes from the venv, every step's loss matches the CPU's (the demo's tolerance), and no
operator of the training step ran on the CPU fallback (the example's kernels cover them all).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

import torch_backend

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import models

STEPS = 10
RTOL, ATOL = 1e-4, 1e-5


def losses(device: str) -> list[float]:
    network = models.build("mlp", device, seed=0)
    optimizer = torch.optim.SGD(network.parameters(), lr=0.05, momentum=0.9, fused=True)
    result = []
    for x, target in models.batches("mlp", STEPS):
        loss = F.cross_entropy(network(x.to(device)), target.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        result.append(loss.item())
    return result


def main() -> int:
    expected = sys.argv[1]
    assert "TORCH_BACKEND_VENDOR" not in os.environ or os.environ["TORCH_BACKEND_VENDOR"].endswith(
        f"libtb_vendor_{expected}.so"
    ), "run without TORCH_BACKEND_VENDOR: the entry point must choose"
    info = torch_backend.vendor_info()
    print(f"vendor: {info}")
    print(f"installed vendors: {torch_backend.installed_vendors()}")
    if info["device_type"] != expected or not info["library"].startswith(sys.prefix):
        print(f"FAIL: expected the '{expected}' device from this environment ({sys.prefix})")
        return 1
    torch_backend.reset_fallback_counts()
    device_losses = losses(expected)
    cpu_losses = losses("cpu")
    print(f"  {'step':>4}  {expected + ' loss':>14}  {'cpu loss':>14}")
    worst = 0.0
    for step, (d, c) in enumerate(zip(device_losses, cpu_losses, strict=True), 1):
        worst = max(worst, abs(d - c) / (ATOL + RTOL * abs(c)))
        print(f"  {step:>4}  {d:>14.7f}  {c:>14.7f}")
    kernels = torch_backend.kernel_counts()
    print(f"kernels that ran: {len(kernels)} {sorted(kernels)}")
    print(f"CPU fallbacks: {torch_backend.fallback_counts()}")
    if worst > 1.0:
        print(f"FAIL: the losses differ from the CPU's beyond rtol {RTOL}, atol {ATOL}")
        return 1
    if torch_backend.fallback_counts():
        print("FAIL: the example's twelve kernels should run the whole training step")
        return 1
    print("the MLP trained like the CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
