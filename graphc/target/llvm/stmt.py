"""LLVM code generation for lowered TensorIR statements and buffer accesses (a mixin).

Loops become a header/body/latch with a phi. Parallel loops are outlined and run on
libgomp's thread pool (`parallel.py`); vectorized loops were rewritten into vector code
before emission (`vectorize.py`), and what is left of them, like unrolled loops, carries
`llvm.loop` hints. `Allocate` uses a stack slot in the
entry block when its size is a small constant (so loops never grow the stack) and the
heap (`aligned_alloc`/`free`) otherwise. A failed `AssertStmt` or allocation frees the
live heap buffers and returns a nonzero code whose message the runtime raises.
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import CodegenError
from ...ir.dtype import DataType
from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from .types import I1, I32, I64, PTR, const_like, mem_type

STACK_LIMIT_BYTES = 16 * 1024
ALLOC_ALIGN = 64
_LOOP_HINTS = {
    tir_stmt.ForKind.VECTORIZED: ("llvm.loop.vectorize.enable", True),
    tir_stmt.ForKind.UNROLLED: ("llvm.loop.unroll.full", None),
}


class StmtCodegen:
    """Statement half of the LLVM code generator."""

    def emit_stmt(self, stmt) -> None:
        method = self._visitors[type(stmt)]
        if method is None:
            raise CodegenError(f"{self.func_name}: LLVM codegen cannot translate {type(stmt).__name__}; "
                               "run graphc.lower first (blocks must be lowered)")
        method(self, stmt)

    # -- buffer access ----------------------------------------------------------------------
    def buffer_base(self, buffer, indices):
        """(base pointer, flat element index expression) of `buffer[indices]`."""
        try:
            base = self.vars[buffer.data]
        except KeyError:
            raise CodegenError(f"{self.func_name}: buffer {buffer.name} is used outside the "
                               "allocation or parameter that defines its data") from None
        if len(indices) == 1 and len(buffer.shape) <= 1:
            index = indices[0]
            off = buffer.elem_offset
            if off is not None and not (isinstance(off, tir_expr.IntImm) and off.value == 0):
                if isinstance(index, tir_expr.Ramp):  # stay a ramp: contiguous accesses stay vector loads
                    index = tir_expr.ramp(index.base + off, index.stride, index.lanes)
                else:
                    index = index + off
        else:
            index = buffer.offset_of(indices)
        return base, index

    def _contiguous_ramp(self, index) -> bool:
        return isinstance(index, tir_expr.Ramp) and isinstance(index.stride,
                                                               tir_expr.IntImm) and index.stride.value == 1

    def load(self, buffer, indices, dtype: str, predicate=None) -> ir.Value:
        base, index = self.buffer_base(buffer, indices)
        b, scalar = self.builder, str(DataType(buffer.dtype).element_of())
        mt, align, lanes = mem_type(scalar), DataType(scalar).itemsize, DataType(dtype).lanes
        if lanes == 1:
            value = b.load(b.gep(base, [self.index_i64(index)], source_etype=mt), typ=mt, align=align)
        elif self._contiguous_ramp(index):
            ptr = b.gep(base, [self.index_i64(index.base)], source_etype=mt)
            vec_t = ir.VectorType(mt, lanes)
            if predicate is not None:
                mask = self.to_bool_i1(self.emit_expr(predicate))
                fn = self.extern_function(f"llvm.masked.load.v{lanes}{_suffix(mt)}.p0", vec_t,
                                          [PTR, I32, mask.type, vec_t])
                value = b.call(fn, [ptr, ir.Constant(I32, align), mask, ir.Constant(vec_t, None)])
            else:
                value = b.load(ptr, typ=vec_t, align=align)
        else:
            if predicate is not None:
                raise CodegenError(f"{self.func_name}: predicated gather from {buffer.name} "
                                   "is not supported; use a contiguous ramp index")
            idx = self.index_i64(index)
            value = ir.Constant(ir.VectorType(mt, lanes), ir.Undefined)
            for i in range(lanes):
                lane = b.extract_element(idx, ir.Constant(I32, i))
                elem = b.load(b.gep(base, [lane], source_etype=mt), typ=mt, align=align)
                value = b.insert_element(value, elem, ir.Constant(I32, i))
        if DataType(scalar).is_bool:
            value = b.icmp_unsigned("!=", value, const_like(value.type, 0))
        return value

    def visit_BufferStore(self, op: tir_stmt.BufferStore) -> None:
        base, index = self.buffer_base(op.buffer, op.indices)
        b, scalar = self.builder, str(DataType(op.buffer.dtype).element_of())
        mt, align = mem_type(scalar), DataType(scalar).itemsize
        value = self.emit_expr(op.value)
        lanes = DataType(op.value.dtype).lanes
        index_lanes = DataType(index.dtype).lanes
        if index_lanes > 1 and lanes == 1:
            value, lanes = self.cast(op.value.dtype, f"{op.value.dtype}x{index_lanes}", value), index_lanes
        if DataType(scalar).is_bool:
            value = b.zext(value, mt if lanes == 1 else ir.VectorType(mt, lanes))
        if lanes == 1:
            b.store(value, b.gep(base, [self.index_i64(index)], source_etype=mt), align=align)
        elif self._contiguous_ramp(index):
            ptr = b.gep(base, [self.index_i64(index.base)], source_etype=mt)
            if op.predicate is not None:
                mask = self.to_bool_i1(self.emit_expr(op.predicate))
                fn = self.extern_function(f"llvm.masked.store.v{lanes}{_suffix(mt)}.p0", ir.VoidType(),
                                          [value.type, PTR, I32, mask.type])
                b.call(fn, [value, ptr, ir.Constant(I32, align), mask])
            else:
                b.store(value, ptr, align=align)
        else:
            if op.predicate is not None:
                raise CodegenError(f"{self.func_name}: predicated scatter to {op.buffer.name} "
                                   "is not supported; use a contiguous ramp index")
            idx = self.index_i64(index)
            for i in range(lanes):
                lane = b.extract_element(idx, ir.Constant(I32, i))
                elem = b.extract_element(value, ir.Constant(I32, i))
                b.store(elem, b.gep(base, [lane], source_etype=mt), align=align)

    # -- control flow -----------------------------------------------------------------------
    def visit_SeqStmt(self, op: tir_stmt.SeqStmt) -> None:
        for s in op.seq:
            self.emit_stmt(s)

    def visit_Evaluate(self, op: tir_stmt.Evaluate) -> None:
        if not isinstance(op.value, tir_expr.IntImm | tir_expr.FloatImm):
            self.emit_expr(op.value)

    def visit_AttrStmt(self, op: tir_stmt.AttrStmt) -> None:
        self.emit_stmt(op.body)

    def visit_DeclBuffer(self, op: tir_stmt.DeclBuffer) -> None:
        self.emit_stmt(op.body)

    def visit_LetStmt(self, op: tir_stmt.LetStmt) -> None:
        self.vars[op.var] = self.emit_expr(op.value)
        self.emit_stmt(op.body)
        del self.vars[op.var]

    def visit_IfThenElse(self, op: tir_stmt.IfThenElse) -> None:
        b = self.builder
        cond = self.to_bool_i1(self.emit_expr(op.condition))
        then_bb = b.append_basic_block("if_then")
        else_bb = b.append_basic_block("if_else") if op.else_case is not None else None
        end_bb = b.append_basic_block("if_end")
        b.cbranch(cond, then_bb, else_bb or end_bb)
        b.position_at_end(then_bb)
        self.emit_stmt(op.then_case)
        b.branch(end_bb)
        if else_bb is not None:
            b.position_at_end(else_bb)
            self.emit_stmt(op.else_case)
            b.branch(end_bb)
        b.position_at_end(end_bb)

    def visit_For(self, op: tir_stmt.For) -> None:
        if op.kind == tir_stmt.ForKind.THREAD_BINDING:
            raise CodegenError(f"{self.func_name}: loop {op.loop_var.name} is bound to "
                               f"{op.thread_binding.thread_tag if op.thread_binding else 'a thread'}; "
                               "thread bindings need a GPU target")
        if op.kind == tir_stmt.ForKind.PARALLEL and self.emit_parallel_for(op):
            return
        dtype = op.loop_var.dtype
        start = self.cast(op.min.dtype, dtype, self.emit_expr(op.min))
        end = self.builder.add(start, self.cast(op.extent.dtype, dtype, self.emit_expr(op.extent)))
        self.emit_loop(op.loop_var, start, end, op.body, op.kind)

    def emit_loop(self, loop_var, start: ir.Value, end: ir.Value, body, kind) -> None:
        """`for loop_var in [start, end): body` as header/body/latch, hinted by `kind`."""
        b, dtype = self.builder, loop_var.dtype
        pre = b.block
        header, body_bb = b.append_basic_block("for_header"), b.append_basic_block("for_body")
        exit_bb = b.append_basic_block("for_end")
        b.branch(header)
        b.position_at_end(header)
        phi = b.phi(start.type, name=loop_var.name)
        phi.add_incoming(start, pre)
        signed = not DataType(dtype).is_uint
        b.cbranch((b.icmp_signed if signed else b.icmp_unsigned)("<", phi, end), body_bb, exit_bb)
        b.position_at_end(body_bb)
        self.vars[loop_var] = phi
        self.emit_stmt(body)
        del self.vars[loop_var]
        nxt = b.add(phi, const_like(phi.type, 1), flags=("nsw",) if signed else ())
        latch = b.branch(header)
        phi.add_incoming(nxt, b.block)
        self._loop_metadata(latch, kind)
        b.position_at_end(exit_bb)

    def _loop_metadata(self, branch, kind) -> None:
        hint = _LOOP_HINTS.get(kind)
        if hint is None:
            return
        name, value = hint
        ops = [ir.MetaDataString(self.module, name)]
        if value is not None:
            ops.append(ir.Constant(I1, 1))
        hint_md = self.module.add_metadata(ops)
        loop_md = self.module.add_metadata([hint_md])  # becomes self-referential below
        loop_md.operands = (loop_md, hint_md)
        branch.set_metadata("llvm.loop", loop_md)

    def visit_While(self, op: tir_stmt.While) -> None:
        b = self.builder
        header, body = b.append_basic_block("while_header"), b.append_basic_block("while_body")
        exit_bb = b.append_basic_block("while_end")
        b.branch(header)
        b.position_at_end(header)
        b.cbranch(self.to_bool_i1(self.emit_expr(op.condition)), body, exit_bb)
        b.position_at_end(body)
        self.emit_stmt(op.body)
        b.branch(header)
        b.position_at_end(exit_bb)

    def visit_AssertStmt(self, op: tir_stmt.AssertStmt) -> None:
        msg = op.message.value if isinstance(op.message, tir_expr.StringImm) else str(op.message)
        cond = self.to_bool_i1(self.emit_expr(op.condition))
        self.fail_unless(cond, msg)
        self.emit_stmt(op.body)

    def fail_unless(self, cond: ir.Value, message: str) -> None:
        """Return a fresh error code (after freeing live heap buffers) when `cond` is false."""
        b = self.builder
        self.error_messages.append(message)
        code = len(self.error_messages)
        ok_bb, fail_bb = b.append_basic_block("ok"), b.append_basic_block("fail")
        b.cbranch(cond, ok_bb, fail_bb)
        b.position_at_end(fail_bb)
        for ptr in reversed(self.heap_live):
            b.call(self.extern_function("free", ir.VoidType(), [PTR]), [ptr])
        b.ret(ir.Constant(I32, code))
        b.position_at_end(ok_bb)

    # -- memory -----------------------------------------------------------------------------
    def visit_Allocate(self, op: tir_stmt.Allocate) -> None:
        dt = DataType(op.dtype)
        elem_t = mem_type(str(dt))
        size = 1
        static = all(isinstance(e, tir_expr.IntImm) for e in op.extents)
        if static:
            for e in op.extents:
                size *= e.value
        if static and size * dt.itemsize <= STACK_LIMIT_BYTES:
            with self.builder.goto_block(self.entry_block):
                self.builder.position_at_start(self.entry_block)
                ptr = self.builder.alloca(ir.ArrayType(elem_t, max(size, 1)), name=op.buffer_var.name)
                ptr.align = ALLOC_ALIGN
                ptr.type = PTR  # treat it as an opaque pointer, like the parameters (same IR text)
            self._bind_allocation(op.buffer_var, ptr)
            self.emit_stmt(op.body)
            del self.vars[op.buffer_var]
            return
        b = self.builder
        nbytes = ir.Constant(I64, dt.itemsize)
        for e in op.extents:
            ext = self.cast(e.dtype, "int64", self.emit_expr(e))
            nbytes = b.mul(nbytes, ext)
        # aligned_alloc wants a multiple of the alignment, and at least one block
        rounded = b.and_(b.add(nbytes, ir.Constant(I64, 2 * ALLOC_ALIGN - 1)), ir.Constant(I64, -ALLOC_ALIGN))
        alloc = self.extern_function("aligned_alloc", PTR, [I64, I64])
        ptr = b.call(alloc, [ir.Constant(I64, ALLOC_ALIGN), rounded], name=op.buffer_var.name)
        self.fail_unless(b.icmp_unsigned("!=", ptr, ir.Constant(PTR, None)),
                         f"allocation of buffer {op.buffer_var.name} ({op.dtype}) failed: out of memory")
        self._bind_allocation(op.buffer_var, ptr)
        self.heap_live.append(ptr)
        self.emit_stmt(op.body)
        self.heap_live.pop()
        del self.vars[op.buffer_var]
        self.builder.call(self.extern_function("free", ir.VoidType(), [PTR]), [ptr])

    def _bind_allocation(self, var, ptr: ir.Value) -> None:
        self.vars[var] = ptr
        self.noalias_vars.add(var)  # a fresh allocation overlaps no other buffer
        self.aligned_vars[var] = ALLOC_ALIGN


def _suffix(t: ir.Type) -> str:
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    return {"half": "f16", "float": "f32", "double": "f64"}[str(t)]

