"""LiftTransformParams: move what a function computes from its weights alone into a function
run once, when the weights are bound (TVM's pass of that name).

For each function with a ``num_input`` attribute, the bindings of its dataflow blocks that
read only its weights (the parameters past ``num_input``), constants and other such bindings
(a weight's packing into the layout a kernel wants, a transpose) move to a new function
``<name>_transform_params(weights...)`` returning a tuple: the lifted values the rest of the
function reads, then the weights it reads directly. The function itself then takes its inputs
followed by that tuple's fields:

    params = vm["main_transform_params"](*weights)   # once
    out = vm["main"](x, *params)                     # every call

Functions without ``num_input``, or with nothing to lift, are left as they are.

>>> import numpy as np
>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> w = relax.Var("w", relax.TensorStructInfo((3, 2), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x, w], attrs={"num_input": 1}):
...     with bb.dataflow():
...         wt = bb.emit(relax.op.permute_dims(w))            # depends on the weight only
...         gv = bb.emit_output(relax.op.matmul(x, relax.op.permute_dims(wt)))
...     _ = bb.emit_func_output(gv)
>>> mod = LiftTransformParams()(bb.get())
>>> sorted(gv.name_hint for gv in mod.get_global_vars())
['main', 'main_transform_params']
>>> [p.name_hint for p in mod["main"].params]   # x, then w transposed twice
['x', 'lv1']
"""

from __future__ import annotations

from ...ir.module import GlobalVar, IRModule
from ...ir.transform import module_pass
from .. import expr as relax_expr
from ..analysis.vars import used_vars
from ..block_builder import BlockBuilder
from ..expr_functor import ExprMutator
from ..struct_info import TupleStructInfo

__all__ = ["LiftTransformParams"]


class _Remap(ExprMutator):
    def __init__(self, mapping: dict):
        super().__init__()
        self.var_remap = dict(mapping)


def _split(func: relax_expr.Function):
    """(weights, lifted bindings, kept blocks) of `func`, or None when nothing lifts."""
    num_input = func.attrs.get("num_input") if func.attrs else None
    body = func.body
    if num_input is None or not isinstance(body, relax_expr.SeqExpr):
        return None
    weights = list(func.params[int(num_input):])
    known = set(weights)
    lifted = []
    for block in body.blocks:
        if not isinstance(block, relax_expr.DataflowBlock):
            continue
        for binding in block.bindings:
            if not isinstance(binding, relax_expr.VarBinding):
                continue
            reads = set(used_vars(binding.value))
            if reads and reads <= known and not _impure(binding.value):
                lifted.append(binding)
                known.add(binding.var)
    if not lifted:
        return None
    return weights, lifted


def _impure(value) -> bool:
    return isinstance(value, relax_expr.Call) and not getattr(value.op, "pure", True)


@module_pass(opt_level=0, name="LiftTransformParams", copy=False)
class LiftTransformParams:
    """Lift the weight-only computations of functions with ``num_input`` into
    ``<name>_transform_params`` (see the module docstring)."""

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        out = mod
        for gv, func in list(mod.items()):
            if not isinstance(func, relax_expr.Function):
                continue
            found = _split(func)
            if found is None:
                continue
            weights, lifted = found
            main, transform = _rewrite(func, weights, lifted)
            if out is mod:
                out = mod.copy()
            out[gv] = main
            name = f"{gv.name_hint}_transform_params"
            attrs = {"num_input": 0}
            if func.attrs.get("global_symbol") is not None:
                attrs["global_symbol"] = name
            out[GlobalVar(name)] = transform.with_attr(attrs)
        return out


def _rewrite(func: relax_expr.Function, weights: list, lifted: list):
    lifted_vars = {b.var for b in lifted}
    num_input = int(func.attrs["num_input"])
    kept = [b for blk in func.body.blocks for b in blk.bindings if b.var not in lifted_vars]
    # what the rest of the function reads of the lifted values and of the weights, in order
    needed = []
    readers = [b.value for b in kept] + [func.body.body]
    for value in readers:
        for v in used_vars(value):
            if (v in lifted_vars or v in weights) and v not in needed:
                needed.append(v)

    # <name>_transform_params(weights) -> (needed...)
    bb = BlockBuilder()
    fresh_weights = [relax_expr.Var(w.name_hint, w.struct_info) for w in weights]
    remap = dict(zip(weights, fresh_weights))
    with bb.function("transform_params", fresh_weights):
        with bb.dataflow():
            for binding in lifted:
                value = _Remap(remap).visit_expr(binding.value)
                remap[binding.var] = bb.emit(value, binding.var.name_hint)
            outputs = bb.emit_output(relax_expr.Tuple([remap[v] for v in needed]))
        bb.emit_func_output(outputs)
    transform = bb.get()["transform_params"]

    # the function on its inputs and the transformed parameters
    inputs = list(func.params[:num_input])
    new_params = [relax_expr.Var(v.name_hint, v.struct_info) for v in needed]
    mapping = dict(zip(needed, new_params))
    blocks = []
    for block in func.body.blocks:
        bindings = tuple(b for b in block.bindings if b.var not in lifted_vars)
        if bindings:
            blocks.append(block.replace(bindings=bindings))
    body = func.body.replace(blocks=tuple(blocks))
    relax_expr.set_struct_info(body, func.body.struct_info)
    shell = relax_expr.Function(inputs + new_params, body, func.ret_struct_info, func.is_pure, func.attrs)
    main = _Remap(mapping).visit_expr(shell)
    assert isinstance(transform.ret_struct_info, TupleStructInfo)
    return main, transform
