"""The well-formedness checker for PrimFuncs: variables, block bindings and buffer scopes.

It rejects a use of an undefined variable; a variable defined again inside its own
definition; a BlockRealize whose `iter_values` do not match its block's `iter_vars`; a
block with iter vars that reads a surrounding loop variable directly instead of through
them (the root block and opaque blocks may); and a buffer used outside the scope that
allocates or declares it. Each error names the function, the offending variable, buffer
or block, and shows a window of the printed program when the printer is available.

>>> from graphc import tir
>>> i = tir.Var("i")
>>> A = tir.decl_buffer((8,), "float32", "A")
>>> a = tir.Var("a", "handle")
>>> good = tir.PrimFunc([a], tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL,
...                     A.vstore([i], 1.0)), buffer_map={a: A})
>>> verify_well_formed(good)
True
>>> bad = good.with_body(A.vstore([i], 1.0))
>>> verify_well_formed(bad, assert_mode=False)
False
"""

from __future__ import annotations

from ...errors import VerifyError
from ...ir.module import IRModule
from ..buffer import Buffer
from ..expr import Let, PrimExpr, Var
from ..function import PrimFunc
from ..functor import StmtExprVisitor
from ..stmt import Allocate, AttrStmt, Block, BlockRealize, DeclBuffer, For, IterVar, LetStmt


def verify_well_formed(func_or_mod, assert_mode: bool = True) -> bool:
    """Check a PrimFunc (or every PrimFunc of an IRModule); see the module docstring.

    Raises VerifyError on the first violation when `assert_mode`, else returns False.
    """
    if isinstance(func_or_mod, IRModule):
        funcs = [(gv.name_hint, f) for gv, f in func_or_mod.items() if isinstance(f, PrimFunc)]
    elif isinstance(func_or_mod, PrimFunc):
        funcs = [(func_or_mod.attrs.get("global_symbol", "main"), func_or_mod)]
    else:
        raise VerifyError(
            f"verify_well_formed expects a PrimFunc or an IRModule, got {type(func_or_mod).__name__}"
        )
    try:
        for name, func in funcs:
            _Checker(name, func).run()
    except VerifyError:
        if assert_mode:
            raise
        return False
    return True


class _Checker(StmtExprVisitor):
    def __init__(self, name: str, func: PrimFunc):
        self.name = name
        self.func = func
        self.defined: dict[Var, str] = {}  # var -> how it was defined
        self.loop_vars: set[Var] = set()  # loop / thread vars currently in scope
        self.hidden: list[tuple[str, set]] = []  # (block name, loop vars it may not read)
        self.buffers: set[Buffer] = set()  # buffers in scope
        self.data_vars: set[Var] = set()  # storage in scope (flat views share these)
        self.block_of_alloc: dict[Buffer, str] = {}  # every alloc_buffer seen -> its block

    # --- driver and errors --------------------------------------------------------------

    def run(self) -> None:
        func = self.func
        for p in func.params:
            self.define(p, "a parameter")
        for buf in func.buffer_map.values():
            self.buffers.add(buf)
            self.data_vars.add(buf.data)
            self.define_buffer_vars(buf, f"by the shape of parameter buffer {buf.name!r}")
            if buf.data not in self.defined:
                self.defined[buf.data] = f"the data of parameter buffer {buf.name!r}"
        body = func.body
        if isinstance(body, BlockRealize) and not body.block.iter_vars:
            self.visit_block_realize(body, root=True)
        else:
            self.visit_stmt(body)

    def fail(self, message: str, name: str | None = None, block: str | None = None) -> None:
        window = _window(self.func, name, block)
        raise VerifyError(f"in PrimFunc {self.name!r}: {message}" + (f"\n{window}" if window else ""))

    # --- definitions --------------------------------------------------------------------

    def define(self, var: Var, how: str) -> None:
        if var in self.defined:
            self.fail(
                f"variable {var.name!r} is defined twice: {how}, inside its own definition as "
                f"{self.defined[var]}; give the inner definition a fresh Var",
                var.name,
            )
        self.defined[var] = how

    def define_buffer_vars(self, buf: Buffer, how: str) -> None:
        for e in tuple(buf.shape) + tuple(buf.strides) + (buf.elem_offset,):
            if isinstance(e, Var) and e not in self.defined:
                self.defined[e] = how

    def undefine(self, var: Var) -> None:
        self.defined.pop(var, None)

    # --- expressions --------------------------------------------------------------------

    def visit_expr(self, expr):
        if not isinstance(expr, PrimExpr):
            found = f"{type(expr).__name__} {expr!r}"
            self.fail(f"expected a PrimExpr, found the {found}; wrap it with tir.const")
        return super().visit_expr(expr)

    def visit_Var(self, op: Var):
        if op not in self.defined:
            self.fail(
                f"variable {op.name!r} is used but not defined; define it as a parameter, a loop "
                "variable, a let or a block iter var that encloses the use",
                op.name,
            )
        for block_name, hidden in self.hidden[-1:]:
            if op in hidden:
                self.fail(
                    f"block {block_name!r} uses the loop variable {op.name!r} directly; bind it to a "
                    "block iter var through the BlockRealize's iter_values and use that instead",
                    op.name,
                    block_name,
                )

    def visit_Let(self, op: Let):
        self.visit_expr(op.value)
        self.define(op.var, "the let variable of an expression")
        self.visit_expr(op.body)
        self.undefine(op.var)

    def visit_buffer_use(self, buffer: Buffer):
        if buffer in self.buffers or buffer.data in self.data_vars:
            return
        block = self.block_of_alloc.get(buffer)
        if block is not None:
            self.fail(f"buffer {buffer.name!r} is allocated by block {block!r} but used outside it",
                      buffer.name)  # fmt: skip
        self.fail(
            f"buffer {buffer.name!r} is neither a parameter buffer nor allocated or declared in an "
            "enclosing scope (alloc_buffers, match_buffers, Allocate or DeclBuffer)",
            buffer.name,
        )

    # --- statements ---------------------------------------------------------------------

    def visit_For(self, op: For):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.define(op.loop_var, "the loop variable of a For loop")
        self.loop_vars.add(op.loop_var)
        self.visit_stmt(op.body)
        self.loop_vars.discard(op.loop_var)
        self.undefine(op.loop_var)

    def visit_LetStmt(self, op: LetStmt):
        self.visit_expr(op.value)
        self.define(op.var, "a LetStmt variable")
        self.visit_stmt(op.body)
        self.undefine(op.var)

    def visit_AttrStmt(self, op: AttrStmt):
        self.visit_expr(op.value)
        thread = op.node if isinstance(op.node, IterVar) and op.attr_key == "thread_extent" else None
        if thread is not None and thread.var not in self.defined:
            self.defined[thread.var] = f"the thread variable {thread.thread_tag}"
            self.loop_vars.add(thread.var)
            self.visit_stmt(op.body)
            self.loop_vars.discard(thread.var)
            self.undefine(thread.var)
        else:
            self.visit_stmt(op.body)

    def visit_Allocate(self, op: Allocate):
        for e in op.extents:
            self.visit_expr(e)
        self.visit_expr(op.condition)
        self.define(op.buffer_var, "the storage of an Allocate")
        self.data_vars.add(op.buffer_var)
        self.visit_stmt(op.body)
        self.data_vars.discard(op.buffer_var)
        self.undefine(op.buffer_var)

    def visit_DeclBuffer(self, op: DeclBuffer):
        buf = op.buffer
        for e in tuple(buf.shape) + tuple(buf.strides):
            self.visit_expr(e)
        added = buf not in self.buffers
        self.buffers.add(buf)
        self.visit_stmt(op.body)
        if added:
            self.buffers.discard(buf)

    def visit_BlockRealize(self, op: BlockRealize):
        self.visit_block_realize(op, root=False)

    def visit_block_realize(self, op: BlockRealize, root: bool) -> None:
        block = op.block
        if len(op.iter_values) != len(block.iter_vars):
            self.fail(
                f"block {block.name_hint!r} has {len(block.iter_vars)} iter vars but its BlockRealize "
                f"binds {len(op.iter_values)} iter_values; they must match one to one",
                block.name_hint,
            )
        for value in op.iter_values:
            self._check_iter_value(block, value)
        self.visit_expr(op.predicate)
        self.visit_block(block, root)

    def _check_iter_value(self, block: Block, value: PrimExpr) -> None:
        try:
            self.visit_expr(value)
        except VerifyError as err:
            raise VerifyError(f"in an iter_value of block {block.name_hint!r}: {err}") from None

    def visit_Block(self, op: Block):
        self.visit_block(op, root=False)

    def visit_block(self, op: Block, root: bool) -> None:
        for iv in op.iter_vars:
            if iv.dom is not None:
                self.visit_expr(iv.dom.min)
                self.visit_expr(iv.dom.extent)
        for iv in op.iter_vars:
            self.define(iv.var, f"an iter var of block {op.name_hint!r}")
        for buf in op.alloc_buffers:
            for e in buf.shape:
                self.visit_expr(e)
            self.block_of_alloc[buf] = op.name_hint
        # The root block and opaque blocks (no iter vars, e.g. the ones buffer planning adds
        # around loops) may read surrounding loop variables; blocks with iter vars may not.
        is_root = root or not op.iter_vars
        if not is_root:
            self.hidden.append((op.name_hint, set(self.loop_vars)))
        added_buffers = [b for b in op.alloc_buffers if b not in self.buffers]
        added_data = [b.data for b in op.alloc_buffers if b.data not in self.data_vars]
        new_vars = [b.data for b in op.alloc_buffers if b.data not in self.defined]
        new_vars += [m.buffer.data for m in op.match_buffers if m.buffer.data not in self.defined]
        for v in new_vars:
            self.defined[v] = f"the data of a buffer allocated by block {op.name_hint!r}"
        self.buffers.update(added_buffers)
        self.data_vars.update(added_data)
        for match in op.match_buffers:
            self.visit_buffer_region(match.source)
            self.visit_buffer_use(match.source.buffer)
            self.define_buffer_vars(match.buffer, f"match_buffer {match.buffer.name!r}")
            if match.buffer not in self.buffers:
                self.buffers.add(match.buffer)
                added_buffers.append(match.buffer)
        for region in op.reads + op.writes:
            self.visit_buffer_use(region.buffer)
            self.visit_buffer_region(region)
        if op.init is not None:
            self.visit_stmt(op.init)
        self.visit_stmt(op.body)
        self.buffers.difference_update(added_buffers)
        self.data_vars.difference_update(added_data)
        if not is_root:
            self.hidden.pop()
        for v in new_vars:
            self.undefine(v)
        for iv in op.iter_vars:
            self.undefine(iv.var)


def _window(func: PrimFunc, name: str | None, block: str | None = None, context: int = 3) -> str:
    """A few lines of the printed function around the first use of `name` (within `block`)."""
    try:
        text = func.script()
    except Exception:  # noqa: BLE001 - the function is ill-formed and may not print; the error stands without the window
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    hit = None
    if name is not None:
        import re

        pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
        free_decl = re.compile(rf"^\s*{re.escape(name)}\s*=\s*T\.\w+\(\)\s*$")  # printer's free var
        start = 0
        if block is not None:
            start = next((n for n, line in enumerate(lines) if f'T.block("{block}")' in line), 0)
        skip = ("T.axis", "T.reads", "T.writes") if block is not None else ()
        hits = [n for n, line in enumerate(lines) if n >= start and pattern.search(line)
                and not any(s in line for s in skip)]  # fmt: skip
        hit = next((n for n in hits if not free_decl.match(lines[n])), hits[0] if hits else None)
    if hit is None:
        return "\n".join("    " + line for line in lines[: 2 * context + 1])
    lo, hi = max(0, hit - context), min(len(lines), hit + context + 1)
    out = []
    for n in range(lo, hi):
        out.append(("--> " if n == hit else "    ") + lines[n])
    return "\n".join(out)
