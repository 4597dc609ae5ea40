"""`call_te` / `emit_te`: turn a TE function applied to Relax values into `call_tir` on a PrimFunc.

Relax tensor arguments become `te.placeholder`s carrying their (symbolic) shapes, the TE
function runs, `te.create_prim_func([inputs..., outputs..., unbound symbolic vars...])` makes a
PrimFunc that is added to the module (structurally deduplicated), and the call becomes
`R.call_tir(gvar, (args...), out_sinfo, tir_vars)`.

>>> from graphc import relax, te, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 4), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     y = bb.emit_te(lambda a: te.compute(a.shape, lambda i, j: a[i, j] * 2.0, name="double"), x)
...     _ = bb.emit_func_output(y)
>>> bb.get()["main"].body.blocks[0].bindings[0].value
R.call_tir(double, (x,), out_sinfo=R.Tensor((n, 4), dtype="float32"))
>>> sorted(gv.name_hint for gv in bb.get().get_global_vars())
['double', 'main']
"""

from __future__ import annotations

from ..errors import TypeInferenceError
from ..tir.expr import IntImm, PrimExpr
from ..tir.expr import Var as TIRVar
from . import expr as relax_expr
from .struct_info import TensorStructInfo, tir_vars_in_expr


class CallTEMixin:
    """The TE bridge of the BlockBuilder (needs `normalize_arg`, `add_func`, `emit`)."""

    def call_te(self, func, *args, primfunc_name_hint: str | None = None, **kwargs) -> relax_expr.Call:
        """`func(*te_args, **te_kwargs)` as a `call_tir` of a new (or identical existing) PrimFunc."""
        from .. import te
        from .op.base import call_tir

        conv = _TEArgs(self)
        te_args = [conv.convert(a) for a in args]
        te_kwargs = {k: conv.convert(v) for k, v in kwargs.items()}
        outs = func(*te_args, **te_kwargs)
        outputs = list(outs) if isinstance(outs, list | tuple) else [outs]
        for out in outputs:
            if not isinstance(out, te.Tensor):
                raise TypeInferenceError(
                    f"call_te: {getattr(func, '__name__', func)!r} must return te.Tensor(s), got {out!r}")
        unbound = _unbound_vars(conv.placeholders, outputs, conv.prim_exprs)
        prim_func = te.create_prim_func(conv.placeholders + outputs + unbound).without_attr("global_symbol")
        name = primfunc_name_hint or outputs[0].op.name
        gvar = self.add_func(prim_func, name)
        out_sinfo = [TensorStructInfo(tuple(_int64(d) for d in o.shape), o.dtype) for o in outputs]
        return call_tir(gvar, relax_expr.Tuple(conv.relax_args), out_sinfo, tir_vars=unbound or None)

    def emit_te(self, func, *args, **kwargs) -> relax_expr.Var:
        """`bb.emit(bb.call_te(func, *args, **kwargs))`; `name_hint=` names the bound var."""
        name_hint = kwargs.pop("name_hint", "")
        return self.emit(self.call_te(func, *args, **kwargs), name_hint=name_hint)


class _TEArgs:
    """Converts Relax arguments to TE ones, remembering placeholders and the Relax tensors."""

    def __init__(self, bb):
        self.bb = bb
        self.placeholders: list = []
        self.relax_args: list = []
        self.prim_exprs: list = []
        self._seen: dict = {}

    def convert(self, arg):
        from .. import te

        if isinstance(arg, list | tuple):
            return type(arg)(self.convert(a) for a in arg)
        if isinstance(arg, dict):
            return {k: self.convert(v) for k, v in arg.items()}
        if isinstance(arg, PrimExpr):
            self.prim_exprs.append(arg)
            return arg
        if not isinstance(arg, relax_expr.Expr):
            return arg
        arg = self.bb.normalize_arg(arg)
        if isinstance(arg, relax_expr.Tuple):
            return [self.convert(f) for f in arg.fields]
        if isinstance(arg, relax_expr.ShapeExpr):
            self.prim_exprs.extend(arg.values)
            return list(arg.values)
        if isinstance(arg, relax_expr.PrimValue):
            self.prim_exprs.append(arg.value)
            return arg.value
        sinfo = arg.struct_info
        if not isinstance(sinfo, TensorStructInfo):
            raise TypeInferenceError(
                f"call_te: argument {arg!r} must be a tensor, shape or scalar, "
                f"got {sinfo}")
        if sinfo.shape_values is None or sinfo.is_unknown_dtype:
            raise TypeInferenceError(
                f"call_te: argument {arg!r} needs a known shape and dtype to become a "
                f"te.placeholder, got {sinfo}")
        if arg in self._seen:
            return self._seen[arg]
        name = arg.name_hint if isinstance(arg, relax_expr.Var) else "rxplaceholder"
        tensor = te.placeholder(sinfo.shape_values, sinfo.dtype, name=name)
        self._seen[arg] = tensor
        self.placeholders.append(tensor)
        self.relax_args.append(arg)
        return tensor


def _unbound_vars(inputs: list, outputs: list, extra: list) -> list:
    """Symbolic vars used by the shapes (or scalar args) that no tensor shape defines by a bare dim."""
    bound, used = set(), []
    for t in inputs + outputs:
        for d in t.shape:
            if isinstance(d, TIRVar):
                bound.add(d)
    exprs = [d for t in inputs + outputs for d in t.shape] + list(extra)
    for e in exprs:
        for v in tir_vars_in_expr(e):
            if v not in bound and v not in used:
                used.append(v)
    return used


def _int64(d):
    return IntImm("int64", d.value) if isinstance(d, IntImm) else d
