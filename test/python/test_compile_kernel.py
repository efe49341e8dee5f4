"""Kernels from source (``torch.<device>.compile_kernel``, vendor.h ABI 2.6
``TB_EXTENSION_PROGRAMS``): built once per source, launched on the current stream with tensors
and converted scalars, every refusal a clear error, an index out of range a device fault naming
the kernel (ABI 2.7) -- and on a vendor without the extension, NotImplementedError naming it.
Injected failures of each programs.* call (the faulty shim over this vendor) surface with the
vendor's call named and leave the device usable."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV, MODULE, REPO, run_python

import torch_backend
from torch_backend import programs

LANGUAGES = programs.languages()
needs_programs = pytest.mark.skipif(
    "opencl_c" not in LANGUAGES, reason=f"{DEV} builds no OpenCL C programs"
)

AXPY = """
__kernel void axpy(__global const float *x, __global float *y, float a, ulong n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
__kernel void fill_rows(__global int *out, int value, uint cols) {
  size_t r = get_global_id(1), c = get_global_id(0);
  if (c < cols) out[r * cols + c] = value + (int)(r * 100 + c);
}
__kernel void narrow(__global short *out, short s, uchar u, long l, float f) {
  out[0] = s; out[1] = (short)u; out[2] = (short)l; out[3] = (short)f;
}
"""


@pytest.mark.skipif(bool(LANGUAGES), reason=f"{DEV} builds programs")
def test_vendor_without_programs_is_refused():
    with pytest.raises(NotImplementedError, match=f"{DEV}: .*TB_EXTENSION_PROGRAMS"):
        MODULE.compile_kernel(AXPY, "axpy")
    with pytest.raises(NotImplementedError, match="builds no device programs"):
        torch.ops.torch_backend._program_build(0, "opencl_c", AXPY, "")


@needs_programs
def test_launch_reads_and_writes_views_in_stream_order():
    axpy = MODULE.compile_kernel(AXPY, "axpy")
    assert axpy.params == ("p", "p", "f4", "u8")
    x = torch.randn(1000, device=DEV)
    y = torch.randn(1000, device=DEV)
    expected = 2.5 * x.cpu() + y.cpu()
    axpy(x, y, 2.5, 1000, threads=1000)
    torch.testing.assert_close(y.cpu(), expected)
    # Views at an offset, an odd count, groups that overhang the end, and an integer for a
    # float parameter.
    before = y.cpu()
    axpy(x[7:], y[7:], 3, 993, threads=993, group_size=32)
    expected = before.clone()
    expected[7:] += 3 * x.cpu()[7:]
    torch.testing.assert_close(y.cpu(), expected)
    # On a side stream, after the work queued there, before what follows it.
    side = MODULE.Stream()
    z = torch.zeros(1000, device=DEV)
    with MODULE.stream(side):
        z.add_(1.0)
        axpy(x, z, 1.0, 1000)  # threads: one per element of the first tensor
        w = z * 2
    side.synchronize()
    torch.testing.assert_close(w.cpu(), 2 * (x.cpu() + 1.0))


@needs_programs
def test_launches_are_device_activities_of_the_kernels_name():
    """torch.profiler shows each launch of a built kernel as a device activity named after the
    kernel, with device time (as CUDA's profiles show Triton's kernels): what a compiled
    graph's generated kernels cost."""
    from torch.profiler import ProfilerActivity, profile

    axpy = MODULE.compile_kernel(AXPY, "axpy")
    x, y = torch.randn(4096, device=DEV), torch.zeros(4096, device=DEV)
    axpy(x, y, 2.0, x.numel())  # built and warm
    MODULE.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        for _ in range(3):
            axpy(x, y, 2.0, x.numel())
        MODULE.synchronize()
    launches = [
        e
        for e in prof.events()
        if e.name == "axpy" and e.device_type == torch.autograd.DeviceType.PrivateUse1
    ]
    assert len(launches) == 3
    assert all(e.device_time_total > 0 for e in launches)


@needs_programs
def test_grids_and_scalar_types():
    fill = MODULE.compile_kernel(AXPY, "fill_rows")
    out = torch.zeros(3, 50, dtype=torch.int32, device=DEV)
    fill(out, 7, 50, threads=(50, 3), group_size=(16, 1))
    expected = 7 + torch.arange(3)[:, None] * 100 + torch.arange(50)[None, :]
    assert torch.equal(out.cpu(), expected.int())
    narrow = MODULE.compile_kernel(AXPY, "narrow")
    assert narrow.params == ("p", "i2", "u1", "i8", "f4")
    small = torch.zeros(4, dtype=torch.int16, device=DEV)
    narrow(small, -300, 200, 41, 12.5, threads=1)
    assert small.cpu().tolist() == [-300, 200, 41, 12]
    with pytest.raises(ValueError, match=r"argument 1 is 40000, which does not fit its type .i2"):
        narrow(small, 40000, 1, 1, 1.0, threads=1)
    with pytest.raises(ValueError, match=r"argument 2 is -1, which does not fit its type .u1"):
        narrow(small, 1, -1, 1, 1.0, threads=1)
    with pytest.raises(TypeError, match=r"argument 1 is an integer .i2., not a float"):
        narrow(small, 1.5, 1, 1, 1.0, threads=1)


@needs_programs
def test_refusals_name_what_is_wrong():
    axpy = MODULE.compile_kernel(AXPY, "axpy")
    x = torch.ones(8, device=DEV)
    with pytest.raises(TypeError, match=r"kernel 'axpy' takes 4 arguments .p, p, f4, u8., got 3"):
        axpy(x, x, 1.0)
    with pytest.raises(
        ValueError, match=rf"argument 0 is a tensor on cpu, the kernel runs on {DEV}"
    ):
        axpy(x.cpu(), x, 1.0, 8)
    with pytest.raises(TypeError, match="argument 1 is float, the parameter is device memory"):
        axpy(x, 1.0, 1.0, 8)
    with pytest.raises(TypeError, match=r"argument 2 is a float .f4., not a tensor"):
        axpy(x, x, x, 8)
    with pytest.raises(ValueError, match="threads must be an int or 1 to 3 ints"):
        axpy(x, x, 1.0, 8, threads=(1, 1, 1, 1))
    with pytest.raises(ValueError, match="threads has 1 dimensions, group_size 2"):
        axpy(x, x, 1.0, 8, threads=8, group_size=(1, 1))
    with pytest.raises(RuntimeError, match="work groups of 1000000 items, more than"):
        axpy(x, x, 1.0, 8, threads=8, group_size=1000000)
    with pytest.raises(RuntimeError, match="has no kernel named 'missing'"):
        MODULE.compile_kernel(AXPY, "missing")
    with pytest.raises(RuntimeError, match=r"(?s)programs.build.*undeclared_thing"):
        MODULE.compile_kernel(
            "__kernel void k(__global float *y) { y[0] = undeclared_thing; }", "k"
        )
    with pytest.raises(NotImplementedError, match="does not build 'ptx' programs"):
        MODULE.compile_kernel(AXPY, "axpy", language="ptx")
    # The device is fine after every refusal.
    axpy(x, x, 1.0, 8)
    assert x.cpu().tolist() == [2.0] * 8


GATHER = """
__kernel void gather_rows(__global const float *table, __global const long *index,
                          __global float *out, long rows, long cols
#ifdef TB_FAULT_PARAM
                          , TB_FAULT_PARAM
#endif
                          ) {
  size_t i = get_global_id(0);
  long row = index[i / cols];
  if (row < 0 || row >= rows) {
    TB_FAULT_INDEX(row, rows);
    return;
  }
  out[i] = table[row * cols + i % cols];
}
"""


@needs_programs
def test_an_index_out_of_range_faults_the_device_naming_the_kernel():
    """A kernel that declares TB_FAULT_PARAM (ABI 2.7) reports an index out of range as the
    vendor's own kernels do: the next synchronizing call raises, naming the kernel, the index
    and the size, and the device stays faulted until reset.  The parameters TB_FAULT_PARAM
    stands for are the vendor's: the caller passes the others only."""
    gather = MODULE.compile_kernel(GATHER, "gather_rows")
    assert gather.params == ("p", "p", "p", "i8", "i8")
    table = torch.arange(12.0, device=DEV).reshape(4, 3)
    out = torch.empty(2, 3, device=DEV)
    gather(table, torch.tensor([3, 1], device=DEV), out, 4, 3, threads=6)
    assert out.cpu().tolist() == [[9.0, 10.0, 11.0], [3.0, 4.0, 5.0]]
    try:
        gather(table, torch.tensor([0, 9], device=DEV), out, 4, 3, threads=6)
        message = r"(?s)TB_ERROR_DEVICE_FAULT.*gather_rows: index 9 is out of bounds .* size 4"
        with pytest.raises(torch.AcceleratorError, match=message):
            MODULE.synchronize()
        with pytest.raises(torch.AcceleratorError, match="gather_rows: index 9"):
            torch.ones(2, device=DEV).cpu()  # sticky
    finally:
        MODULE.reset_device()
    gather(table, torch.tensor([2, 0], device=DEV), out, 4, 3, threads=6)
    assert out.cpu().tolist() == [[6.0, 7.0, 8.0], [0.0, 1.0, 2.0]]


@needs_programs
def test_half_a_fault_parameter_is_refused():
    source = "__kernel void k(__global float *y, __global uint *tb_fault_record) { y[0] = 1; }"
    with pytest.raises(RuntimeError, match="k' declares one of TB_FAULT_PARAM's parameters"):
        MODULE.compile_kernel(source, "k")


@needs_programs
def test_programs_are_built_once_per_source_and_options():
    source = "__kernel void once(__global float *y) { y[get_global_id(0)] = 1.0f; }"
    first = torch.ops.torch_backend._program_build(0, "opencl_c", source, "")
    assert torch.ops.torch_backend._program_build(0, "opencl_c", source, "") == first
    other = torch.ops.torch_backend._program_build(0, "opencl_c", source, "-cl-fast-relaxed-math")
    assert other != first
    a = MODULE.compile_kernel(source, "once")
    b = MODULE.compile_kernel(source, "once")
    assert a._kernel == b._kernel


# Each programs.* call of the extension failing once, under the faulty shim over this vendor:
# the error names the vendor's call and faulty's message, and the next launch works.
FAULT_SCRIPT = r"""
import ctypes, torch, torch_backend
lib = ctypes.CDLL(torch_backend.vendor_info()["library"])
lib.tb_faulty_configure.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_long, ctypes.c_char_p]
M = getattr(torch, torch_backend.vendor_info()["device_type"])
src = "__kernel void k(__global float *y, float v) { y[get_global_id(0)] += v; }"
y = torch.zeros(4, device=M.current_device())
for call, status in [("programs.build", "TB_ERROR_OUT_OF_MEMORY"),
                     ("programs.get_kernel", "TB_ERROR_INTERNAL"),
                     ("programs.launch", "TB_ERROR_DEVICE_FAULT"),
                     ("programs.launch", "TB_ERROR_NOT_SUPPORTED")]:
    lib.tb_faulty_configure(call.encode(), 0, 1, status.encode())
    try:
        k = M.compile_kernel(src + " " * len(call + status), "k")
        k(y, 1.0)
        print(call, status, "no error")
    except Exception as e:
        print(call, status, type(e).__name__, "|", str(e).splitlines()[0])
    if status == "TB_ERROR_DEVICE_FAULT":
        M.reset_device()
lib.tb_faulty_configure(b"", 0, 0, None)
k = M.compile_kernel(src, "k")
k(y, 2.0)
print("after", y.cpu().tolist())
"""


@needs_programs
def test_each_programs_call_failing_is_reported():
    result = run_python(
        FAULT_SCRIPT,
        TORCH_BACKEND_VENDOR="faulty",
        TORCH_BACKEND_FAULTY_VENDOR=torch_backend.vendor_info()["library"],
        TORCH_BACKEND_FAULTY_CALL="",
        PYTHONPATH=str(REPO),
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = dict(line.split(" | ", 1) for line in result.stdout.splitlines() if " | " in line)
    assert len(lines) == 4, result.stdout
    for head, message in lines.items():
        call, status, kind = head.split()
        assert f"{DEV}: {call}(" in message and f"faulty: injected {status} into {call}" in message
        expected = {
            "TB_ERROR_OUT_OF_MEMORY": "OutOfMemoryError",
            "TB_ERROR_NOT_SUPPORTED": "NotImplementedError",
        }.get(status, "AcceleratorError")
        assert kind == expected, head
    assert "after [2.0, 2.0, 2.0, 2.0]" in result.stdout, result.stdout
