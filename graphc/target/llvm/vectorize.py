"""`vectorize_loops`: rewrite `vectorized` For loops into TIR vector code before LLVM codegen.

The loop variable becomes `Ramp(base, 1, lanes)`; expressions that depend on it become
vector expressions (scalars meeting vectors are broadcast), contiguous accesses become
vector loads/stores (others gathers/scatters that the code generator scalarizes), and an
`if` whose condition varies across lanes becomes masked loads and stores. A constant
extent up to the target's natural width (512 bits with AVX-512, 256 with AVX2) becomes one
vector; longer or symbolic extents become a loop over full vectors plus a scalar tail loop.

A body the rewrite cannot express (a nested loop, an allocation, an assertion, a store to
a location the same for every lane, a gather under a mask, ...) leaves the loop as it
was: a serial loop that carries LLVM's vectorize hint.

>>> from graphc import tir
>>> A = tir.decl_buffer((16,), "float32", "A")
>>> i = tir.Var("i")
>>> loop = tir.For(i, tir.const(0), tir.const(16), tir.ForKind.VECTORIZED,
...                tir.BufferStore(A, A[i] * 2.0, (i,)))
>>> store = vectorize_loops(loop, 512)
>>> store.value.dtype, type(store.indices[0]).__name__
('float32x16', 'Ramp')
"""

from __future__ import annotations

from ...ir.dispatch import method_table
from ...ir.dtype import DataType
from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from ...tir.functor import ExprVisitor, StmtMutator, post_order_visit
from ...tir.generic import BINARY_BUILDERS

# intrinsics whose meaning is not elementwise, or that take addresses
_NOT_ELEMENTWISE = frozenset({"tir.address_of", "tir.assume", "tir.tvm_thread_allreduce",
                              "tir.tvm_storage_sync", "tir.call_packed", "tir.tvm_call_packed"})


class _NotVectorizable(Exception):
    """The loop body holds something the rewrite cannot express; keep the loop serial."""


def native_vector_bits(target) -> int:
    """The widest vector register of `target`'s CPU in bits (512, 256 or 128)."""
    from ..target import host_cpu

    cpu, host_features, _ = host_cpu()
    features = {f[1:] for f in host_features} if target.mcpu == cpu else set()
    for f in target.mattr:
        (features.add if f.startswith("+") else features.discard)(f[1:])
    if "avx512f" in features:
        return 512
    if features & {"avx", "avx2"} or not features:
        return 256  # unknown CPUs: LLVM splits wider vectors when the registers are narrower
    return 128


def vectorize_loops(stmt, vector_bits: int = 256):
    """`stmt` with each vectorized loop rewritten into vector code where possible."""
    return _LoopRewriter(vector_bits).visit_stmt(stmt)


def natural_lanes(body, vector_bits: int) -> int:
    """Lanes of one register for the widest element type computed on (indices aside)."""
    widest = [8]

    class _Widest(ExprVisitor):
        def visit_BufferLoad(self, op):  # index arithmetic does not count
            widest[0] = max(widest[0], DataType(op.buffer.dtype).bits)

        def visit_expr(self, expr):
            dt = DataType(expr.dtype)
            if (dt.is_float or dt.is_integer) and not dt.is_bool:
                widest[0] = max(widest[0], dt.bits)
            return super().visit_expr(expr)

    def visit(node):
        if isinstance(node, tir_stmt.BufferStore):
            widest[0] = max(widest[0], DataType(node.buffer.dtype).bits)
            _Widest().visit_expr(node.value)

    post_order_visit(body, visit)
    return max(vector_bits // widest[0], 2)


class _LoopRewriter(StmtMutator):
    def __init__(self, vector_bits: int):
        self.vector_bits = vector_bits

    def visit_For(self, op: tir_stmt.For):
        op = super().visit_For(op)  # inner loops first: an outer vectorized loop then sees them
        if op.kind != tir_stmt.ForKind.VECTORIZED:
            return op
        try:
            return self._vectorize(op)
        except _NotVectorizable:
            return op

    def _vectorize(self, op: tir_stmt.For):
        _check_scalar(op.body)
        var, dtype = op.loop_var, op.loop_var.dtype
        start = tir_expr.cast(op.min, dtype)  # ramps carry the loop variable's dtype
        lanes = natural_lanes(op.body, self.vector_bits)
        if isinstance(op.extent, tir_expr.IntImm):
            n = op.extent.value
            if n < 2:
                return op.replace(kind=tir_stmt.ForKind.SERIAL)
            if n <= lanes:
                return _Vectorizer(var, tir_expr.ramp(start, tir_expr.const(1, dtype), n),
                                   n).visit_stmt(op.body)
        chunk = tir_expr.Var(f"{var.name}_vec", dtype)
        base = tir_expr.add(start, tir_expr.mul(chunk, tir_expr.const(lanes, dtype)))
        vector_body = _Vectorizer(var, tir_expr.ramp(base, tir_expr.const(1, dtype), lanes),
                                  lanes).visit_stmt(op.body)
        # truncating division: a negative extent runs neither loop, as the original ran none
        count = tir_expr.truncdiv(tir_expr.cast(op.extent, dtype), tir_expr.const(lanes, dtype))
        main = tir_stmt.For(chunk, tir_expr.const(0, dtype), count, tir_stmt.ForKind.SERIAL, vector_body)
        if isinstance(count, tir_expr.IntImm) and count.value == 1:
            main = _Vectorizer(var, tir_expr.ramp(start, tir_expr.const(1, dtype), lanes),
                               lanes).visit_stmt(op.body)
        done = tir_expr.mul(count, tir_expr.const(lanes, dtype))
        tail_extent = tir_expr.sub(tir_expr.cast(op.extent, dtype), done)
        if isinstance(tail_extent, tir_expr.IntImm) and tail_extent.value == 0:
            return main
        tail = tir_stmt.For(var, tir_expr.add(start, done), tail_extent, tir_stmt.ForKind.SERIAL, op.body)
        return tir_stmt.SeqStmt((main, tail))


def _check_scalar(body) -> None:
    """Bodies that already compute on vectors are left alone (lanes would not compose)."""
    def visit(node):
        if isinstance(node, tir_expr.PrimExpr) and DataType(node.dtype).lanes > 1:
            raise _NotVectorizable

    post_order_visit(body, visit)


def _lanes(expr) -> int:
    return DataType(expr.dtype).lanes


def _vec_dtype(dtype: str, lanes: int) -> str:
    return str(DataType(dtype).element_of().with_lanes(lanes))


def _is_unit_ramp(index) -> bool:
    return isinstance(index, tir_expr.Ramp) and isinstance(index.stride,
                                                           tir_expr.IntImm) and index.stride.value == 1


class _Vectorizer:
    """Rewrites one loop body with `var` standing for `ramp` (a vector of `lanes` indices)."""

    def __init__(self, var, ramp, lanes: int):
        self.lanes = lanes
        self.vmap = {var: ramp}
        self.mask = None  # lanes whose enclosing `if` conditions hold (None: all)

    def widen(self, expr):
        return expr if _lanes(expr) == self.lanes else tir_expr.broadcast(expr, self.lanes)

    # -- expressions -----------------------------------------------------------------------
    def expr(self, e):
        method = _EXPR_RULES[type(e)]
        if method is None:
            raise _NotVectorizable
        return method(self, e)

    def e_Var(self, e):
        return self.vmap.get(e, e)

    def e_IntImm(self, e):
        return e

    e_FloatImm = e_StringImm = e_IntImm

    def e_Cast(self, e):
        v = self.expr(e.value)
        if _lanes(v) == 1:
            return e if v is e.value else tir_expr.cast(v, e.dtype)
        if isinstance(v, tir_expr.Ramp) and DataType(e.dtype).is_integer:  # keep index ramps ramps
            return tir_expr.ramp(tir_expr.cast(v.base, e.dtype), tir_expr.cast(v.stride, e.dtype), v.lanes)
        return tir_expr.Cast(_vec_dtype(e.dtype, self.lanes), v)

    def e_BinaryOp(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if _lanes(a) == 1 and _lanes(b) == 1:
            return e if a is e.a and b is e.b else BINARY_BUILDERS[type(e)](a, b)
        ramp = _ramp_arith(type(e), a, b)
        if ramp is not None:
            return ramp
        return type(e)(self.widen(a), self.widen(b), _vec_dtype(e.dtype, self.lanes))

    def e_CmpOp(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if _lanes(a) == 1 and _lanes(b) == 1:
            return e if a is e.a and b is e.b else type(e)(a, b, "bool")
        return type(e)(self.widen(a), self.widen(b), f"boolx{self.lanes}")

    def _logical(self, e, *operands):
        values = [self.expr(x) for x in operands]
        if all(_lanes(v) == 1 for v in values):
            return e if all(v is x for v, x in zip(values, operands)) else e.replace(
                **dict(zip(("a", "b"), values)))
        return type(e)(*(self.widen(v) for v in values), f"boolx{self.lanes}")

    def e_And(self, e):
        return self._logical(e, e.a, e.b)

    e_Or = e_And

    def e_Not(self, e):
        return self._logical(e, e.a)

    def e_Select(self, e):
        c, t, f = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
        if all(_lanes(v) == 1 for v in (c, t, f)):
            return e.replace(condition=c, true_value=t, false_value=f)
        return tir_expr.Select(self.widen(c), self.widen(t), self.widen(f), _vec_dtype(e.dtype, self.lanes))

    def e_Let(self, e):
        value = self.expr(e.value)
        if _lanes(value) == 1:
            body = self.expr(e.body)
            return tir_expr.Let(e.var, value, body, body.dtype)
        var = tir_expr.Var(e.var.name, value.dtype)
        self.vmap[e.var] = var
        body = self.widen(self.expr(e.body))
        return tir_expr.Let(var, value, body, body.dtype)

    def e_Call(self, e):
        if e.op in _NOT_ELEMENTWISE or DataType(e.dtype).is_handle:
            raise _NotVectorizable
        if e.op == "tir.if_then_else":
            return self._if_then_else(e)
        args = [self.expr(a) for a in e.args]
        if all(_lanes(a) == 1 for a in args):
            return e if all(a is x for a, x in zip(args, e.args)) else e.replace(args=tuple(args))
        args = [a if isinstance(a, tir_expr.StringImm) else self.widen(a) for a in args]
        return tir_expr.Call(_vec_dtype(e.dtype, self.lanes), e.op, tuple(args))

    def _if_then_else(self, e):
        cond = self.expr(e.args[0])
        if _lanes(cond) == 1:  # one branch is evaluated, as in the scalar loop
            t, f = self.expr(e.args[1]), self.expr(e.args[2])
            if _lanes(t) == 1 and _lanes(f) == 1:
                return e.replace(args=(cond, t, f))
            return tir_expr.Call(_vec_dtype(e.dtype, self.lanes), e.op, (cond, self.widen(t), self.widen(f)))
        # both sides are evaluated per lane: each side's loads are masked by its condition
        t = self.widen(self.under_mask(cond, lambda: self.expr(e.args[1])))
        f = self.widen(self.under_mask(tir_expr.Not(cond, cond.dtype), lambda: self.expr(e.args[2])))
        return tir_expr.Select(cond, t, f, _vec_dtype(e.dtype, self.lanes))

    def under_mask(self, cond, fn):
        saved = self.mask
        self.mask = cond if saved is None else tir_expr.And(saved, cond, cond.dtype)
        try:
            return fn()
        finally:
            self.mask = saved

    def e_BufferLoad(self, e):
        if e.predicate is not None:
            raise _NotVectorizable
        indices = tuple(self.expr(i) for i in e.indices)
        if all(_lanes(i) == 1 for i in indices):
            if self.mask is not None:  # the scalar loop may never have read it
                raise _NotVectorizable
            return e if all(i is x for i, x in zip(indices, e.indices)) else e.replace(indices=indices)
        indices = tuple(self.widen(i) for i in indices)
        predicate = self._access_mask(indices)
        return tir_expr.BufferLoad(e.buffer, indices, _vec_dtype(e.buffer.dtype, self.lanes), predicate)

    def _access_mask(self, indices):
        if self.mask is None:
            return None
        if len(indices) != 1 or not _is_unit_ramp(indices[0]):
            raise _NotVectorizable  # masked gathers and scatters are not supported by codegen
        return self.mask

    # -- statements ------------------------------------------------------------------------
    def visit_stmt(self, s):
        method = _STMT_RULES[type(s)]
        if method is None:
            raise _NotVectorizable  # loops, allocations, assertions, while, blocks
        return method(self, s)

    def s_BufferStore(self, s):
        if s.predicate is not None:
            raise _NotVectorizable
        indices = tuple(self.expr(i) for i in s.indices)
        if all(_lanes(i) == 1 for i in indices):
            raise _NotVectorizable  # every lane writes one location: serial order matters
        indices = tuple(self.widen(i) for i in indices)
        value = self.widen(self.expr(s.value))
        return tir_stmt.BufferStore(s.buffer, value, indices, self._access_mask(indices))

    def s_SeqStmt(self, s):
        return tir_stmt.SeqStmt(tuple(self.visit_stmt(x) for x in s.seq))

    def s_IfThenElse(self, s):
        cond = self.expr(s.condition)
        if _lanes(cond) == 1:
            else_case = None if s.else_case is None else self.visit_stmt(s.else_case)
            return tir_stmt.IfThenElse(cond, self.visit_stmt(s.then_case), else_case)
        then_case = self.under_mask(cond, lambda: self.visit_stmt(s.then_case))
        if s.else_case is None:
            return then_case
        else_case = self.under_mask(tir_expr.Not(cond, cond.dtype), lambda: self.visit_stmt(s.else_case))
        return tir_stmt.SeqStmt((then_case, else_case))

    def s_LetStmt(self, s):
        value = self.expr(s.value)
        if _lanes(value) == 1:
            return s.replace(value=value, body=self.visit_stmt(s.body))
        var = tir_expr.Var(s.var.name, value.dtype)
        self.vmap[s.var] = var
        return tir_stmt.LetStmt(var, value, self.visit_stmt(s.body))

    def s_Evaluate(self, s):
        if isinstance(s.value, tir_expr.IntImm | tir_expr.FloatImm):
            return s
        raise _NotVectorizable

    def s_AttrStmt(self, s):
        return s.replace(body=self.visit_stmt(s.body))

    s_DeclBuffer = s_AttrStmt


_EXPR_RULES = method_table(_Vectorizer, "e_")
_STMT_RULES = method_table(_Vectorizer, "s_")


def _ramp_arith(cls, a, b):
    """Ramp +- scalar, ramp +- ramp and ramp * scalar stay ramps (contiguity stays visible)."""
    ra, rb = isinstance(a, tir_expr.Ramp), isinstance(b, tir_expr.Ramp)
    if cls is tir_expr.Add and (ra or rb):
        if ra and rb:
            return tir_expr.ramp(tir_expr.add(a.base, b.base), tir_expr.add(a.stride, b.stride), a.lanes)
        r, s = (a, b) if ra else (b, a)
        return tir_expr.ramp(tir_expr.add(r.base, s), r.stride, r.lanes) if _lanes(s) == 1 else None
    if cls is tir_expr.Sub and ra and (rb or _lanes(b) == 1):
        if rb:
            return tir_expr.ramp(tir_expr.sub(a.base, b.base), tir_expr.sub(a.stride, b.stride), a.lanes)
        return tir_expr.ramp(tir_expr.sub(a.base, b), a.stride, a.lanes)
    if cls is tir_expr.Mul and ra != rb:
        r, s = (a, b) if ra else (b, a)
        if _lanes(s) == 1:
            return tir_expr.ramp(tir_expr.mul(r.base, s), tir_expr.mul(r.stride, s), r.lanes)
    return None
