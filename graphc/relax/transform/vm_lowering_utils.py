"""Small helpers shared by the Relax-to-VM lowering passes (one place for the common checks).

>>> from graphc.relax.op.builtin import alloc_tensor
>>> call = alloc_tensor((2,), "float32")
>>> is_op(call, "relax.builtin.alloc_tensor"), is_op(call, "relax.add")
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable

from ...ir.module import GlobalVar, IRModule
from ...tir.function import PrimFunc
from .. import expr as relax_expr
from ..op.registry import Op


def is_op(expr, name: str) -> bool:
    """`expr` is a Call of the registered operator `name`."""
    return isinstance(expr, relax_expr.Call) and isinstance(expr.op, Op) and expr.op.name == name


def is_prim_func_gvar(mod: IRModule, op) -> bool:
    """`op` is a GlobalVar naming a PrimFunc of `mod`."""
    return isinstance(op, GlobalVar) and op in mod and isinstance(mod[op], PrimFunc)


def rewrite_functions(mod: IRModule, rewrite: Callable) -> IRModule:
    """`mod` with every Relax function `f` (under GlobalVar `gv`) replaced by `rewrite(gv, f)`.

    Returns `mod` itself when no function changed, so passes stay copy on write.
    """
    new_mod = None
    for gv, func in mod.items():
        if not isinstance(func, relax_expr.Function):
            continue
        new = rewrite(gv, func)
        if new is not func:
            if new_mod is None:
                new_mod = mod.copy()
            new_mod[gv] = new
    return mod if new_mod is None else new_mod


def merge_binding_blocks(expr):
    """`expr` (a Function or SeqExpr) with adjacent non-dataflow blocks merged into one.

    A printed function shows consecutive binding blocks as one, so merging keeps a pass's
    output structurally equal to its printed and re-parsed form.
    """
    if isinstance(expr, relax_expr.Function):
        body = merge_binding_blocks(expr.body)
        return expr if body is expr.body else expr.replace(body=body)
    if not isinstance(expr, relax_expr.SeqExpr):
        return expr
    blocks: list = []
    changed = False
    for block in expr.blocks:
        block = _merge_in_bindings(block)
        if blocks and type(block) is relax_expr.BindingBlock and type(blocks[-1]) is relax_expr.BindingBlock:
            blocks[-1] = relax_expr.BindingBlock(blocks[-1].bindings + block.bindings)
            changed = True
        else:
            blocks.append(block)
    if not changed and all(a is b for a, b in zip(blocks, expr.blocks)):
        return expr
    seq = relax_expr.SeqExpr(blocks, expr.body)
    relax_expr.set_struct_info(seq, expr.struct_info)
    return seq


def _merge_in_bindings(block):
    bindings = []
    changed = False
    for b in block.bindings:
        value = b.value
        if isinstance(value, relax_expr.If):
            t, f = merge_binding_blocks(value.true_branch), merge_binding_blocks(value.false_branch)
            if t is not value.true_branch or f is not value.false_branch:
                new_if = relax_expr.If(value.cond, t, f)
                relax_expr.set_struct_info(new_if, value.struct_info)
                b = b.replace(value=new_if)
                changed = True
        bindings.append(b)
    return type(block)(bindings) if changed else block


__all__: list[str] = []
