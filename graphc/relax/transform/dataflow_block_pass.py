"""Relax pass decorators: `dataflowblock_pass` (every dataflow block) and `function_pass`
(every Relax function), TVM's `relax.transform.dataflowblock_pass` / `function_pass`.

`function_pass` is `graphc.ir.transform.function_pass` restricted to Relax functions: the
transform `(func, mod, ctx) -> func` never sees PrimFuncs.

The transform receives `(block, mod, ctx)` and returns a `DataflowBlock` (the same object
when it changes nothing). It may rewrite, add or remove bindings, but the block's output
variables (its non-dataflow vars, visible after the block) must stay defined, since code
after the block uses them. The returned bindings are normalized again, so values may be
built without struct info, and later uses see updated struct info. As with the other
decorators, a class with `transform_dataflowblock(self, block, mod, ctx)` works too; its
`__init__` arguments are the pass options.

>>> from graphc import relax
>>> @dataflowblock_pass(opt_level=0, name="ReluToExp")
... def relu_to_exp(block, mod, ctx):
...     relu = relax.Op.get("relax.nn.relu")
...     bindings = [relax.VarBinding(b.var, relax.op.exp(*b.value.args))
...                 if isinstance(b.value, relax.Call) and b.value.op is relu else b
...                 for b in block.bindings]
...     return relax.DataflowBlock(bindings)
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         gv = bb.emit_output(relax.op.nn.relu(x))
...     _ = bb.emit_func_output(gv)
>>> after = relu_to_exp(bb.get())["main"].body.blocks[0].bindings[0]
>>> after.value, after.value.struct_info
(R.exp(x), R.Tensor((2,), dtype="float32"))
"""

from __future__ import annotations

from ...errors import GraphcError
from ...ir.transform import FunctionPass, Pass, make_pass_decorator
from .. import expr as relax_expr
from ..expr_functor import ExprMutator
from ..struct_info import is_base_of

__all__ = ["DataflowBlockPass", "RelaxFunctionPass", "dataflowblock_pass", "function_pass"]


class _BlockRewriter(ExprMutator):
    def __init__(self, mod, pass_obj: DataflowBlockPass, ctx):
        super().__init__(mod)
        self.mod, self.pass_obj, self.ctx = mod, pass_obj, ctx

    def visit_expr(self, expr):
        new = super().visit_expr(expr)
        if isinstance(new, relax_expr.Expr) and new.struct_info_ is None:
            new = self.builder.normalize(new)  # values the pass built without struct info
        return new

    def reemit_binding(self, binding, value):
        var = self.visit_var_def(binding.var)
        if not is_base_of(var.struct_info, value.struct_info, self.builder.analyzer):
            # the pass changed the value's struct info under an old var: give it a new var
            new_var = type(var)(var.name_hint, value.struct_info)
            self.var_remap[binding.var] = new_var
            binding = relax_expr.VarBinding(new_var, value)
        super().reemit_binding(binding, value)

    def visit_dataflow_block(self, block):
        new = self.pass_obj.pass_func(block, self.mod, self.ctx)
        if new is block:
            return super().visit_dataflow_block(block)
        name = self.pass_obj.info.name
        if not isinstance(new, relax_expr.DataflowBlock):
            raise GraphcError(
                f"dataflow block pass {name} must return a DataflowBlock, got {type(new).__name__}")
        defined = {b.var for b in new.bindings}
        lost = [b.var.name_hint for b in block.bindings
                if not isinstance(b.var, relax_expr.DataflowVar) and b.var not in defined]
        if lost:
            raise GraphcError(
                f"dataflow block pass {name} removed the block's output var(s) {', '.join(lost)}, which "
                "code after the block may use; keep binding them (to a new value if needed)")
        return super().visit_dataflow_block(new)


class DataflowBlockPass(Pass):
    """A pass applying `pass_func(block, mod, ctx) -> block` to every dataflow block of every
    Relax function of the module (TVM's `relax.transform.DataflowBlockPass`)."""

    def __init__(self, pass_func, info):
        self.pass_func = pass_func
        self.info = info

    def transform_module(self, mod, ctx):
        result = mod.copy()
        rewriter = _BlockRewriter(mod, self, ctx)
        for gv, func in mod.items():
            if isinstance(func, relax_expr.Function):
                new = rewriter.visit_expr(func)
                if new is not func:
                    result[gv] = new
        return result


def dataflowblock_pass(pass_func=None, opt_level=0, name=None, required=None, traceable=False):
    """Make a pass from a function `(block, mod, ctx) -> block` or a class with
    `transform_dataflowblock`; it is applied to every dataflow block of the module."""
    return make_pass_decorator(
        DataflowBlockPass, "transform_dataflowblock", pass_func, opt_level, name, required, traceable
    )


class RelaxFunctionPass(FunctionPass):
    """A pass applying `pass_func(func, mod, ctx) -> func` to every Relax function (None removes it)."""

    function_types = (relax_expr.Function,)


def function_pass(pass_func=None, opt_level=0, name=None, required=None, traceable=False):
    """Make a pass over the module's Relax functions from a function `(func, mod, ctx) -> func`
    or a class with `transform_function`.

    >>> from graphc import IRModule
    >>> @function_pass(opt_level=0, name="Nothing")
    ... def nothing(func, mod, ctx):
    ...     return func
    >>> nothing.info.name, len(nothing(IRModule()))
    ('Nothing', 0)
    """
    return make_pass_decorator(
        RelaxFunctionPass, "transform_function", pass_func, opt_level, name, required, traceable
    )
