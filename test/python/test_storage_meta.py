"""Per-storage metadata (vendor.h "Per-storage metadata", ABI 2.4; csrc/runtime/StorageMeta.cpp):
values the vendor keeps for a storage -- emu any name, npu its storage "format" (plain layouts
only) -- shared by the storage's views, kept through in-place work and torch.compile, written by
torch.save and restored by torch.load, forgotten when the storage is freed; a vendor without
the extension (fake) refuses to set one, and refuses to load a file that carries one."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
import torch
from conftest import DEV, REPO

import torch_backend

HAS_META = DEV in ("emu", "npu")
# A (name, value) the vendor takes, and one it refuses.
NAME, VALUE, OTHER = "format", 2, 1  # ACL_FORMAT_ND, ACL_FORMAT_NHWC: npu's plain layouts

needs_meta = pytest.mark.skipif(not HAS_META, reason=f"{DEV} keeps no per-storage metadata")


@needs_meta
def test_views_share_their_storage_values():
    x = torch.randn(6, 4, device=DEV)
    assert torch_backend.storage_meta(x) == {}
    torch_backend.set_storage_meta(x[2:], NAME, VALUE)
    for view in (x, x[1], x.t(), x.view(24), x.detach()):
        assert torch_backend.storage_meta(view) == {NAME: VALUE}
    torch_backend.set_storage_meta(x, NAME, OTHER)  # replaces
    assert torch_backend.storage_meta(x[3]) == {NAME: OTHER}
    # A new storage starts without values: results, clones, copies.
    assert torch_backend.storage_meta(x.clone()) == {}
    assert torch_backend.storage_meta(x + 1) == {}
    # PyTorch's own view of it, as torch.save writes it.
    assert torch._utils.get_tensor_metadata(x) == {f"{NAME}={OTHER}": True}


@needs_meta
def test_a_freed_storage_forgets_its_values():
    x = torch.empty(1024, device=DEV)
    torch_backend.set_storage_meta(x, NAME, VALUE)
    address = x.data_ptr()
    del x
    y = torch.empty(1024, device=DEV)  # the caching allocator hands out the same block
    assert y.data_ptr() == address
    assert torch_backend.storage_meta(y) == {}


@needs_meta
def test_save_and_load_restore_the_values():
    x = torch.randn(5, 3, device=DEV)
    torch_backend.set_storage_meta(x, NAME, VALUE)
    plain = torch.randn(2, device=DEV)
    buffer = io.BytesIO()
    torch.save({"x": x, "row": x[1], "plain": plain}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert torch.equal(loaded["x"].cpu(), x.cpu())
    assert torch_backend.storage_meta(loaded["x"]) == {NAME: VALUE}
    assert torch_backend.storage_meta(loaded["row"]) == {NAME: VALUE}
    assert loaded["row"].untyped_storage().data_ptr() == loaded["x"].untyped_storage().data_ptr()
    assert torch_backend.storage_meta(loaded["plain"]) == {}
    # On the CPU the bytes load as saved; the values have nowhere to go.
    buffer.seek(0)
    on_cpu = torch.load(buffer, map_location="cpu")
    assert torch.equal(on_cpu["x"], x.cpu())


@needs_meta
def test_values_survive_compiled_training_steps():
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4).to(DEV)
    for p in model.parameters():
        torch_backend.set_storage_meta(p, NAME, VALUE)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    @torch.compile(backend="aot_eager")
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x).square().mean()

    for _ in range(2):
        optimizer.zero_grad()
        step(torch.randn(3, 8, device=DEV)).backward()
        optimizer.step()
    for p in model.parameters():
        assert torch_backend.storage_meta(p) == {NAME: VALUE}


@needs_meta
def test_refusals_name_what_was_wrong():
    x = torch.ones(4, device=DEV)
    with pytest.raises(ValueError, match="C identifier"):
        torch_backend.set_storage_meta(x, "not a name", 1)
    with pytest.raises(RuntimeError, match="expected a tensor of device type"):
        torch_backend.set_storage_meta(torch.ones(4), NAME, VALUE)
    with pytest.raises(RuntimeError, match="0 bytes"):
        torch_backend.set_storage_meta(torch.ones(0, device=DEV), NAME, VALUE)
    if DEV == "npu":
        with pytest.raises(ValueError, match=r"keeps no storage metadata named 'layout'.*format"):
            torch_backend.set_storage_meta(x, "layout", 1)
        with pytest.raises(ValueError, match=r"ACL_FORMAT_FRACTAL_NZ\) is not a plain layout"):
            torch_backend.set_storage_meta(x, "format", 29)
    assert torch_backend.storage_meta(x) == {}


@pytest.mark.skipif(HAS_META, reason=f"{DEV} keeps per-storage metadata")
def test_a_vendor_without_the_extension_refuses_values(tmp_path):
    x = torch.ones(4, device=DEV)
    assert torch_backend.storage_meta(x) == {}
    with pytest.raises(NotImplementedError, match="TB_EXTENSION_STORAGE_META"):
        torch_backend.set_storage_meta(x, NAME, VALUE)
    # A file saved by a vendor that kept a value: loading it here would drop what the value
    # says about the bytes, so it is refused, with the way to read the bytes as saved.
    path = tmp_path / "meta.pt"
    code = (
        "import sys, torch, torch_backend\n"
        "x = torch.arange(4.0, device='emu')\n"
        f"torch_backend.set_storage_meta(x, {NAME!r}, {VALUE})\n"
        "torch.save(x, sys.argv[1])\n"
    )
    env = dict(os.environ, TORCH_BACKEND_VENDOR="emu")
    saved = subprocess.run(
        [sys.executable, "-c", code, str(path)], env=env, cwd=REPO, capture_output=True, text=True
    )
    assert saved.returncode == 0, saved.stderr
    with pytest.raises(NotImplementedError, match="map_location='cpu'"):
        torch.load(path, map_location=DEV)
    assert torch.equal(torch.load(path, map_location="cpu"), torch.arange(4.0))


def test_fake_tensors_have_no_values_and_do_not_raise():
    """torch.compile's fake tensors report the device while their storage is meta; PyTorch
    asks for their metadata too (Inductor's repro writer): nothing to report, no error."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    x = torch.ones(3, device=DEV)
    if HAS_META:
        torch_backend.set_storage_meta(x, NAME, VALUE)
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(x)
        assert fake.device == x.device
        assert torch._utils.get_tensor_metadata(fake) == {}
