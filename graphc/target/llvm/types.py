"""Mapping graphc dtypes to LLVM types, constants and conversions between them.

In registers bool is `i1`; in memory it is `i8`. bfloat16 is kept as its `i16` bits and
computed on through float32 (round-to-nearest-even on the way back). float16 is `half`.

>>> str(reg_type("float32x8")), str(mem_type("bool")), str(reg_type("bfloat16"))
('<8 x float>', 'i8', 'i16')
"""

from __future__ import annotations

import functools

from llvmlite import ir

from ...errors import CodegenError
from ...ir.dtype import DataType

I1, I8, I16, I32, I64 = (ir.IntType(b) for b in (1, 8, 16, 32, 64))
F32, F64 = ir.FloatType(), ir.DoubleType()
PTR = ir.PointerType()
_FLOATS = {16: ir.HalfType(), 32: F32, 64: F64}


def _vec(t: ir.Type, lanes: int) -> ir.Type:
    return t if lanes == 1 else ir.VectorType(t, lanes)


@functools.cache
def reg_type(dtype: str) -> ir.Type:
    """The LLVM type a value of `dtype` has in registers."""
    dt = DataType(dtype)
    if dt.is_handle:
        return PTR
    if dt.is_bool:
        return _vec(I1, dt.lanes)
    if dt.code == "bfloat":
        return _vec(I16, dt.lanes)
    if dt.is_float:
        return _vec(_FLOATS[dt.bits], dt.lanes)
    if dt.is_integer:
        return _vec(ir.IntType(dt.bits), dt.lanes)
    raise CodegenError(f"no LLVM type for dtype {dtype!r}")


@functools.cache
def mem_type(dtype: str) -> ir.Type:
    """The LLVM type a value of `dtype` has in memory (bool widened to i8)."""
    dt = DataType(dtype)
    if dt.is_bool:
        return _vec(I8, dt.lanes)
    return reg_type(dtype)


def is_bf16(dtype: str) -> bool:
    return DataType(dtype).code == "bfloat"


def f32_of(dtype: str) -> str:
    """The float32 dtype with the lanes of `dtype`."""
    return str(DataType("float32").with_lanes(DataType(dtype).lanes))


def constant(dtype: str, value) -> ir.Constant:
    """An LLVM constant of `dtype` (vectors splat the scalar)."""
    dt = DataType(dtype)
    scalar = str(dt.element_of())
    if dt.is_bool:
        c = ir.Constant(I1, 1 if value else 0)
    elif dt.code == "bfloat":
        c = ir.Constant(I16, bf16_bits(float(value)))
    elif dt.is_float:
        if dt.bits == 16:
            import numpy as np

            value = float(np.float16(value))
        elif dt.bits == 32:
            import numpy as np

            value = float(np.float32(value))
        c = ir.Constant(reg_type(scalar), float(value))
    else:
        value = int(value) & ((1 << dt.bits) - 1)
        if value >= 1 << (dt.bits - 1):
            value -= 1 << dt.bits
        c = ir.Constant(reg_type(scalar), value)
    if dt.lanes == 1:
        return c
    return ir.Constant(reg_type(dtype), [c] * dt.lanes)


def bf16_bits(value: float) -> int:
    """The bfloat16 bit pattern of `value`, rounded to nearest even."""
    import struct

    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if value != value:
        return (bits >> 16) | 0x40
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def splat(builder: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    """`value` repeated in `lanes` lanes."""
    if lanes == 1:
        return value
    vec_t = ir.VectorType(value.type, lanes)
    v = builder.insert_element(ir.Constant(vec_t, ir.Undefined), value, ir.Constant(I32, 0))
    mask = ir.Constant(ir.VectorType(I32, lanes), [0] * lanes)
    return builder.shuffle_vector(v, ir.Constant(vec_t, ir.Undefined), mask)


def bf16_to_f32(builder: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    """Widen bfloat16 bits (i16) to float32: the bits go to the top half."""
    wide = builder.zext(value, _vec(I32, lanes))
    shifted = builder.shl(wide, _const_like(wide.type, 16))
    return builder.bitcast(shifted, _vec(F32, lanes))


def f32_to_bf16(builder: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    """Narrow float32 to bfloat16 bits, rounding to nearest even; NaN stays a quiet NaN."""
    i32_t = _vec(I32, lanes)
    bits = builder.bitcast(value, i32_t)
    lsb = builder.and_(builder.lshr(bits, _const_like(i32_t, 16)), _const_like(i32_t, 1))
    rounded = builder.add(bits, builder.add(lsb, _const_like(i32_t, 0x7FFF)))
    quiet = builder.or_(bits, _const_like(i32_t, 0x400000))
    is_nan = builder.fcmp_unordered("uno", value, value)
    chosen = builder.select(is_nan, quiet, rounded)
    return builder.trunc(builder.lshr(chosen, _const_like(i32_t, 16)), _vec(I16, lanes))


def _const_like(t: ir.Type, value: int) -> ir.Constant:
    if isinstance(t, ir.VectorType):
        return ir.Constant(t, [ir.Constant(t.element, value)] * t.count)
    return ir.Constant(t, value)


def const_like(t: ir.Type, value) -> ir.Constant:
    """A constant of LLVM type `t` (splatted for vectors)."""
    return _const_like(t, value)
