"""Printing TensorIR statements and PrimFuncs in the script syntax (`T.` namespace).

Statements that scope over "the rest" (`x: T.int32 = v`, `A = T.allocate(...)`,
`tx = T.launch_thread(...)`, `assert`) print inline when they end their sequence and in
their `with` form otherwise, so parsing the text rebuilds the same nesting.

>>> from graphc import tir
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> i = tir.Var("i")
>>> loop = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL,
...                tir.BufferStore(A, A[i] * 2.0, (i,)))
>>> print(StmtPrinter().stmt_text(loop))
for i in range(4):
    A[i] = A[i] * T.float32(2.0)
"""

from __future__ import annotations

from ...ir.dispatch import method_table
from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from ...tir.analysis.var_use import uses_any_var
from .buffers import BufferPrinterMixin
from .expr import ExprPrinter, pystr
from .namer import Namer

_KIND_NAMES = {tir_stmt.ForKind.SERIAL: "T.serial", tir_stmt.ForKind.PARALLEL: "T.parallel",
               tir_stmt.ForKind.VECTORIZED: "T.vectorized", tir_stmt.ForKind.UNROLLED: "T.unroll",
               tir_stmt.ForKind.THREAD_BINDING: "T.thread_binding"}
_AXIS = {tir_stmt.IterType.DATA_PAR: "spatial", tir_stmt.IterType.COMM_REDUCE: "reduce",
         tir_stmt.IterType.ORDERED: "scan", tir_stmt.IterType.OPAQUE: "opaque"}
_REMAP = {tir_stmt.IterType.DATA_PAR: "S", tir_stmt.IterType.COMM_REDUCE: "R"}


def _is_int(expr, value: int) -> bool:
    return isinstance(expr, tir_expr.IntImm) and expr.value == value and expr.dtype != "bool"


def _is_true(expr) -> bool:
    return isinstance(expr, tir_expr.IntImm) and expr.dtype == "bool" and expr.value == 1


class StmtPrinter(BufferPrinterMixin):
    """Prints statements into `self.lines`; one instance per printed function."""

    def __init__(self, namer: Namer | None = None):
        self.namer = namer if namer is not None else Namer()
        self.expr = ExprPrinter(self.namer)
        self.lines: list[str] = []
        self.depth = 0
        self.loops: dict[int, tir_stmt.For] = {}
        self.pending_views: list = []
        self._rules = method_table(type(self), "print_")

    # -- output -----------------------------------------------------------------------------
    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def indented(self, stmt) -> None:
        self.depth += 1
        self.body(stmt)
        self.depth -= 1

    def stmt_text(self, stmt) -> str:
        self.body(stmt)
        return "\n".join(self.lines)

    def define_var(self, var, hint: str | None = None) -> str:
        return self.namer.define(var, hint)

    # -- dispatch ---------------------------------------------------------------------------
    def body(self, stmt) -> None:
        """Print `stmt` as a whole body (it may print inline scoping forms)."""
        if isinstance(stmt, tir_stmt.SeqStmt):
            for k, item in enumerate(stmt.seq):
                self.stmt(item, last=k == len(stmt.seq) - 1)
        else:
            self.stmt(stmt, last=True)

    def stmt(self, stmt, last: bool) -> None:
        rule = self._rules[type(stmt)]
        if rule is None:
            self.line(f"# <unprintable {type(stmt).__name__}>")
            return
        rule(self, stmt, last)

    # -- simple statements ------------------------------------------------------------------
    def print_SeqStmt(self, op, last):
        for k, item in enumerate(op.seq):
            self.stmt(item, last=last and k == len(op.seq) - 1)

    def print_BufferStore(self, op, last):
        target = f"{self.expr.buffer_name(op.buffer)}[{self.expr.indices(op.indices)}]"
        self.line(f"{target} = {self.expr(op.value)}")

    def print_Evaluate(self, op, last):
        self.line(f"T.evaluate({self.expr(op.value)})")

    def print_IfThenElse(self, op, last):
        self.line(f"if {self.expr(op.condition)}:")
        self.indented(op.then_case)
        if op.else_case is not None:
            self.line("else:")
            self.indented(op.else_case)

    def print_While(self, op, last):
        self.line(f"while {self.expr(op.condition)}:")
        self.indented(op.body)

    # -- scoping statements -----------------------------------------------------------------
    def print_LetStmt(self, op, last):
        value = self.expr(op.value)
        if last:
            name = self.define_var(op.var)
            self.line(f"{name}: T.{op.var.dtype} = {value}")
            self.flush_views()
            self.body(op.body)
        else:
            name = self.define_var(op.var)
            self.line(f"with T.LetStmt({value}, {pystr(op.var.dtype)}) as {name}:")
            self.depth += 1
            self.flush_views()
            self.body(op.body)
            self.depth -= 1

    def print_AssertStmt(self, op, last):
        cond, msg = self.expr(op.condition), self.expr(op.message)
        if last:
            self.line(f"assert {cond}, {msg}")
            self.body(op.body)
        else:
            self.line(f"with T.Assert({cond}, {msg}):")
            self.indented(op.body)

    def print_Allocate(self, op, last):
        args = f"[{', '.join(self.expr(e) for e in op.extents)}], {pystr(op.dtype)}, {pystr(op.scope)}"
        if not _is_true(op.condition):
            args += f", condition={self.expr(op.condition)}"
        if op.annotations:
            args += f", annotations={self.value(op.annotations)}"
        self.binding_form(op.buffer_var, f"T.allocate({args})", op.body, last)

    def print_DeclBuffer(self, op, last):
        call = self.buffer_call("T.decl_buffer", op.buffer)
        self.binding_form(op.buffer, call, op.body, last, buffer=True)

    def binding_form(self, obj, call: str, body, last: bool, buffer: bool = False) -> None:
        name = self.define_buffer(obj) if buffer else self.namer.define(obj)
        if last:
            self.line(f"{name} = {call}")
            self.flush_views()
            self.body(body)
        else:
            self.line(f"with {call} as {name}:")
            self.depth += 1
            self.flush_views()
            self.body(body)
            self.depth -= 1

    def print_AttrStmt(self, op, last):
        node = op.node
        if op.attr_key == "thread_extent" and isinstance(node, tir_stmt.IterVar):
            value = self.expr(op.value)
            fresh = node.var not in self.namer
            if fresh and node.dom is not None and _is_int(node.dom.min, 0) \
                    and self.expr(node.dom.extent) == value:
                call = f"T.launch_thread({pystr(node.thread_tag)}, {value})"
                self.binding_form(node.var, call, op.body, last)
                return
            if fresh:
                self.line(f"{self.define_var(node.var)} = T.env_thread({pystr(node.thread_tag)})")
                self.flush_views()
            call = f"T.launch_thread({self.expr(node.var)}, {value})"
        else:
            call = f"T.attr({self.attr_node(node)}, {pystr(op.attr_key)}, {self.expr(op.value)})"
        if last:
            self.line(call)
            self.body(op.body)
        else:
            self.line(f"with {call}:")
            self.indented(op.body)

    def attr_node(self, node) -> str:
        if isinstance(node, tir_stmt.IterVar):
            return self.expr(node.var)
        if isinstance(node, tir_expr.PrimExpr):
            return self.expr(node)
        if hasattr(node, "data") and hasattr(node, "shape"):
            return self.expr.buffer_name(node)
        return self.value(node)

    # -- loops ------------------------------------------------------------------------------
    def print_For(self, op, last):
        grid = [op]
        while self._plain(grid[-1]) and self._plain(grid[-1].body) \
                and not uses_any_var(grid[-1].body.extent, {loop.loop_var for loop in grid}):
            grid.append(grid[-1].body)
        if len(grid) > 1:
            extents = ", ".join(self.expr(loop.extent) for loop in grid)
            names = ", ".join(self.define_loop(loop) for loop in grid)
            self.line(f"for {names} in T.grid({extents}):")
            self.loop_body(grid[-1].body)
            for loop in grid:
                self.namer.release(loop.loop_var)
            return
        self.line(f"for {self.loop_head(op)}:")
        self.loop_body(op.body)
        self.namer.release(op.loop_var)

    def loop_body(self, body) -> None:
        self.depth += 1
        self.flush_views()
        self.body(body)
        self.depth -= 1

    def loop_head(self, op) -> str:
        if self._plain(op):
            extent = self.expr(op.extent)
            return f"{self.define_loop(op)} in range({extent})"
        if _is_int(op.min, 0) and op.min.dtype == op.extent.dtype:
            args = [self.expr(op.extent)]
        else:
            args = [self.expr(op.min), self.range_end(op.min, op.extent)]
        if op.kind is tir_stmt.ForKind.THREAD_BINDING:
            tag = op.thread_binding.thread_tag if op.thread_binding is not None else ""
            args.append(f"thread={pystr(tag)}")
        if op.annotations:
            args.append(f"annotations={self.value(op.annotations)}")
        return f"{self.define_loop(op)} in {_KIND_NAMES[op.kind]}({', '.join(args)})"

    def define_loop(self, op) -> str:
        self.loops[id(op.loop_var)] = op
        return self.define_var(op.loop_var)

    @staticmethod
    def _plain(op) -> bool:
        return (isinstance(op, tir_stmt.For) and op.kind is tir_stmt.ForKind.SERIAL and not op.annotations
                and op.thread_binding is None and _is_int(op.min, 0)
                and op.min.dtype == op.extent.dtype == op.loop_var.dtype)

    def range_end(self, lo, extent) -> str:
        """The text of `lo + extent` that the parser's `range_extent` reads back as `extent`."""
        if isinstance(lo, tir_expr.IntImm) and isinstance(extent, tir_expr.IntImm):
            return self.expr(tir_expr.const(lo.value + extent.value, lo.dtype))
        if lo.dtype != extent.dtype:
            return self.expr(lo + extent)
        if _is_int(lo, 0) and not (isinstance(extent, tir_expr.Add) and _is_int(extent.a, 0)):
            return self.expr(extent)  # `0:n`, read back as `n - 0`
        return self.expr(tir_expr.Add(lo, extent, lo.dtype))  # read back as the Add's `b`

    # -- blocks -----------------------------------------------------------------------------
    def print_BlockRealize(self, op, last):
        block = op.block
        self.line(f"with T.block({pystr(block.name_hint)}):")
        self.depth += 1
        self.print_axes(block.iter_vars, op.iter_values)
        if not _is_true(op.predicate):
            self.line(f"T.where({self.expr(op.predicate)})")
        self.block_contents(block)
        self.depth -= 1
        for iv in block.iter_vars:
            self.namer.release(iv.var)

    def print_Block(self, op, last):  # a Block without its realize (unusual)
        self.line(f"with T.block({pystr(op.name_hint)}, no_realize=True):")
        self.depth += 1
        self.print_axes(op.iter_vars, None)
        self.block_contents(op)
        self.depth -= 1

    def block_contents(self, block, header: bool = True) -> None:
        if header:
            self.line(f"T.reads({', '.join(self.region(r) for r in block.reads)})")
            self.line(f"T.writes({', '.join(self.region(r) for r in block.writes)})")
        if block.annotations:
            self.line(f"T.block_attr({self.value(block.annotations)})")
        for buf in block.alloc_buffers:
            call = self.buffer_call("T.alloc_buffer", buf)
            self.line(f"{self.define_buffer(buf)} = {call}")
        for match in block.match_buffers:
            call = self.buffer_call("T.match_buffer", match.buffer, self.region(match.source))
            self.line(f"{self.define_buffer(match.buffer)} = {call}")
        self.flush_views()
        if block.init is not None:
            self.line("with T.init():")
            self.indented(block.init)
        self.body(block.body)

    def print_axes(self, iter_vars, values) -> None:
        """Runs of 2+ iter vars bound straight to loop vars print as one `T.axis.remap`."""
        if values is None:
            self.print_axes_one_by_one(iter_vars, None)
            return
        start = 0
        while start < len(iter_vars):
            stop = start
            while stop < len(iter_vars) and self._remappable(iter_vars[stop], values[stop]):
                stop += 1
            if stop - start >= 2:
                run = iter_vars[start:stop]
                kinds = "".join(_REMAP[iv.iter_type] for iv in run)
                loops = ", ".join(self.expr(v) for v in values[start:stop])
                names = ", ".join(self.define_var(iv.var) for iv in run)
                self.line(f"{names} = T.axis.remap({pystr(kinds)}, [{loops}])")
                start = stop
            else:
                stop = max(stop, start + 1)
                self.print_axes_one_by_one(iter_vars[start:stop], values[start:stop])
                start = stop

    def print_axes_one_by_one(self, iter_vars, values) -> None:
        for k, iv in enumerate(iter_vars):
            dom = iv.dom
            if _is_int(dom.min, 0) and dom.min.dtype == dom.extent.dtype:
                extent = self.expr(dom.extent)
            else:
                extent = f"({self.expr(dom.min)}, {self.range_end(dom.min, dom.extent)})"
            value = f", {self.expr(values[k])}" if values is not None else ""
            name = self.define_var(iv.var)
            self.line(f"{name} = T.axis.{_AXIS[iv.iter_type]}({extent}{value})")

    def _remappable(self, iv, value) -> bool:
        loop = self.loops.get(id(value)) if isinstance(value, tir_expr.Var) else None
        if loop is None or iv.iter_type not in _REMAP or iv.var.dtype != value.dtype:
            return False
        dom = iv.dom
        return (_is_int(dom.min, 0) and _is_int(loop.min, 0) and dom.min.dtype == dom.extent.dtype
                and self.expr(dom.extent) == self.expr(loop.extent))

    def region(self, region) -> str:
        parts = []
        for r in region.region:
            if _is_int(r.extent, 1) and r.extent.dtype == r.min.dtype:
                parts.append(self.expr(r.min))
            else:
                parts.append(f"{self.expr(r.min)}:{self.range_end(r.min, r.extent)}")
        return f"{self.expr.buffer_name(region.buffer)}[{', '.join(parts) if parts else '()'}]"

    # -- attribute values -------------------------------------------------------------------
    def value(self, value) -> str:
        """An attribute value: Python data, expressions, buffers, nested lists and dicts."""
        if isinstance(value, dict):
            items = ", ".join(f"{self.value(k)}: {self.value(v)}" for k, v in value.items())
            return "{" + items + "}"
        if isinstance(value, list):
            return "[" + ", ".join(self.value(v) for v in value) + "]"
        if isinstance(value, tuple):
            inner = ", ".join(self.value(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, tir_expr.PrimExpr):
            return self.expr(value)
        if isinstance(value, str):
            return pystr(value)
        if hasattr(value, "data") and hasattr(value, "shape"):
            return self.expr.buffer_name(value)
        return repr(value)
