"""ConvertToDataflow: group runs of pure bindings outside dataflow blocks into dataflow blocks.

In every SeqExpr (function bodies and `If` branches), consecutive bindings that are neither
an `If` nor an impure call form a run; a run of at least `min_size` bindings becomes a
`DataflowBlock`, merged with any dataflow block next to it. Shorter runs stay where they
are. As in TVM, CanonicalizeBindings then runs on the functions that changed, so vars used
only inside their new block become dataflow vars.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     a = bb.emit(relax.op.exp(x))
...     b = bb.emit(relax.op.add(a, x))
...     _ = bb.emit_func_output(b)
>>> after = ConvertToDataflow()(bb.get())["main"]
>>> [(type(blk).__name__, [type(b.var).__name__ for b in blk.bindings]) for blk in after.body.blocks]
[('DataflowBlock', ['DataflowVar', 'Var'])]
"""

from __future__ import annotations

from ...ir.transform import module_pass
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from .canonicalize_bindings import canonicalize_bindings
from .dead_code_elimination import contains_impure_call

__all__ = ["ConvertToDataflow"]


class _Grouper(ExprMutator):
    def __init__(self, mod, min_size: int):
        super().__init__(mod)
        self.mod, self.min_size = mod, min_size

    def _is_dataflow(self, binding) -> bool:
        value = binding.value
        if isinstance(value, relax_expr.If):
            return False
        return not (isinstance(value, relax_expr.Call) and contains_impure_call(value, self.mod))

    def regroup(self, blocks) -> list:
        out: list = []
        plain: list = []
        run: list = []
        run_has_dataflow_block = False

        def close_run():
            nonlocal plain, run, run_has_dataflow_block
            if run and (run_has_dataflow_block or len(run) >= self.min_size):
                if plain:
                    out.append(relax_expr.BindingBlock(plain))
                out.append(relax_expr.DataflowBlock(run))
                plain = []
            else:
                plain.extend(run)
            run, run_has_dataflow_block = [], False

        for block in blocks:
            if isinstance(block, relax_expr.DataflowBlock):
                run.extend(block.bindings)
                run_has_dataflow_block = True
                continue
            for binding in block.bindings:
                if self._is_dataflow(binding):
                    run.append(binding)
                else:
                    close_run()
                    plain.append(binding)
        close_run()
        if plain:
            out.append(relax_expr.BindingBlock(plain))
        return out

    def visit_with_new_scope(self, expr):
        if isinstance(expr, relax_expr.SeqExpr):
            blocks = self.regroup(expr.blocks)
            same = len(blocks) == len(expr.blocks) and all(
                type(a) is type(b) and len(a.bindings) == len(b.bindings)
                and all(x is y for x, y in zip(a.bindings, b.bindings)) for a, b in zip(blocks, expr.blocks))
            if not same:
                expr = relax_expr.SeqExpr(blocks, expr.body)
        return super().visit_with_new_scope(expr)


@module_pass(opt_level=0, name="ConvertToDataflow")
class ConvertToDataflow:
    """Wrap runs of at least `min_size` pure bindings into dataflow blocks."""

    def __init__(self, min_size: int = 2):
        if min_size < 1:
            raise ValueError(f"ConvertToDataflow: min_size must be at least 1, got {min_size}")
        self.min_size = min_size

    def transform_module(self, mod, ctx):
        for gv, func in mod.items():
            if isinstance(func, relax_expr.Function):
                new = _Grouper(mod, self.min_size).visit_expr(func)
                if new is not func:
                    mod[gv] = canonicalize_bindings(new, mod)
        return mod
