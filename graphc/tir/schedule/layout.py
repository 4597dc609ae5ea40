"""transform_layout: store a buffer under new indices given by an index map.

`transform_layout(block, buffer, lambda i, j: (i // 16, j, i % 16))` gives the buffer the
shape the map's outputs span over the old shape (bounds from the Analyzer: `i // 16` over
[0, 64) spans [0, 4)) and rewrites every access to it in the function: loads, stores and
the reads/writes regions of every block. `buffer` is ("read" | "write", index) of `block`,
a buffer name, or a Buffer. Intermediate buffers (alloc_buffer) and function parameters
may be transformed; for a parameter, as in TVM, the function's signature changes: callers
must pass the array in the new layout (`A.reshape(4, 16, 64).transpose(0, 2, 1)` for the
map above on a (64, 64) A).

The map must be a bijection from the old index space onto the new one:

- maps built from `v`, `v // c` and `v % c` (each output one input var) are inverted
  symbolically: `v` must be recoverable (`v // c` needs a matching `v % c`);
- any other map is checked exhaustively when the buffer has at most 65536 elements, and
  refused otherwise (ScheduleError: cannot prove it bijective).

A map that is injective but not onto (`i // 16, i % 16` on 20 elements spans 2 x 16 = 32)
needs `pad_value`: then a block `<buffer>_pad` is added after the last block of the root
scope that writes the buffer, filling the padding (the new positions no old index maps to)
with `pad_value`. (TVM instead folds the padding into the producer; the values are the same.)
A parameter that no block writes is padded by the caller.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((32, 8), "float32"), B: T.Buffer((32, 8), "float32")):
...     for i, j in T.grid(32, 8):
...         with T.block("B"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             B[vi, vj] = A[vi, vj] * 2.0
... ''')
>>> sch = tir.Schedule(f)
>>> sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i // 16, j, i % 16))
>>> [int(d) for d in sch.mod["main"].buffer_map[sch.mod["main"].params[1]].shape]
[2, 8, 16]
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.var_use import used_vars, uses_var
from ..arith.evaluate import evaluate
from ..expr import FloorDiv, FloorMod, IntImm, PrimExpr, Range, Var, const, convert, logical_or
from ..functor import StmtExprMutator, substitute
from ..stmt import Block, BlockRealize, BufferRegion, For, ForKind, IterType, IterVar, SeqStmt
from .blocks import access, write_buffers
from .bounds import relax_in, shape_analyzer
from .state import find_block_path, replace_stmts, scope_realizes, walk

EXHAUSTIVE_LIMIT = 1 << 16


def resolve_buffer(func, block_name: str, buffer, what: str):
    """The Buffer named by ("read" | "write", index), a name, or a Buffer."""
    if isinstance(buffer, tuple) and len(buffer) == 2 and buffer[0] in ("read", "write"):
        realize = find_block_path(func.body, block_name)[-1]
        regions = access(realize.block)[0 if buffer[0] == "read" else 1]
        if not isinstance(buffer[1], int) or not 0 <= buffer[1] < len(regions):
            raise ScheduleError(
                f"cannot {what}: block {block_name!r} has {len(regions)} {buffer[0]} buffer(s), "
                f"index {buffer[1]!r} is out of range"
            )
        return regions[buffer[1]].buffer
    candidates = list(func.buffer_map.values())
    for stmt in walk(func.body):
        if isinstance(stmt, Block):
            candidates.extend(stmt.alloc_buffers)
    if isinstance(buffer, str):
        found = [b for b in candidates if b.name == buffer]
        if len(found) != 1:
            raise ScheduleError(f"cannot {what}: {len(found)} buffers are named {buffer!r}")
        return found[0]
    if any(b is buffer for b in candidates):
        return buffer
    raise ScheduleError(f"cannot {what}: expected ('read'|'write', index), a buffer name or a Buffer")


def apply_map(index_map, indices: list, what: str) -> list:
    out = index_map(*indices)
    if not isinstance(out, list | tuple):
        out = (out,)
    out = [convert(e) if not isinstance(e, PrimExpr) else e for e in out]
    if not out:
        raise ScheduleError(f"cannot {what}: the index map returned no indices")
    return out


def _form(e, olds: list):
    if isinstance(e, Var) and e in olds:
        return ("id", e, 1)
    if (
        isinstance(e, FloorDiv | FloorMod)
        and isinstance(e.a, Var)
        and e.a in olds
        and isinstance(e.b, IntImm)
    ):
        return ("div" if isinstance(e, FloorDiv) else "mod", e.a, e.b.value)
    return None


def structural_inverse(olds: list, outs: list, news: list, what: str):
    """Old index -> expression over the new indices, or None when the map is of another form.

    Raises ScheduleError when the form shows the map cannot be injective.
    """
    forms = [_form(e, olds) for e in outs]
    if any(f is None for f in forms):
        return None
    inverse = {}
    for v in olds:
        mine = {kind: (k, c) for k, (kind, var, c) in enumerate(forms) if var is v}
        if set(mine) == {"id"} and sum(1 for f in forms if f[1] is v) == 1:
            inverse[v] = news[mine["id"][0]]
        elif set(mine) == {"div", "mod"} and mine["div"][1] == mine["mod"][1]:
            inverse[v] = news[mine["div"][0]] * mine["div"][1] + news[mine["mod"][0]]
        else:
            return ("not injective", v)
    return inverse


def _exhaustive(olds, outs, shape, new_shape, what):
    """(injective, onto) by evaluating the map at every index (small constant shapes only)."""
    import itertools

    if not all(isinstance(d, IntImm) for d in list(shape) + list(new_shape)):
        return None
    total = 1
    for d in shape:
        total *= d.value
    if total > EXHAUSTIVE_LIMIT:
        return None
    seen: dict = {}
    for point in itertools.product(*(range(d.value) for d in shape)):
        env = dict(zip(olds, point))
        image = tuple(evaluate(e, env) for e in outs)
        if image in seen:
            raise ScheduleError(
                f"cannot {what}: the index map is not bijective, it sends both {seen[image]} and {point} "
                f"to {image}"
            )
        seen[image] = point
    new_total = 1
    for d in new_shape:
        new_total *= d.value
    return True, new_total == total


class _Rewriter(StmtExprMutator):
    def __init__(self, old, new, index_map, ana):
        self.old, self.new, self.map, self.ana = old, new, index_map, ana

    def visit_buffer(self, buffer):
        return self.new if buffer is self.old else buffer

    def _indices(self, indices):
        return tuple(self.ana.simplify(e) for e in apply_map(self.map, list(indices), "transform_layout"))

    def visit_BufferLoad(self, op):
        out = super().visit_BufferLoad(op)
        return out.replace(indices=self._indices(out.indices)) if op.buffer is self.old else out

    def visit_BufferStore(self, op):
        out = super().visit_BufferStore(op)
        return out.replace(indices=self._indices(out.indices)) if op.buffer is self.old else out

    def visit_buffer_region(self, region):
        if region.buffer is not self.old:
            return super().visit_buffer_region(region)
        temps = [Var(f"t{k}", r.min.dtype) for k, r in enumerate(region.region)]
        points = [r.min if _is_one(r.extent) else r.min + t for r, t in zip(region.region, temps)]
        dom = {t: Range(const(0, r.min.dtype), r.extent) for r, t in zip(region.region, temps)
               if not _is_one(r.extent)}  # fmt: skip
        ranges = []
        for e in apply_map(self.map, points, "transform_layout"):
            lo, hi = relax_in(self.ana, e, dom) if dom else (e, e)
            lo, hi = self.ana.simplify(lo), self.ana.simplify(hi)
            ranges.append(Range(lo, self.ana.simplify(hi - lo + 1)))
        return BufferRegion(self.new, tuple(ranges))

    def visit_Block(self, op):
        out = super().visit_Block(op)
        if any(b is self.old for b in out.alloc_buffers):
            out = out.replace(
                alloc_buffers=tuple(self.new if b is self.old else b for b in out.alloc_buffers)
            )
        return out


def _is_one(e) -> bool:
    return isinstance(e, IntImm) and e.value == 1


def _domains(func) -> dict:
    dom = {}
    for stmt in walk(func.body):
        if isinstance(stmt, Block):
            dom.update({iv.var: iv.dom for iv in stmt.iter_vars})
        elif isinstance(stmt, For):
            dom[stmt.loop_var] = Range(stmt.min, stmt.extent)
    return dom


def transform_layout(
    func, func_name: str, block_name: str, buffer, index_map, pad_value=None, assume_injective=False
):
    """Store `buffer` under the indices `index_map` gives (see the module docstring). With
    `assume_injective` (TVM's `assume_injective_transform`) and no `pad_value`, a map that leaves
    positions unused is taken as is: the caller promises nothing reads them."""
    what = "transform_layout"
    buf = resolve_buffer(func, block_name, buffer, what)
    what = f"transform the layout of {buf.name}"
    for stmt in walk(func.body):
        if isinstance(stmt, Block) and any(
            m.source.buffer is buf or m.buffer is buf for m in stmt.match_buffers
        ):
            raise ScheduleError(f"cannot {what}: it is matched by block {stmt.name_hint!r} (match_buffer)")
    pad_value = _check_pad_value(pad_value, buf, what)
    olds = [Var(f"i{k}", d.dtype) for k, d in enumerate(buf.shape)]
    try:
        outs = apply_map(index_map, olds, what)
    except TypeError as err:
        raise ScheduleError(f"cannot {what}: the index map must take {len(olds)} indices ({err})") from None
    ana = shape_analyzer(func, {v: Range(const(0, d.dtype), d) for v, d in zip(olds, buf.shape)})
    new_shape = []
    for k, e in enumerate(outs):
        rng = relax_in(ana, e, {v: Range(const(0, d.dtype), d) for v, d in zip(olds, buf.shape)})
        if rng is None or not ana.can_prove(rng[0] == 0):
            raise ScheduleError(
                f"cannot {what}: output {k} of the index map ({e}) must range from 0 over the buffer's "
                f"indices; it does not (or cannot be bounded)"
            )
        new_shape.append(ana.simplify(rng[1] + 1))
    news = [Var(f"n{k}", d.dtype) for k, d in enumerate(new_shape)]
    inverse = structural_inverse(olds, outs, news, what)
    onto, pad_cond = _check_bijective(ana, buf, olds, outs, news, new_shape, inverse, what)
    if not onto and pad_value is None and not assume_injective:
        raise ScheduleError(
            f"cannot {what}: the index map is not bijective, it maps shape {_shape(buf.shape)} into "
            f"{_shape(new_shape)} leaving positions no element maps to; pass pad_value to fill them"
        )
    new_buf = buf.replace(shape=tuple(new_shape), strides=())
    if any(b is buf for b in func.buffer_map.values()):
        _check_deducible(func, buf, new_buf, what)
    ana_all = shape_analyzer(func, _domains(func))
    body = _Rewriter(buf, new_buf, index_map, ana_all).visit_stmt(func.body)
    buffer_map = {h: (new_buf if b is buf else b) for h, b in func.buffer_map.items()}
    new_func = func.replace(body=body, buffer_map=buffer_map)
    if not onto and pad_value is not None:
        new_func = _add_pad_block(new_func, new_buf, news, pad_cond, pad_value, what)
    return new_func


def _check_deducible(func, buf, new_buf, what: str) -> None:
    """Every size variable must still be some parameter's whole dimension, or no call could bind it."""
    params = [new_buf if b is buf else b for b in func.buffer_map.values()]
    bare = {id(d) for b in params for d in b.shape if isinstance(d, Var)}
    for d in buf.shape:
        for v in used_vars(d):
            if id(v) not in bare:
                raise ScheduleError(
                    f"cannot {what}: size variable {v.name} would no longer be a whole dimension of any "
                    f"parameter, so calls could not bind it"
                )


def _shape(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _check_bijective(ana, buf, olds, outs, news, new_shape, inverse, what):
    """(onto, padding condition over `news`); raises when the map is not injective."""
    if isinstance(inverse, tuple):
        raise ScheduleError(
            f"cannot {what}: the index map is not bijective: index {inverse[1].name} cannot be recovered "
            f"from its outputs {', '.join(str(e) for e in outs)} (several elements would share a place)"
        )
    if inverse is None:
        res = _exhaustive(olds, outs, buf.shape, new_shape, what)
        if res is None:
            raise ScheduleError(
                f"cannot {what}: cannot prove the index map bijective (use v, v // c and v % c outputs, "
                f"or a buffer of at most {EXHAUSTIVE_LIMIT} constant-shaped elements)"
            )
        if not res[1]:
            raise ScheduleError(
                f"cannot {what}: the index map is injective but not onto, and padding needs a map built "
                f"from v, v // c and v % c"
            )
        return True, None
    conds = []
    for v, d in zip(olds, buf.shape):
        rebuilt = inverse[v]
        if isinstance(rebuilt, Var):
            continue
        ext = 1
        for n in news:
            if uses_var(rebuilt, n):
                ext = ext * new_shape[news.index(n)]
        if not ana.can_prove(ext == d):
            conds.append(rebuilt >= d)
    if not conds:
        return True, None
    cond = conds[0]
    for c in conds[1:]:
        cond = logical_or(cond, c)
    return False, cond


def _check_pad_value(pad_value, buf, what: str):
    """`pad_value` as an expression of the buffer's dtype, refusing a mismatch as TVM does: a
    Python int fills an integer buffer, a Python float a float buffer; an expression must have
    the buffer's dtype exactly (`IntImm("int8", 0)` cannot pad an int32 buffer)."""
    if pad_value is None:
        return None
    is_float = buf.dtype.startswith(("float", "bfloat"))
    if isinstance(pad_value, PrimExpr):
        if pad_value.dtype != buf.dtype:
            raise ScheduleError(
                f"cannot {what}: pad_value {pad_value} has dtype {pad_value.dtype}; the buffer is {buf.dtype}"
            )
        return pad_value
    if (
        isinstance(pad_value, bool)
        or not isinstance(pad_value, int | float)
        or (isinstance(pad_value, float) and not is_float)
        or (isinstance(pad_value, int) and is_float)
    ):
        raise ScheduleError(
            f"cannot {what}: pad_value {pad_value!r} ({type(pad_value).__name__}) does not match the "
            f"buffer's dtype {buf.dtype}"
        )
    return convert(pad_value, buf.dtype)


def _add_pad_block(func, buf, news, cond, pad_value, what):
    root = func.body.block
    writers = [k for k, s in enumerate(_seq(root.body)) if any(
        buf in write_buffers(r.block) for r in scope_realizes(s))]  # fmt: skip
    if not writers:
        return func
    ivs = [IterVar(Range(const(0, d.dtype), d), Var(f"v{k}", d.dtype), IterType.DATA_PAR)
           for k, d in enumerate(buf.shape)]  # fmt: skip
    idx = [iv.var for iv in ivs]
    loops = [Var(f"ax{k}", d.dtype) for k, d in enumerate(buf.shape)]
    value = convert(pad_value, buf.dtype) if not isinstance(pad_value, PrimExpr) else pad_value
    block = Block(tuple(ivs), (), (BufferRegion.from_point(buf, idx),), f"{buf.name}_pad",
                  buf.vstore(idx, value))  # fmt: skip
    stmt = BlockRealize(tuple(loops), substitute(cond, dict(zip(news, loops))), block)
    for var, d in reversed(list(zip(loops, buf.shape))):
        stmt = For(var, const(0, d.dtype), d, ForKind.SERIAL, stmt)
    stmts = _seq(root.body)
    stmts.insert(writers[-1] + 1, stmt)
    return func.with_body(replace_stmts(func.body, {root: root.replace(body=SeqStmt.flatten(*stmts))}))


def _seq(body) -> list:
    return list(body.seq) if isinstance(body, SeqStmt) else [body]
