"""LLVM lowering of intrinsic calls: LLVM intrinsics, libm/extern calls and control intrinsics.

Order of resolution for a `Call`: control intrinsics (`if_then_else`, `likely`, ...) are
handled structurally; otherwise the rule table of `graphc.target.intrin` is consulted
(user rules first, by level); float16/bfloat16 math is widened to float32; what is left
maps onto an LLVM intrinsic (`llvm.exp.f32`, ...) or fails with a CodegenError.
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import CodegenError
from ...ir.dtype import DataType
from ...tir import expr as tir_expr
from ..intrin import lower_intrin
from .types import I1, I8, I32, PTR, const_like, f32_of, mem_type, reg_type

# tir name -> LLVM intrinsic base name (overloaded on the operand type)
LLVM_INTRINSICS = {
    "tir.exp": "llvm.exp", "tir.exp2": "llvm.exp2", "tir.log": "llvm.log", "tir.log2": "llvm.log2",
    "tir.log10": "llvm.log10", "tir.sqrt": "llvm.sqrt", "tir.sin": "llvm.sin", "tir.cos": "llvm.cos",
    "tir.floor": "llvm.floor", "tir.ceil": "llvm.ceil", "tir.round": "llvm.nearbyint",
    "tir.nearbyint": "llvm.nearbyint", "tir.trunc": "llvm.trunc", "tir.fabs": "llvm.fabs",
    "tir.pow": "llvm.pow", "tir.copysign": "llvm.copysign",
}  # fmt: skip
_GPU_ONLY = ("tir.tvm_thread_allreduce", "tir.tvm_storage_sync")


def _type_suffix(t: ir.Type) -> str:
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{_type_suffix(t.element)}"
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    return {"half": "f16", "float": "f32", "double": "f64"}[str(t)]


class IntrinsicCodegen:
    """Call half of the LLVM code generator."""

    def call_llvm_intrinsic(self, base: str, args: list, ret_type: ir.Type | None = None) -> ir.Value:
        """Call the overloaded LLVM intrinsic `base` on the type of the first argument."""
        ret_type = ret_type or args[0].type
        name = f"{base}.{_type_suffix(args[0].type)}"
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret_type, [a.type for a in args]), name)
        return self.builder.call(fn, args)

    def extern_function(self, name: str, ret: ir.Type, arg_types: list) -> ir.Function:
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, arg_types), name)
            fn.attributes.add("nounwind")
        return fn

    def emit_call(self, op: tir_expr.Call) -> ir.Value:
        handler = _STRUCTURAL.get(op.op)
        if handler is not None:
            return handler(self, op)
        if op.op in _GPU_ONLY:
            raise CodegenError(f"{self.func_name}: {op.op} needs a GPU target, not llvm")
        lowered = lower_intrin(op, self.target_kind)
        if lowered is not op:
            return self.emit_expr(lowered)
        arg_dtypes = [DataType(a.dtype) for a in op.args]
        if any(dt.is_float and dt.bits == 16 for dt in arg_dtypes):
            return self._widened(op)
        base = LLVM_INTRINSICS.get(op.op)
        if base is not None:
            return self.call_llvm_intrinsic(base, [self.emit_expr(a) for a in op.args])
        simple = _SIMPLE.get(op.op)
        if simple is not None:
            return simple(self, op, [self.emit_expr(a) for a in op.args])
        raise CodegenError(
            f"{self.func_name}: no LLVM lowering for intrinsic {op.op}; register one with "
            f"graphc.target.register_intrin_lowering({op.op!r}, 'llvm', rule)"
        )

    def _widened(self, op: tir_expr.Call) -> ir.Value:
        """float16/bfloat16 math computed in float32 and converted back."""
        args = [tir_expr.Cast(f32_of(a.dtype), a) if DataType(a.dtype).is_float else a for a in op.args]
        dt = DataType(op.dtype)
        ret = f32_of(op.dtype) if dt.is_float else op.dtype
        call = tir_expr.Call(ret, op.op, tuple(args))
        return self.emit_expr(tir_expr.Cast(op.dtype, call) if ret != op.dtype else call)

    def _extern(self, op: tir_expr.Call) -> ir.Value:
        if not op.args or not isinstance(op.args[0], tir_expr.StringImm):
            raise CodegenError(f"{self.func_name}: {op.op} needs the function name as a string first")
        name, args = op.args[0].value, op.args[1:]
        values = [self.emit_expr(a) for a in args]
        values = [self.builder.zext(v, I8) if v.type == I1 else v for v in values]
        dt = DataType(op.dtype)
        name = _libm_float_variant(name, dt, [a.dtype for a in args])
        if dt.lanes == 1:
            ret = ir.VoidType() if dt.is_handle and op.op == "tir.call_extern" else reg_type(op.dtype)
            fn = self.extern_function(name, ret, [v.type for v in values])
            result = self.builder.call(fn, values)
            return const_like(I32, 0) if isinstance(ret, ir.VoidType) else result
        scalar_t = reg_type(str(dt.element_of()))
        elem_types = [v.type.element if isinstance(v.type, ir.VectorType) else v.type for v in values]
        fn = self.extern_function(name, scalar_t, elem_types)
        result = ir.Constant(reg_type(op.dtype), ir.Undefined)
        for i in range(dt.lanes):
            lane_args = [self._lane(v, i) for v in values]
            result = self.builder.insert_element(result, self.builder.call(fn, lane_args),
                                                 ir.Constant(I32, i))
        return result

    def _lane(self, value: ir.Value, i: int) -> ir.Value:
        if isinstance(value.type, ir.VectorType):
            return self.builder.extract_element(value, ir.Constant(I32, i))
        return value

    def _if_then_else(self, op: tir_expr.Call) -> ir.Value:
        cond = self.to_bool_i1(self.emit_expr(op.args[0]))
        if isinstance(cond.type, ir.VectorType):  # per-lane: both sides, like Select
            return self.builder.select(cond, self.emit_expr(op.args[1]), self.emit_expr(op.args[2]))
        b = self.builder
        then_bb, else_bb = b.append_basic_block("ite_then"), b.append_basic_block("ite_else")
        end_bb = b.append_basic_block("ite_end")
        b.cbranch(cond, then_bb, else_bb)
        b.position_at_end(then_bb)
        t = self.emit_expr(op.args[1])
        then_end = b.block
        b.branch(end_bb)
        b.position_at_end(else_bb)
        f = self.emit_expr(op.args[2])
        else_end = b.block
        b.branch(end_bb)
        b.position_at_end(end_bb)
        phi = b.phi(t.type)
        phi.add_incoming(t, then_end)
        phi.add_incoming(f, else_end)
        return phi

    def _address_of(self, op: tir_expr.Call) -> ir.Value:
        load = op.args[0]
        if not isinstance(load, tir_expr.BufferLoad):
            raise CodegenError(f"{self.func_name}: tir.address_of needs a buffer load, got {load!r}")
        base, index = self.buffer_base(load.buffer, load.indices)
        return self.builder.gep(base, [self.index_i64(index)], source_etype=mem_type(load.buffer.dtype))


def _float_class(kind: str):
    def emit(cg, op, args):
        b, x = cg.builder, args[0]
        if kind == "isnan":
            return b.fcmp_unordered("uno", x, x)
        mag = cg.call_llvm_intrinsic("llvm.fabs", [x])
        inf = const_like(x.type, float("inf"))
        return b.fcmp_ordered("==" if kind == "isinf" else "<", mag, inf)

    return emit


def _shift_right(cg, op, args):
    signed = DataType(op.dtype).is_int
    return (cg.builder.ashr if signed else cg.builder.lshr)(*args)


def _abs(cg, op, args):
    dt, b, x = DataType(op.dtype), cg.builder, args[0]
    if dt.is_float:
        return cg.call_llvm_intrinsic("llvm.fabs", [x])
    if dt.is_uint or dt.is_bool:
        return x
    return b.select(b.icmp_signed("<", x, const_like(x.type, 0)), b.neg(x), x)


def _reinterpret(cg, op):
    value = cg.emit_expr(op.args[0])
    to_t = reg_type(op.dtype)
    if DataType(op.dtype).is_handle or isinstance(value.type, ir.PointerType):
        if isinstance(value.type, ir.PointerType) and not isinstance(to_t, ir.PointerType):
            return cg.builder.ptrtoint(value, to_t)
        if isinstance(to_t, ir.PointerType) and not isinstance(value.type, ir.PointerType):
            return cg.builder.inttoptr(value, PTR)
        return value
    return cg.builder.bitcast(value, to_t)


def _likely(cg, op):
    cond = cg.emit_expr(op.args[0])
    if cond.type != I1:
        return cond
    return cg.call_llvm_intrinsic("llvm.expect", [cond, ir.Constant(I1, 1)])


def _assume(cg, op):
    cond = cg.to_bool_i1(cg.emit_expr(op.args[0]))
    fn = cg.extern_function("llvm.assume", ir.VoidType(), [I1])
    cg.builder.call(fn, [cond])
    return const_like(I32, 0)


def _infinity(cg, op):
    from .types import constant

    dt = DataType(op.dtype)
    return constant(op.dtype, float("inf") if dt.is_float else dt.max_value())


_STRUCTURAL = {
    "tir.if_then_else": IntrinsicCodegen._if_then_else,
    "tir.call_extern": IntrinsicCodegen._extern,
    "tir.call_pure_extern": IntrinsicCodegen._extern,
    "tir.address_of": IntrinsicCodegen._address_of,
    "tir.reinterpret": _reinterpret,
    "tir.likely": _likely,
    "tir.assume": _assume,
    "tir.infinity": _infinity,
}
_SIMPLE = {
    "tir.isnan": _float_class("isnan"),
    "tir.isinf": _float_class("isinf"),
    "tir.isfinite": _float_class("isfinite"),
    "tir.abs": _abs,
    "tir.shift_left": lambda cg, op, a: cg.builder.shl(*a),
    "tir.shift_right": _shift_right,
    "tir.bitwise_and": lambda cg, op, a: cg.builder.and_(*a),
    "tir.bitwise_or": lambda cg, op, a: cg.builder.or_(*a),
    "tir.bitwise_xor": lambda cg, op, a: cg.builder.xor(*a),
    "tir.bitwise_not": lambda cg, op, a: cg.builder.not_(a[0]),
    "tir.popcount": lambda cg, op, a: cg.call_llvm_intrinsic("llvm.ctpop", a),
}


# C's math functions take doubles; a float32 call of `log` must bind to `logf` (as OpenCL's
# overloads do implicitly), or the double routine would read float registers as garbage.
_LIBM_DOUBLE = frozenset(
    "exp exp2 expm1 log log2 log10 log1p sqrt cbrt sin cos tan asin acos atan sinh cosh tanh "
    "asinh acosh atanh erf erfc pow atan2 fmod hypot copysign nextafter fabs floor ceil round "
    "trunc nearbyint rint fmin fmax".split()
)


def _libm_float_variant(name: str, dtype: DataType, arg_dtypes) -> str:
    floats = [DataType(d).element_of() for d in arg_dtypes]
    if name in _LIBM_DOUBLE and dtype.element_of() == "float32" and floats and all(
        f == "float32" for f in floats
    ):
        return name + "f"
    return name
