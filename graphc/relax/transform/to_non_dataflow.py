"""ToNonDataflow: turn every dataflow block into a plain binding block and its vars into Vars.

The VM lowering passes after it insert impure calls (kills, direct PrimFunc calls) that a
dataflow block may not hold; TVM runs it first for the same reason.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         lv = bb.emit(relax.op.add(x, x))
...         gv = bb.emit_output(relax.op.multiply(lv, x))
...     _ = bb.emit_func_output(gv)
>>> body = ToNonDataflow()(bb.get())["main"].body
>>> [type(b).__name__ for b in body.blocks], type(body.blocks[0].bindings[0].var).__name__
(['BindingBlock'], 'Var')
"""

from __future__ import annotations

from ...ir.transform import module_pass
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from .vm_lowering_utils import merge_binding_blocks, rewrite_functions


class _ToNonDataflow(ExprMutator):
    def visit_dataflow_block(self, block: relax_expr.DataflowBlock) -> relax_expr.BindingBlock:
        return self.visit_binding_block(block)

    def visit_var_def(self, var: relax_expr.Var) -> relax_expr.Var:
        if isinstance(var, relax_expr.DataflowVar):
            new = self.var_remap.get(var)
            if new is None:
                new = self.var_remap[var] = relax_expr.Var(var.name_hint, var.struct_info)
            return new
        return super().visit_var_def(var)


@module_pass(opt_level=0, name="ToNonDataflow")
class ToNonDataflow:
    """Replace DataflowBlocks by BindingBlocks (adjacent ones merged) and DataflowVars by Vars."""

    def transform_module(self, mod, ctx):
        def rewrite(gv, func):
            if not any(isinstance(b, relax_expr.DataflowBlock) for b in _blocks(func.body)):
                return func
            return merge_binding_blocks(_ToNonDataflow(mod).visit_expr(func))

        return rewrite_functions(mod, rewrite)


def _blocks(seq):
    """Every block of `seq`, including those nested in If branches."""
    if not isinstance(seq, relax_expr.SeqExpr):
        return
    for block in seq.blocks:
        yield block
        for b in block.bindings:
            if isinstance(b.value, relax_expr.If):
                yield from _blocks(b.value.true_branch)
                yield from _blocks(b.value.false_branch)


__all__ = ["ToNonDataflow"]
