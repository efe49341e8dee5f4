"""A vendor that cannot start never breaks ``import torch``: as with CUDA on a machine without a
driver, the import works, one warning names the cause, the device has 0 devices and
``is_available()`` is False, and the first use of the device raises the same error."""

from __future__ import annotations

import json

import pytest
from conftest import DEV, ONCE, run_python

import torch_backend

# Imports torch as a user would (the backend autoload brings torch_backend in), then reports
# what a user sees, as JSON on the last line.
PROBE = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import torch
    import torch_backend
info = torch_backend.vendor_info()
seen = {
    "warnings": [str(w.message) for w in caught if w.category is RuntimeWarning],
    "info": info,
    "available": torch.accelerator.is_available(),
    "count": torch.accelerator.device_count(),
}
device = info["device_type"]
if device:
    seen["module"] = [getattr(torch, device).is_available(), getattr(torch, device).device_count()]
    try:
        torch.ones(1, device=device)
        seen["first_use"] = None
    except RuntimeError as error:
        seen["first_use"] = str(error)
print(json.dumps(seen))
"""


def probe(**env: str) -> dict:
    result = run_python(PROBE, TORCH_DEVICE_BACKEND_AUTOLOAD="1", **env)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def faulty(**env: str) -> dict:
    """The probe with the faulty shim wrapping this process's vendor."""
    wrapped = torch_backend.vendor_info()["library"]
    return probe(TORCH_BACKEND_VENDOR="faulty", TORCH_BACKEND_FAULTY_VENDOR=wrapped, **env)


def assert_unavailable(seen: dict, device_type: str | None, *causes: str) -> None:
    """The device is there by name (when known) with 0 devices; one warning and the first use
    both carry every cause."""
    assert len(seen["warnings"]) == 1, seen["warnings"]
    for cause in causes:
        assert cause in seen["warnings"][0], seen["warnings"]
        assert cause in seen["info"]["error"], seen["info"]
    assert seen["info"]["device_type"] == device_type
    assert seen["info"]["device_count"] == 0
    assert not seen["available"] and seen["count"] == 0
    if device_type is not None:
        assert seen["module"] == [False, 0]
        for cause in causes:
            assert cause in seen["first_use"], seen["first_use"]


def test_a_vendor_that_starts_has_no_error():
    seen = probe()
    assert seen["warnings"] == [] and seen["info"]["error"] is None
    assert seen["available"] and seen["first_use"] is None


@ONCE  # no vendor starts: the suite's vendor plays no part
def test_unknown_vendor_name():
    seen = probe(TORCH_BACKEND_VENDOR="nosuchvendor")
    assert_unavailable(
        seen,
        "nosuchvendor",
        "cannot load the vendor 'nosuchvendor' (TORCH_BACKEND_VENDOR)",
        "no bundled vendor named 'nosuchvendor'",
    )


@ONCE
def test_vendor_library_path_that_does_not_exist():
    # The device type is taken from the file name a vendor library has (libtb_vendor_NAME.so).
    seen = probe(TORCH_BACKEND_VENDOR="/nonexistent/libtb_vendor_x.so")
    assert_unavailable(seen, "x", "cannot load vendor library '/nonexistent/libtb_vendor_x.so'")
    # Any other file name says nothing about the device type: no device is named.
    seen = probe(TORCH_BACKEND_VENDOR="/nonexistent/removed.so")
    assert_unavailable(seen, None, "cannot load vendor library '/nonexistent/removed.so'")


def test_init_failure():
    seen = faulty(TORCH_BACKEND_FAULTY_CALL="vendor.init")
    assert_unavailable(
        seen,
        DEV,
        "torch_backend: cannot initialise the vendor library",
        f"{DEV}: init failed with TB_ERROR_INTERNAL: faulty: injected TB_ERROR_INTERNAL into "
        "vendor.init (call 1)",
    )


def test_device_count_failure():
    seen = faulty(TORCH_BACKEND_FAULTY_CALL="device.count")
    assert_unavailable(seen, DEV, "device.count() failed with TB_ERROR_INTERNAL")


def test_a_bad_environment_fails_the_vendors_own_init():
    variable = {
        "emu": "TORCH_BACKEND_EMU_DEVICE_COUNT",
        "fake": "TORCH_BACKEND_FAKE_DEVICE_COUNT",
        "npu": "TORCH_BACKEND_NPU_ACL_CONFIG",  # aclInit's configuration file
    }
    if DEV not in variable:
        pytest.skip(f"no known configuration variable for vendor '{DEV}'")
    seen = probe(**{variable[DEV]: "many"})
    assert_unavailable(
        seen, DEV, f"{DEV}: init failed with TB_ERROR_UNAVAILABLE: {DEV}: {variable[DEV]}='many'"
    )


@ONCE  # the runtime checks the count the faulty shim reports, whatever the vendor it wraps
@pytest.mark.parametrize("count", [128, 300, -5])
def test_device_counts_device_index_cannot_hold_are_refused(count):
    # c10::DeviceIndex is int8_t: 127 devices of one type at most.
    seen = faulty(TORCH_BACKEND_FAULTY_CALL="", TORCH_BACKEND_FAULTY_DEVICE_COUNT=str(count))
    assert_unavailable(
        seen,
        DEV,
        f"{DEV}: the vendor 'torch_backend faulty shim over",
        f"reports {count} devices, but PyTorch addresses at most 127 devices",
    )


@pytest.mark.skipif(DEV != "npu", reason="npu's run: the adapter over AscendCL")
def test_npu_without_its_runtime(tmp_path):
    # The adapter library alone, away from the AscendCL runtime its RUNPATH finds: what a
    # machine without the CANN toolkit installed sees.
    alone = tmp_path / "libtb_vendor_npu.so"
    alone.write_bytes((torch_backend.library_dir() / "libtb_vendor_npu.so").read_bytes())
    seen = probe(TORCH_BACKEND_VENDOR=str(alone), LD_LIBRARY_PATH="")
    assert_unavailable(seen, "npu", f"cannot load vendor library '{alone}'", "libopapi.so")
