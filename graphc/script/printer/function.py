"""Printing a PrimFunc: decorator, signature, attributes, declarations, then the body.

Parameter buffers with constant shapes print as annotations (`A: T.Buffer((128,), "float32")`);
buffers with symbolic dimensions use a handle and `T.match_buffer` after the `n = T.int32()`
declarations, so the text also works as decorated Python source. The implicit root block
prints as the comment `# with T.block("root"):`.

>>> from graphc import tir
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> a = tir.Var("a", "handle")
>>> f = tir.PrimFunc([a], tir.BufferStore(A, tir.const(0.0), (0,)), buffer_map={a: A},
...                  attrs={"global_symbol": "main"})
>>> print("\\n".join(prim_func_lines(f, "main")))
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    A[0] = T.float32(0.0)
"""

from __future__ import annotations

from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from .expr import pystr
from .namer import Namer
from .scan import scan
from .tir import StmtPrinter, _is_true


def _implicit_root(body) -> tir_stmt.Block | None:
    """The root block when the parser would re-create it implicitly, else None."""
    if not isinstance(body, tir_stmt.BlockRealize) or body.iter_values or not _is_true(body.predicate):
        return None
    block = body.block
    if (block.name_hint != "root" or block.iter_vars or block.reads or block.writes
            or block.init is not None or block.match_buffers or block.annotations):
        return None
    if block.alloc_buffers or contains_block(block.body):
        return block
    return None


def contains_block(stmt) -> bool:
    """True when `stmt` has a BlockRealize somewhere inside."""
    from ...tir.functor import StmtVisitor

    class _Find(StmtVisitor):
        found = False

        def visit_BlockRealize(self, op):
            self.found = True

        def visit_expr(self, expr):
            return None

    finder = _Find()
    finder.visit_stmt(stmt)
    return finder.found


def prim_func_lines(func, name: str) -> list[str]:
    """The script lines of `func` printed under `name` (no namespace header)."""
    printer = StmtPrinter(Namer())
    info = scan(func)
    printer.defined_vars = info.defined_vars
    printer.pending_views = list(info.views)
    params, match_lines = [], []
    for param in func.params:
        buf = func.buffer_map.get(param)
        if buf is None:
            params.append(f"{printer.define_var(param)}: T.{param.dtype}")
        elif printer.simple_param_buffer(buf):
            call = printer.buffer_call("T.Buffer", buf)
            params.append(f"{printer.define_buffer(buf)}: {call}")
        else:
            hint = "var_" + buf.name if param.name == buf.name else param.name
            params.append(f"{printer.define_var(param, hint)}: T.handle")
            match_lines.append((param, buf))
    private = "global_symbol" not in func.attrs
    header = ["@T.prim_func(private=True)" if private else "@T.prim_func",
              f"def {name}({', '.join(params)}):"]
    printer.depth = 1
    attrs = {k: v for k, v in func.attrs.items() if not (k == "global_symbol" and v == name)}
    if attrs:
        printer.line(f"T.func_attr({printer.value(attrs)})")
    for var in info.free_vars:
        kind = ", is_size_var=True" if isinstance(var, tir_expr.SizeVar) else ""
        args = kind[2:] if kind else ""
        printer.line(f"{printer.define_var(var)} = T.{var.dtype}({args})")
    for param, buf in match_lines:
        call = printer.buffer_call("T.match_buffer", buf, printer.expr(param))
        printer.line(f"{printer.define_buffer(buf)} = {call}")
    printer.flush_views()
    root = _implicit_root(func.body)
    if root is not None:
        printer.line('# with T.block("root"):')
        for buf in root.alloc_buffers:
            call = printer.buffer_call("T.alloc_buffer", buf)
            printer.line(f"{printer.define_buffer(buf)} = {call}")
        printer.flush_views()
        printer.body(root.body)
    else:
        printer.body(func.body)
    for buf in printer.pending_views:  # views whose dimensions never became printable
        printer.line(f"# unprinted buffer {buf.name}: {pystr(repr(buf))}")
    return header + printer.lines


def func_name(func, default: str = "main") -> str:
    symbol = func.attrs.get("global_symbol") if getattr(func, "attrs", None) else None
    return symbol if isinstance(symbol, str) and symbol.isidentifier() else default
