"""Recognising a reduction block's commutative reducer (for rfactor).

A reduction block updates one buffer (`B[i] = B[i] + x`, with `+`, `*`, `min` or `max`) or a
tuple of buffers at the same indices (argmax / argmin: an index buffer and a value buffer, both
updated through `T.Select`). Let-bound values (`v: T.float32 = B[i] + x; B[i] = v`) are read
through. A tuple update must be written as TVM writes it: one `LetStmt` per buffer computing the
new values from the old ones, then one store per buffer of its let variable; the init stores the
reducer's identity into each buffer.

`match_reducer(block, what)` returns a `Reducer`: the buffers, their common indices, the init
values, the operands (`x` above: what is folded in, reading none of the buffers) and `combine`,
which rebuilds the update for new accumulators and operands.

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
...     for i, k in T.grid(4, 8):
...         with T.block("B"):
...             vi, vk = T.axis.remap("SR", [i, k])
...             with T.init():
...                 B[vi] = 0.0
...             v: T.float32 = B[vi] + A[vi, vk]
...             B[vi] = v
... ''')
>>> from graphc.tir.schedule.state import find_block_path
>>> r = match_reducer(find_block_path(f.body, "B")[-1].block, "rfactor")
>>> [b.name for b in r.buffers], r.name
(['B'], 'sum')
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from ...errors import ScheduleError
from ..analysis.block_access import same_expr
from ..buffer import Buffer
from ..expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    Add,
    And,
    BufferLoad,
    FloatImm,
    IntImm,
    Max,
    Min,
    Mul,
    Or,
    PrimExpr,
    Select,
    Var,
)
from ..functor import post_order_visit, substitute
from ..stmt import BufferStore, LetStmt, SeqStmt


@dataclasses.dataclass
class Reducer:
    """A recognised reducer: `buffers[k][indices] = combine(olds, operands)[k]` for each k."""

    name: str
    buffers: list
    indices: tuple
    inits: list
    operands: list
    combine: Callable  # (accumulators: list[PrimExpr], operands: list[PrimExpr]) -> list[PrimExpr]


def _stores(stmt) -> list | None:
    if isinstance(stmt, BufferStore):
        return [stmt]
    if isinstance(stmt, SeqStmt) and all(isinstance(s, BufferStore) for s in stmt.seq):
        return list(stmt.seq)
    return None


def _is_float_inf(v, sign: int) -> bool:
    return isinstance(v, float) and math.isinf(v) and (v > 0) == (sign > 0)


def _is_min(init, dtype) -> bool:
    from ..op import min_value

    return isinstance(init, IntImm | FloatImm) and (
        init.value == min_value(dtype).value or _is_float_inf(init.value, -1)
    )


def _is_max(init, dtype) -> bool:
    from ..op import max_value

    return isinstance(init, IntImm | FloatImm) and (
        init.value == max_value(dtype).value or _is_float_inf(init.value, 1)
    )


def _is_const(init, value) -> bool:
    return isinstance(init, IntImm | FloatImm) and init.value == value


# single-buffer reducers: (name, node type, identity test)
_SINGLE = {
    Add: ("sum", lambda init, dt: _is_const(init, 0)),
    Mul: ("product", lambda init, dt: _is_const(init, 1)),
    Max: ("max", _is_min),
    Min: ("min", _is_max),
}


def _arg_patterns(x0, x1, y0, y1):
    """TVM's two-buffer reducers over (index, value) accumulators x and operands y."""
    vdt = x1.dtype

    def pick(cond):
        return [Select(cond, x0, y0, x0.dtype), Select(cond, x1, y1, vdt)]

    def tie(first):  # the smaller index wins a tie (topi's argmax / argmin)
        return [
            Select(Or(first, And(EQ(x1, y1), LT(x0, y0))), x0, y0, x0.dtype),
            Select(first, x1, y1, vdt),
        ]

    return [
        ("argmax", pick(GE(x1, y1)), _is_min),
        ("argmin", pick(LE(x1, y1)), _is_max),
        ("argmax", tie(GT(x1, y1)), _is_min),
        ("argmin", tie(LT(x1, y1)), _is_max),
    ]


def _unify(t, e, slots: dict, bound: dict, self_load) -> bool:
    """Whether expression `e` is template `t` with its slot Vars filled: an accumulator slot
    matches the load of its buffer at the stored indices, an operand slot any expression (the
    same one at each use)."""
    if isinstance(t, Var) and t in slots:
        kind, k = slots[t]
        if kind == "x":
            return self_load(e, k)
        if t in bound:
            return same_expr(bound[t], e)
        bound[t] = e
        return True
    if type(t) is not type(e):
        return False
    if isinstance(t, Var | Buffer):
        return t is e
    for f in dataclasses.fields(t):
        a, b = getattr(t, f.name), getattr(e, f.name)
        if isinstance(a, PrimExpr):
            if not _unify(a, b, slots, bound, self_load):
                return False
        elif isinstance(a, tuple):
            if len(a) != len(b) or not all(
                _unify(x, y, slots, bound, self_load) if isinstance(x, PrimExpr) else same_expr(x, y)
                for x, y in zip(a, b)
            ):
                return False
        elif not same_expr(a, b):
            return False
    return True


def _reads(expr, buffers) -> bool:
    found: list = []
    post_order_visit(expr, lambda e: found.append(e) if getattr(e, "buffer", None) in buffers else None)
    return bool(found)


def _update_stores(block, what: str) -> list:
    """The block's update as stores with let-bound values read through."""
    body, lets = block.body, []
    while isinstance(body, LetStmt):
        lets.append(body)
        body = body.body
    stores = _stores(body)
    if stores is None:
        raise ScheduleError(
            f"cannot {what}: the block body must be buffer stores (after optional let bindings), "
            f"found {type(body).__name__}"
        )
    if len(stores) > 1:
        # TVM's form for a tuple reducer: one let per buffer, then each buffer stores its let var
        let_vars = [lt.var for lt in lets]
        each = all(isinstance(s.value, Var) and s.value in let_vars for s in stores)
        if len(lets) != len(stores) or not each or len({id(s.value) for s in stores}) != len(stores):
            raise ScheduleError(
                f"cannot {what}: a reduction over {len(stores)} buffers must bind each new value with a let "
                f"({len(lets)} let(s) found) and store each buffer's let variable"
            )
    vmap: dict = {}
    for lt in lets:
        vmap[lt.var] = substitute(lt.value, vmap)
    return [s.replace(value=substitute(s.value, vmap)) if vmap else s for s in stores]


def match_reducer(block, what: str) -> Reducer:
    """The block's reducer, or ScheduleError naming what is not one."""
    init_stores = _stores(block.init) if block.init is not None else None
    if init_stores is None:
        raise ScheduleError(
            f"cannot {what}: the block's init must be buffer stores (B[...] = identity), found "
            f"{type(block.init).__name__}"
        )
    stores = _update_stores(block, what)
    if len(stores) != len(init_stores):
        raise ScheduleError(
            f"cannot {what}: the init writes {len(init_stores)} value(s) but the update {len(stores)}"
        )
    bufs = [s.buffer for s in stores]
    if len({id(b) for b in bufs}) != len(bufs):
        raise ScheduleError(f"cannot {what}: the update writes buffer {bufs[0].name} twice")
    inits = {}
    for s in init_stores:
        if id(s.buffer) in inits or s.buffer not in bufs:
            raise ScheduleError(
                f"cannot {what}: the init stores to {s.buffer.name}, which is not one to one with the "
                f"buffers the update writes ({', '.join(b.name for b in bufs)})"
            )
        inits[id(s.buffer)] = s
    indices = stores[0].indices
    for s in stores + init_stores:
        if not _same_indices(s.indices, indices):
            raise ScheduleError(
                f"cannot {what}: {s.buffer.name} is written at other indices than {bufs[0].name}; a "
                f"reducer's buffers are written at the same place"
            )
    if any(not _same_indices(b.shape, bufs[0].shape) for b in bufs):
        raise ScheduleError(
            f"cannot {what}: the reduction buffers {', '.join(b.name for b in bufs)} differ in shape"
        )
    init_values = [inits[id(b)].value for b in bufs]

    def self_load(e, k):
        return isinstance(e, BufferLoad) and e.buffer is bufs[k] and _same_indices(e.indices, indices)

    if len(stores) == 1:
        return _match_single(stores[0], init_values[0], indices, self_load, what)
    if len(stores) == 2:
        for order in ((0, 1), (1, 0)):
            found = _match_pair(stores, init_values, indices, order, self_load)
            if found is not None:
                return found
    raise ScheduleError(
        f"cannot {what}: the update of {', '.join(b.name for b in bufs)} is not a recognised commutative "
        f"reducer (sum, product, min, max, argmax, argmin with the identity as init)"
    )


def _match_single(store, init, indices, self_load, what) -> Reducer:
    value = store.value
    if type(value) not in _SINGLE:
        raise ScheduleError(f"cannot {what}: the update must combine with +, *, max or min")
    if self_load(value.a, 0):
        operand = value.b
    elif self_load(value.b, 0):
        operand = value.a
    else:
        raise ScheduleError(
            f"cannot {what}: the update does not read {store.buffer.name} at the stored indices"
        )
    name, identity_ok = _SINGLE[type(value)]
    if not identity_ok(init, store.buffer.dtype):
        op = {"sum": "+", "product": "*", "max": "max", "min": "min"}[name]
        raise ScheduleError(
            f"cannot {what}: the reduction is not a recognised commutative reducer: the init value "
            f"{init} is not the identity of {op}"
        )
    if _reads(operand, [store.buffer]):
        raise ScheduleError(f"cannot {what}: the reduced value reads {store.buffer.name} again")
    kind = type(value)

    def combine(acc, ops):
        from ..expr import max_value_of, min_value_of

        a, b = acc[0], ops[0]
        if kind is Max:
            return [max_value_of(a, b)]
        if kind is Min:
            return [min_value_of(a, b)]
        return [a * b if kind is Mul else a + b]

    return Reducer(name, [store.buffer], indices, [init], [operand], combine)


def _match_pair(stores, inits, indices, order, self_load) -> Reducer | None:
    i0, i1 = order  # which store holds the index and which the value
    bufs = [stores[i0].buffer, stores[i1].buffer]
    x0, x1 = Var("x0", bufs[0].dtype), Var("x1", bufs[1].dtype)
    y0, y1 = Var("y0", bufs[0].dtype), Var("y1", bufs[1].dtype)
    slots = {x0: ("x", i0), x1: ("x", i1), y0: ("y", 0), y1: ("y", 1)}
    for name, template, identity_ok in _arg_patterns(x0, x1, y0, y1):
        bound: dict = {}
        if not (_unify(template[0], stores[i0].value, slots, bound, self_load)
                and _unify(template[1], stores[i1].value, slots, bound, self_load)):  # fmt: skip
            continue
        if y0 not in bound or y1 not in bound or _reads(bound[y0], bufs) or _reads(bound[y1], bufs):
            continue
        if not (_is_const(inits[i0], -1) and identity_ok(inits[i1], bufs[1].dtype)):
            continue

        def combine(acc, ops, template=template):  # accumulators, operands and result in store order
            vmap = {x0: acc[i0], x1: acc[i1], y0: ops[i0], y1: ops[i1]}
            out = [None, None]
            out[i0], out[i1] = substitute(template[0], vmap), substitute(template[1], vmap)
            return out

        operands = [None, None]
        operands[i0], operands[i1] = bound[y0], bound[y1]
        return Reducer(name, [s.buffer for s in stores], indices, list(inits), operands, combine)
    return None


def _same_indices(a, b) -> bool:
    return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b))
