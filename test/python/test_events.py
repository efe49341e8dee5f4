"""Events: record, query, synchronize, cross-stream waits and timing."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV, MODULE


def test_record_query_synchronize():
    event = MODULE.Event()
    assert isinstance(event, MODULE.Event) and isinstance(event, torch.Event)
    assert event.query()  # never recorded: complete
    x = torch.ones(1 << 18, device=DEV)
    event.record()
    event.synchronize()
    assert event.query()
    del x


def test_timing():
    start, end = MODULE.Event(enable_timing=True), MODULE.Event(enable_timing=True)
    start.record()
    a = torch.randn(1 << 20, device=DEV)
    b = (a * a).sum()
    end.record()
    end.synchronize()
    elapsed = start.elapsed_time(end)
    assert elapsed >= 0.0
    middle = MODULE.Event(enable_timing=True)
    middle.record()
    middle.synchronize()
    assert start.elapsed_time(middle) >= elapsed
    del a, b


def test_timing_requires_enable_timing():
    start, end = MODULE.Event(), MODULE.Event()
    start.record()
    end.record()
    end.synchronize()
    with pytest.raises((RuntimeError, ValueError), match="enable_timing"):
        start.elapsed_time(end)


def test_event_orders_streams():
    producer, consumer = MODULE.Stream(), MODULE.Stream()
    data = torch.randn(1 << 20)
    with MODULE.stream(producer):
        x = data.to(DEV) + 1
        ready = MODULE.Event()
        ready.record(producer)
    consumer.wait_event(ready)
    with MODULE.stream(consumer):
        y = x * 2
    x.record_stream(consumer)
    consumer.synchronize()
    torch.testing.assert_close(y.cpu(), (data + 1) * 2)


def test_stream_record_event():
    stream = MODULE.Stream()
    event = stream.record_event()
    event.wait(MODULE.current_stream())
    event.synchronize()
    assert event.query()
