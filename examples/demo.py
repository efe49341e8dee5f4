"""The main job: load the vendor as a PyTorch device, move data to it, compute, and show what
ran where.

    make demo                               # the default vendor
    TORCH_BACKEND_VENDOR=faulty make demo   # any bundled name or a vendor library path
"""

from __future__ import annotations

import json

import torch

import torch_backend


def main() -> None:
    info = torch_backend.vendor_info()
    device_type = info["device_type"]
    module = getattr(torch, device_type)
    print("vendor_info():", json.dumps(info, indent=2))
    print(f"device 0: {module.get_device_name(0)}, {module.device_count()} device(s)")

    torch.manual_seed(0)
    a, b = torch.randn(64, 32), torch.randn(32, 16)
    x, y = a.to(device_type), b.to(device_type)
    torch_backend.reset_fallback_counts()
    out = torch.relu(x @ y).sum(dim=1)
    reference = torch.relu(a @ b).sum(dim=1)
    print(f"relu(x @ y).sum(dim=1) on {out.device}: first values {out[:4].cpu().tolist()}")
    torch.testing.assert_close(out.cpu(), reference)
    print("matches the CPU result")

    stream = module.Stream()
    start, end = module.Event(enable_timing=True), module.Event(enable_timing=True)
    with module.stream(stream):
        start.record()
        z = (x * 2).sum()
        end.record()
    end.synchronize()
    print(f"on a side stream: sum = {z.item():.4f} in {start.elapsed_time(end):.3f} ms")

    print("operators that ran through the CPU fallback:")
    for name, count in sorted(torch_backend.fallback_counts().items()):
        print(f"  {name:40s} {count}")
    stats = module.memory_stats()
    print(
        f"memory: {stats['allocated_bytes.all.current']} bytes allocated, "
        f"{stats['reserved_bytes.all.current']} reserved, "
        f"peak {stats['allocated_bytes.all.peak']}"
    )


if __name__ == "__main__":
    main()
