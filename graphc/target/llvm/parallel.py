"""Parallel loops: outline the body of a `parallel` For and run it on libgomp's thread pool.

For `for i in T.parallel(n): body` the generator emits

- `i32 @f_parK_body(begin, end, captured...)`: the loop over `[begin, end)`, its buffer
  pointers `noalias` like the kernel's; allocations inside the body are its own stack slots
  or heap buffers, so they are per thread (and made once per thread, not per iteration,
  when their size does not depend on the loop variable);
- `void @f_parK(ptr closure)`: what each OpenMP thread runs. It computes its static chunk
  of the range from `omp_get_thread_num()` / `omp_get_num_threads()` (outside a region
  they are 0 and 1: the whole range) and records a failed assertion in the closure;
- at the loop's place, a closure on the stack (range, error slot, every variable in scope)
  and `GOMP_parallel(@f_parK, closure, graphc_num_threads, 0)`, or a direct call
  `@f_parK(closure)` (serial) when the thread count is 1, the range has fewer than two
  iterations, or another parallel region is running in the process (the
  `graphc_parallel_active` counter of `graphc.runtime.thread_pool`), which keeps several
  Python threads calling kernels from starting cores x callers threads.

Loops known to be small (a constant amount of work under `PARALLEL_MIN_WORK`) and
parallel loops nested in a parallel body stay serial loops.
"""

from __future__ import annotations

from llvmlite import ir

from ...ir.dtype import DataType
from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from ...tir.analysis.var_use import uses_var
from .types import I32, I64, PTR, const_like

# below this many innermost iterations a parallel region's start-up (~microseconds) dominates
PARALLEL_MIN_WORK = 16384
NUM_THREADS_SYMBOL = "graphc_num_threads"  # shared with graphc.runtime.thread_pool
ACTIVE_SYMBOL = "graphc_parallel_active"


def static_work(stmt) -> int | None:
    """Innermost iterations of `stmt` when every loop in it has a constant extent, else None.

    >>> from graphc import tir
    >>> i, j = tir.Var("i"), tir.Var("j")
    >>> A = tir.decl_buffer((64,), "float32", "A")
    >>> inner = tir.For(j, tir.const(0), tir.const(8), tir.ForKind.SERIAL, tir.BufferStore(A, 0.0, (j,)))
    >>> static_work(tir.For(i, tir.const(0), tir.const(8), tir.ForKind.PARALLEL, inner))
    64
    """
    if isinstance(stmt, tir_stmt.For):
        inner = static_work(stmt.body)
        if inner is None or not isinstance(stmt.extent, tir_expr.IntImm):
            return None
        return max(stmt.extent.value, 0) * inner
    if isinstance(stmt, tir_stmt.SeqStmt):
        parts = [static_work(s) for s in stmt.seq]
        return None if any(p is None for p in parts) else max(sum(parts), 1)
    if isinstance(stmt, tir_stmt.IfThenElse):
        parts = [static_work(s) for s in (stmt.then_case, stmt.else_case) if s is not None]
        return None if any(p is None for p in parts) else max(parts)
    if isinstance(stmt, tir_stmt.While):
        return None
    body = getattr(stmt, "body", None)
    return static_work(body) if isinstance(body, tir_stmt.Stmt) else 1


def _chunk_loop(op: tir_stmt.For, bindings: dict, lo: ir.Value, hi: ir.Value):
    """`op` over `[lo, hi)` as TIR, allocations of the loop body hoisted out of the loop.

    An allocation whose size does not depend on the loop variable is made once per thread
    instead of once per iteration: each iteration gets an uninitialized buffer either way.
    """
    dtype = op.loop_var.dtype
    lo_var, hi_var = tir_expr.Var(f"{op.loop_var.name}_lo", dtype), tir_expr.Var(f"{op.loop_var.name}_hi",
                                                                                 dtype)
    bindings[lo_var], bindings[hi_var] = lo, hi
    body, allocs = op.body, []
    while isinstance(body, tir_stmt.Allocate) and not any(
            uses_var(e, op.loop_var) for e in (*body.extents, body.condition)):
        allocs.append(body)
        body = body.body
    stmt = tir_stmt.For(op.loop_var, lo_var, tir_expr.sub(hi_var, lo_var), tir_stmt.ForKind.SERIAL, body)
    for alloc in reversed(allocs):
        stmt = alloc.replace(body=stmt)
    return stmt


class ParallelCodegen:
    """Parallel-loop half of the LLVM code generator (a mixin of `CodeGenLLVM`)."""

    parallel_depth = 0

    def emit_parallel_for(self, op: tir_stmt.For) -> bool:
        """Emit `op` as a parallel region; False (nothing emitted) when it should stay serial."""
        if self.parallel_depth > 0:
            return False  # only the outermost parallel loop of a nest uses the pool
        work = static_work(op)  # not None: every extent, this loop's included, is constant
        if work is not None and (op.extent.value < 2 or work < PARALLEL_MIN_WORK):
            return False
        b, dtype = self.builder, op.loop_var.dtype
        start = self.cast(op.min.dtype, dtype, self.emit_expr(op.min))
        extent = self.cast(op.extent.dtype, dtype, self.emit_expr(op.extent))
        captured = list(self.vars.items())
        worker = self._outline(op, start.type, captured)

        fields = [start.type, start.type, PTR, *(v.type for _, v in captured)]
        closure_t = ir.LiteralStructType(fields)
        with b.goto_block(self.entry_block):
            b.position_at_start(self.entry_block)
            closure = b.alloca(closure_t, name="closure")
            err_slot = b.alloca(I32, name="par_error")
            closure.type = err_slot.type = PTR  # opaque pointers, as elsewhere in the module
        b.store(ir.Constant(I32, 0), err_slot)
        for k, value in enumerate([start, extent, err_slot, *(v for _, v in captured)]):
            b.store(value, b.gep(closure, [ir.Constant(I32, 0), ir.Constant(I32, k)], source_etype=closure_t))

        active = self._runtime_global(ACTIVE_SYMBOL)
        before = b.atomic_rmw("add", active, ir.Constant(I32, 1), "seq_cst")
        nthreads = b.load_atomic(self._runtime_global(NUM_THREADS_SYMBOL), "monotonic", 4, typ=I32)
        compare = b.icmp_unsigned if DataType(dtype).is_uint else b.icmp_signed
        go = b.and_(b.icmp_signed("==", before, ir.Constant(I32, 0)),
                    b.icmp_signed(">", nthreads, ir.Constant(I32, 1)))
        go = b.and_(go, compare(">", extent, const_like(extent.type, 1)))
        with b.if_else(go) as (pool, serial):
            with pool:
                gomp = self.extern_function("GOMP_parallel", ir.VoidType(), [PTR, PTR, I32, I32])
                b.call(gomp, [worker, closure, nthreads, ir.Constant(I32, 0)])
            with serial:
                b.call(worker, [closure])
        b.atomic_rmw("sub", active, ir.Constant(I32, 1), "seq_cst")
        code = b.load(err_slot, typ=I32)
        self._fail_with_code(b.icmp_signed("==", code, ir.Constant(I32, 0)), code)
        return True

    # -- the outlined functions ------------------------------------------------------------------
    def _outline(self, op: tir_stmt.For, index_t: ir.Type, captured: list) -> ir.Function:
        """Emit `@f_parK_body` and `@f_parK` for `op`; return the latter."""
        self.outlined_count = getattr(self, "outlined_count", 0) + 1
        name = f"{self.func_name}_par{self.outlined_count}"
        body_fn = self._outline_body(op, f"{name}_body", index_t, captured)

        fields = [index_t, index_t, PTR, *(v.type for _, v in captured)]
        closure_t = ir.LiteralStructType(fields)
        worker = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR]), name)
        worker.linkage = "internal"
        worker.attributes.add("nounwind")
        b = ir.IRBuilder(worker.append_basic_block("entry"))
        loaded = [b.load(b.gep(worker.args[0], [ir.Constant(I32, 0), ir.Constant(I32, k)],
                               source_etype=closure_t), typ=t) for k, t in enumerate(fields)]
        start, extent, err_slot = loaded[:3]
        query = [self.extern_function(n, I32, []) for n in ("omp_get_thread_num", "omp_get_num_threads")]
        tid, nt = (b.sext(b.call(fn, []), I64) for fn in query)
        n = self._widen(b, extent, op.loop_var.dtype)
        base, rem = b.sdiv(n, nt), b.srem(n, nt)
        # threads below `rem` take one extra iteration: chunk sizes differ by at most one
        first = b.add(b.mul(tid, base), b.select(b.icmp_signed("<", tid, rem), tid, rem))
        count = b.add(base, b.zext(b.icmp_signed("<", tid, rem), I64))
        lo = b.add(start, b.trunc(first, index_t) if index_t != I64 else first)
        hi = b.add(lo, b.trunc(count, index_t) if index_t != I64 else count)
        rc = b.call(body_fn, [lo, hi, *loaded[3:]])
        with b.if_then(b.icmp_signed("!=", rc, ir.Constant(I32, 0))):
            b.atomic_rmw("xchg", err_slot, rc, "monotonic")  # store_atomic needs typed pointers
        b.ret_void()
        return worker

    def _widen(self, b: ir.IRBuilder, value: ir.Value, dtype: str) -> ir.Value:
        if value.type == I64:
            return value
        return (b.zext if DataType(dtype).is_uint else b.sext)(value, I64)

    def _outline_body(self, op: tir_stmt.For, name: str, index_t: ir.Type, captured: list) -> ir.Function:
        """`i32 @name(lo, hi, captured...)`: the loop over [lo, hi), compiled like the kernel."""
        fn_t = ir.FunctionType(I32, [index_t, index_t, *(v.type for _, v in captured)])
        fn = ir.Function(self.module, fn_t, name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        for arg, (var, value) in zip(fn.args[2:], captured):
            if not isinstance(value.type, ir.PointerType):
                continue
            if var in self.noalias_vars:
                arg.add_attribute("noalias")  # buffer parameters and allocations do not overlap
            if var in self.aligned_vars:
                arg.attributes.align = self.aligned_vars[var]
        saved = (self.builder, self.entry_block, self.vars, self.heap_live)
        self.entry_block = fn.append_basic_block("entry")
        body_bb = fn.append_basic_block("body")
        self.builder = ir.IRBuilder(self.entry_block)
        self.builder.branch(body_bb)
        self.builder.position_at_end(body_bb)
        self.vars = {var: arg for arg, (var, _) in zip(fn.args[2:], captured)}
        self.heap_live = []  # the caller frees its own buffers; a failure here frees ours
        self.parallel_depth += 1
        try:
            self.emit_stmt(_chunk_loop(op, self.vars, fn.args[0], fn.args[1]))
            self.builder.ret(ir.Constant(I32, 0))
        finally:
            self.parallel_depth -= 1
            self.builder, self.entry_block, self.vars, self.heap_live = saved
        return fn

    # -- helpers -------------------------------------------------------------------------------
    def _runtime_global(self, name: str) -> ir.GlobalVariable:
        """An `external global i32` the runtime defines (resolved when the Module loads)."""
        g = self.module.globals.get(name)
        if g is None:
            g = ir.GlobalVariable(self.module, I32, name)
            g.linkage = "external"
        return g

    def _fail_with_code(self, ok: ir.Value, code: ir.Value) -> None:
        """Return `code` (after freeing live heap buffers) when `ok` is false."""
        b = self.builder
        ok_bb, fail_bb = b.append_basic_block("par_ok"), b.append_basic_block("par_fail")
        b.cbranch(ok, ok_bb, fail_bb)
        b.position_at_end(fail_bb)
        for ptr in reversed(self.heap_live):
            b.call(self.extern_function("free", ir.VoidType(), [PTR]), [ptr])
        b.ret(code)
        b.position_at_end(ok_bb)
