"""The three dialects of the C-family source generator: what CUDA C, OpenCL C and plain C spell
differently, as data (TVM's CodeGenCUDA / CodeGenOpenCL / CodeGenC overrides, as tables).

Everything the generator prints that is not plain C99 comes from a `Dialect`: type names,
qualifiers of kernels, pointers and shared memory, thread indices, the barrier, math function
names, warp shuffles, how 16-bit floats are stored, and the helper functions a source needs.

>>> CUDA.thread_index("threadIdx.x"), OPENCL.thread_index("blockIdx.y")
('((int)threadIdx.x)', 'convert_int(get_group_id(1))')
>>> CUDA.type_name("int64"), OPENCL.type_name("int64"), C.type_name("int64")
('long long', 'long', 'int64_t')
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import CodegenError
from ...ir.dtype import DataType

_AXES = {"x": 0, "y": 1, "z": 2}

# Conversions between float and the 16-bit storage formats. CUDA converts with PTX `cvt`;
# OpenCL and C do it in software (round to nearest even; NaN stays NaN). Names: h = float16,
# bf = bfloat16; f2h / f2bf round a float to the storage bits, h2f / bf2f widen them, and
# rh / rbf round a float to the nearest float16 / bfloat16 value (kept as float).
_SOFT_HALF = """
{fn}float gc_h2f({u16} h) {{
  {u32} sign = (({u32})(h & 0x8000u)) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1fu) return {as_float}(sign | 0x7f800000u | (mant << 13));
  if (exp == 0u) {{ float v = (float)mant * 5.9604644775390625e-08f; return sign ? -v : v; }}
  return {as_float}(sign | ((exp + 112u) << 23) | (mant << 13));
}}
{fn}{u16} gc_f2h(float f) {{
  {u32} x = {as_uint}(f), sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu, out;
  if (mag >= 0x47800000u) {{
    out = mag > 0x7f800000u ? 0x7e00u : 0x7c00u;
  }} else if (mag < 0x38800000u) {{
    /* below the smallest normal half: let float addition round at the half ulp 2^-24 */
    out = {as_uint}({as_float}(mag) + 0.5f) - 0x3f000000u;
  }} else {{
    out = (mag + 0xc8000fffu + ((mag >> 13) & 1u)) >> 13;
  }}
  return ({u16})(out | sign);
}}
"""
_PTX_HALF = """
{fn}float gc_h2f(unsigned short h) {{ float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }}
{fn}unsigned short gc_f2h(float f) {{
  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}}
"""
_BF16 = """
{fn}float gc_bf2f({u16} b) {{ return {as_float}((({u32})b) << 16); }}
{fn}{u16} gc_f2bf(float f) {{
  {u32} x = {as_uint}(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return ({u16})((x >> 16) | 0x40u);
  return ({u16})((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}}
"""
_ROUND_HALF = "{fn}float gc_rh(float f) {{ return gc_h2f(gc_f2h(f)); }}\n"
_ROUND_BF16 = "{fn}float gc_rbf(float f) {{ return gc_bf2f(gc_f2bf(f)); }}\n"
_C_BITS = """
{fn}float gc_as_float(uint32_t u) {{ float f; memcpy(&f, &u, 4); return f; }}
{fn}uint32_t gc_as_uint(float f) {{ uint32_t u; memcpy(&u, &f, 4); return u; }}
"""
_FLOORDIV = """
{fn}{t} gc_floordiv_{s}({t} a, {t} b) {{
  {t} q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}}
{fn}{t} gc_floormod_{s}({t} a, {t} b) {{
  {t} r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}}
"""


@dataclass(frozen=True)
class Dialect:
    """What one C-family language spells its own way."""

    name: str
    types: dict
    kernel_prefix: str  # before the return type of a kernel
    pointer: str  # "{const}{type}* {restrict}{name}" with the dialect's address space
    restrict: str
    shared: str  # qualifier of a shared-memory array
    thread_expr: dict  # "blockIdx"/"threadIdx" -> "{axis_name}"/"{axis}" template
    barrier: str
    fn: str  # qualifiers of helper functions
    as_float: str
    as_uint: str
    float_suffix: str = "f"
    int64_suffix: str = "LL"
    math_suffix_f32: str = "f"  # CUDA and C name float math expf; OpenCL overloads exp
    shuffles: bool = False
    prelude: str = ""
    half_helpers: str = _SOFT_HALF
    infinity: str = "INFINITY"
    nan: str = "NAN"

    def type_name(self, dtype: str) -> str:
        """The dialect's name for a scalar `dtype` held in a register (16-bit floats: float)."""
        dt = DataType(dtype)
        if dt.lanes != 1:
            raise CodegenError(f"the {self.name} code generator has no vector types; {dtype} values come "
                               "from vectorized loops, which it runs as unrolled loops instead")
        name = self.types.get(str(dt))
        if name is None:
            raise CodegenError(f"the {self.name} code generator cannot hold {dtype} values")
        return name

    def storage_type(self, dtype: str) -> str:
        """The dialect's name for `dtype` in memory (16-bit floats: their bits; bool: a byte)."""
        dt = DataType(dtype)
        if dt.code in ("float", "bfloat") and dt.bits == 16:
            return self.types["uint16"]
        if dt.is_bool:
            return self.types["uint8"]
        return self.type_name(dtype)

    def thread_index(self, tag: str) -> str:
        kind, axis = tag.split(".")
        return self.thread_expr[kind].format(axis=axis, index=_AXES[axis])

    def math_function(self, op: str, dtype: str) -> str | None:
        """The name of math intrinsic `op` on float32/float64 (`graphc.target.intrin`'s table)."""
        from ..intrin import math_function

        return math_function(self.name, op, dtype)

    def int_literal(self, value: int, dtype: str) -> str:
        dt = DataType(dtype)
        if dt.bits == 64:
            if dt.is_uint:
                return f"{value}U{self.int64_suffix}"
            if value == -(1 << 63):
                return f"(-{(1 << 63) - 1}{self.int64_suffix} - 1)"
            return f"{value}{self.int64_suffix}"
        if dt.is_uint:
            return f"{value}U"
        if dt.bits == 32 and value == -(1 << 31):
            return "(-2147483647 - 1)"
        return str(value)

    def helpers(self, used: set) -> str:
        """The helper functions the generated code calls (`used`: helper group names)."""
        fmt = {"fn": self.fn, "u16": self.types["uint16"], "u32": self.types["uint32"],
               "as_float": self.as_float, "as_uint": self.as_uint}
        parts = []
        if self.name == "c" and used & {"half", "bf16"}:
            parts.append(_C_BITS.format(**fmt))
        if "slot" in used:  # a float argument slot holds the bits of a double
            parts.append(f"{self.fn}double gc_slot_double(int64_t s) "
                         "{ double d; memcpy(&d, &s, 8); return d; }\n")
        if "half" in used:
            parts += [self.half_helpers.format(**fmt), _ROUND_HALF.format(**fmt)]
        if "bf16" in used:
            parts += [_BF16.format(**fmt), _ROUND_BF16.format(**fmt)]
        if "wmma" in used and self.name == "cuda":
            from .wmma import CUDA_HELPERS

            parts.append(CUDA_HELPERS)
        for dtype in sorted(u for u in used if u.startswith("floordiv_")):
            ty = dtype[len("floordiv_"):]
            parts.append(_FLOORDIV.format(fn=self.fn, t=self.type_name(ty), s=ty))
        return "".join(parts)


CUDA = Dialect(
    name="cuda",
    types={"bool": "bool", "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
           "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
           "uint64": "unsigned long long", "float16": "float", "bfloat16": "float", "float32": "float",
           "float64": "double"},
    kernel_prefix='extern "C" __global__',
    pointer="{const}{type}* {restrict}{name}",
    restrict="__restrict__ ",
    shared="__shared__",
    thread_expr={"blockIdx": "((int)blockIdx.{axis})", "threadIdx": "((int)threadIdx.{axis})"},
    barrier="__syncthreads();",
    fn="static __device__ __forceinline__ ",
    as_float="__uint_as_float",
    as_uint="__float_as_uint",
    shuffles=True,
    prelude="// graphc: CUDA C for NVRTC (no headers needed)\n",
    half_helpers=_PTX_HALF,
    infinity="__uint_as_float(0x7f800000u)",
    nan="__uint_as_float(0x7fc00000u)",
)

OPENCL = Dialect(
    name="opencl",
    types={"bool": "bool", "int8": "char", "int16": "short", "int32": "int", "int64": "long",
           "uint8": "uchar", "uint16": "ushort", "uint32": "uint", "uint64": "ulong", "float16": "float",
           "bfloat16": "float", "float32": "float", "float64": "double"},
    kernel_prefix="__kernel",
    pointer="__global {const}{type}* {restrict}{name}",
    restrict="restrict ",
    shared="__local",
    thread_expr={"blockIdx": "convert_int(get_group_id({index}))",
                 "threadIdx": "convert_int(get_local_id({index}))"},
    barrier="barrier(CLK_LOCAL_MEM_FENCE);",
    fn="",
    as_float="as_float",
    as_uint="as_uint",
    int64_suffix="L",
    math_suffix_f32="",
    prelude="// graphc: OpenCL C\n",
)

C = Dialect(
    name="c",
    types={"bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
           "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
           "float16": "float", "bfloat16": "float", "float32": "float", "float64": "double",
           "handle": "void*"},
    kernel_prefix="",
    pointer="{const}{type}* {restrict}{name}",
    restrict="restrict ",
    shared="",
    thread_expr={},
    barrier="",
    fn="static inline ",
    as_float="gc_as_float",
    as_uint="gc_as_uint",
    prelude=("// graphc: C99 for the host CPU\n#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n"
             "#include <stdlib.h>\n#include <string.h>\n"),
)

DIALECTS = {"cuda": CUDA, "opencl": OPENCL, "c": C}

__all__ = ["C", "CUDA", "DIALECTS", "OPENCL", "Dialect"]
