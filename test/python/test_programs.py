"""Programs users bring (examples/programs/): PyTorch's documentation and pytorch/examples'
patterns -- graphs (whole network, make_graphed_callables, AMP, shared pools), hogwild over
mp.Process, a CNN, a DCGAN (transposed convolutions, BCELoss) checked against the CPU, LSTM and
Transformer language models, the profiler with a schedule, DDP over
mp.spawn with a resumed checkpoint -- each run as a user runs it, in a fresh interpreter, and
checking its own outcome.  A program runs on every vendor that has what it needs."""

from __future__ import annotations

import os
import sys

import pytest
from conftest import DEV, REPO, run

PROGRAMS = REPO / "examples" / "programs"

# What each program needs beyond kernels: graphs (TB_EXTENSION_GRAPHS) and device memory shared
# with other processes (TB_EXTENSION_IPC) are emu's and npu's; every bundled vendor with kernels
# has collectives (or Gloo's path) and the profiler's device timeline.
WITH_GRAPHS = {"emu", "npu"}
WITH_IPC = {"emu", "npu"}
WITH_KERNELS = {"emu", "npu", "ocl"}
CASES = {
    "graphs whole": WITH_GRAPHS,
    "graphs partial": WITH_GRAPHS,
    "graphs amp": WITH_GRAPHS,
    "graphs pools": WITH_GRAPHS,
    "hogwild": WITH_IPC,
    "cnn": WITH_KERNELS,
    "dcgan": WITH_KERNELS,
    "language_model lstm": WITH_KERNELS,
    "language_model transformer": WITH_KERNELS,
    "profiler": WITH_KERNELS,
    "ddp_spawn": WITH_KERNELS,
}


@pytest.mark.parametrize("case", list(CASES))
def test_program(case, tmp_path):
    if DEV not in CASES[case]:
        pytest.skip(f"{DEV} lacks what {case} needs")
    script, *args = case.split()
    # Run from an empty directory, as a user would: the source tree must not shadow the package.
    result = run(
        [sys.executable, str(PROGRAMS / f"{script}.py"), *args],
        cwd=tmp_path,
        env=dict(os.environ),
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"ok on {DEV}" in result.stdout, result.stdout[-2000:]
