"""LegalizeOps: lower every Relax operator call that has a legalization to `call_tir` on a PrimFunc.

Each registered operator may carry an `FLegalize` hook `legalize(bb, call) -> Expr`, usually
`bb.call_te(topi.X, *call.args, primfunc_name_hint="X")`; the PrimFuncs it makes are added
to the module (deduplicated structurally, with TVM's names). Calls of operators without a
legalization, or named in `skip_ops`, stay as they are; `customize_legalize_map` (op name ->
legalize function) overrides the registry. Calls whose arguments lack known shapes are kept
(TVM requires known shapes too). Running the pass twice changes nothing the second time.

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
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from ..op.registry import Op
from ..struct_info import ShapeStructInfo, TensorStructInfo, TupleStructInfo


def _has_known_shapes(call: relax_expr.Call) -> bool:
    """Every tensor argument and the result have known shapes and dtypes (call_te needs them)."""

    def known(sinfo) -> bool:
        if isinstance(sinfo, TensorStructInfo):
            return sinfo.shape_values is not None and not sinfo.is_unknown_dtype
        if isinstance(sinfo, TupleStructInfo):
            return all(known(f) for f in sinfo.fields)
        if isinstance(sinfo, ShapeStructInfo):
            return sinfo.values is not None
        return True

    return all(known(a.struct_info) for a in call.args) and known(call.struct_info)


class _Legalizer(ExprMutator):
    def __init__(self, mod, custom: dict[str, Callable], skip: set[str]):
        super().__init__(mod)
        self.custom, self.skip = custom, skip

    def visit_Call(self, call: relax_expr.Call):
        call = super().visit_Call(call)
        op = call.op
        if not isinstance(op, Op) or op.name in self.skip:
            return call
        if call.struct_info_ is None:  # rebuilt on arguments whose struct info legalization refined
            call = self.builder.normalize(call)
        legalize = self.custom.get(op.name) or op.get_attr("FLegalize")
        if legalize is None or not _has_known_shapes(call):
            return call
        return legalize(self.builder, _unpack_tuple_args(self.builder, call))


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
