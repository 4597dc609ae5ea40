"""loop_partition: cut a loop into consecutive loops over sub-ranges, each with its own copy
of the body.

`loop_partition(i, factors=[2, 64, None])` on `for i in range(128)` gives loops over
[0, 2), [2, 66) and [66, 128) (one None factor is inferred; without one the factors must add
up to the extent, and an inferred factor must be provably positive). Each loop runs a copy of
the original body with fresh loop and block iter variables; the blocks of copy k are renamed
`<block>_<loop><k>` (TVM's partitioned blocks are named the same way), and the loops
`<loop><k>`. Partitions are sequential, so no dependence check is needed. Unlike TVM, no
opaque `_partition` / `_common` wrapper blocks are made: the loops are siblings.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
...     for i in range(10):
...         with T.block("B"):
...             vi = T.axis.spatial(10, i)
...             B[vi] = A[vi] * 2.0
... ''')
>>> sch = tir.Schedule(f)
>>> loops = sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [4, None])
>>> [(int(sch.get(lp).min), int(sch.get(lp).extent)) for lp in loops]
[(0, 4), (4, 6)]
>>> [b.name for b in sch.get_child_blocks(sch.get_block("root"))]
['B_i0', 'B_i1']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..expr import IntImm, PrimExpr, Var, const, convert
from ..functor import StmtExprMutator, substitute
from ..stmt import BlockRealize, For, ForKind, SeqStmt
from .bounds import shape_analyzer
from .state import find_block_path, find_loop_path, replace_stmts, walk


class _FreshCopy(StmtExprMutator):
    """A copy of a statement with new Vars for its loops, block iters and let bindings (each
    variable is defined once in a function: two copies sharing a let's Var did not survive a
    print/parse round trip) and renamed blocks."""

    def __init__(self, vmap: dict, suffix: str):
        self.vmap, self.suffix = vmap, suffix

    def visit_Var(self, op):
        return self.vmap.get(op, op)

    def visit_For(self, op):
        new = Var(op.loop_var.name, op.loop_var.dtype)
        self.vmap[op.loop_var] = new
        out = super().visit_For(op)
        return out.replace(loop_var=new)

    def _fresh(self, var: Var) -> Var:
        new = Var(var.name, var.dtype)
        self.vmap[var] = new
        return new

    def visit_LetStmt(self, op):
        value = self.visit_expr(op.value)
        var = self._fresh(op.var)
        return op.replace(var=var, value=value, body=self.visit_stmt(op.body))

    def visit_Let(self, op):
        value = self.visit_expr(op.value)
        var = self._fresh(op.var)
        return op.replace(var=var, value=value, body=self.visit_expr(op.body))

    def visit_Block(self, op):
        ivs = []
        for iv in op.iter_vars:
            new = Var(iv.var.name, iv.var.dtype)
            self.vmap[iv.var] = new
            ivs.append(iv.replace(var=new))
        out = super().visit_Block(op)
        ivs = [iv.replace(dom=self.visit_range(iv.dom)) for iv in ivs]
        return out.replace(iter_vars=tuple(ivs), name_hint=f"{op.name_hint}_{self.suffix}")


def _factors(loop: For, factors, ana, what: str) -> list:
    factors = list(factors)
    if len(factors) < 2:
        raise ScheduleError(f"cannot {what}: it needs at least two factors, got {len(factors)}")
    nones = [k for k, f in enumerate(factors) if f is None]
    if len(nones) > 1:
        raise ScheduleError(f"cannot {what}: at most one factor may be None, got {len(nones)}")
    dtype = loop.loop_var.dtype
    known = [convert(f, dtype) if not isinstance(f, PrimExpr) else f for f in factors if f is not None]
    for f in known:
        if not ana.can_prove(f > 0):
            raise ScheduleError(f"cannot {what}: factor {f} is not provably positive")
    total = const(0, dtype)
    for f in known:
        total = total + f
    if nones:
        rest = ana.simplify(loop.extent - total)
        if not ana.can_prove(rest > 0):
            raise ScheduleError(
                f"cannot {what}: the factors {[str(f) for f in known]} leave no iterations for the None "
                f"factor (extent {loop.extent})"
            )
        factors[nones[0]] = rest
    elif not ana.can_prove(total == loop.extent):
        raise ScheduleError(
            f"cannot {what}: the factors add up to {ana.simplify(total)}, not the loop extent {loop.extent}"
        )
    return [convert(f, dtype) if not isinstance(f, PrimExpr) else f for f in factors]


def loop_partition(func, func_name: str, loop_var: Var, factors, preserve_unit_iters: bool = True):
    """Partition loop `loop_var` (see the module docstring); returns (new func, new loop Vars)."""
    what = f"partition loop {loop_var.name}"
    path = find_loop_path(func.body, loop_var)
    if path is None:
        raise ScheduleError(f"cannot {what}: the loop does not exist in function {func_name!r}")
    loop = path[-1]
    if loop.kind != ForKind.SERIAL or loop.annotations or loop.thread_binding is not None:
        raise ScheduleError(f"cannot {what}: only plain serial loops without annotations can be partitioned")
    if not any(isinstance(s, BlockRealize) for s in walk(loop.body)):
        raise ScheduleError(f"cannot {what}: it contains no block")
    ana = shape_analyzer(func)
    parts = _factors(loop, factors, ana, what)
    names = [s.block.name_hint for s in walk(loop.body) if isinstance(s, BlockRealize)]
    for k in range(len(parts)):
        for n in names:
            if find_block_path(func.body, f"{n}_{loop_var.name}{k}") is not None:
                raise ScheduleError(f"cannot {what}: a block named {n}_{loop_var.name}{k} already exists")
    loops, new_vars, start = [], [], loop.min
    for k, ext in enumerate(parts):
        var = Var(f"{loop_var.name}{k}", loop_var.dtype)
        body = _FreshCopy({loop_var: var}, f"{loop_var.name}{k}").visit_stmt(loop.body)
        if preserve_unit_iters or not (isinstance(ext, IntImm) and ext.value == 1):
            loops.append(For(var, ana.simplify(start), ext, ForKind.SERIAL, body))
            new_vars.append(var)
        else:
            loops.append(substitute(body, {var: ana.simplify(start)}))
        start = start + ext
    new_body = replace_stmts(func.body, {loop: SeqStmt.flatten(*loops)})
    return func.with_body(new_body), new_vars


__all__ = ["loop_partition"]
