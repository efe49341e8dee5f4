"""Inductor's OpenCL C code generator: fused kernels for devices that build OpenCL C programs.

A device the host cannot address (vendor.h without ``TB_DEVICE_HOST_ACCESS``) whose vendor
builds OpenCL C at run time (``TB_EXTENSION_PROGRAMS``, ABI 2.6) gets kernels from Inductor
the way MPS gets Metal (torch/_inductor/codegen/mps.py): this module is a ``SIMDKernel`` /
``SIMDScheduling`` pair registered for the device by torch_backend.compile.  What Inductor fuses
-- pointwise nodes, reductions (sum, prod, max, min, any, argmax, argmin, welford) with the
pointwise work before and after them, indexing with masks and broadcasting, type conversions,
random numbers -- becomes one OpenCL C kernel; matrix products and convolutions stay calls of
the vendor's kernels.

Kernel shape.  The pointwise dimensions (x, y, z) are the NDRange's, one work item per output
element, which returns when its index is past the end.  A reduction is a loop over its
dimension inside the work item (Triton's looped reduction with one element per step): the
accumulator is declared before the loop, combined in it and finalised after it, where the
reduced value is stored; pointwise work after the reduction runs in the same work item.  No
local memory and no barriers, so any device runs it, and PoCL vectorises the work items of a
group.  Sizes Inductor leaves symbolic (dynamic shapes) are kernel arguments.

Programs.  The kernels of one compiled graph are built together, as one program
(``TB_EXTENSION_PROGRAMS`` build, through the vendor's disk cache), when the wrapper module
loads, and each call is ``torch_backend._C.launch`` of the kernel on the current stream.
Random numbers are Philox4x32-10 draws keyed by the seed Inductor takes from the device's
generator (``inductor_seeds``, the vendor's own Philox stream), four per block: offset o is
word o % 4 of the block at counter o / 4.  Reduction loops of up to ``_UNROLL`` static steps
are unrolled, so that PoCL runs a group's work items side by side in vectors; a longer loop
keeps its Philox block for the next three steps.  welford_reduce over a row of static length
that fits ``_ROW_BYTES`` keeps the row's values in the work item and takes mean and variance
in two passes after the loop; longer or dynamic rows use Welford's update per element.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

import sympy
import torch
from sympy.printing.precedence import PRECEDENCE
from torch._inductor import config as inductor_config
from torch._inductor.codegen.common import (
    CSE,
    CSEVariable,
    DeferredLine,
    IndentedBuffer,
    OpOverrides,
)
from torch._inductor.codegen.simd import IterationRangesEntry, SIMDKernel, SIMDScheduling
from torch._inductor.utils import (
    get_bounds_index_expr,
    get_fused_kernel_name,
    get_kernel_metadata,
)
from torch._inductor.virtualized import V, ops
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy.printers import ExprPrinter

__all__ = [
    "OpenCLKernel",
    "OpenCLScheduling",
    "build_from_globals",
    "build_graph_kernels",
    "fallback_unsupported",
    "kernels_built",
]

# What a value of each dtype is in OpenCL C, in memory and in computation (half and bfloat16
# are computed in float; bool is stored as uchar).
_MEMORY = {
    torch.bool: "uchar",
    torch.int8: "char",
    torch.uint8: "uchar",
    torch.int16: "short",
    torch.uint16: "ushort",
    torch.int32: "int",
    torch.uint32: "uint",
    torch.int64: "long",
    torch.uint64: "ulong",
    torch.float16: "half",
    torch.bfloat16: "ushort",
    torch.float32: "float",
    torch.float64: "double",
}
_COMPUTE = {**_MEMORY, torch.bool: "bool", torch.float16: "float", torch.bfloat16: "float"}


def ctype(dtype: torch.dtype | None) -> str:
    """The OpenCL C type values of ``dtype`` are computed in."""
    if dtype is None:
        return "__auto_type"  # clang's, for the rare value Inductor gives no dtype
    try:
        return _COMPUTE[dtype]
    except KeyError:
        raise NotImplementedError(f"OpenCL C code generation: no type for {dtype}") from None


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def literal(value: Any, dtype: torch.dtype | None = None) -> str:
    """A Python constant as an OpenCL C literal of ``dtype`` (float32 constants get the f
    suffix: an unsuffixed literal is a double, which a device without fp64 refuses)."""
    if isinstance(value, CSEVariable):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) or (dtype is not None and dtype.is_floating_point):
        value = float(value)
        double = dtype == torch.float64
        if math.isnan(value):
            return "NAN"
        if math.isinf(value):
            return ("" if value > 0 else "-") + ("INFINITY" if not double else "(double)INFINITY")
        text = repr(value)
        if "e" not in text and "." not in text:
            text += ".0"
        return text if double else text + "f"
    if isinstance(value, int):
        if value > 2**63 - 1:
            return f"{value}UL"
        if value < -(2**63) + 1:
            return f"(-{2**63 - 1}L - 1)"
        return f"{value}L" if not -(2**31) <= value < 2**31 else str(value)
    return str(value)


def _dtype_of(value: Any) -> torch.dtype | None:
    if isinstance(value, CSEVariable):
        return value.dtype
    if isinstance(value, bool):
        return torch.bool
    if isinstance(value, int):
        return torch.int64
    if isinstance(value, float):
        return torch.float32
    return None


def _common(*values: Any) -> torch.dtype:
    """The dtype binary operations of ``values`` compute in (torch's promotion)."""
    result: torch.dtype | None = None
    for value in values:
        dtype = _dtype_of(value)
        if dtype is None:
            continue
        dtype = compute_dtype(dtype)
        result = dtype if result is None else torch.promote_types(result, dtype)
    return result or torch.float32


def _cast(value: Any, dtype: torch.dtype) -> str:
    if not isinstance(value, CSEVariable):
        return literal(value, dtype)
    if value.dtype is not None and compute_dtype(value.dtype) == dtype:
        return str(value)
    return f"(({ctype(dtype)})({value}))"


# What each kernel's program starts with: helpers the generated code calls.
PRELUDE = r"""
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef TB_FAULT_PARAM
/* a vendor without a fault record for programs: an index out of range is only skipped */
#define TB_FAULT_INDEX(index, size)
#endif
/* erf of a float, as the opencl vendor's kernels compute it (backends/opencl/program.c):
   a driver's erf may be a scalar call per element (PoCL: 12x slower than this).  The
   Maclaurin series below 1, 1 - erfc above by Numerical Recipes' Chebyshev fit; within
   1.1e-7 of erf. */
inline float tb_erf_float(float x) {
  float z = fabs(x), z2 = z * z;
  float series = fma(z, 1.283791671e-01f + z2 * (-3.761263890e-01f + z2 * (1.128379167e-01f
      + z2 * (-2.686617065e-02f + z2 * (5.223977625e-03f + z2 * (-8.548327023e-04f
      + z2 * (1.205533298e-04f + z2 * (-1.492565036e-05f + z2 * (1.646211437e-06f
      + z2 * (-1.636584469e-07f + z2 * 1.480719282e-08f))))))))), z);
  float t = 1.0f / (1.0f + 0.5f * z);
  float erfc = t * exp(-z2 - 1.26551223f + t * (1.00002368f + t * (0.37409196f
      + t * (0.09678418f + t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f
      + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f)))))))));
  return copysign(z < 1.0f ? series : 1.0f - erfc, x);
}
inline long tb_floordiv(long a, long b) {
  long q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
inline long tb_remainder_l(long a, long b) {
  long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline float tb_remainder_f(float a, float b) {
  float r = fmod(a, b);
  return (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) ? r + b : r;
}
inline float tb_load_bf16(ushort bits);
inline ushort tb_store_bf16(float value);
inline void tb_atomic_add_float(volatile __global float *p, float v) {
  volatile __global uint *bits = (volatile __global uint *)p;
  uint old = *bits, seen;
  do {
    seen = old;
    old = atomic_cmpxchg(bits, seen, as_uint(as_float(seen) + v));
  } while (old != seen);
}
inline void tb_atomic_add_int(volatile __global int *p, int v) { atomic_add(p, v); }
/* 16-bit floats: a compare-and-swap of the aligned 32-bit word holding them. */
inline void tb_atomic_add_16(volatile __global ushort *p, float v, int bf16) {
  volatile __global uint *word = (volatile __global uint *)((ulong)p & ~(ulong)3);
  uint shift = ((ulong)p & 2) ? 16u : 0u;
  uint old = *word, seen;
  do {
    seen = old;
    ushort bits = (ushort)(seen >> shift), sum;
    if (bf16) {
      sum = tb_store_bf16(tb_load_bf16(bits) + v);
    } else {
      float value = vload_half(0, (__private half *)&bits) + v;
      vstore_half_rte(value, 0, (__private half *)&sum);
    }
    uint next = (seen & ~(0xffffu << shift)) | ((uint)sum << shift);
    old = atomic_cmpxchg(word, seen, next);
  } while (old != seen);
}
#if defined(cl_khr_int64_base_atomics)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
inline void tb_atomic_add_long(volatile __global long *p, long v) { atom_add(p, v); }
#ifdef cl_khr_fp64
inline void tb_atomic_add_double(volatile __global double *p, double v) {
  volatile __global ulong *bits = (volatile __global ulong *)p;
  ulong old = *bits, seen;
  do {
    seen = old;
    old = atom_cmpxchg(bits, seen, as_ulong(as_double(seen) + v));
  } while (old != seen);
}
#endif
#endif
inline float tb_load_bf16(ushort bits) { return as_float(((uint)bits) << 16); }
inline ushort tb_store_bf16(float value) {
  uint bits = as_uint(value);
  if (isnan(value)) return (ushort)0x7fc0;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (ushort)(bits >> 16);
}
inline float tb_round_half(float value) {
  ushort stored;
  vstore_half_rte(value, 0, (__private half *)&stored);
  return vload_half(0, (__private half *)&stored);
}
inline float tb_round_bf16(float value) { return tb_load_bf16(tb_store_bf16(value)); }
/* Philox4x32-10 (Salmon et al.), the generator of curand, Triton's tl.rand and the
   device's eager random kernels: counter (offset, 0, 0, 0), key from the seed. */
inline uint4 tb_philox(ulong seed, ulong offset) {
  /* Scalars and unrolled rounds: PoCL vectorizes that across work-items, not uint4 rounds in
     a loop (8x slower). */
  uint c0 = (uint)offset, c1 = (uint)(offset >> 32), c2 = 0u, c3 = 0u;
  uint k0 = (uint)seed, k1 = (uint)(seed >> 32);
#pragma unroll
  for (int round = 0; round < 10; round++) {
    ulong p0 = (ulong)0xD2511F53u * c0, p1 = (ulong)0xCD9E8D57u * c2;
    uint n0 = (uint)(p1 >> 32) ^ c1 ^ k0, n2 = (uint)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint)p1;
    c3 = (uint)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return (uint4)(c0, c1, c2, c3);
}
inline float tb_uniform(uint bits) { return (float)(bits >> 8) * (1.0f / 16777216.0f); }
/* tb_rand: a block gives four numbers, as curand_uniform4 and the device's eager bernoulli
   use it: offset o is word o % 4 of the block at counter o / 4.  A work item that walks
   consecutive offsets (a reduction's loop) keeps its last block in a tb_rng and computes a
   block every fourth step (tb_rand_in); one that draws a single offset computes its block
   (tb_rand).  Both give the same number for the same seed and offset.  A block per number,
   keeping one word (tl.rand), made the RNG ~70% of a fused layer norm + dropout on PoCL. */
typedef struct { ulong seed, block; uint4 bits; } tb_rng;
#define TB_RNG_INIT {0, ~(ulong)0}
inline uint tb_word(uint4 bits, uint word) {
  return word == 0u ? bits.s0 : word == 1u ? bits.s1 : word == 2u ? bits.s2 : bits.s3;
}
inline float tb_rand(ulong seed, ulong offset) {
  return tb_uniform(tb_word(tb_philox(seed, offset >> 2), (uint)offset & 3u));
}
inline float tb_rand_in(ulong seed, ulong offset, __private tb_rng *rng) {
  if (offset >> 2 != rng->block || seed != rng->seed) {
    rng->bits = tb_philox(seed, offset >> 2);
    rng->block = offset >> 2;
    rng->seed = seed;
  }
  return tb_uniform(tb_word(rng->bits, (uint)offset & 3u));
}
inline float tb_randn(ulong seed, ulong offset) {
  uint4 r = tb_philox(seed, offset);
  float u1 = fmax(tb_uniform(r.s0), 1.0e-7f), u2 = tb_uniform(r.s1);
  return sqrt(-2.0f * log(u1)) * cos(6.283185307179586f * u2);
}
inline long tb_randint64(ulong seed, ulong offset, long low, long high) {
  uint4 r = tb_philox(seed, offset);
  ulong bits = ((ulong)r.s0 << 32) | r.s1;
  return low + (long)(bits % (ulong)(high - low));
}
"""


class OpenCLPrinter(ExprPrinter):
    """Index and size expressions (sympy) as OpenCL C."""

    def _print_Integer(self, expr: sympy.Expr) -> str:
        return literal(int(expr))

    def _print_FloorDiv(self, expr: sympy.Expr) -> str:
        x, div = expr.args
        if expr.is_integer:
            if x.is_nonnegative and div.is_positive:
                return f"(({self.doprint(x)}) / ({self.doprint(div)}))"
            return f"tb_floordiv({self.doprint(x)}, {self.doprint(div)})"
        return f"floor(({self.doprint(x)}) / ({self.doprint(div)}))"

    def _print_ModularIndexing(self, expr: sympy.Expr) -> str:
        # (x / div) % mod of an index that is not negative wherever it is used: a masked
        # load's index (cat's `x - 128`) may be negative only where the mask skips the load.
        # Triton's, MPS's and the C++ backend's printers print C's / and % too; a remainder
        # with Python's sign rule cost 40% of a cat kernel on PoCL.
        x, div, mod = expr.args
        text = f"({self.doprint(x)})"
        if div != 1:
            text = f"({text} / ({self.doprint(div)}))"
        return f"({text} % ({self.doprint(mod)}))"

    def _print_PythonMod(self, expr: sympy.Expr) -> str:
        x, mod = expr.args
        return f"tb_remainder_l({self.doprint(x)}, {self.doprint(mod)})"

    def _print_CleanDiv(self, expr: sympy.Expr) -> str:
        return self._print_FloorDiv(expr)

    def _print_min_max(self, expr: sympy.Expr, fn: str) -> str:
        args = [f"(long)({self.doprint(a)})" for a in expr.args]
        result = args[0]
        for arg in args[1:]:
            result = f"{fn}({result}, {arg})"
        return result

    def _print_Min(self, expr: sympy.Expr) -> str:
        return self._print_min_max(expr, "min")

    def _print_Max(self, expr: sympy.Expr) -> str:
        return self._print_min_max(expr, "max")

    def _print_Abs(self, expr: sympy.Expr) -> str:
        return f"abs((long)({self.doprint(expr.args[0])}))"

    def _print_Where(self, expr: sympy.Expr) -> str:
        c, p, q = (self.parenthesize(a, PRECEDENCE["Atom"] - 0.5) for a in expr.args)
        return f"({c} ? {p} : {q})"

    def _print_ToFloat(self, expr: sympy.Expr) -> str:
        return f"((float)({self.doprint(expr.args[0])}))"

    def _print_IntTrueDiv(self, expr: sympy.Expr) -> str:
        a, b = expr.args
        return f"((float)({self.doprint(a)}) / (float)({self.doprint(b)}))"

    def _print_FloorToInt(self, expr: sympy.Expr) -> str:
        return f"((long)floor({self.doprint(expr.args[0])}))"

    def _print_TruncToInt(self, expr: sympy.Expr) -> str:
        return f"((long)trunc({self.doprint(expr.args[0])}))"

    def _print_RoundToInt(self, expr: sympy.Expr) -> str:
        return f"((long)rint({self.doprint(expr.args[0])}))"

    def _print_PowByNatural(self, expr: sympy.Expr) -> str:
        base, exp = expr.args
        if exp.is_Integer and 0 <= int(exp) <= 8:
            return "(" + " * ".join([f"({self.doprint(base)})"] * int(exp) or ["1"]) + ")"
        return f"((long)pown((float)({self.doprint(base)}), (int)({self.doprint(exp)})))"

    def _print_Float(self, expr: sympy.Expr) -> str:
        return literal(float(expr))

    def _print_Pow(self, expr: sympy.Expr) -> str:
        base, exp = expr.args
        if exp.is_Integer and 0 <= int(exp) <= 8:
            return "(" + " * ".join([f"({self.doprint(base)})"] * int(exp) or ["1"]) + ")"
        return f"pow((float)({self.doprint(base)}), (float)({self.doprint(exp)}))"


_printer = OpenCLPrinter()


def _unary(function: str, integer: str | None = None) -> Any:
    """An override computing ``function(x)`` in x's float type (ints: float), or
    ``integer(x)`` for integer x when given."""

    def override(x: Any) -> str:
        dtype = _common(x)
        if not dtype.is_floating_point:
            if integer is not None:
                return f"{integer}({x})"
            return f"{function}({_cast(x, torch.float32)})"
        return f"{function}({x})"

    override.__name__ = function
    return staticmethod(override)


class OpenCLOverrides(OpOverrides):
    """Inductor's pointwise operations as OpenCL C expressions."""

    @staticmethod
    def to_dtype(
        x: Any,
        dtype: torch.dtype,
        src_dtype: torch.dtype | None = None,
        use_compute_types: bool = True,
    ) -> str:
        if dtype == torch.bool:
            return f"(({x}) != 0)"
        if dtype == torch.float16:
            return f"tb_round_half((float)({x}))"
        if dtype == torch.bfloat16:
            return f"tb_round_bf16((float)({x}))"
        source = src_dtype or _dtype_of(x)
        if source is not None and source.is_floating_point and not dtype.is_floating_point:
            # C's conversion of an out-of-range float is undefined; torch's CPU kernels
            # truncate, which OpenCL's saturating convert_<type>_rtz matches for the range.
            return f"convert_{_MEMORY[dtype]}_rtz({x})" if dtype != torch.bool else f"({x} != 0)"
        return f"(({ctype(dtype)})({x}))"

    @staticmethod
    def to_dtype_bitcast(x: Any, dtype: torch.dtype, src_dtype: torch.dtype) -> str:
        return f"as_{_MEMORY[dtype]}(({_MEMORY[src_dtype]})({x}))"

    @staticmethod
    def constant(value: Any, dtype: torch.dtype) -> str:
        return literal(value, dtype)

    @staticmethod
    def index_expr(expr: sympy.Expr, dtype: torch.dtype) -> str:
        index = V.kernel.index_to_str(V.kernel.prepare_indexing(expr))
        var = V.kernel.cse.generate(
            V.kernel.compute,
            index,
            bounds=get_bounds_index_expr(expr),
            dtype=V.kernel.get_index_dtype_as_torch_dtype(),
        )
        return ops.to_dtype(var, dtype)

    @staticmethod
    def value_expr(expr: sympy.Expr, dtype: torch.dtype) -> str:
        return OpenCLOverrides.index_expr(expr, dtype)

    @staticmethod
    def masked(mask: Any, body: Any, other: Any) -> str:
        scoped = IndentedBuffer()
        with V.kernel.swap_buffers(scoped), scoped.indent():
            V.kernel.cse.iter_buffer_ids = itertools.count()
            V.kernel.cse.name_prefix += "_scoped"
            result = body()
        dtype = result.dtype if isinstance(result, CSEVariable) else _dtype_of(result)
        dtype = compute_dtype(dtype or torch.float32)
        key = f"{mask}:{scoped.getvalue()}:{other}"
        var = V.kernel.cse.try_get(key)
        if not var:
            var = V.kernel.cse.newvar(dtype=dtype)
            V.kernel.cse.put(key, var)
            compute = V.kernel.compute
            compute.writeline(f"{ctype(dtype)} {var};")
            compute.writeline(f"if ({mask}) {{")
            with compute.indent():
                compute.splice(scoped)
                compute.writeline(f"{var} = {_cast(result, dtype)};")
            compute.writeline(f"}} else {{ {var} = {_cast(other, dtype)}; }}")
        return var

    @staticmethod
    def where(a: Any, b: Any, c: Any) -> str:
        dtype = _common(b, c)
        return f"(({a}) ? {_cast(b, dtype)} : {_cast(c, dtype)})"

    @staticmethod
    def maximum(a: Any, b: Any) -> str:
        dtype = _common(a, b)
        x, y = _cast(a, dtype), _cast(b, dtype)
        if dtype.is_floating_point:  # NaN propagates, as torch.maximum's
            return f"((isnan({x}) || {x} > {y}) ? {x} : {y})"
        return f"max({x}, {y})" if dtype != torch.bool else f"({x} || {y})"

    @staticmethod
    def minimum(a: Any, b: Any) -> str:
        dtype = _common(a, b)
        x, y = _cast(a, dtype), _cast(b, dtype)
        if dtype.is_floating_point:
            return f"((isnan({x}) || {x} < {y}) ? {x} : {y})"
        return f"min({x}, {y})" if dtype != torch.bool else f"({x} && {y})"

    @staticmethod
    def truediv(a: Any, b: Any) -> str:
        dtype = _common(a, b)
        if not dtype.is_floating_point:
            dtype = torch.float32
        return f"{_cast(a, dtype)} / {_cast(b, dtype)}"

    @staticmethod
    def floordiv(a: Any, b: Any) -> str:
        dtype = _common(a, b)
        if dtype.is_floating_point:
            return f"floor({_cast(a, dtype)} / {_cast(b, dtype)})"
        return f"(({ctype(dtype)})tb_floordiv({a}, {b}))"

    @staticmethod
    def truncdiv(a: Any, b: Any) -> str:
        dtype = _common(a, b)
        if dtype.is_floating_point:
            return f"trunc({_cast(a, dtype)} / {_cast(b, dtype)})"
        return f"({a} / {b})"

    @staticmethod
    def mod(a: Any, b: Any) -> str:
        dtype = _common(a, b)
        if dtype.is_floating_point:
            return f"fmod({_cast(a, dtype)}, {_cast(b, dtype)})"
        return f"({a} % {b})"

    @staticmethod
    def fmod(a: Any, b: Any) -> str:
        dtype = _common(a, b)
        if not dtype.is_floating_point:
            return f"({a} % {b})"
        return f"fmod({_cast(a, dtype)}, {_cast(b, dtype)})"

    @staticmethod
    def remainder(a: Any, b: Any) -> str:
        dtype = _common(a, b)
        if dtype.is_floating_point:
            x, y = _cast(a, dtype), _cast(b, dtype)
            return f"({x} - floor({x} / {y}) * {y})"
        return f"(({ctype(dtype)})tb_remainder_l({a}, {b}))"

    @staticmethod
    def pow(a: Any, b: Any) -> str:
        dtype = _common(a, b)
        if not dtype.is_floating_point:
            return f"(({ctype(dtype)})pow((double)({a}), (double)({b})))"
        return f"pow({_cast(a, dtype)}, {_cast(b, dtype)})"

    @staticmethod
    def atan2(a: Any, b: Any) -> str:
        dtype = _common(a, b, 0.0)
        return f"atan2({_cast(a, dtype)}, {_cast(b, dtype)})"

    @staticmethod
    def hypot(a: Any, b: Any) -> str:
        dtype = _common(a, b, 0.0)
        return f"hypot({_cast(a, dtype)}, {_cast(b, dtype)})"

    @staticmethod
    def copysign(a: Any, b: Any) -> str:
        dtype = _common(a, b, 0.0)
        return f"copysign({_cast(a, dtype)}, {_cast(b, dtype)})"

    @staticmethod
    def nextafter(a: Any, b: Any) -> str:
        dtype = _common(a, b, 0.0)
        return f"nextafter({_cast(a, dtype)}, {_cast(b, dtype)})"

    @staticmethod
    def neg(x: Any) -> str:
        return f"(-{x})"

    @staticmethod
    def abs(x: Any) -> str:
        dtype = _common(x)
        if dtype == torch.bool:
            return str(x)
        return f"fabs({x})" if dtype.is_floating_point else f"(({ctype(dtype)})abs({x}))"

    @staticmethod
    def sign(x: Any) -> str:
        dtype = _common(x)
        if dtype.is_floating_point:
            return f"(isnan({x}) ? {x} : sign({x}))"
        return f"(({ctype(dtype)})(({x} > 0) - ({x} < 0)))"

    @staticmethod
    def signbit(x: Any) -> str:
        return f"(signbit({_cast(x, _common(x, 0.0))}) != 0)"

    @staticmethod
    def isnan(x: Any) -> str:
        return f"(isnan({x}) != 0)" if _common(x).is_floating_point else "false"

    @staticmethod
    def isinf(x: Any) -> str:
        return f"(isinf({x}) != 0)" if _common(x).is_floating_point else "false"

    @staticmethod
    def logical_and(a: Any, b: Any) -> str:
        return f"(({a}) && ({b}))"

    @staticmethod
    def logical_or(a: Any, b: Any) -> str:
        return f"(({a}) || ({b}))"

    @staticmethod
    def logical_xor(a: Any, b: Any) -> str:
        return f"((({a}) != 0) != (({b}) != 0))"

    @staticmethod
    def logical_not(a: Any) -> str:
        return f"(!({a}))"

    @staticmethod
    def bitwise_not(a: Any) -> str:
        return f"(~({a}))" if _common(a) != torch.bool else f"(!({a}))"

    @staticmethod
    def bitwise_and(a: Any, b: Any) -> str:
        return f"(({a}) & ({b}))"

    @staticmethod
    def bitwise_or(a: Any, b: Any) -> str:
        return f"(({a}) | ({b}))"

    @staticmethod
    def bitwise_xor(a: Any, b: Any) -> str:
        return f"(({a}) ^ ({b}))"

    @staticmethod
    def bitwise_left_shift(a: Any, b: Any) -> str:
        return f"(({a}) << ({b}))"

    @staticmethod
    def bitwise_right_shift(a: Any, b: Any) -> str:
        return f"(({a}) >> ({b}))"

    @staticmethod
    def round(x: Any) -> str:
        return f"rint({x})" if _common(x).is_floating_point else str(x)

    @staticmethod
    def floor(x: Any) -> str:
        return f"floor({x})" if _common(x).is_floating_point else str(x)

    @staticmethod
    def ceil(x: Any) -> str:
        return f"ceil({x})" if _common(x).is_floating_point else str(x)

    @staticmethod
    def trunc(x: Any) -> str:
        return f"trunc({x})" if _common(x).is_floating_point else str(x)

    @staticmethod
    def reciprocal(x: Any) -> str:
        dtype = _common(x, 0.0)
        return f"({literal(1.0, dtype)} / {_cast(x, dtype)})"

    @staticmethod
    def sigmoid(x: Any) -> str:
        dtype = _common(x, 0.0)
        one = literal(1.0, dtype)
        return f"({one} / ({one} + exp(-{_cast(x, dtype)})))"

    @staticmethod
    def relu(x: Any) -> str:
        dtype = _common(x)
        zero = literal(0, dtype)
        return (
            f"(isnan({x}) || {x} > {zero} ? {x} : {zero})"
            if dtype.is_floating_point
            else (f"max({x}, ({ctype(dtype)})0)")
        )

    @staticmethod
    def fma(a: Any, b: Any, c: Any) -> str:
        dtype = _common(a, b, c)
        return f"fma({_cast(a, dtype)}, {_cast(b, dtype)}, {_cast(c, dtype)})"

    @staticmethod
    def load_seed(name: str, offset: Any) -> str:
        var = V.kernel.args.input(name)
        return f"{var}[{offset}]"

    @staticmethod
    def rand(seed: Any, offset: Any) -> str:
        rng = V.kernel.loop_rng()
        if rng is None:
            return f"tb_rand((ulong)({seed}), (ulong)({offset}))"
        return f"tb_rand_in((ulong)({seed}), (ulong)({offset}), &{rng})"

    @staticmethod
    def randn(seed: Any, offset: Any) -> str:
        return f"tb_randn((ulong)({seed}), (ulong)({offset}))"

    @staticmethod
    def randint64(seed: Any, offset: Any, low: Any, high: Any) -> str:
        return f"tb_randint64((ulong)({seed}), (ulong)({offset}), {low}, {high})"

    exp = _unary("exp")
    exp2 = _unary("exp2")
    expm1 = _unary("expm1")
    log = _unary("log")
    log2 = _unary("log2")
    log10 = _unary("log10")
    log1p = _unary("log1p")
    sqrt = _unary("sqrt")
    rsqrt = _unary("rsqrt")
    sin = _unary("sin")
    cos = _unary("cos")
    tan = _unary("tan")
    asin = _unary("asin")
    acos = _unary("acos")
    atan = _unary("atan")
    sinh = _unary("sinh")
    cosh = _unary("cosh")
    tanh = _unary("tanh")
    asinh = _unary("asinh")
    acosh = _unary("acosh")
    atanh = _unary("atanh")

    @staticmethod
    def erf(x: Any) -> str:
        if _common(x) == torch.float64:
            return f"erf({x})"
        return f"tb_erf_float({_cast(x, torch.float32)})"

    erfc = _unary("erfc")
    lgamma = _unary("lgamma")


class _TypedCSE(CSE):
    """CSE that declares each variable with its OpenCL C type (C has no ``auto``)."""

    def generate(self, buffer: Any, expr: Any, *, dtype: Any = None, **kwargs: Any) -> Any:
        if dtype is None and isinstance(expr, CSEVariable):
            dtype = expr.dtype
        previous = self.prefix
        self.prefix = f"const {ctype(compute_dtype(dtype) if dtype else None)} "
        try:
            return super().generate(buffer, expr, dtype=dtype, **kwargs)
        finally:
            self.prefix = previous


# The longest reduction loop of static length that is unrolled.
_UNROLL = 64

# The most private memory a work item keeps a reduction's row in (a two-pass variance).
_ROW_BYTES = 4096

_REDUCTION_INIT = {
    "sum": "0",
    "prod": "1",
    "any": "false",
    "xor_sum": "0",
}


class OpenCLKernel(SIMDKernel):
    """One fused kernel as OpenCL C (see the module's docstring for its shape)."""

    overrides = OpenCLOverrides  # type: ignore[assignment]
    suffix = ";"
    newvar_prefix = "const __auto_type "
    sexpr = _printer.doprint
    kexpr = _printer.doprint

    def __init__(self, tiling: dict[str, sympy.Expr], **kwargs: Any) -> None:
        super().__init__(tiling, **kwargs)
        self.cse = _TypedCSE(self.newvar_prefix, self.suffix)
        self.post_loop = IndentedBuffer()
        self.outside_loop_vars: OrderedSet[Any] = OrderedSet()
        self.accumulators = itertools.count()
        self.rngs = itertools.count()
        self._tb_reports_faults = False  # an index check writes the fault record

    def dtype_to_str(self, dtype: torch.dtype) -> str:
        return ctype(dtype)

    # ---- memory ----

    def load(self, name: str, index: sympy.Expr) -> CSEVariable:
        var = self.args.input(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        at = self.index_to_str(index)
        if dtype == torch.float16:
            line = f"vload_half({at}, {var})"
        elif dtype == torch.bfloat16:
            line = f"tb_load_bf16({var}[{at}])"
        elif dtype == torch.bool:
            line = f"({var}[{at}] != 0)"
        else:
            line = f"{var}[{at}]"
        return self.cse.generate(self.loads, line, dtype=compute_dtype(dtype))

    def _store_line(self, name: str, index: sympy.Expr, value: Any) -> str:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        at = self.index_to_str(index)
        if dtype == torch.float16:
            return f"vstore_half_rte((float)({value}), {at}, {var});"
        if dtype == torch.bfloat16:
            return f"{var}[{at}] = tb_store_bf16((float)({value}));"
        return f"{var}[{at}] = ({_MEMORY[dtype]})({value});"

    def store(self, name: str, index: sympy.Expr, value: Any, mode: Any = None) -> None:
        if mode == "atomic_add":
            dtype = V.graph.get_dtype(name)
            kind = {
                torch.float32: "float",
                torch.float64: "double",
                torch.int32: "int",
                torch.int64: "long",
            }.get(dtype)
            var = self.args.output(name)
            at = self.index_to_str(self.prepare_indexing(index))
            if dtype in (torch.float16, torch.bfloat16):
                flag = int(dtype == torch.bfloat16)
                line = (
                    f"tb_atomic_add_16((volatile __global ushort *)({var} + {at}), "
                    f"(float)({value}), {flag});"
                )
            elif kind is None:
                raise NotImplementedError(f"OpenCL C code generation: atomic add of {dtype}")
            else:
                line = f"tb_atomic_add_{kind}({var} + {at}, ({_MEMORY[dtype]})({value}));"
        elif mode is not None:
            raise NotImplementedError(f"OpenCL C code generation: store mode {mode}")
        else:
            line = self._store_line(name, index, value)
        self.stores.writeline(DeferredLine(name, line))

    def store_reduction(self, name: str, index: sympy.Expr, value: Any) -> None:
        line = self._store_line(name, index, value)
        self.post_loop.writeline(DeferredLine(name, line))

    # ---- reductions: a loop in the work item ----

    def _accumulator(self, ctype_name: str, init: str, dtype: torch.dtype) -> CSEVariable:
        name = f"acc{next(self.accumulators)}"
        self.body.writeline(f"{ctype_name} {name} = {init};")
        var = self.cse.namedvar(name, dtype=dtype)
        self.outside_loop_vars.add(var)
        return var

    def loop_rng(self) -> str | None:
        """In a reduction's loop that is not unrolled, a ``tb_rng`` declared before the loop
        for one ``rand`` (it keeps the Philox block the last step drew); elsewhere None.  An
        unrolled loop draws a block per step: PoCL runs its work items side by side in vectors
        (the branch on the kept block would stop that), where a block costs a fraction of a
        scalar one (the encoder's softmax + dropout: 91 -> 58 us)."""
        loops = [t for t in self.range_trees if t.is_loop]
        if not (self.inside_reduction and loops) or all(self._unrolled(t.numel) for t in loops):
            return None
        name = f"rng{next(self.rngs)}"
        self.body.writeline(f"tb_rng {name} = TB_RNG_INIT;")
        return name

    @staticmethod
    def _unrolled(numel: Any) -> bool:
        """Whether a loop of ``numel`` steps is unrolled: a static length up to ``_UNROLL``.
        PoCL then runs the work items of a group side by side in vectors, which it does not
        across a loop (a softmax over rows of 16 or 64: 2.3-2.5x faster)."""
        return isinstance(numel, (sympy.Integer, int)) and int(numel) <= _UNROLL

    def _row_length(self, dtype: torch.dtype) -> int | None:
        """The reduction's length when it is one loop of a static length whose values fit in
        ``_ROW_BYTES`` of private memory; None otherwise."""
        trees = [t for t in self.range_trees if t.is_reduction]
        if len(trees) != 1 or not isinstance(trees[0].numel, (sympy.Integer, int)):
            return None
        length = int(trees[0].numel)
        return length if length * dtype.itemsize <= _ROW_BYTES else None

    def _reduction_index(self) -> str:
        trees = [t for t in self.range_trees if t.is_reduction]
        if len(trees) != 1:
            raise NotImplementedError("OpenCL C code generation: reductions over 2 dimensions")
        return trees[0].name

    def reduction(
        self, dtype: torch.dtype, src_dtype: torch.dtype, reduction_type: Any, value: Any
    ) -> Any:
        key = (src_dtype, reduction_type, value)
        if key in self.cse.reduction_cache:
            return self.cse.reduction_cache[key]
        result = self._reduction(dtype, src_dtype, reduction_type, value)
        self.cse.reduction_cache[key] = result
        return result

    def _reduction(self, dtype: torch.dtype, src_dtype: torch.dtype, kind: str, value: Any) -> Any:
        assert self.inside_reduction
        acc_dtype = compute_dtype(src_dtype) if kind != "any" else torch.bool
        if kind in ("sum", "prod", "xor_sum") and acc_dtype in (
            torch.bool,
            torch.int8,
            torch.uint8,
            torch.int16,
            torch.int32,
        ):
            acc_dtype = torch.int64
        t = ctype(acc_dtype)
        compute = self.compute
        if kind in ("sum", "prod", "any", "xor_sum"):
            acc = self._accumulator(t, _REDUCTION_INIT[kind], acc_dtype)
            op = {"sum": "+=", "prod": "*=", "xor_sum": "^="}.get(kind)
            if kind == "any":
                compute.writeline(f"{acc} = {acc} || ({value});")
            else:
                compute.writeline(f"{acc} {op} ({t})({value});")
            return acc
        if kind in ("max", "min"):
            if acc_dtype.is_floating_point:
                init = "-INFINITY" if kind == "max" else "INFINITY"
                cmp = ">" if kind == "max" else "<"
                acc = self._accumulator(t, f"({t}){init}", acc_dtype)
                compute.writeline(
                    f"if (isnan(({t})({value})) || ({t})({value}) {cmp} {acc}) "
                    f"{acc} = ({t})({value});"
                )
            else:
                info = torch.iinfo(acc_dtype) if acc_dtype != torch.bool else None
                if info is None:
                    init = "false" if kind == "max" else "true"
                else:
                    init = literal(info.min if kind == "max" else info.max)
                acc = self._accumulator(t, init, acc_dtype)
                fn = "max" if kind == "max" else "min"
                if acc_dtype == torch.bool:
                    op = "||" if kind == "max" else "&&"
                    compute.writeline(f"{acc} = {acc} {op} ({value});")
                else:
                    compute.writeline(f"{acc} = {fn}({acc}, ({t})({value}));")
            return acc
        if kind in ("argmax", "argmin"):
            r = self._reduction_index()
            cmp = ">" if kind == "argmax" else "<"
            if acc_dtype.is_floating_point:
                init = f"({t})" + ("-INFINITY" if kind == "argmax" else "INFINITY")
            else:
                info = torch.iinfo(acc_dtype) if acc_dtype != torch.bool else None
                init = (
                    "false" if info is None else literal(info.min if kind == "argmax" else info.max)
                )
            best = self._accumulator(t, init, acc_dtype)
            index = self._accumulator("long", "-1", torch.int64)
            nan = (
                f"(isnan(({t})({value})) && !isnan({best}))"
                if acc_dtype.is_floating_point
                else "false"
            )
            keep_nan = f"!isnan({best}) && " if acc_dtype.is_floating_point else ""
            compute.writeline(
                f"if ({index} < 0 || {nan} || ({keep_nan}({t})({value}) {cmp} {best})) "
                f"{{ {best} = ({t})({value}); {index} = {r}; }}"
            )
            return index
        if kind == "welford_reduce":
            mean = self._accumulator(t, "0", acc_dtype)
            m2 = self._accumulator(t, "0", acc_dtype)
            weight = self._accumulator(t, "0", acc_dtype)
            rows = self._row_length(acc_dtype)
            if rows is not None:
                # A row that fits in the work item's private memory: its values are kept, and
                # mean and M2 come from two passes over them after the loop -- Welford's
                # division per element costs more than the pass, and two passes round less.
                row, r = f"row{next(self.accumulators)}", self._reduction_index()
                self.body.writeline(f"{t} {row}[{rows}];")
                compute.writeline(f"{row}[{r}] = ({t})({value}); {mean} += {row}[{r}];")
                self.post_loop.writeline(f"{weight} = ({t}){rows};")
                self.post_loop.writeline(f"{mean} /= {weight};")
                if self._unrolled(rows):
                    self.post_loop.writeline("#pragma unroll")
                self.post_loop.writeline(f"for (int i_ = 0; i_ < {rows}; i_++) {{")
                self.post_loop.writeline(f"  {t} delta_ = {row}[i_] - {mean};")
                self.post_loop.writeline(f"  {m2} += delta_ * delta_;")
                self.post_loop.writeline("}")
                return mean, m2, weight
            compute.splice(f"""
                {{
                  {t} x_ = ({t})({value});
                  {weight} += ({t})1;
                  {t} delta_ = x_ - {mean};
                  {mean} += delta_ / {weight};
                  {m2} += delta_ * (x_ - {mean});
                }}""")
            return mean, m2, weight
        if kind == "welford_combine":
            mean = self._accumulator(t, "0", acc_dtype)
            m2 = self._accumulator(t, "0", acc_dtype)
            weight = self._accumulator(t, "0", acc_dtype)
            m_in, m2_in, w_in = value
            compute.splice(f"""
                {{
                  {t} w_ = ({t})({w_in});
                  {t} new_weight_ = {weight} + w_;
                  {t} delta_ = ({t})({m_in}) - {mean};
                  {t} frac_ = new_weight_ == ({t})0 ? ({t})0 : w_ / new_weight_;
                  {mean} += delta_ * frac_;
                  {m2} += ({t})({m2_in}) + delta_ * delta_ * {weight} * frac_;
                  {weight} = new_weight_;
                }}""")
            return mean, m2, weight
        raise NotImplementedError(f"OpenCL C code generation: reduction {kind}")

    # ---- indexing and the body ----

    def codegen_iteration_ranges_entry(self, entry: IterationRangesEntry) -> None:
        expr = self.sexpr(self.rename_indexing(entry.expr))
        line = f"const {self.index_dtype} {entry.name} = {expr};"
        if entry.root.is_loop:
            self.indexing_code.writeline(line)
        else:
            self.body.writeline(line)

    def codegen_body(self) -> None:
        if not (self.indexing_code or self.loads or self.compute or self.stores or self.post_loop):
            return
        loops = [t for t in self.range_trees if t.is_loop] if self.inside_reduction else []
        if loops and (self.indexing_code or self.loads or self.compute or self.stores):
            for level, tree in enumerate(loops):
                with self.body.indent(offset=level):
                    numel = self._numel(tree)
                    if self._unrolled(tree.numel):
                        self.body.writeline("#pragma unroll")
                    self.body.writeline(
                        f"for ({self.index_dtype} {tree.name} = 0; {tree.name} < {numel}; "
                        f"{tree.name}++) {{"
                    )
            with self.body.indent(offset=len(loops)):
                self.body.splice(self.indexing_code)
                self.body.splice(self.loads)
                self.body.splice(self.compute)
                self.body.splice(self.stores)
            for level in reversed(range(len(loops))):
                with self.body.indent(offset=level):
                    self.body.writeline("}")
            self.cse.invalidate(self.outside_loop_vars)
            for tree in loops:
                tree.cache_clear()
        else:
            self.body.splice(self.indexing_code)
            self.body.splice(self.loads)
            self.body.splice(self.compute)
            self.body.splice(self.stores)
        self.body.splice(self.post_loop)
        self.indexing_code.clear()
        self.loads.clear()
        self.compute.clear()
        self.stores.clear()
        self.post_loop.clear()

    def _numel(self, tree: Any) -> str:
        if isinstance(tree.numel, (sympy.Integer, int)):
            return self.sexpr(tree.numel)
        return f"{tree.prefix}numel"

    def _grid_trees(self) -> list[Any]:
        """The pointwise trees, by NDRange dimension (x is 0, y 1, z 2)."""
        return sorted((t for t in self.range_trees if not t.is_reduction), key=lambda t: t.grid_dim)

    def codegen_kernel(self, name: str | None = None) -> str:
        self.codegen_body()
        code = IndentedBuffer()
        params = []
        arg_defs, _, _, arg_types = self.args.python_argdefs()
        for arg, arg_type in zip(arg_defs, arg_types, strict=True):
            if isinstance(arg_type, torch.dtype):
                params.append(f"__global {_MEMORY[arg_type]} *restrict {arg.name}")
            else:
                params.append(f"const long {arg.name}")
        for tree in self.range_trees:
            if not isinstance(tree.numel, (sympy.Integer, int)):
                if not tree.is_reduction or self.inside_reduction:
                    params.append(f"const long {tree.prefix}numel")
        if self._tb_reports_faults:
            # the vendor's fault record, where it has one (vendor.h, TB_FAULT_PARAM)
            code.writeline(f"__kernel void KERNEL_NAME({', '.join(params)}")
            code.writeline("#ifdef TB_FAULT_PARAM")
            code.writeline("    , TB_FAULT_PARAM")
            code.writeline("#endif")
            code.writeline(") {")
        else:
            code.writeline(f"__kernel void KERNEL_NAME({', '.join(params)}) {{")
        with code.indent():
            for tree in self._grid_trees():
                code.writeline(
                    f"const {self.index_dtype} {tree.name} = "
                    f"({self.index_dtype})get_global_id({tree.grid_dim});"
                )
                code.writeline(f"if ({tree.name} >= {self._numel(tree)}) return;")
            code.splice(self.body)
        code.writeline("}")
        return code.getvalue()

    def call_kernel(self, name: str, node: Any = None, deallocate_ws: bool = True) -> None:
        wrapper = V.graph.wrapper_code
        _, call_args, _, _ = self.args.python_argdefs()
        args = [str(a) for a in call_args]
        for tree in self.range_trees:
            if isinstance(tree.numel, (sympy.Integer, int)):
                continue
            if tree.is_reduction and not self.inside_reduction:
                continue
            expr = (
                tree.numel
                if isinstance(tree.numel, sympy.Symbol)
                else (wrapper.generate_numel_expr(name, tree).inner)
            )
            args.append(wrapper._tb_expr(expr))
        grid = [wrapper._tb_expr(t.numel) for t in self._grid_trees()] or ["1"]
        argument_tuple = ", ".join(args) + ("," if len(args) == 1 else "")
        wrapper._tb_launch(name, f"({', '.join(grid)},)", f"({argument_tuple})")

    def check_bounds(self, expr: sympy.Expr, size: sympy.Expr, lower: bool, upper: bool) -> None:
        """An indirect index (an embedding's, a gather's) out of range: the work item reports
        it through the vendor's fault record (vendor.h, TB_FAULT_INDEX: the next synchronizing
        call raises a device fault naming the kernel, as the vendor's own kernels do) and
        stops before it touches memory.  A vendor that defines no TB_FAULT_PARAM still stops
        the work item; the kernel then reports nothing."""
        if not (lower or upper):
            return
        index, bound = self.index_to_str(expr), self.index_to_str(size)
        tests = ([f"({index}) < 0"] if lower else []) + (
            [f"({index}) >= ({bound})"] if upper else []
        )
        self._tb_reports_faults = True
        self.compute.writeline(
            f"if ({' || '.join(tests)}) {{ TB_FAULT_INDEX({index}, {bound}); return; }}"
        )

    def device_assert_async(self, cond: Any, msg: str) -> None:
        return


def kernel_name(node_schedule: Any, kernel: Any, index: int) -> str:
    """A generated kernel's name, as Triton's read in a profile: ``tb_ocl_``, ``poi`` or
    ``red`` (pointwise or reduction), the operators it fuses (Inductor's descriptive names,
    cut to an OpenCL identifier of sensible length) and its index in the graph's program,
    which keeps names unique."""
    category = "red" if kernel.features.is_reduction() else "poi"
    fused = ""
    if inductor_config.triton.descriptive_names:
        fused = get_fused_kernel_name(node_schedule, inductor_config.triton.descriptive_names)
        fused = re.sub(r"[^A-Za-z0-9_]", "_", fused)[:48].rstrip("_")
    return "_".join(part for part in ("tb_ocl", category, fused, str(index)) if part)


class OpenCLScheduling(SIMDScheduling):
    kernel_type = OpenCLKernel  # type: ignore[assignment]

    def define_kernel(self, src_code: str, node_schedule: Any, kernel: Any) -> str:
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        name = kernel_name(node_schedule, kernel, len(getattr(wrapper, "_tb_ocl_kernels", ())))
        wrapper.src_to_kernel[src_code] = name
        origins, _ = get_kernel_metadata(node_schedule, wrapper)
        wrapper._tb_define_opencl(name, src_code.replace("KERNEL_NAME", name), origins)
        return name


# ---- run time: what the generated wrapper modules call ----

_built: list[int] = [0]


def kernels_built() -> int:
    """How many generated kernels the wrapper modules of this process have built (the count
    the tests and the benchmark report per graph)."""
    return _built[0]


def build_graph_kernels(names: list[str], sources: list[str], device: int) -> dict[str, int]:
    """Builds the kernels of one compiled graph as one OpenCL C program on ``device`` and
    returns each kernel's id for torch_backend._C.launch, by name."""
    source = PRELUDE + "\n".join(sources)
    program = torch.ops.torch_backend._program_build(device, "opencl_c", source, "")
    ids = {}
    for name in names:
        ids[name] = torch.ops.torch_backend._program_kernel(program, name)[0]
    _built[0] += len(names)
    return ids


def build_from_globals(scope: dict[str, Any]) -> None:
    """What a generated wrapper module runs once its kernels are defined: builds them
    (``tb_ocl_kernels``, on ``tb_ocl_device``) and binds each name to its kernel id."""
    kernels = scope.get("tb_ocl_kernels")
    if kernels:
        scope.update(
            build_graph_kernels(list(kernels), list(kernels.values()), scope["tb_ocl_device"])
        )


def fallback_unsupported(device_type: str) -> list[str]:
    """Makes Inductor run the device's own kernel (or the CPU fallback eager mode uses) for the
    pointwise operators this generator writes no OpenCL C for -- the special functions
    (Bessel, digamma, erfinv, igamma, zeta, orthogonal polynomials, frexp) -- when their
    operands are on ``device_type``, instead of failing the graph's compilation.  Other devices'
    graphs keep Inductor's lowering.  Returns the operators redirected."""
    from torch._inductor import ir
    from torch._inductor import lowering as inductor_lowering

    redirected = []
    for op, lower in list(inductor_lowering.lowerings.items()):
        name = getattr(op, "__name__", "")
        packet = name.split(".")[0]
        if not isinstance(op, torch._ops.OpOverload) or getattr(lower, "_tb_opencl", False):
            continue
        candidate = packet.removeprefix("special_")
        if not hasattr(OpOverrides, candidate) and not hasattr(OpenCLOverrides, candidate):
            continue
        if not OpenCLOverrides._is_unimplemented(candidate):
            continue

        def on_device(args: Any, kwargs: Any) -> bool:
            for value in torch.utils._pytree.tree_leaves((args, kwargs)):
                if isinstance(value, ir.IRNode):
                    device = value.get_device()
                    if device is not None and device.type == device_type:
                        return True
            return False

        def redirect(*args: Any, _op: Any = op, _lower: Any = lower, **kwargs: Any) -> Any:
            if on_device(args, kwargs):
                return inductor_lowering.fallback_handler(_op, add_to_fallback_set=False)(
                    *args, **kwargs
                )
            return _lower(*args, **kwargs)

        redirect._tb_opencl = True  # type: ignore[attr-defined]
        inductor_lowering.lowerings[op] = redirect
        redirected.append(name)
    return redirected
