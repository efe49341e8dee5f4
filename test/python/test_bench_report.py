"""make bench's report (benchmarks/bench.py and plot.py): the "met" column and the plot's bars
agree on every kind of aim, and the plot is written as a PNG.  No timing is measured."""

from __future__ import annotations

import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench
import plot


def row(device: float, reference: float, target: str, unit: str = "us") -> dict:
    return bench.row("latency", "x", device, reference, unit, target)


@pytest.mark.parametrize(
    "r, met, score",
    [
        (row(1.1, 1.0, "<= 1.3x"), "yes", 1.1 / 1.3),
        (row(2.0, 1.0, "<= 1.3x"), "no", 2.0 / 1.3),
        (row(5.6, 1.0, ">= 0.9x", "GB/s"), "yes", 0.9 / 5.6),
        (row(0.6, 1.0, ">= 0.9x", "GB/s"), "no", 0.9 / 0.6),
        (row(1.23, 0.8, "<= 1 us"), "no", 1.23),
        (row(0.9, 0.8, "<= 1 us"), "yes", 0.9),
        (row(2.0, 1.0, ""), "", 2.0),
    ],
)
def test_met_and_the_plot_agree(r, met, score):
    assert bench.met(r) == met
    got, ok = plot.against_aim(r)
    assert got == pytest.approx(score)
    assert ok == ({"yes": True, "no": False}.get(met))


def test_an_aim_in_another_unit_is_refused():
    with pytest.raises(ValueError, match="not in the row's unit"):
        bench.met(row(1.0, 1.0, "<= 1 ms"))


def test_the_plot_is_a_png(tmp_path):
    rows = [row(1.1, 1.0, "<= 1.3x"), row(0.6, 1.0, ">= 0.9x", "GB/s"), row(1.0, 1.0, "")]
    path = tmp_path / "bench.png"
    plot.write(rows, {"cpu": "test", "cores": 2, "vendor": {"device_type": "emu"}}, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
