"""torch.save and torch.load to and from the device."""

from __future__ import annotations

import io

import torch
from conftest import DEV


def roundtrip(obj, **kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **kwargs)


def test_device_tensor_round_trip():
    x = torch.randn(4, 5)
    loaded = roundtrip(x.to(DEV))
    assert loaded.device == torch.device(DEV, 0)
    assert torch.equal(loaded.cpu(), x)


def test_map_location():
    x = torch.randn(3, 3)
    assert roundtrip(x.to(DEV), map_location="cpu").device.type == "cpu"
    loaded = roundtrip(x, map_location=DEV)
    assert loaded.device.type == DEV and torch.equal(loaded.cpu(), x)


def test_views_keep_sharing_storage():
    base = torch.arange(10.0, device=DEV)
    view = base[2:6]
    loaded_base, loaded_view = roundtrip([base, view])
    loaded_view.fill_(-1)
    assert loaded_base.cpu()[2:6].tolist() == [-1.0] * 4


def test_module_state_dict():
    model = torch.nn.Linear(3, 2).to(DEV)
    state = roundtrip(model.state_dict())
    fresh = torch.nn.Linear(3, 2).to(DEV)
    fresh.load_state_dict(state)
    assert torch.equal(fresh.weight.cpu(), model.weight.cpu())
    assert fresh.weight.device.type == DEV


def test_map_location_to_second_device(two_devices):
    loaded = roundtrip(torch.ones(2), map_location=f"{DEV}:1")
    assert loaded.device == torch.device(DEV, 1)
    assert loaded.cpu().tolist() == [1.0, 1.0]
