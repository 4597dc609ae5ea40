"""VMShapeLower: lower the run-time checks and symbolic shape computations onto VM builtins.

TVM's scheme. Every non-constant PrimExpr of a function (`n`, `m`, `n * 2 + 1`, ...) gets a
slot in an int64 *shape heap* allocated on entry:

    shape_heap = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(k),),
                                         sinfo_args=R.Tensor(ndim=1, dtype="int64"))

Each parameter is checked (`vm.builtin.check_tensor_info`, `check_tuple_info`,
`check_shape_info`, `check_prim_value_info`, `check_func_info`) and its dimensions are
matched against the heap with `vm.builtin.match_shape(value, shape_heap, ndim, code, value,
..., err_ctx)` (`vm.builtin.match_prim_value` for scalars) using `MatchShapeCode`: a new
variable is stored (StoreToHeap), a constant or an already known value is asserted
(AssertEqualToImm, AssertEqualToLoad). Composite expressions are computed, as soon as the
variables they use are known, by a generated PrimFunc `shape_func(H)` that reads and writes
the heap, called directly as `cls.shape_func(shape_heap)`. Symbolic shapes and scalars
used as values become `vm.builtin.make_shape(shape_heap, ndim, code, value, ...)` and
`vm.builtin.make_prim_value(shape_heap, code, value)` with `MakeShapeCode`. `match_cast`
bindings are checked the same way and kept (they bind their var to the value as is).

A symbolic dimension with a declared range (the function attributes `tir_var_lower_bound` /
`tir_var_upper_bound`, which the torch importer fills from `torch.export.Dim`) is checked
against it where a parameter first defines it (`vm.builtin.check_dim_range`), before any
memory is allocated: the static memory plan sizes storage by the upper bounds.

The `err_ctx` strings name the function, the parameter and its annotation, e.g.
`ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, 784), dtype="float32"))`;
the VM turns a failed check into a ValueError quoting them. Every parameter is checked on
entry, weights past `num_input` included (TVM skips static weights; graphc checks every input
before anything runs).

>>> from graphc.script import from_source
>>> mod = from_source('''
... from graphc.script import ir as I, relax as R, tir as T
... @I.ir_module
... class Module:
...     @R.function
...     def main(x: R.Tensor(("n", 4), "float32")) -> R.Shape(ndim=1):
...         n = T.int64()
...         return R.shape([n * 2])
... ''')
>>> lowered = VMShapeLower()(mod)
>>> sorted(gv.name_hint for gv in lowered.get_global_vars())
['main', 'shape_func']
>>> for b in lowered["main"].body.blocks[0].bindings:
...     print(str(b.value)[:56])
R.call_builtin_with_ctx(R.ExternFunc("vm.builtin.alloc_s
R.call_packed("vm.builtin.check_tensor_info", x, R.prim_
R.call_packed("vm.builtin.match_shape", x, shape_heap, R
shape_func(shape_heap)
R.call_packed("vm.builtin.make_shape", shape_heap, R.pri
"""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...ir.transform import module_pass
from ...tir.arith.keys import expr_key
from ...tir.buffer import buffer_load, decl_buffer
from ...tir.expr import Cast, FloatImm, IntImm
from ...tir.expr import Var as TIRVar
from ...tir.function import PrimFunc
from ...tir.functor import substitute
from ...tir.stmt import BufferStore, SeqStmt
from ...vm.shape_codes import MakeShapeCode, MatchShapeCode
from .. import expr as relax_expr
from ..analysis.vars import used_vars
from ..expr_functor import ExprMutator
from ..op.memory import void_struct_info
from ..op.vm import call_builtin_with_ctx
from ..struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    TensorStructInfo,
    TupleStructInfo,
    is_base_of,
    prim_text,
    tir_vars_in_expr,
)
from .vm_lowering_utils import is_op, merge_binding_blocks

_NO_LOCAL_FUNCTIONS = "VMShapeLower does not handle local functions; lift them to the module first"


class _Slot:
    """A heap slot holding one PrimExpr, with what is needed to know when it can be computed."""

    __slots__ = ("expr", "index", "user_slots", "outstanding_defs", "value_computed")

    def __init__(self, expr, index: int):
        self.expr, self.index = expr, index
        self.user_slots: list = []
        self.outstanding_defs = 0
        self.value_computed = False


class _MatchItem:
    __slots__ = ("value", "pattern", "err_ctx")

    def __init__(self, value, pattern, err_ctx: str):
        self.value, self.pattern, self.err_ctx = value, tuple(pattern), err_ctx


def packed(name: str, *args, sinfo=None) -> relax_expr.Call:
    """`R.call_packed(name, *args, sinfo_args=sinfo)` (void result by default)."""
    return relax_expr.Call(relax_expr.ExternFunc(name), args, sinfo_args=[sinfo or void_struct_info()])


def _int(value: int) -> relax_expr.PrimValue:
    return relax_expr.PrimValue(IntImm("int64", int(value)))


# --- slot collection ---------------------------------------------------------------------------


def _sinfo_exprs(sinfo, out: list) -> None:
    if isinstance(sinfo, TensorStructInfo):
        out.extend(sinfo.shape_values or ())
    elif isinstance(sinfo, ShapeStructInfo):
        out.extend(sinfo.values or ())
    elif isinstance(sinfo, PrimStructInfo):
        if sinfo.value is not None:
            out.append(sinfo.value)
    elif isinstance(sinfo, TupleStructInfo):
        for f in sinfo.fields:
            _sinfo_exprs(f, out)


def _value_exprs(expr, out: list) -> None:
    """PrimExprs of shapes and scalars in `expr` (and in calls' sinfo_args), in visiting order."""
    if isinstance(expr, relax_expr.ShapeExpr):
        out.extend(expr.values)
    elif isinstance(expr, relax_expr.PrimValue):
        out.append(expr.value)
    elif isinstance(expr, relax_expr.Tuple):
        for f in expr.fields:
            _value_exprs(f, out)
    elif isinstance(expr, relax_expr.TupleGetItem):
        _value_exprs(expr.tuple_value, out)
    elif isinstance(expr, relax_expr.Call):
        _value_exprs(expr.op, out)
        for a in expr.args:
            _value_exprs(a, out)
        for s in expr.sinfo_args:
            _sinfo_exprs(s, out)
    elif isinstance(expr, relax_expr.If):
        _value_exprs(expr.cond, out)
        _value_exprs(expr.true_branch, out)
        _value_exprs(expr.false_branch, out)
    elif isinstance(expr, relax_expr.SeqExpr):
        for block in expr.blocks:
            for b in block.bindings:
                if isinstance(b, relax_expr.MatchCast):
                    _sinfo_exprs(b.struct_info, out)
                _value_exprs(b.value, out)
        _value_exprs(expr.body, out)
    elif isinstance(expr, relax_expr.Function):
        raise TypeInferenceError(_NO_LOCAL_FUNCTIONS)


def _collect_slots(func: relax_expr.Function) -> dict:
    """expr_key -> _Slot for every non-constant PrimExpr of `func`, numbered by first appearance."""
    exprs: list = []
    for p in func.params:
        _sinfo_exprs(p.struct_info, exprs)
    _value_exprs(func.body, exprs)
    if func.ret_struct_info is not None:
        _sinfo_exprs(func.ret_struct_info, exprs)
    slots: dict = {}

    def add(expr):
        key = expr_key(expr)
        if key not in slots:
            slots[key] = _Slot(expr, len(slots))
        return slots[key]

    for expr in exprs:
        if not isinstance(expr, IntImm | FloatImm):
            add(expr)
    for slot in list(slots.values()):
        if isinstance(slot.expr, TIRVar):
            continue
        deps = tir_vars_in_expr(slot.expr)
        for var in deps:
            add(var).user_slots.append(slot)
        slot.outstanding_defs = len(deps)
    return slots


# --- the rewrite -------------------------------------------------------------------------------


class _ShapeLower(ExprMutator):
    def __init__(self, mod, emit_err_ctx: bool):
        super().__init__(mod)
        self.emit_err_ctx = emit_err_ctx
        self.slots: dict = {}
        self.ready: list = []
        self.heap = None
        self.heap_size = 0
        self.fn_name = ""

    def rewrite(self, gv, func: relax_expr.Function) -> relax_expr.Function:
        self.fn_name = gv.name_hint
        self.slots = _collect_slots(func)
        self.ready = []
        self.heap_size = len(self.slots)
        heap_sinfo = TensorStructInfo(dtype="int64", ndim=1)
        self.heap = relax_expr.Var("shape_heap", heap_sinfo)
        alloc = self.builder.normalize(call_builtin_with_ctx(
            "vm.builtin.alloc_shape_heap", [_int(self.heap_size)], sinfo_args=[heap_sinfo]))

        self.builder.begin_scope()
        self.builder.begin_binding_block()
        self.builder.emit_normalized(relax_expr.VarBinding(self.heap, alloc))
        todos: list = []
        for i, param in enumerate(func.params):
            err = (f"ErrorContext(fn={self.fn_name}, loc=param[{i}], param={param.name_hint}, "
                   f"annotation={param.struct_info})")
            self.check(param.struct_info, param, True, False, err, todos)
        todos = self.run_match(todos, False)
        self.emit_outstanding()
        self.run_match(todos, True)
        self.check_ranges(func)
        self.builder.end_block()
        pre = self.builder.end_scope()

        body = self.visit_with_new_scope(func.body)
        if not isinstance(body, relax_expr.SeqExpr):
            body = relax_expr.SeqExpr([], body)
            relax_expr.set_struct_info(body, body.body.struct_info)

        self.builder.begin_scope()
        self.builder.begin_binding_block()
        if func.ret_struct_info is not None:
            todos = []
            err = f"ErrorContext(fn={self.fn_name}, loc=return, annotation={func.ret_struct_info})"
            self.check(func.ret_struct_info, body.body, False, False, err, todos)
            self.run_match(todos, True)
        self.builder.end_block()
        post = self.builder.end_scope()

        blocks = [*pre, *body.blocks, *post]
        if not _uses(blocks, body.body, self.heap):
            blocks = [_without(block, self.heap) for block in blocks]
        seq = relax_expr.SeqExpr([b for b in blocks if b.bindings], body.body)
        relax_expr.set_struct_info(seq, body.struct_info)
        new = relax_expr.Function(func.params, seq, func.ret_struct_info, func.is_pure, func.attrs)
        return merge_binding_blocks(new)

    # -- values ----------------------------------------------------------------------------
    def visit_Function(self, func):
        raise TypeInferenceError(_NO_LOCAL_FUNCTIONS)

    def _dim_args(self, expr) -> list:
        if isinstance(expr, IntImm):
            return [_int(MakeShapeCode.USE_IMM), _int(expr.value)]
        slot = self.slots.get(expr_key(expr))
        if slot is None or not slot.value_computed:
            raise TypeInferenceError(
                f"VMShapeLower: the symbolic value {prim_text(expr)} in function {self.fn_name!r} is not "
                f"known at this point; define its variables with a parameter annotation or R.match_cast "
                f"first")
        return [_int(MakeShapeCode.LOAD_SHAPE), _int(slot.index)]

    def visit_ShapeExpr(self, expr: relax_expr.ShapeExpr):
        if all(isinstance(v, IntImm) for v in expr.values):
            return expr
        args = [self.heap, _int(len(expr.values))]
        for v in expr.values:
            args += self._dim_args(v)
        # The result keeps the symbolic values in its struct info (TVM keeps only the rank), so
        # tensors allocated with it keep their shapes and need no re-check on return.
        return packed("vm.builtin.make_shape", *args, sinfo=expr.struct_info)

    def visit_PrimValue(self, expr: relax_expr.PrimValue):
        if isinstance(expr.value, IntImm | FloatImm):
            return expr
        return packed("vm.builtin.make_prim_value", self.heap, *self._dim_args(expr.value),
                      sinfo=expr.struct_info)

    def visit_match_cast(self, binding: relax_expr.MatchCast) -> None:
        value = self.visit_expr(binding.value)
        if not (relax_expr.is_leaf(value) or isinstance(value, relax_expr.Tuple)):
            value = self.builder.emit(value)
        todos: list = []
        self.check(binding.struct_info, value, False, False,
                   f"ErrorContext(match_cast, struct_info={binding.struct_info})", todos)
        todos = self.run_match(todos, False)
        self.emit_outstanding()
        self.run_match(todos, True)
        if value is binding.value:
            self.builder.emit_normalized(binding)
        else:
            self.builder.emit_normalized(relax_expr.MatchCast(binding.var, value, binding.struct_info))

    # -- checks ----------------------------------------------------------------------------
    def err(self, text: str) -> relax_expr.StringImm:
        return relax_expr.StringImm(text if self.emit_err_ctx else "")

    def emit(self, call: relax_expr.Call) -> None:
        self.builder.emit(call, "_")

    def check(self, sinfo, value, always: bool, dynamic_only: bool, err: str, todos: list) -> None:
        """Emit the checks that `value` matches `sinfo`; shape matches are queued in `todos`."""
        actual = value.struct_info_
        if not always and actual is not None and is_base_of(sinfo, actual):
            return
        if isinstance(sinfo, PrimStructInfo):
            if always or actual is None or not is_base_of(PrimStructInfo(sinfo.dtype), actual):
                self.emit(packed("vm.builtin.check_prim_value_info", value,
                                 relax_expr.DataTypeImm(sinfo.dtype),
                                 self.err(err)))
            if sinfo.value is not None:
                todos.append(_MatchItem(value, [sinfo.value], err))
        elif isinstance(sinfo, ShapeStructInfo):
            if always or actual is None or not is_base_of(ShapeStructInfo(ndim=sinfo.ndim), actual):
                self.emit(packed("vm.builtin.check_shape_info", value, _int(sinfo.ndim), self.err(err)))
            if sinfo.values is not None:
                todos.append(_MatchItem(value, sinfo.values, err))
        elif isinstance(sinfo, TensorStructInfo):
            values = sinfo.shape_values
            if dynamic_only and values is not None and all(isinstance(v, IntImm) for v in values):
                return
            kind = TensorStructInfo(dtype=sinfo.dtype, ndim=sinfo.ndim)
            if always or actual is None or not is_base_of(kind, actual):
                self.emit(packed("vm.builtin.check_tensor_info", value, _int(sinfo.ndim),
                                 relax_expr.DataTypeImm(sinfo.dtype), self.err(err)))
            if values is not None:
                todos.append(_MatchItem(value, values, err))
        elif isinstance(sinfo, TupleStructInfo):
            if isinstance(actual, TupleStructInfo) and len(actual.fields) != len(sinfo.fields):
                raise TypeInferenceError(
                    f"{err}: match_cast of a {len(actual.fields)}-tuple to {sinfo}")
            if always or not isinstance(actual, TupleStructInfo):
                size = _int(len(sinfo.fields))
                self.emit(packed("vm.builtin.check_tuple_info", value, size, self.err(err)))
            for i, field in enumerate(sinfo.fields):
                self.check(field, self.tuple_item(value, i), always, dynamic_only, err, todos)
        elif isinstance(sinfo, FuncStructInfo):
            if always or not isinstance(actual, FuncStructInfo):
                self.emit(packed("vm.builtin.check_func_info", value, self.err(err)))

    def check_ranges(self, func: relax_expr.Function) -> None:
        """Check each symbolic dimension with a declared range (the function attributes
        `tir_var_lower_bound` / `tir_var_upper_bound`) where a parameter first defines it, so an
        input outside the range the model was exported for is refused before anything runs."""
        lower = func.attrs.get("tir_var_lower_bound") or {}
        upper = func.attrs.get("tir_var_upper_bound") or {}
        if not lower and not upper:
            return
        done = set()
        for param in func.params:
            sinfo = param.struct_info
            if not isinstance(sinfo, TensorStructInfo) or sinfo.shape_values is None:
                continue
            for axis, dim in enumerate(sinfo.shape_values):
                declared = dim.name in lower or dim.name in upper if isinstance(dim, TIRVar) else False
                if not declared or dim in done:
                    continue
                done.add(dim)
                lo, hi = _bound(lower.get(dim.name), 0), _bound(upper.get(dim.name), _UNBOUNDED)
                err = f"{self.fn_name}: input {param.name_hint!r}, dimension {axis} ({dim.name})"
                self.emit(packed("vm.builtin.check_dim_range", param, _int(axis), _int(lo), _int(hi),
                                 self.err(err)))

    def tuple_item(self, value, index: int):
        if isinstance(value, relax_expr.Tuple):
            return value.fields[index]
        if isinstance(value.struct_info_, TupleStructInfo):
            return self.builder.emit(relax_expr.TupleGetItem(value, index))
        item = packed("vm.builtin.tuple_getitem", value, _int(index), sinfo=ObjectStructInfo())
        return self.builder.emit(item)

    # -- matching and computing ----------------------------------------------------------
    def match_args(self, expr, require_computed: bool):
        if isinstance(expr, IntImm):
            return MatchShapeCode.ASSERT_EQUAL_TO_IMM, expr.value
        slot = self.slots[expr_key(expr)]
        if slot.value_computed:
            return MatchShapeCode.ASSERT_EQUAL_TO_LOAD, slot.index
        if require_computed:
            raise TypeInferenceError(
                f"VMShapeLower: cannot compute {prim_text(expr)} in function {self.fn_name!r}: its variables "
                f"are not defined by any parameter annotation or match_cast")
        if isinstance(expr, TIRVar):
            slot.value_computed = True
            self.ready.append(slot)
            return MatchShapeCode.STORE_TO_HEAP, slot.index
        return MatchShapeCode.NO_OP, 0

    def run_match(self, todos: list, require_computed: bool) -> list:
        """Emit the matches that can be done now; return the items that need another round."""
        outstanding = []
        for item in todos:
            is_prim = isinstance(item.value.struct_info_, PrimStructInfo)
            args = [item.value, self.heap] + ([] if is_prim else [_int(len(item.pattern))])
            codes = []
            for expr in item.pattern:
                code, value = self.match_args(expr, require_computed)
                codes.append(code)
                args += [_int(code), _int(value)]
            if MatchShapeCode.NO_OP in codes:
                outstanding.append(item)
            args.append(self.err(item.err_ctx))
            if any(c != MatchShapeCode.NO_OP for c in codes):
                name = "vm.builtin.match_prim_value" if is_prim else "vm.builtin.match_shape"
                self.emit(packed(name, *args))
        return outstanding

    def emit_outstanding(self) -> None:
        """Compute, in one generated `shape_func`, every expression whose variables just became known."""
        to_compute = []
        for slot in self.ready:
            for user in slot.user_slots:
                user.outstanding_defs -= 1
                if user.outstanding_defs == 0:
                    to_compute.append(user)
        self.ready = []
        if not to_compute:
            return
        heap = TIRVar("heap", "handle")
        buf = decl_buffer((self.heap_size,), "int64", "H")
        loads = {}
        stores = []
        for slot in to_compute:
            slot.value_computed = True
            for var in tir_vars_in_expr(slot.expr):
                loads[var] = buffer_load(buf, [IntImm("int64", self.slots[expr_key(var)].index)])
            value = substitute(slot.expr, loads)
            if value.dtype != "int64":
                value = Cast("int64", value)  # e.g. a boolean condition: the heap holds int64
            stores.append(BufferStore(buf, value, (IntImm("int64", slot.index),)))
        func = PrimFunc([heap], SeqStmt.flatten(*stores), None, {heap: buf}, {"tir.is_host_func": True})
        gv = self.builder.add_func(func, "shape_func")
        self.emit(relax_expr.Call(gv, [self.heap]))


_UNBOUNDED = 2**62


def _bound(value, default: int) -> int:
    if value is None:
        return default
    return int(value.value if isinstance(value, IntImm) else value)


def _uses(blocks, body, var) -> bool:
    """Whether anything but `var`'s own binding reads `var`."""
    rest = [b for block in blocks for b in block.bindings if b.var is not var]
    return var in used_vars(relax_expr.SeqExpr([relax_expr.BindingBlock(rest)], body))


def _without(block, var):
    return type(block)([b for b in block.bindings if b.var is not var])


@module_pass(opt_level=0, name="VMShapeLower")
class VMShapeLower:
    """Lower parameter checks, match_cast and symbolic shapes to shape-heap VM builtins.

    `emit_err_ctx=False` leaves the error-context strings empty (for compact test output).
    """

    def __init__(self, emit_err_ctx: bool = True):
        self.emit_err_ctx = emit_err_ctx

    def transform_module(self, mod, ctx):
        mutator = _ShapeLower(mod, self.emit_err_ctx)
        for gv, func in mod.items():
            if isinstance(func, relax_expr.Function) and not _already_lowered(func):
                mutator.builder.update_func(gv, mutator.rewrite(gv, func))
        return mutator.builder.get()


def _already_lowered(func: relax_expr.Function) -> bool:
    """The function holds the shape-heap allocation or parameter checks of an earlier run."""
    if not isinstance(func.body, relax_expr.SeqExpr):
        return False
    for block in func.body.blocks:
        for b in block.bindings:
            value = b.value
            if is_op(value, "relax.call_builtin_with_ctx"):
                value = relax_expr.Call(value.args[0], ())
            if isinstance(value, relax_expr.Call) and isinstance(value.op, relax_expr.ExternFunc) and \
                    value.op.global_symbol in _SHAPE_BUILTINS:
                return True
    return False


_SHAPE_BUILTINS = {f"vm.builtin.{name}" for name in (
    "alloc_shape_heap", "check_tensor_info", "check_tuple_info", "check_shape_info", "check_prim_value_info",
    "check_func_info", "match_shape", "match_prim_value")}


__all__ = ["MakeShapeCode", "MatchShapeCode", "VMShapeLower"]
