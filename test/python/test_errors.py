"""Error paths: every failure surfaces as a Python exception naming the vendor, the call and the
vendor's message -- a RuntimeError subclass, as CUDA's errors are, so that code catching
RuntimeError keeps working -- never a crash, and leaks nothing; and a child forked after the
parent used the device refuses every device call with CUDA's message."""

from __future__ import annotations

import sys
import textwrap

import pytest
import torch
from conftest import DEV, MODULE, ONCE, run, run_python

import torch_backend


def faulty(call: str, code: str, **env: str):
    """Run `code` with the faulty shim wrapping this process's vendor and failing `call`."""
    wrapped = torch_backend.vendor_info()["library"]
    return run_python(
        code,
        TORCH_BACKEND_VENDOR="faulty",
        TORCH_BACKEND_FAULTY_VENDOR=wrapped,
        TORCH_BACKEND_FAULTY_CALL=call,
        **env,
    )


def test_bad_device_index():
    count = MODULE.device_count()
    message = rf"{DEV}: invalid device index 7: out of range, the vendor has {count} device"
    for call in (
        lambda: torch.empty(1, device=f"{DEV}:7"),
        lambda: MODULE.set_device(7),
        lambda: MODULE.synchronize(7),
        lambda: torch.ones(1).to(f"{DEV}:7"),
    ):
        with pytest.raises(torch.AcceleratorError, match=message) as error:
            call()
        assert isinstance(error.value, RuntimeError)


@ONCE  # emu's profile, whatever the suite's vendor
def test_finalize_runs_once_at_exit_and_never_in_a_forked_child():
    # emu prints its profile when its context is finalized: once, by the parent.
    result = run_python(
        """
        import os, sys, torch, torch_backend
        x = torch.ones(3, device="emu") * 2
        torch.emu.synchronize()
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # exit handlers run: the context is the parent's, not to finalize here
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
        """,
        TORCH_BACKEND_VENDOR="emu",
        TORCH_BACKEND_EMU_PROFILE="1",
    )
    assert result.returncode == 0, result.stderr
    assert "child 0" in result.stdout
    assert result.stderr.count("emu profile:") == 1, result.stderr
    assert "mul.out" in result.stderr


@pytest.mark.parametrize(
    ("call", "code"),
    [
        ("memory.device_malloc", "torch.empty(10, device=DEV)"),
        ("memory.copy_h2d_async", "torch.ones(10).to(DEV)"),
        ("memory.copy_d2h_async", "torch.empty(10, device=DEV).cpu()"),
        ("memory.memset_async", "torch.zeros(10, device=DEV)"),
        ("stream.create", "torch.empty(10, device=DEV).fill_(1.5)"),
        ("stream.synchronize", "torch.ones(3, device=DEV).sum().item()"),
        ("device.synchronize", "getattr(torch, DEV).synchronize()"),
        ("device.get_properties", "getattr(torch, DEV).get_device_name(0)"),
        ("event.create", "getattr(torch, DEV).Event().record()"),
        ("event.record", "getattr(torch, DEV).Event().record()"),
    ],
)
def test_vendor_failure_in_a_call(call, code):
    result = faulty(
        call,
        f"""
        import torch, torch_backend
        DEV = torch_backend.vendor_info()["device_type"]
        try:
            {code}
            print("no error")
        except Exception as e:
            print(type(e).__name__, isinstance(e, RuntimeError))
            print(e)
        """,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "AcceleratorError True", result.stdout
    message = "\n".join(lines[1:])
    assert f"{DEV}: {call}(" in message
    assert (
        f"failed with TB_ERROR_INTERNAL: faulty: injected TB_ERROR_INTERNAL into {call}" in message
    )


@pytest.mark.parametrize(
    ("status", "exception"),
    [
        ("TB_ERROR_INVALID_ARGUMENT", "AcceleratorError"),
        ("TB_ERROR_INVALID_DEVICE", "AcceleratorError"),
        ("TB_ERROR_OUT_OF_MEMORY", "OutOfMemoryError"),
        ("TB_ERROR_NOT_SUPPORTED", "NotImplementedError"),
        ("TB_ERROR_INTERNAL", "AcceleratorError"),
        ("TB_ERROR_UNAVAILABLE", "AcceleratorError"),
        ("TB_ERROR_DEVICE_FAULT", "AcceleratorError"),
    ],
)
@ONCE  # the runtime maps the faulty shim's status, whatever the vendor it wraps
def test_every_status_is_a_runtime_error(status, exception):
    result = faulty(
        "stream.synchronize",
        """
        import torch, torch_backend
        DEV = torch_backend.vendor_info()["device_type"]
        try:
            getattr(torch, DEV).current_stream().synchronize()
        except Exception as e:
            print(type(e).__name__, isinstance(e, RuntimeError))
        """,
        TORCH_BACKEND_FAULTY_STATUS=status,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [exception, "True"]


def test_vendor_out_of_memory_status_becomes_out_of_memory_error():
    result = faulty(
        "memory.device_malloc",
        """
        import torch, torch_backend
        DEV = torch_backend.vendor_info()["device_type"]
        try:
            torch.empty(10, device=DEV)
        except torch.OutOfMemoryError as e:
            print("OOM", e)
        m = getattr(torch, DEV)
        print("retries", m.memory_stats()["num_alloc_retries"])
        x = torch.empty(10, device=DEV)  # the fault was transient
        print("ok", x.device)
        """,
        TORCH_BACKEND_FAULTY_STATUS="TB_ERROR_OUT_OF_MEMORY",
        TORCH_BACKEND_FAULTY_TIMES="2",
    )
    assert result.returncode == 0, result.stderr
    assert "OOM" in result.stdout and "injected TB_ERROR_OUT_OF_MEMORY" in result.stdout
    assert "retries 1" in result.stdout
    assert f"ok {DEV}:0" in result.stdout


def test_failure_leaks_nothing():
    result = faulty(
        "memory.copy_h2d_async",
        """
        import torch, torch_backend
        DEV = torch_backend.vendor_info()["device_type"]
        m = getattr(torch, DEV)
        for _ in range(5):
            try:
                torch.ones(1000).to(DEV)
            except RuntimeError:
                pass
        m.synchronize()
        print("allocated", m.memory_allocated())
        """,
    )
    assert result.returncode == 0, result.stderr
    assert "allocated 0" in result.stdout


FORK_MESSAGE = (
    f"Cannot re-initialize {DEV} in forked subprocess. To use {DEV} with multiprocessing, you "
    "must use the 'spawn' start method"
)


@pytest.mark.parametrize(
    "call",
    [
        "torch.ones(2, device=DEV)",
        "m.init()",
        "m.synchronize()",
        "m.Stream()",
        "m.current_stream().synchronize()",
        "m.Event().record()",
        "m.get_device_name(0)",
        "x.cpu()",
    ],
)
def test_use_in_a_forked_child(call):
    result = run_python(
        f"""
        import os, torch, torch_backend
        DEV = "{DEV}"
        m = getattr(torch, DEV)
        x = torch.ones(2, device=DEV)  # the parent uses the device
        pid = os.fork()
        if pid == 0:
            print("child initialized:", m.is_initialized(), "bad fork:", m._is_in_bad_fork())
            try:
                {call}
                os._exit(3)
            except RuntimeError as e:
                print("child:", e, flush=True)
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        print("status", os.waitstatus_to_exitcode(status))
        print("parent still works", torch.ones(2, device=DEV).sum().item())
        """
    )
    assert result.returncode == 0, result.stderr
    assert "status 0" in result.stdout, result.stdout
    assert "bad fork: True" in result.stdout
    assert f"child: {FORK_MESSAGE}" in result.stdout
    assert "parent still works 2.0" in result.stdout


def test_dataloader_fork_workers_that_do_not_touch_the_device():
    result = run_python(
        f"""
        import multiprocessing, torch, torch_backend
        DEV = "{DEV}"
        w = torch.ones(3, device=DEV)  # the parent uses the device first
        data = torch.utils.data.TensorDataset(torch.arange(12.0).view(6, 2))
        loader = torch.utils.data.DataLoader(
            data, batch_size=2, num_workers=2,
            multiprocessing_context=multiprocessing.get_context("fork"))
        total = sum((batch.to(DEV) * w[:2]).sum() for (batch,) in loader)
        print("total", total.item())
        """
    )
    assert result.returncode == 0, result.stderr
    assert "total 66.0" in result.stdout


def test_fork_while_the_device_computes_does_not_hang():
    # The parent forks (a DataLoader starting its workers) while matrix products run on the
    # device's streams; the children exit at once.  npu's stand-in once hung the parent here:
    # OpenBLAS's fork handler stopped the thread pool a product was waiting for.
    code = f"""
        import os, torch, torch_backend
        x = torch.randn(384, 384, device="{DEV}")
        for _ in range(20):
            y = (x @ x) @ x
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        torch.accelerator.synchronize()
        print("done")
        """
    result = run([sys.executable, "-c", textwrap.dedent(code)], timeout=120)
    assert result.returncode == 0 and "done" in result.stdout, result.stderr


def test_fork_before_use_is_fine():
    result = run_python(
        f"""
        import os, torch, torch_backend
        pid = os.fork()
        if pid == 0:
            os._exit(0 if torch.ones(2, device="{DEV}").sum().item() == 2 else 5)
        _, status = os.waitpid(pid, 0)
        print("status", os.waitstatus_to_exitcode(status))
        """
    )
    assert result.returncode == 0, result.stderr
    assert "status 0" in result.stdout


def test_bad_arguments_are_errors_not_crashes():
    with pytest.raises(ValueError, match="expected a"):
        MODULE.set_device("cpu")
    with pytest.raises(RuntimeError):
        torch.ones(2, device=DEV).view(3)
