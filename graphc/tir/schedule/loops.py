"""Loop transformations: split one loop into a nest, fuse a nest into one loop, reorder a nest.

Each function takes a PrimFunc and loop Vars, checks every precondition first, and
returns the new PrimFunc plus the Vars of the loops it created; it raises ScheduleError
(and builds nothing) when the transformation would be illegal.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((10, 4), "float32"), B: T.Buffer((10, 4), "float32")):
...     for i, j in T.grid(10, 4):
...         with T.block("B"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             B[vi, vj] = A[vi, vj] + 1.0
... ''')
>>> sch = tir.Schedule(f)
>>> i, j = sch.get_loops(sch.get_block("B"))
>>> io, ii = sch.split(i, factors=[None, 4])      # 3 * 4 covers 10: adds T.where(...)
>>> [sch.get(lp).extent.value for lp in (io, ii)]
[3, 4]
>>> sch.reorder(j, ii)                            # io, ii, j -> io, j, ii
>>> f = sch.fuse(io, j)
>>> sch.get(f).extent.value
12
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.var_use import uses_any_var
from ..expr import IntImm, PrimExpr, Range, Var, const, convert, floordiv, floormod, logical_and
from ..functor import StmtMutator, substitute
from ..stmt import Block, BlockRealize, For, ForKind
from .state import check_exists, find_loop_path, is_one, replace_stmts, simplify


def _loop_path(func, var: Var, func_name: str) -> list:
    return check_exists(find_loop_path(func.body, var), f"loop {var.name}", func_name)


class _BindingRewriter(StmtMutator):
    """Substitute loop vars in the realizes of one scope, simplify, and add a predicate."""

    def __init__(self, vmap: dict, dom: dict, predicate=None):
        self.vmap, self.dom, self.predicate = vmap, dom, predicate

    def visit_expr(self, expr):
        return substitute(expr, self.vmap)

    def visit_BlockRealize(self, op: BlockRealize):
        values = tuple(simplify(substitute(v, self.vmap), self.dom) for v in op.iter_values)
        if all(a is b for a, b in zip(values, op.iter_values)):
            values = op.iter_values
        pred = substitute(op.predicate, self.vmap)
        if self.predicate is not None:
            pred = self.predicate if _is_true(pred) else logical_and(pred, self.predicate)
        # the block's own body names its iter vars, not loops, unless it is opaque
        return op.replace(iter_values=values, predicate=pred, block=substitute(op.block, self.vmap))


def _is_true(e) -> bool:
    return isinstance(e, IntImm) and e.value == 1


def split(func, func_name: str, var: Var, factors, preserve_unit_iters: bool = True):
    """Split loop `var` into len(factors) nested loops; returns (new_func, new loop Vars)."""
    path = _loop_path(func, var, func_name)
    loop: For = path[-1]
    if loop.kind == ForKind.THREAD_BINDING:
        raise ScheduleError(f"cannot split loop {var.name}: it is bound to {loop.thread_binding.thread_tag}")
    factors = list(factors)
    if len(factors) < 2:
        raise ScheduleError(f"split of loop {var.name} needs at least two factors, got {len(factors)}")
    nones = [k for k, f in enumerate(factors) if f is None]
    if len(nones) > 1:
        raise ScheduleError(
            f"split of loop {var.name}: at most one factor may be None (inferred), got {len(nones)} Nones"
        )
    dtype = var.dtype
    known: list = []
    for f in factors:
        if f is None:
            continue
        f = convert(f, dtype) if not isinstance(f, PrimExpr) else f
        if isinstance(f, IntImm) and f.value <= 0:
            raise ScheduleError(f"split of loop {var.name}: factors must be positive, got {f.value}")
        known.append(f)
    product = const(1, dtype)
    for f in known:
        product = product * f
    extent = loop.extent
    if nones:
        inferred = simplify(floordiv(extent + product - 1, product)) if not is_one(product) else extent
        factors[nones[0]] = inferred
        product = product * inferred
    factors = [convert(f, dtype) if not isinstance(f, PrimExpr) else f for f in factors]
    exact = _provably_equal(product, extent)
    if (
        not exact
        and isinstance(product, IntImm)
        and isinstance(extent, IntImm)
        and product.value < extent.value
    ):
        shown = [int(f.value) if isinstance(f, IntImm) else str(f) for f in factors]
        raise ScheduleError(
            f"split of loop {var.name}: the product of factors {shown} is {product.value}, which does "
            f"not cover the loop extent {extent.value}; use None for one factor to infer it"
        )
    new_vars = [Var(f"{var.name}_{k}", dtype) for k in range(len(factors))]
    fused = new_vars[0]
    for v, f in zip(new_vars[1:], factors[1:]):
        fused = fused * f + v
    if not _is_zero(loop.min):
        fused = loop.min + fused
    dom = {v: Range(const(0, dtype), f) for v, f in zip(new_vars, factors)}
    if not preserve_unit_iters:
        vmap_unit = {v: const(0, dtype) for v, f in zip(new_vars, factors) if is_one(f)}
        fused = substitute(fused, vmap_unit) if vmap_unit else fused
    bound = extent if _is_zero(loop.min) else loop.min + extent
    predicate = None if exact else simplify(fused) < bound
    body = _BindingRewriter({var: simplify(fused, dom)}, dom, predicate).visit_stmt(loop.body)
    for v, f in reversed(list(zip(new_vars, factors))):
        body = For(v, const(0, dtype), f, ForKind.SERIAL, body)
    return func.with_body(replace_stmts(func.body, {loop: body})), new_vars


def _is_zero(e) -> bool:
    return isinstance(e, IntImm) and e.value == 0


def _provably_equal(a: PrimExpr, b: PrimExpr) -> bool:
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value
    from ..analysis.block_access import affine_difference

    return affine_difference(a, b) == 0


def fuse(func, func_name: str, vars_: list, preserve_unit_iters: bool = True):
    """Fuse consecutive perfectly nested loops (outermost first); returns (new_func, fused Var)."""
    if len(vars_) < 2:
        raise ScheduleError(f"fuse needs at least two loops, got {len(vars_)}")
    if len({id(v) for v in vars_}) != len(vars_):
        raise ScheduleError("fuse got the same loop twice")
    loops = []
    for k, v in enumerate(vars_):
        loop = _loop_path(func, v, func_name)[-1]
        if k > 0 and loops[-1].body is not loop:
            raise ScheduleError(
                f"cannot fuse loops {loops[-1].loop_var.name} and {v.name}: {v.name} is not the only "
                f"statement directly inside {loops[-1].loop_var.name} (fuse needs consecutive, perfectly "
                f"nested loops, listed outermost first)"
            )
        if loop.kind == ForKind.THREAD_BINDING:
            raise ScheduleError(f"cannot fuse loop {v.name}: it is bound to a thread axis")
        loops.append(loop)
    outer_vars = {lp.loop_var for lp in loops}
    for lp in loops[1:]:
        if uses_any_var(lp.extent, outer_vars) or uses_any_var(lp.min, outer_vars):
            raise ScheduleError(f"cannot fuse: the range of loop {lp.loop_var.name} depends on an outer loop")
    dtype = vars_[0].dtype
    names = "_".join(v.name for v in vars_)
    fused = Var(f"{names}_fused", dtype)
    extent = const(1, dtype)
    for lp in loops:
        extent = extent * lp.extent
    extent = simplify(extent)
    vmap = {}
    suffix = const(1, dtype)
    for k in range(len(loops) - 1, -1, -1):
        lp = loops[k]
        value = fused if is_one(suffix) else floordiv(fused, suffix)
        if k > 0:
            value = floormod(value, lp.extent)
        if not _is_zero(lp.min):
            value = lp.min + value
        vmap[lp.loop_var] = value
        suffix = simplify(suffix * lp.extent)
    dom = {fused: Range(const(0, dtype), extent)}
    body = _BindingRewriter(vmap, dom).visit_stmt(loops[-1].body)
    new_loop = For(fused, const(0, dtype), extent, ForKind.SERIAL, body)
    return func.with_body(replace_stmts(func.body, {loops[0]: new_loop})), fused


def reorder(func, func_name: str, vars_: list):
    """Reorder loops of one perfectly nested chain into the order given; returns the new func."""
    if len({id(v) for v in vars_}) != len(vars_):
        raise ScheduleError("reorder got the same loop more than once")
    paths = [_loop_path(func, v, func_name) for v in vars_]
    top = min(paths, key=len)
    bottom = max(paths, key=len)
    for p, v in zip(paths, vars_):
        if p[: len(top)] != top[: len(top)] or bottom[: len(p)] != p:
            raise ScheduleError(
                f"cannot reorder: loop {v.name} is not in the same chain of nested loops as "
                f"{top[-1].loop_var.name} and {bottom[-1].loop_var.name}"
            )
    chain = bottom[len(top) - 1 :]
    for k, stmt in enumerate(chain):
        if isinstance(stmt, Block | BlockRealize):
            raise ScheduleError("cannot reorder loops across a block: they must be in the same block scope")
        if not isinstance(stmt, For):
            raise ScheduleError(
                f"cannot reorder: loop {chain[k - 1].loop_var.name} holds a sequence of statements, not a "
                f"single loop (the loops must be perfectly nested)"
            )
        if k + 1 < len(chain) and stmt.body is not chain[k + 1]:
            raise ScheduleError(
                f"cannot reorder: loop {stmt.loop_var.name} has other statements besides loop "
                f"{chain[k + 1].loop_var.name} in its body (the loops must be perfectly nested)"
            )
    chosen = {id(p[-1]) for p in paths}
    it = iter(p[-1] for p in paths)
    new_chain = [next(it) if id(lp) in chosen else lp for lp in chain]
    chain_vars = {lp.loop_var for lp in chain}
    for k, lp in enumerate(new_chain):
        outer = {x.loop_var for x in new_chain[:k]}
        dep = chain_vars - outer - {lp.loop_var}
        if uses_any_var(lp.extent, dep) or uses_any_var(lp.min, dep):
            raise ScheduleError(
                f"cannot reorder: the range of loop {lp.loop_var.name} depends on a loop "
                f"that would move inside it"
            )
        if lp.kind == ForKind.THREAD_BINDING and lp is not chain[k]:
            raise ScheduleError(f"cannot reorder loop {lp.loop_var.name}: it is bound to a thread axis")
    _check_affine_reductions(chain, chain_vars)
    body = chain[-1].body
    for lp in reversed(new_chain):
        body = lp.replace(body=body)
    return func.with_body(replace_stmts(func.body, {chain[0]: body}))


def _check_affine_reductions(chain: list, chain_vars: set) -> None:
    """Reordering loops under a reduction block is only safe when its bindings are affine.

    A reduction's init runs when its reduce iters are at their minimum; with a non-affine
    binding (e.g. `(o * 8 + i) // 6` after a fuse and a non-aligned split) a new loop order
    can visit an element's later reduce steps before that first one.
    """
    from ..analysis.block_access import to_affine
    from ..stmt import IterType
    from .state import scope_realizes

    for realize in scope_realizes(chain[0]):
        block = realize.block
        if not any(iv.iter_type == IterType.COMM_REDUCE for iv in block.iter_vars):
            continue
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if uses_any_var(value, chain_vars) and to_affine(value) is None:
                raise ScheduleError(
                    f"cannot reorder: reduction block {block.name_hint!r} binds {iv.var.name} to a "
                    f"non-affine expression of the loops (after fuse/split); reordering could run its "
                    f"update before its init"
                )
