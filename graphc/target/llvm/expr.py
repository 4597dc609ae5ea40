"""LLVM code generation for TensorIR expressions (a mixin of `CodeGenLLVM`).

Each `visit_<Node>` returns an `llvmlite.ir.Value` in the register type of the node's
dtype (see `types.py`). Integer semantics follow the dtype's signedness; `FloorDiv` and
`FloorMod` round toward negative infinity, `Div`/`Mod` truncate as in C. Float math keeps
IEEE semantics (no fast-math flags beyond `contract`), so `isnan` works.
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import CodegenError
from ...ir.dtype import DataType
from ...tir import expr as tir_expr
from .types import I1, I32, I64, bf16_to_f32, const_like, constant, f32_to_bf16, reg_type, splat

FAST = ("contract",)
_ICMP = {tir_expr.EQ: "==", tir_expr.NE: "!=", tir_expr.LT: "<", tir_expr.LE: "<=", tir_expr.GT: ">",
         tir_expr.GE: ">="}
_FCMP = {tir_expr.EQ: ("==", False), tir_expr.NE: ("!=", True), tir_expr.LT: ("<", False),
         tir_expr.LE: ("<=", False),
         tir_expr.GT: (">", False), tir_expr.GE: (">=", False)}


class ExprCodegen:
    """Expression half of the LLVM code generator."""

    builder: ir.IRBuilder
    _visitors: dict  # node class -> visit_<Node> (`method_table`, shared with the statements)

    def emit_expr(self, expr) -> ir.Value:
        method = self._visitors[type(expr)]
        if method is None:
            raise CodegenError(f"LLVM codegen cannot translate expression {type(expr).__name__}")
        return method(self, expr)

    # -- leaves --------------------------------------------------------------------------
    def visit_Var(self, op: tir_expr.Var) -> ir.Value:
        try:
            return self.vars[op]
        except KeyError:
            raise CodegenError(f"{self.func_name}: variable {op.name!r} is used outside the scope "
                               "that defines it (no loop, let or parameter binds it)") from None

    def visit_IntImm(self, op: tir_expr.IntImm) -> ir.Value:
        return constant(op.dtype, op.value)

    def visit_FloatImm(self, op: tir_expr.FloatImm) -> ir.Value:
        return constant(op.dtype, op.value)

    def visit_StringImm(self, op: tir_expr.StringImm) -> ir.Value:
        return self.string_constant(op.value)

    # -- arithmetic ----------------------------------------------------------------------
    def _float_op(self, dtype: str, a, b, fn) -> ir.Value:
        """Apply `fn(x, y)` to two float operands; bfloat16 computes in float32."""
        if DataType(dtype).code == "bfloat":
            lanes = DataType(dtype).lanes
            x, y = bf16_to_f32(self.builder, a, lanes), bf16_to_f32(self.builder, b, lanes)
            return f32_to_bf16(self.builder, fn(x, y), lanes)
        return fn(a, b)

    def _binary(self, op, int_fn, uint_fn, float_fn) -> ir.Value:
        a, b = self.emit_expr(op.a), self.emit_expr(op.b)
        dt = DataType(op.dtype)
        if dt.is_float:
            return self._float_op(op.dtype, a, b, float_fn)
        return (uint_fn if dt.is_uint or dt.is_bool else int_fn)(a, b)

    def visit_Add(self, op):
        b = self.builder
        return self._binary(op, b.add, b.add, lambda x, y: b.fadd(x, y, flags=FAST))

    def visit_Sub(self, op):
        b = self.builder
        return self._binary(op, b.sub, b.sub, lambda x, y: b.fsub(x, y, flags=FAST))

    def visit_Mul(self, op):
        b = self.builder
        return self._binary(op, b.mul, b.mul, lambda x, y: b.fmul(x, y, flags=FAST))

    def visit_Div(self, op):
        b = self.builder
        return self._division(op, b.sdiv, b.udiv, lambda x, y: b.fdiv(x, y, flags=FAST), True)

    def visit_Mod(self, op):
        b = self.builder
        return self._division(op, b.srem, b.urem, lambda x, y: b.frem(x, y), False)

    def visit_FloorDiv(self, op):
        b = self.builder
        return self._division(op, self._floordiv, b.udiv,
                              lambda x, y: self.call_llvm_intrinsic("llvm.floor", [b.fdiv(x, y)]), True)

    def visit_FloorMod(self, op):
        b = self.builder

        def fmod(x, y):
            q = self.call_llvm_intrinsic("llvm.floor", [b.fdiv(x, y)])
            return b.fsub(x, b.fmul(y, q))

        return self._division(op, self._floormod, b.urem, fmod, False)

    def _division(self, op, int_fn, uint_fn, float_fn, quotient: bool) -> ir.Value:
        """Integer division that cannot trap: x / 0 gives 0 (as numpy does) and MIN / -1 wraps.

        A divisor that is a constant other than 0 and -1 needs no guard.
        """
        divisor = op.b.value if isinstance(op.b, tir_expr.Broadcast) else op.b
        dt = DataType(op.dtype)
        if dt.is_float or (isinstance(divisor, tir_expr.IntImm) and divisor.value not in (0, -1)):
            return self._binary(op, int_fn, uint_fn, float_fn)
        b, signed = self.builder, dt.is_int
        x, d = self.emit_expr(op.a), self.emit_expr(op.b)
        zero, one = const_like(d.type, 0), const_like(d.type, 1)
        is_zero = b.icmp_unsigned("==", d, zero)
        bad = is_zero
        if signed:
            is_neg1 = b.icmp_signed("==", d, const_like(d.type, -1))
            bad = b.or_(is_zero, is_neg1)
        result = (int_fn if signed else uint_fn)(x, b.select(bad, one, d))
        if signed and quotient:  # x / -1 == -x, wrapping for the minimum value
            result = b.select(is_neg1, b.sub(zero, x), result)
        return b.select(is_zero, zero, result)

    def _sign_mismatch(self, r, d) -> ir.Value:
        """r != 0 and sign(r) != sign(d): the truncated result needs a floor correction."""
        b, zero = self.builder, const_like(r.type, 0)
        nonzero = b.icmp_signed("!=", r, zero)
        differ = b.icmp_signed("!=", b.icmp_signed("<", r, zero), b.icmp_signed("<", d, zero))
        return b.and_(nonzero, differ)

    def _floordiv(self, x, y) -> ir.Value:
        b = self.builder
        q, r = b.sdiv(x, y), b.srem(x, y)
        return b.select(self._sign_mismatch(r, y), b.sub(q, const_like(q.type, 1)), q)

    def _floormod(self, x, y) -> ir.Value:
        b = self.builder
        r = b.srem(x, y)
        return b.select(self._sign_mismatch(r, y), b.add(r, y), r)

    def _minmax(self, op, pick_less: bool) -> ir.Value:
        a, b_val = self.emit_expr(op.a), self.emit_expr(op.b)
        b, dt = self.builder, DataType(op.dtype)
        if dt.is_float:
            def fn(x, y):
                return b.select(b.fcmp_ordered("<" if pick_less else ">", x, y), x, y)

            return self._float_op(op.dtype, a, b_val, fn)
        cmp = b.icmp_unsigned if dt.is_uint or dt.is_bool else b.icmp_signed
        return b.select(cmp("<" if pick_less else ">", a, b_val), a, b_val)

    def visit_Min(self, op):
        return self._minmax(op, True)

    def visit_Max(self, op):
        return self._minmax(op, False)

    # -- comparisons and logic ------------------------------------------------------------
    def visit_CmpOp(self, op) -> ir.Value:
        a, b_val = self.emit_expr(op.a), self.emit_expr(op.b)
        b, dt = self.builder, DataType(op.a.dtype)
        if dt.is_float:
            if dt.code == "bfloat":
                a, b_val = bf16_to_f32(b, a, dt.lanes), bf16_to_f32(b, b_val, dt.lanes)
            pred, unordered = _FCMP[type(op)]
            return (b.fcmp_unordered if unordered else b.fcmp_ordered)(pred, a, b_val)
        cmp = b.icmp_unsigned if dt.is_uint or dt.is_bool or dt.is_handle else b.icmp_signed
        return cmp(_ICMP[type(op)], a, b_val)

    def visit_And(self, op):
        return self.builder.and_(self.emit_expr(op.a), self.emit_expr(op.b))

    def visit_Or(self, op):
        return self.builder.or_(self.emit_expr(op.a), self.emit_expr(op.b))

    def visit_Not(self, op):
        a = self.emit_expr(op.a)
        return self.builder.xor(a, const_like(a.type, 1))

    def visit_Select(self, op):
        cond = self.emit_expr(op.condition)
        t, f = self.emit_expr(op.true_value), self.emit_expr(op.false_value)
        return self.builder.select(cond, t, f)

    def visit_Let(self, op):
        self.vars[op.var] = self.emit_expr(op.value)
        try:
            return self.emit_expr(op.body)
        finally:
            del self.vars[op.var]

    # -- conversions ----------------------------------------------------------------------
    def visit_Cast(self, op: tir_expr.Cast) -> ir.Value:
        return self.cast(op.value.dtype, op.dtype, self.emit_expr(op.value))

    def cast(self, src: str, dst: str, value: ir.Value) -> ir.Value:
        """Convert `value` from dtype `src` to dtype `dst` (lanes must agree)."""
        s, d, b = DataType(src), DataType(dst), self.builder
        if s == d:
            return value
        if s.lanes != d.lanes:
            if s.lanes == 1:
                return splat(b, self.cast(src, str(d.element_of()), value), d.lanes)
            raise CodegenError(f"cannot cast {src} to {dst}: lane counts differ")
        lanes, to_t = d.lanes, reg_type(dst)
        if s.code == "bfloat":
            return self.cast(str(DataType("float32").with_lanes(lanes)), dst,
                             bf16_to_f32(b, value, lanes))
        if d.code == "bfloat":
            f32 = str(DataType("float32").with_lanes(lanes))
            return f32_to_bf16(b, self.cast(src, f32, value), lanes)
        if d.is_bool:
            if s.is_float:
                return b.fcmp_unordered("!=", value, const_like(value.type, 0.0))
            return b.icmp_unsigned("!=", value, const_like(value.type, 0))
        if s.is_float and d.is_float:
            return b.fpext(value, to_t) if d.bits > s.bits else b.fptrunc(value, to_t)
        if s.is_float:
            return (b.fptoui if d.is_uint else b.fptosi)(value, to_t)
        signed = s.is_int
        if d.is_float:
            return (b.sitofp if signed else b.uitofp)(value, to_t)
        if d.bits > s.bits:
            return (b.sext if signed else b.zext)(value, to_t)
        if d.bits < s.bits:
            return b.trunc(value, to_t)
        return value  # int <-> uint of equal width: same bits

    # -- vectors --------------------------------------------------------------------------
    def visit_Ramp(self, op: tir_expr.Ramp) -> ir.Value:
        base, stride = self.emit_expr(op.base), self.emit_expr(op.stride)
        b, lanes = self.builder, op.lanes
        offsets = ir.Constant(ir.VectorType(base.type, lanes),
                              [ir.Constant(base.type, i) for i in range(lanes)])
        if DataType(op.base.dtype).is_float:
            return b.fadd(splat(b, base, lanes), b.fmul(splat(b, stride, lanes), offsets))
        return b.add(splat(b, base, lanes), b.mul(splat(b, stride, lanes), offsets))

    def visit_Broadcast(self, op: tir_expr.Broadcast) -> ir.Value:
        return splat(self.builder, self.emit_expr(op.value), op.lanes)

    def visit_Shuffle(self, op: tir_expr.Shuffle) -> ir.Value:
        b = self.builder
        lanes = []  # (vector value, lane) for each lane of the concatenation
        for vec in op.vectors:
            v = self.emit_expr(vec)
            n = DataType(vec.dtype).lanes
            lanes.extend((v, i, n) for i in range(n))
        out_t = reg_type(op.dtype)
        if len(op.indices) == 1:
            v, i, n = lanes[int(op.indices[0])]
            return v if n == 1 else b.extract_element(v, ir.Constant(I32, i))
        result = ir.Constant(out_t, ir.Undefined)
        for pos, index in enumerate(op.indices):
            v, i, n = lanes[int(index)]
            elem = v if n == 1 else b.extract_element(v, ir.Constant(I32, i))
            result = b.insert_element(result, elem, ir.Constant(I32, pos))
        return result

    # -- memory ---------------------------------------------------------------------------
    def visit_BufferLoad(self, op: tir_expr.BufferLoad) -> ir.Value:
        return self.load(op.buffer, op.indices, op.dtype, op.predicate)

    def visit_Call(self, op: tir_expr.Call) -> ir.Value:
        return self.emit_call(op)

    def index_i64(self, index) -> ir.Value:
        """An index expression widened to i64 (per lane for vectors)."""
        value = self.emit_expr(index)
        dt = DataType(index.dtype)
        to_t = I64 if dt.lanes == 1 else ir.VectorType(I64, dt.lanes)
        if dt.bits == 64:
            return value
        return (self.builder.zext if dt.is_uint or dt.is_bool else self.builder.sext)(value, to_t)

    def to_bool_i1(self, value: ir.Value) -> ir.Value:
        if value.type == I1:
            return value
        return self.builder.icmp_unsigned("!=", value, const_like(value.type, 0))
