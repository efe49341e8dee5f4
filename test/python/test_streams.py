"""Streams: pools per priority, current and default streams, stream contexts, ordering, and the
generic torch.Stream / torch.accelerator APIs."""

from __future__ import annotations

import threading

import torch
from conftest import DEV, MODULE


def test_default_and_current_stream():
    default = MODULE.default_stream()
    current = MODULE.current_stream()
    assert default == current
    assert default.stream_id == 0 and default.device_index == 0
    assert current.query()
    current.synchronize()


def test_new_streams_come_from_a_pool():
    streams = [MODULE.Stream() for _ in range(3)]
    assert all(isinstance(s, torch.Stream) for s in streams)
    assert len({s.stream_id for s in streams}) == 3
    assert all(s != MODULE.default_stream() for s in streams)


def test_priorities():
    least, greatest = MODULE.stream_priority_range()
    assert greatest <= 0 <= least
    assert MODULE.Stream().priority == 0
    high = MODULE.Stream(priority=greatest)
    assert high.priority == greatest
    assert MODULE.Stream(priority=greatest - 100).priority == greatest  # clamped
    assert MODULE.Stream(priority=least + 100).priority == least
    generic = torch.Stream(device=DEV, priority=greatest)
    assert generic.device_type == high.device_type


def test_stream_context_and_set_stream():
    stream = MODULE.Stream()
    with MODULE.stream(stream):
        assert MODULE.current_stream() == stream
        x = torch.arange(1000.0, device=DEV) * 2
    assert MODULE.current_stream() == MODULE.default_stream()
    stream.synchronize()
    assert x.sum().item() == 999000.0
    MODULE.set_stream(stream)
    try:
        assert torch.accelerator.current_stream() == stream
    finally:
        MODULE.set_stream(MODULE.default_stream())
    with MODULE.stream(None):
        assert MODULE.current_stream() == MODULE.default_stream()


def test_current_stream_is_per_thread():
    stream = MODULE.Stream()
    seen = []

    def worker():
        seen.append(MODULE.current_stream())

    with MODULE.stream(stream):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert seen == [MODULE.default_stream()]


def test_work_is_ordered_across_streams():
    side = MODULE.Stream()
    data = torch.randn(1 << 20)
    x = data.to(DEV)
    side.wait_stream(MODULE.current_stream())
    with MODULE.stream(side):
        y = x * 3
    MODULE.current_stream().wait_stream(side)
    x.record_stream(side)
    y.record_stream(MODULE.current_stream())
    torch.testing.assert_close(y.cpu(), data * 3)


def test_generic_stream_api():
    stream = torch.Stream(device=DEV)
    assert stream.device_type == MODULE.default_stream().device_type
    with stream:
        assert torch.accelerator.current_stream() == stream
    assert torch.accelerator.current_stream() == MODULE.default_stream()
    event = stream.record_event()
    event.synchronize()
    assert event.query() and stream.query()


def test_streams_on_other_devices(two_devices):
    stream = MODULE.Stream(device=1)
    assert stream.device_index == 1
    with MODULE.stream(stream):
        assert MODULE.current_device() == 1
        x = torch.ones(4, device=DEV)
    assert MODULE.current_device() == 0
    assert x.device.index == 1
    assert MODULE.current_stream(1) == MODULE.default_stream(1)
