"""The differential stress harness (test/stress/differential.py): random CUDA-style programs
over two devices, three streams, pinned and pageable memory, blocking and non_blocking copies,
views, out= and in-place operators and frees while work is queued, each checked value by value
against the same program on the CPU.  TB_STRESS_PROGRAMS sets how many (default 2000)."""

from __future__ import annotations

import os
import sys

import pytest
from conftest import MODULE, REPO

sys.path.insert(0, str(REPO / "test" / "stress"))
import differential

PROGRAMS = int(os.environ.get("TB_STRESS_PROGRAMS", "2000"))


def test_random_programs_match_the_cpu(capsys):
    if MODULE.device_count() < 2:
        pytest.skip("needs two devices")
    status = differential.main(["--programs", str(PROGRAMS), "--seed", "0"])
    report = capsys.readouterr().out
    with capsys.disabled():
        print("\n" + report.splitlines()[-1] if status == 0 else report)
    assert status == 0, report
