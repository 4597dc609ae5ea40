"""KillAfterLastUse: drop each VM register right after the binding that uses it last (TVM's pass).

First, trivial aliases (`lv = alloc`, a match_cast to the same struct info) are folded into
their uses, so that the last use of the underlying tensor is seen. Then, in every SeqExpr,
each var bound there that is used later but not returned is killed right after its last
use: `R.memory.kill_storage` for storages (`alloc_storage` results), `R.memory.kill_tensor`
for tensors, `R.vm.kill_object` for other objects (tuples, ...). Constants, shapes, scalars
and functions are left alone (they do not live in registers), and so is anything already
killed. A use inside an `If` counts as a use by the binding of that `If`.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     a = bb.emit(relax.op.add(x, x))
...     b = bb.emit(relax.op.multiply(a, x))
...     _ = bb.emit_func_output(b)
>>> [str(binding.value) for binding in KillAfterLastUse()(bb.get())["main"].body.blocks[0].bindings]
['R.add(x, x)', 'R.multiply(gv, x)', 'R.memory.kill_tensor(gv)']
"""

from __future__ import annotations

from ...ir.structural import structural_equal
from ...ir.transform import module_pass
from .. import expr as relax_expr
from ..analysis.vars import used_vars
from ..expr_functor import ExprMutator
from ..op.memory import kill_storage, kill_tensor, void_struct_info
from ..op.vm import kill_object
from ..struct_info import FuncStructInfo, PrimStructInfo, ShapeStructInfo, TensorStructInfo
from .vm_lowering_utils import is_op, rewrite_functions

_STORAGE_OPS = ("relax.memory.alloc_storage", "relax.vm.alloc_storage")
_KILL_OPS = ("relax.memory.kill_storage", "relax.memory.kill_tensor", "relax.vm.kill_object")


class _FoldTrivialBindings(ExprMutator):
    """Replace uses of `y` by `x` for every `y = x` (and same-typed `match_cast`), dropping `y`."""

    def _alias(self, var: relax_expr.Var, value) -> bool:
        return isinstance(value, relax_expr.Var) and not (
            isinstance(value, relax_expr.DataflowVar) and not isinstance(var, relax_expr.DataflowVar)) and \
            structural_equal(var.struct_info, value.struct_info)

    def visit_var_binding(self, binding: relax_expr.VarBinding) -> None:
        value = self.visit_expr(binding.value)
        if self._alias(binding.var, value):
            self.var_remap[binding.var] = value
            return
        self.reemit_binding(binding, value)

    def visit_match_cast(self, binding: relax_expr.MatchCast) -> None:
        value = self.visit_expr(binding.value)
        if self._alias(binding.var, value) and structural_equal(binding.struct_info, value.struct_info):
            self.var_remap[binding.var] = value
            return
        super().visit_match_cast(binding)


def _is_kill(call: relax_expr.Call) -> bool:
    return any(is_op(call, name) for name in _KILL_OPS)


def _reads(expr) -> list:
    """The Relax vars `expr` reads, inside tuples, calls and If branches; a kill is not a read."""
    return used_vars(expr, skip_call=_is_kill)


class _KillInserter:
    def __init__(self, normalize):
        self.normalize = normalize

    def seq(self, seq: relax_expr.SeqExpr) -> relax_expr.SeqExpr:
        bindings = [b for block in seq.blocks for b in block.bindings]
        last_use: dict = {}
        storages, constants, killed = set(), set(), set()
        for i, b in enumerate(bindings):
            for v in _reads(b.value):
                last_use[v] = i
            value = b.value
            if any(is_op(value, name) for name in _STORAGE_OPS):
                storages.add(b.var)
            elif isinstance(value, relax_expr.Constant):
                constants.add(b.var)
            elif any(is_op(value, name) for name in _KILL_OPS) and isinstance(value.args[0], relax_expr.Var):
                killed.add(value.args[0])
        outputs = set(_reads(seq.body))
        kills: dict = {}  # binding index -> [(group, var)]
        for b in bindings:
            var = b.var
            if var not in last_use or var in outputs or var in killed or var in constants:
                continue
            sinfo = var.struct_info
            if var in storages:
                group = 1
            elif isinstance(sinfo, FuncStructInfo | ShapeStructInfo | PrimStructInfo):
                continue
            else:
                group = 0 if isinstance(sinfo, TensorStructInfo) else 2
            kills.setdefault(last_use[var], []).append((group, var))
        changed = bool(kills)
        blocks, index = [], 0
        for block in seq.blocks:
            new_bindings = []
            for b in block.bindings:
                new_b = self.binding(b)
                changed = changed or new_b is not b
                new_bindings.append(new_b)
                for _, var in sorted(kills.get(index, ()), key=lambda gv: gv[0]):
                    make = (kill_tensor, kill_storage, kill_object)[_group_of(var, storages)]
                    call = self.normalize(make(var))
                    new_bindings.append(relax_expr.VarBinding(relax_expr.Var("_", void_struct_info()), call))
                index += 1
            blocks.append(type(block)(new_bindings))
        if not changed:
            return seq
        new = relax_expr.SeqExpr(blocks, seq.body)
        relax_expr.set_struct_info(new, seq.struct_info)
        return new

    def binding(self, b):
        if not isinstance(b.value, relax_expr.If):
            return b
        value = b.value
        t, f = self.seq(value.true_branch), self.seq(value.false_branch)
        if t is value.true_branch and f is value.false_branch:
            return b
        new_if = relax_expr.If(value.cond, t, f)
        relax_expr.set_struct_info(new_if, value.struct_info)
        return b.replace(value=new_if)


def _group_of(var, storages) -> int:
    if var in storages:
        return 1
    return 0 if isinstance(var.struct_info, TensorStructInfo) else 2


@module_pass(opt_level=0, name="KillAfterLastUse")
class KillAfterLastUse:
    """Insert `memory.kill_tensor` / `memory.kill_storage` / `vm.kill_object` after last uses."""

    def transform_module(self, mod, ctx):
        def rewrite(gv, func):
            folder = _FoldTrivialBindings(mod)
            func = folder.visit_expr(func)
            body = _KillInserter(folder.builder.normalize).seq(func.body)
            return func if body is func.body else func.replace(body=body)

        return rewrite_functions(mod, rewrite)


__all__ = ["KillAfterLastUse"]
