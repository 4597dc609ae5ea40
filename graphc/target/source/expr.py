"""Expression printing of the C-family source generator (a mixin of `CodeGenC`).

Every `e_<Node>` returns C source text for the node, fully parenthesized. Values of
float16/bfloat16 type live in `float` registers: after every operation whose TensorIR type is
one of them the value is rounded to that precision (`gc_rh`, `gc_rbf`), so results match
the CPU back end bit for bit; memory keeps their 16 bits. Integer `//` and `%` round toward
negative infinity (shifts and masks for powers of two; plain `/`, `%` when the dividend is
provably non-negative; a helper otherwise).
"""

from __future__ import annotations

import math

from ...errors import CodegenError
from ...ir.dtype import DataType
from ...tir import expr as tir_expr
from ..intrin import lower_intrin

_BINARY = {tir_expr.Add: "+", tir_expr.Sub: "-", tir_expr.Mul: "*"}
_COMPARE = {tir_expr.EQ: "==", tir_expr.NE: "!=", tir_expr.LT: "<", tir_expr.LE: "<=", tir_expr.GT: ">",
            tir_expr.GE: ">="}
_BITWISE = {"tir.bitwise_and": "&", "tir.bitwise_or": "|", "tir.bitwise_xor": "^", "tir.shift_left": "<<",
            "tir.shift_right": ">>"}


def is_16bit_float(dtype: str) -> bool:
    dt = DataType(dtype)
    return dt.code in ("float", "bfloat") and dt.bits == 16


class ExprPrinter:
    """The expression half of `CodeGenC`."""

    def expr(self, e) -> str:
        method = self._expr_table[type(e)]
        if method is None:
            raise CodegenError(f"{self.func_name}: the {self.d.name} code generator cannot print "
                               f"{type(e).__name__} expressions")
        return method(self, e)

    # -- rounding of 16-bit floats ---------------------------------------------------------------
    def rounded(self, text: str, dtype: str) -> str:
        """`text` (a float) rounded to `dtype` when that is float16/bfloat16."""
        dt = DataType(dtype)
        if dt.code == "bfloat":
            self.helpers.add("bf16")
            return f"gc_rbf({text})"
        if dt.code == "float" and dt.bits == 16:
            self.helpers.add("half")
            return f"gc_rh({text})"
        if dt.is_int and dt.bits < 32:
            return f"(({self.d.type_name(dtype)}){text})"  # C computes in int: wrap like TensorIR
        return text

    # -- leaves ------------------------------------------------------------------------------------
    def e_Var(self, op) -> str:
        thread = self.thread_vars.get(op)
        if thread is not None:
            return thread
        name = self.names.get(op)
        if name is None:
            raise CodegenError(f"{self.func_name}: variable {op.name!r} is used outside the scope that "
                               "defines it")
        return name

    def e_IntImm(self, op) -> str:
        if DataType(op.dtype).is_bool:
            return "true" if op.value else "false"
        return self.d.int_literal(op.value, op.dtype)

    def e_FloatImm(self, op) -> str:
        return self.float_literal(op.value, op.dtype)

    def float_literal(self, value: float, dtype: str) -> str:
        double = DataType(dtype).bits == 64
        if math.isnan(value) or math.isinf(value):
            text = self.d.nan if math.isnan(value) else self.d.infinity
            if value < 0:
                text = f"(-{text})"
            return f"((double){text})" if double else text
        if double:
            return repr(float(value)) if "e" in repr(float(value)) or "." in repr(float(value)) \
                else repr(float(value)) + ".0"
        return f"{value:.9e}{self.d.float_suffix}"

    def e_StringImm(self, op) -> str:
        escaped = op.value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'

    # -- arithmetic --------------------------------------------------------------------------------
    def e_BinaryOp(self, op) -> str:
        sym = _BINARY.get(type(op))
        if sym is None:
            raise CodegenError(f"{self.func_name}: cannot print {type(op).__name__}")
        return self.rounded(f"({self.expr(op.a)} {sym} {self.expr(op.b)})", op.dtype)

    def e_Div(self, op) -> str:
        return self.rounded(f"({self.expr(op.a)} / {self.expr(op.b)})", op.dtype)

    def e_Mod(self, op) -> str:
        if DataType(op.dtype).is_float:
            return self.rounded(self.math_call("tir.fmod", op.dtype, [op.a, op.b]), op.dtype)
        return f"({self.expr(op.a)} % {self.expr(op.b)})"

    def e_FloorDiv(self, op) -> str:
        dt = DataType(op.dtype)
        a, b = self.expr(op.a), self.expr(op.b)
        if dt.is_float:
            return self.rounded(self.math_call("tir.floor", op.dtype, [op.a / op.b]), op.dtype)
        if dt.is_uint or self.nonnegative(op.a) and self.positive(op.b):
            return f"({a} / {b})"
        k = _power_of_two(op.b)
        if k is not None:
            return f"({a} >> {k})" if k else a
        return self.int_helper("floordiv", op.dtype, a, b)

    def e_FloorMod(self, op) -> str:
        dt = DataType(op.dtype)
        a, b = self.expr(op.a), self.expr(op.b)
        if dt.is_float:
            div = self.math_call("tir.floor", op.dtype, [op.a / op.b])
            return self.rounded(f"({a} - {div} * {b})", op.dtype)
        if dt.is_uint or self.nonnegative(op.a) and self.positive(op.b):
            return f"({a} % {b})"
        k = _power_of_two(op.b)
        if k is not None:
            return f"({a} & {self.d.int_literal((1 << k) - 1, op.dtype)})"
        return self.int_helper("floormod", op.dtype, a, b)

    def int_helper(self, which: str, dtype: str, a: str, b: str) -> str:
        self.helpers.add(f"floordiv_{dtype}")
        return f"gc_{which}_{dtype}({a}, {b})"

    def nonnegative(self, e) -> bool:
        return self.analyzer.const_int_bound(e).min_value >= 0

    def positive(self, e) -> bool:
        return self.analyzer.const_int_bound(e).min_value > 0

    def e_Min(self, op) -> str:
        return self.min_max(op, "<")

    def e_Max(self, op) -> str:
        return self.min_max(op, ">")

    def min_max(self, op, sym: str) -> str:
        a, b = self.expr(op.a), self.expr(op.b)
        word = "min" if sym == "<" else "max"
        if DataType(op.dtype).is_float:  # exact for 16-bit floats too: both are already rounded
            suffix = self.d.math_suffix_f32 if DataType(op.dtype).bits != 64 else ""
            return f"f{word}{suffix}({a}, {b})"
        if self.d.name in ("opencl", "cuda"):
            return f"{word}({a}, {b})"
        return f"(({a} {sym} {b}) ? {a} : {b})"  # pure operands: evaluating one twice is harmless

    def e_CmpOp(self, op) -> str:
        return f"({self.expr(op.a)} {_COMPARE[type(op)]} {self.expr(op.b)})"

    def e_And(self, op) -> str:
        return f"({self.expr(op.a)} && {self.expr(op.b)})"

    def e_Or(self, op) -> str:
        return f"({self.expr(op.a)} || {self.expr(op.b)})"

    def e_Not(self, op) -> str:
        return f"(!{self.expr(op.a)})"

    def e_Select(self, op) -> str:
        return f"({self.expr(op.condition)} ? {self.expr(op.true_value)} : {self.expr(op.false_value)})"

    def e_Cast(self, op) -> str:
        src, dst = DataType(op.value.dtype), DataType(op.dtype)
        value = self.expr(op.value)
        if src == dst:
            return value
        if dst.is_bool:
            return f"({value} != 0)"
        if dst.is_float and is_16bit_float(op.dtype):
            if src.is_float and src.bits == 16 and src.code == dst.code:
                return value
            return self.rounded(f"((float){value})", op.dtype)
        if src.is_float and src.bits == 16 and dst.is_float and dst.bits == 32:
            return value  # float16/bfloat16 registers already hold floats
        return f"(({self.d.type_name(op.dtype)}){value})"

    def e_Let(self, op) -> str:
        self.bind_let(op.var, op.value)
        return self.expr(op.body)

    # -- memory ----------------------------------------------------------------------------------
    def pointer(self, buffer) -> str:
        """The pointer expression for the data of `buffer`, cast when it is typed differently."""
        name = self.e_Var(buffer.data)
        declared = self.pointer_dtypes.get(buffer.data)
        elem = str(DataType(buffer.dtype).element_of())
        if declared is not None and self.d.storage_type(declared) != self.d.storage_type(elem):
            space = self.address_space(buffer.data)
            return f"(({space}{self.d.storage_type(elem)}*){name})"
        return name

    def address_space(self, data) -> str:
        if self.d.name != "opencl":
            return ""
        scope = self.pointer_scopes.get(data, "global")
        return "__local " if scope.startswith(("shared", "warp")) else "" if scope == "local" else "__global "

    def index(self, buffer, indices) -> str:
        if len(indices) != 1:
            raise CodegenError(f"{self.func_name}: buffer {buffer.name} is accessed with {len(indices)} "
                               "indices; "
                               "the source code generators take flattened buffers (run graphc.lower)")
        index = indices[0]
        if DataType(index.dtype).lanes != 1:
            raise CodegenError(f"{self.func_name}: vector access of {buffer.name}; the {self.d.name} code "
                               "generator runs vectorized loops as unrolled loops and has no vector loads")
        off = buffer.elem_offset
        if off is not None and not (isinstance(off, tir_expr.IntImm) and off.value == 0):
            index = index + off
        return self.expr(index)

    def e_BufferLoad(self, op) -> str:
        text = f"{self.pointer(op.buffer)}[{self.index(op.buffer, op.indices)}]"
        return self.from_storage(text, op.buffer.dtype)

    def from_storage(self, text: str, dtype: str) -> str:
        dt = DataType(dtype)
        if dt.code == "bfloat":
            self.helpers.add("bf16")
            return f"gc_bf2f({text})"
        if dt.code == "float" and dt.bits == 16:
            self.helpers.add("half")
            return f"gc_h2f({text})"
        if dt.is_bool:
            return f"({text} != 0)"
        return text

    def to_storage(self, text: str, dtype: str) -> str:
        dt = DataType(dtype)
        if dt.code == "bfloat":
            self.helpers.add("bf16")
            return f"gc_f2bf({text})"
        if dt.code == "float" and dt.bits == 16:
            self.helpers.add("half")
            return f"gc_f2h({text})"
        if dt.is_bool:
            return f"(({self.d.storage_type(dtype)}){text})"
        return text

    # -- calls -------------------------------------------------------------------------------------
    def e_Call(self, op) -> str:
        handler = self._calls.get(op.op)
        if handler is not None:
            return handler(self, op)
        lowered = lower_intrin(op, self.kind)
        if lowered is not op:
            return self.expr(lowered)
        if any(is_16bit_float(a.dtype) for a in op.args) or is_16bit_float(op.dtype):
            return self.widened(op)
        if op.op in _BITWISE:
            return f"({self.expr(op.args[0])} {_BITWISE[op.op]} {self.expr(op.args[1])})"
        if DataType(op.dtype).is_float or any(DataType(a.dtype).is_float for a in op.args):
            if self.d.math_function(op.op, op.dtype) is not None:
                return self.math_call(op.op, op.dtype, op.args)
        simple = _SIMPLE.get(op.op)
        if simple is not None:
            return simple(self, op)
        raise CodegenError(
            f"{self.func_name}: no {self.d.name} lowering for intrinsic {op.op}; register one with "
            f"graphc.target.register_intrin_lowering({op.op!r}, target={self.kind!r}, f=rule)"
        )

    def widened(self, op) -> str:
        """A float16/bfloat16 intrinsic computed in float32 and rounded back."""
        args = [tir_expr.Cast("float32", a) if is_16bit_float(a.dtype) else a for a in op.args]
        ret = "float32" if is_16bit_float(op.dtype) else op.dtype
        text = self.expr(tir_expr.Call(ret, op.op, tuple(args)))
        return self.rounded(text, op.dtype) if ret != op.dtype else text

    def math_call(self, name: str, dtype: str, args) -> str:
        fn = self.d.math_function(name, dtype)
        if fn is None:
            raise CodegenError(f"{self.func_name}: no {self.d.name} function for {name}")
        return f"{fn}({', '.join(self.expr(a) for a in args)})"

    def c_extern(self, op) -> str:
        if not op.args or not isinstance(op.args[0], tir_expr.StringImm):
            raise CodegenError(f"{self.func_name}: {op.op} needs the function name as a string first")
        return f"{op.args[0].value}({', '.join(self.expr(a) for a in op.args[1:])})"

    def c_if_then_else(self, op) -> str:
        return f"({self.expr(op.args[0])} ? {self.expr(op.args[1])} : {self.expr(op.args[2])})"

    def c_likely(self, op) -> str:
        return self.expr(op.args[0])

    def c_address_of(self, op) -> str:
        load = op.args[0]
        if not isinstance(load, tir_expr.BufferLoad):
            raise CodegenError(f"{self.func_name}: tir.address_of needs a buffer load, got {load!r}")
        return f"(&{self.pointer(load.buffer)}[{self.index(load.buffer, load.indices)}])"

    def c_reinterpret(self, op) -> str:
        src, dst = DataType(op.args[0].dtype), DataType(op.dtype)
        value = self.expr(op.args[0])
        if src.bits != dst.bits:
            raise CodegenError(f"{self.func_name}: reinterpret from {src} to {dst} changes the width")
        if src.is_float == dst.is_float:
            return f"(({self.d.type_name(op.dtype)}){value})"
        bits = {32: ("uint32", "float32"), 64: ("uint64", "float64")}.get(src.bits)
        if bits is None:
            raise CodegenError(f"{self.func_name}: cannot reinterpret {src} as {dst}")
        if self.d.name == "opencl":
            return f"as_{self.d.type_name(op.dtype)}({value})"
        if self.d.name == "cuda":
            names = {(32, True): "__float_as_int", (32, False): "__int_as_float",
                     (64, True): "__double_as_longlong", (64, False): "__longlong_as_double"}
            fn = names[(src.bits, src.is_float)]
            return f"(({self.d.type_name(op.dtype)}){fn}({value}))"
        tmp = self.hoist(op.args[0].dtype, value)
        out = self.new_name("bits")
        self.line(f"{self.d.type_name(op.dtype)} {out}; memcpy(&{out}, &{tmp}, {src.bits // 8});")
        return out

    def c_infinity(self, op) -> str:
        return self.float_literal(math.inf, op.dtype) if DataType(op.dtype).is_float else \
            self.d.int_literal(DataType(op.dtype).max_value(), op.dtype)

    def c_warp(self, op) -> str:
        if not self.d.shuffles:
            raise CodegenError(f"{self.func_name}: {op.op} needs warp shuffles, which {self.d.name} "
                               "does not have")
        args = [self.expr(a) for a in op.args]
        if op.op == "tir.tvm_warp_activemask":
            return "__activemask()"
        fn = "__shfl_down_sync" if op.op == "tir.tvm_warp_shuffle_down" else "__shfl_sync"
        return f"{fn}({', '.join(args)})"

    def c_host_only(self, op) -> str:
        raise CodegenError(f"{self.func_name}: {op.op} belongs to host code and cannot run in a kernel")

    def c_gpu_only(self, op) -> str:
        raise CodegenError(f"{self.func_name}: {op.op} must be lowered before code generation "
                           "(LowerThreadAllreduce)")


def _power_of_two(e) -> int | None:
    if isinstance(e, tir_expr.IntImm) and e.value > 0 and e.value & (e.value - 1) == 0:
        return e.value.bit_length() - 1
    return None


def _float_class(kind: str):
    def emit(cg, op):
        x = cg.expr(op.args[0])
        if not DataType(op.args[0].dtype).is_float:
            return "false" if kind != "isfinite" else "true"
        return f"({kind}({x}) != 0)" if cg.d.name == "opencl" else f"({kind}({x}) != 0)"

    return emit


def _abs(cg, op) -> str:
    dt = DataType(op.dtype)
    x = cg.expr(op.args[0])
    if dt.is_float:
        return cg.math_call("tir.fabs", op.dtype, op.args)
    if dt.is_uint or dt.is_bool:
        return x
    return f"(({x} < 0) ? -{x} : {x})"


def _popcount(cg, op) -> str:
    x = cg.expr(op.args[0])
    bits = DataType(op.args[0].dtype).bits
    if cg.d.name == "opencl":
        return f"popcount({x})"
    if cg.d.name == "cuda":
        return f"__popcll({x})" if bits == 64 else f"__popc((unsigned int)({x}))"
    return f"__builtin_popcountll((unsigned long long)({x}))"


def _bitwise_not(cg, op) -> str:
    return f"(~{cg.expr(op.args[0])})"


_SIMPLE = {
    "tir.isnan": _float_class("isnan"),
    "tir.isinf": _float_class("isinf"),
    "tir.isfinite": _float_class("isfinite"),
    "tir.abs": _abs,
    "tir.popcount": _popcount,
    "tir.bitwise_not": _bitwise_not,
}

CALLS = {
    "tir.call_extern": ExprPrinter.c_extern,
    "tir.call_pure_extern": ExprPrinter.c_extern,
    "tir.if_then_else": ExprPrinter.c_if_then_else,
    "tir.likely": ExprPrinter.c_likely,
    "tir.address_of": ExprPrinter.c_address_of,
    "tir.reinterpret": ExprPrinter.c_reinterpret,
    "tir.infinity": ExprPrinter.c_infinity,
    "tir.tvm_warp_activemask": ExprPrinter.c_warp,
    "tir.tvm_warp_shuffle": ExprPrinter.c_warp,
    "tir.tvm_warp_shuffle_down": ExprPrinter.c_warp,
    "tir.device_launch": ExprPrinter.c_host_only,
    "tir.device_alloc": ExprPrinter.c_host_only,
    "tir.device_free": ExprPrinter.c_host_only,
    "tir.tvm_thread_allreduce": ExprPrinter.c_gpu_only,
}
