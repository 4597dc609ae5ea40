"""LegalizeOps: lower every Relax operator call that has a legalization to `call_tir` on a PrimFunc.

Each registered operator may carry an `FLegalize` hook `legalize(bb, call) -> Expr`, usually
`bb.call_te(topi.X, *call.args, primfunc_name_hint="X")`; the PrimFuncs it makes are added
to the module (deduplicated structurally, with TVM's names). Calls of operators without a
legalization, or named in `skip_ops`, stay as they are; `customize_legalize_map` (op name ->
legalize function) overrides the registry. Calls whose arguments lack known shapes are kept
(TVM requires known shapes too). Running the pass twice changes nothing the second time.

The run-time checks of the PrimFuncs a call legalizes to (an index read from data, see
`tir.check_index`) name the call: their messages end with a line quoting the binding and,
when the frontend recorded one (`Call.span`), the source node, e.g. ``in lv = R.take(...)
from torch node embedding (aten.embedding.default) in module emb (Embedding)``.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         gv = bb.emit_output(relax.op.nn.relu(x))
...     _ = bb.emit_func_output(gv)
>>> mod = relax.transform.LegalizeOps()(bb.get())
>>> sorted(gv.name_hint for gv in mod.get_global_vars())
['main', 'relu']
>>> mod["main"].body.blocks[0].bindings[0].value
R.call_tir(relu, (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
"""

from __future__ import annotations

from collections.abc import Callable

from ...ir.transform import module_pass
from ...tir.expr import IntImm, PrimExpr
from ...tir.function import PrimFunc
from ...tir.transform.error_context import add_error_context
from .. import expr as relax_expr
from ..block_builder import BlockBuilder
from ..expr_functor import ExprMutator
from ..op.registry import Op
from ..struct_info import ShapeStructInfo, TensorStructInfo, TupleStructInfo


def _has_known_shapes(call: relax_expr.Call, result: bool = True) -> bool:
    """Every tensor argument and (with `result`) the result have known shapes and dtypes
    (call_te needs them). A legalization marked `data_dependent_shape` computes its result's
    size at run time (a VM builtin), so only its arguments count."""

    def known(sinfo) -> bool:
        if isinstance(sinfo, TensorStructInfo):
            return sinfo.shape_values is not None and not sinfo.is_unknown_dtype
        if isinstance(sinfo, TupleStructInfo):
            return all(known(f) for f in sinfo.fields)
        if isinstance(sinfo, ShapeStructInfo):
            return sinfo.values is not None
        return True

    return all(known(a.struct_info) for a in call.args) and (not result or known(call.struct_info))


class _ContextBuilder(BlockBuilder):
    """A BlockBuilder whose new PrimFuncs get the call being legalized as their error context."""

    context = ""

    def add_func(self, func, func_name: str):
        if self.context and isinstance(func, PrimFunc):
            func = add_error_context(func, self.context)
        return super().add_func(func, func_name)


class _Legalizer(ExprMutator):
    def __init__(self, mod, custom: dict[str, Callable], skip: set[str]):
        super().__init__(mod)
        self.builder = _ContextBuilder(mod)
        self.custom, self.skip = custom, skip
        self.binding_var = None

    def visit_var_binding(self, binding: relax_expr.VarBinding) -> None:
        self.binding_var = binding.var
        super().visit_var_binding(binding)

    def visit_Call(self, call: relax_expr.Call):
        call = super().visit_Call(call)
        op = call.op
        if not isinstance(op, Op) or op.name in self.skip:
            return call
        if call.struct_info_ is None:  # rebuilt on arguments whose struct info legalization refined
            call = self.builder.normalize(call)
        legalize = self.custom.get(op.name) or op.get_attr("FLegalize")
        if legalize is None or not _has_known_shapes(
            call, result=not getattr(legalize, "data_dependent_shape", False)
        ):
            return call
        self.builder.context = call_context(call, self.binding_var)
        try:
            return legalize(self.builder, _unpack_tuple_args(self.builder, call))
        finally:
            self.builder.context = ""


def call_context(call: relax_expr.Call, var=None) -> str:
    """`var = R.op(args, attrs)` with constants shown by dtype and shape, then the call's span.

    >>> from graphc import relax
    >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    >>> call = relax.op.take(relax.const([1.0, 2.0]), x, axis=0).replace(span="torch node t")
    >>> call_context(call, relax.Var("y"))
    'y = R.take(const(float32, (2,)), x, axis=0, mode="raise") from torch node t'
    """
    name = call.op.name.removeprefix("relax.") if isinstance(call.op, Op) else str(call.op)
    parts = [_arg_text(a) for a in call.args]
    parts += [f"{k}={_attr_text(v)}" for k, v in call.attrs.items()]
    text = f"R.{name}({', '.join(parts)})"
    if var is not None:
        text = f"{var.name_hint} = {text}"
    return f"{text} from {call.span}" if call.span else text


def _arg_text(arg) -> str:
    if isinstance(arg, relax_expr.Var):
        return arg.name_hint
    if isinstance(arg, relax_expr.Constant):
        return f"const({arg.data.dtype}, {tuple(arg.data.shape)})"
    if isinstance(arg, relax_expr.PrimValue):
        return _attr_text(arg.value)
    if isinstance(arg, relax_expr.ShapeExpr):
        return f"R.shape([{', '.join(_attr_text(v) for v in arg.values)}])"
    if isinstance(arg, relax_expr.Tuple):
        return f"({', '.join(_arg_text(f) for f in arg.fields)})"
    return type(arg).__name__


def _attr_text(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, IntImm):
        return str(value.value)
    if isinstance(value, PrimExpr):
        return str(value)
    return repr(value)


def _unpack_tuple_args(bb, call: relax_expr.Call) -> relax_expr.Call:
    """Tuple-typed arguments that are not Tuple expressions become Tuples of TupleGetItems,
    so that call_te sees one tensor per field (`concat(split_result)`)."""
    args = []
    for arg in call.args:
        if isinstance(arg.struct_info, TupleStructInfo) and not isinstance(arg, relax_expr.Tuple):
            fields = [bb.emit(relax_expr.TupleGetItem(arg, i)) for i in range(len(arg.struct_info.fields))]
            arg = relax_expr.Tuple(fields)
        args.append(arg)
    if all(a is b for a, b in zip(args, call.args)):
        return call
    return bb.normalize(relax_expr.Call(call.op, args, call.attrs, call.sinfo_args))


@module_pass(opt_level=0, name="LegalizeOps")
class LegalizeOps:
    """Replace operator calls by calls of PrimFuncs built from their TE legalizations.

    `customize_legalize_map` maps operator names (`"relax.add"`) to `legalize(bb, call)`
    functions that take precedence over the registry; `skip_ops` names operators to leave.
    """

    def __init__(self, customize_legalize_map: dict | None = None, skip_ops=None, enable_warning=False):
        self.custom = dict(customize_legalize_map or {})
        self.skip = set(skip_ops or ())
        self.enable_warning = enable_warning

    def transform_module(self, mod, ctx):
        mutator = _Legalizer(mod, self.custom, self.skip)
        for gv, func in list(mod.items()):
            if not isinstance(func, relax_expr.Function):
                continue
            new = mutator.visit_expr(func)
            if new is not func:
                mutator.builder.update_func(gv, new)
        return mutator.builder.get()
