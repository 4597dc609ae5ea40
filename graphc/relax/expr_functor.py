"""ExprVisitor and ExprMutator over Relax functions, with binding-level hooks.

Expressions dispatch through a per-class table keyed by node type (walking the MRO once):
override `visit_<NodeName>` (`visit_Call`, `visit_Var`, `visit_DataflowVar`, ...). Bindings
and blocks have hooks of their own: `visit_block` (dispatching to `visit_binding_block` or
`visit_dataflow_block`), `visit_binding` (to `visit_var_binding` or `visit_match_cast`) and
`visit_var_def` for every variable definition (parameters and binding vars).

The mutator is copy on write: an expression whose parts come back unchanged is returned
as the same object. Changed bindings are re-normalized through `self.builder` (a
BlockBuilder), so struct info stays right and rewritten calls stay in A-normal form; when a
binding's struct info changes, its var is replaced and later uses are remapped.

>>> from graphc import relax
>>> class ReluToAdd(relax.ExprMutator):
...     def visit_Call(self, call):
...         call = super().visit_Call(call)
...         if call.op is relax.Op.get("relax.nn.relu"):
...             return self.builder.normalize(relax.op.add(call.args[0], call.args[0]))
...         return call
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("f", [x]):
...     _ = bb.emit_func_output(bb.emit(relax.op.nn.relu(x)))
>>> f = bb.get()["f"]
>>> ReluToAdd().visit_expr(f).body.blocks[0].bindings[0].value
R.add(x, x)
>>> relax.ExprMutator().visit_expr(f) is f
True
"""

from __future__ import annotations

from ..ir.dispatch import dispatch
from ..ir.module import GlobalVar
from ..ir.structural import structural_equal
from . import expr as relax_expr
from .op.registry import Op
from .struct_info import is_base_of


class ExprVisitor:
    """Walks every expression, block and binding; override `visit_<Node>` or the binding hooks."""

    def visit_expr(self, expr) -> None:
        dispatch(self, expr)

    # leaves
    def visit_Var(self, var: relax_expr.Var) -> None:
        pass

    def visit_LeafExpr(self, expr) -> None:
        pass

    def visit_ShapeExpr(self, expr: relax_expr.ShapeExpr) -> None:
        for value in expr.values:
            self.visit_prim_expr(value)

    def visit_PrimValue(self, expr: relax_expr.PrimValue) -> None:
        self.visit_prim_expr(expr.value)

    def visit_GlobalVar(self, gv: GlobalVar) -> None:
        pass

    def visit_Op(self, op: Op) -> None:
        pass

    def visit_prim_expr(self, expr) -> None:
        """Hook for the symbolic (TensorIR) expressions inside shapes and scalar values."""

    # composites
    def visit_Tuple(self, expr: relax_expr.Tuple) -> None:
        for field in expr.fields:
            self.visit_expr(field)

    def visit_TupleGetItem(self, expr: relax_expr.TupleGetItem) -> None:
        self.visit_expr(expr.tuple_value)

    def visit_Call(self, call: relax_expr.Call) -> None:
        self.visit_expr(call.op)
        for arg in call.args:
            self.visit_expr(arg)

    def visit_If(self, expr: relax_expr.If) -> None:
        self.visit_expr(expr.cond)
        self.visit_expr(expr.true_branch)
        self.visit_expr(expr.false_branch)

    def visit_SeqExpr(self, expr: relax_expr.SeqExpr) -> None:
        for block in expr.blocks:
            self.visit_block(block)
        self.visit_expr(expr.body)

    def visit_Function(self, func: relax_expr.Function) -> None:
        for param in func.params:
            self.visit_var_def(param)
        self.visit_expr(func.body)

    # blocks and bindings
    def visit_block(self, block: relax_expr.BindingBlock) -> None:
        if isinstance(block, relax_expr.DataflowBlock):
            self.visit_dataflow_block(block)
        else:
            self.visit_binding_block(block)

    def visit_binding_block(self, block: relax_expr.BindingBlock) -> None:
        for binding in block.bindings:
            self.visit_binding(binding)

    def visit_dataflow_block(self, block: relax_expr.DataflowBlock) -> None:
        for binding in block.bindings:
            self.visit_binding(binding)

    def visit_binding(self, binding: relax_expr.Binding) -> None:
        if isinstance(binding, relax_expr.MatchCast):
            self.visit_match_cast(binding)
        else:
            self.visit_var_binding(binding)

    def visit_var_binding(self, binding: relax_expr.VarBinding) -> None:
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_match_cast(self, binding: relax_expr.MatchCast) -> None:
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_var_def(self, var: relax_expr.Var) -> None:
        """Called once for every variable definition (parameters, binding vars)."""


class ExprMutator:
    """Copy-on-write rewriting; `self.builder` normalizes and collects re-emitted bindings."""

    def __init__(self, mod=None):
        from .block_builder import BlockBuilder

        self.builder = BlockBuilder(mod)
        self.var_remap: dict = {}

    def visit_expr(self, expr):
        """The rewritten, normalized expression (the same object when nothing changed)."""
        new = dispatch(self, expr)
        return self.builder.normalize(new) if new is not expr else new

    # leaves
    def visit_Var(self, var: relax_expr.Var):
        return self.var_remap.get(var, var)

    def visit_LeafExpr(self, expr):
        return expr

    def visit_GlobalVar(self, gv: GlobalVar):
        return gv

    def visit_Op(self, op: Op):
        return op

    # composites
    def visit_Tuple(self, expr: relax_expr.Tuple):
        fields = tuple(self.visit_expr(f) for f in expr.fields)
        return expr if all(a is b for a, b in zip(fields, expr.fields)) else relax_expr.Tuple(fields)

    def visit_TupleGetItem(self, expr: relax_expr.TupleGetItem):
        return expr.replace(tuple_value=self.visit_expr(expr.tuple_value))

    def visit_Call(self, call: relax_expr.Call):
        op = self.visit_expr(call.op)
        args = tuple(self.visit_expr(a) for a in call.args)
        if op is call.op and all(a is b for a, b in zip(args, call.args)):
            return call
        return relax_expr.Call(op, args, call.attrs, call.sinfo_args)

    def visit_If(self, expr: relax_expr.If):
        cond = self.visit_expr(expr.cond)
        true_branch = self.visit_with_new_scope(expr.true_branch)
        false_branch = self.visit_with_new_scope(expr.false_branch)
        if cond is expr.cond and true_branch is expr.true_branch and false_branch is expr.false_branch:
            return expr
        return relax_expr.If(cond, true_branch, false_branch)

    def visit_SeqExpr(self, expr: relax_expr.SeqExpr):
        return self.visit_with_new_scope(expr)

    def visit_Function(self, func: relax_expr.Function):
        params = tuple(self.visit_var_def(p) for p in func.params)
        body = self.visit_with_new_scope(func.body)
        if body is func.body and all(a is b for a, b in zip(params, func.params)):
            return func
        ret = func.ret_struct_info
        if ret is not None and not is_base_of(ret, body.struct_info, self.builder.analyzer):
            ret = None
        return relax_expr.Function(params, body, ret, func.is_pure, func.attrs)

    def visit_with_new_scope(self, expr):
        """Rewrite `expr` as a SeqExpr of its own: bindings emitted while visiting stay inside it."""
        from .block_builder import finish_seq, reuse_blocks

        self.builder.begin_scope()
        try:
            for block in expr.blocks if isinstance(expr, relax_expr.SeqExpr) else ():
                self.visit_block(block)
            old_body = expr.body if isinstance(expr, relax_expr.SeqExpr) else expr
            body = self.visit_expr(old_body)
            if not (relax_expr.is_leaf(body) or isinstance(body, relax_expr.Tuple)):
                body = self.builder.emit(body)
        except BaseException:
            # Drop the half-built scope without checking it, so the real error surfaces.
            self.builder.discard_scope()
            raise
        blocks = self.builder.end_scope()
        old_blocks = expr.blocks if isinstance(expr, relax_expr.SeqExpr) else ()
        if not isinstance(expr, relax_expr.SeqExpr) and body is expr and not blocks:
            return expr
        return finish_seq(expr, reuse_blocks(blocks, old_blocks), body)

    # blocks and bindings
    def visit_block(self, block: relax_expr.BindingBlock) -> relax_expr.BindingBlock:
        if isinstance(block, relax_expr.DataflowBlock):
            return self.visit_dataflow_block(block)
        return self.visit_binding_block(block)

    def visit_binding_block(self, block: relax_expr.BindingBlock) -> relax_expr.BindingBlock:
        self.builder.begin_binding_block()
        for binding in block.bindings:
            self.visit_binding(binding)
        return self.builder.end_block()

    def visit_dataflow_block(self, block: relax_expr.DataflowBlock) -> relax_expr.BindingBlock:
        self.builder.begin_dataflow_block()
        for binding in block.bindings:
            self.visit_binding(binding)
        return self.builder.end_block()

    def visit_binding(self, binding: relax_expr.Binding) -> None:
        if isinstance(binding, relax_expr.MatchCast):
            self.visit_match_cast(binding)
        else:
            self.visit_var_binding(binding)

    def visit_var_binding(self, binding: relax_expr.VarBinding) -> None:
        value = self.visit_expr(binding.value)
        self.reemit_binding(binding, value)

    def visit_match_cast(self, binding: relax_expr.MatchCast) -> None:
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        if value is binding.value and var is binding.var:
            self.builder.emit_normalized(binding)
            return
        if not (relax_expr.is_leaf(value) or isinstance(value, relax_expr.Tuple)):
            value = self.builder.emit(value)
        self.builder.emit_normalized(relax_expr.MatchCast(var, value, binding.struct_info))

    def reemit_binding(self, binding: relax_expr.VarBinding, value) -> None:
        """Emit `var = value`; a changed struct info replaces the var (TVM's ReEmitBinding)."""
        var = self.visit_var_def(binding.var)
        if value is binding.value and var is binding.var:
            self.builder.emit_normalized(binding)
            return
        sinfo = value.struct_info
        if not structural_equal(sinfo, var.struct_info):
            var = type(var)(var.name_hint, sinfo)
            self.var_remap[binding.var] = var
        self.builder.emit_normalized(relax_expr.VarBinding(var, value))

    def visit_var_def(self, var: relax_expr.Var) -> relax_expr.Var:
        """Hook for every variable definition; returns the var to define instead (default: itself)."""
        return self.var_remap.get(var, var)
