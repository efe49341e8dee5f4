"""Error paths: every failure surfaces as a Python exception naming the vendor, the call and the
vendor's message, never a crash, and leaks nothing."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV, MODULE, run_python

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
    with pytest.raises(IndexError, match=rf"{DEV}: invalid device index 7 \(the vendor has"):
        torch.empty(1, device=f"{DEV}:7")


def test_unknown_vendor_fails_import_with_the_loader_message():
    result = run_python("import torch_backend", TORCH_BACKEND_VENDOR="nosuchvendor")
    assert result.returncode != 0
    assert "cannot load the vendor 'nosuchvendor' (TORCH_BACKEND_VENDOR)" in result.stderr
    assert "no bundled vendor named 'nosuchvendor'" in result.stderr


def test_vendor_library_path_that_does_not_exist():
    result = run_python(
        "import torch_backend", TORCH_BACKEND_VENDOR="/nonexistent/libtb_vendor_x.so"
    )
    assert result.returncode != 0
    assert "cannot load vendor library '/nonexistent/libtb_vendor_x.so'" in result.stderr


@pytest.mark.parametrize(
    ("call", "code", "exception"),
    [
        ("memory.device_malloc", "torch.empty(10, device=DEV)", "RuntimeError"),
        ("memory.copy_h2d_async", "torch.ones(10).to(DEV)", "RuntimeError"),
        ("memory.copy_d2h_async", "torch.empty(10, device=DEV).cpu()", "RuntimeError"),
        ("memory.memset_async", "torch.zeros(10, device=DEV)", "RuntimeError"),
        ("stream.create", "torch.empty(10, device=DEV).fill_(1.5)", "RuntimeError"),
        ("stream.synchronize", "torch.ones(3, device=DEV).sum().item()", "RuntimeError"),
        ("device.synchronize", "getattr(torch, DEV).synchronize()", "RuntimeError"),
        ("device.get_properties", "getattr(torch, DEV).get_device_name(0)", "RuntimeError"),
        ("event.create", "getattr(torch, DEV).Event().record()", "RuntimeError"),
        ("event.record", "getattr(torch, DEV).Event().record()", "RuntimeError"),
    ],
)
def test_vendor_failure_in_a_call(call, code, exception):
    result = faulty(
        call,
        f"""
        import torch, torch_backend
        DEV = torch_backend.vendor_info()["device_type"]
        try:
            {code}
            print("no error")
        except Exception as e:
            print(type(e).__name__)
            print(e)
        """,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == exception, result.stdout
    message = "\n".join(lines[1:])
    assert f"{DEV}: {call}(" in message
    assert (
        f"failed with TB_ERROR_INTERNAL: faulty: injected TB_ERROR_INTERNAL into {call}" in message
    )


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


def test_use_in_a_forked_child():
    result = run_python(
        f"""
        import os, torch, torch_backend
        x = torch.ones(2, device="{DEV}")  # the parent uses the device
        pid = os.fork()
        if pid == 0:
            try:
                torch.ones(2, device="{DEV}")
                os._exit(3)
            except RuntimeError as e:
                print("child:", e, flush=True)
                os._exit(0 if torch.{DEV}._is_in_bad_fork() else 4)
        _, status = os.waitpid(pid, 0)
        print("status", os.waitstatus_to_exitcode(status))
        print("parent still works", torch.ones(2, device="{DEV}").sum().item())
        """
    )
    assert result.returncode == 0, result.stderr
    assert "status 0" in result.stdout
    assert f"child: {DEV}: " in result.stdout
    assert "cannot use the vendor in a child process created by fork()" in result.stdout
    assert "parent still works 2.0" in result.stdout


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
