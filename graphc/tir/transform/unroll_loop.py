"""`UnrollLoop`: expand `unroll` loops with small constant extents into copies of their body.

Options (TVM's, read from `PassContext.config["tir.UnrollLoop"]` or given to the pass):
`explicit_unroll` (expand UNROLLED loops at all), `max_extent` (larger UNROLLED loops stay
loops, kept as an unroll hint for the code generator), `auto_max_step` (serial loops whose
whole nest runs at most this many steps are unrolled too; 0 turns this off; without
`explicit_unroll` they are only marked UNROLLED). The `pragma_auto_unroll_max_step` and
`pragma_unroll_explicit` annotations (AttrStmts after LowerOpaqueBlock) set those options
for the statements under them and are removed.

>>> from graphc import tir
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> i = tir.Var("i")
>>> store = tir.BufferStore(A, tir.const(0.0), (i,))
>>> loop = tir.For(i, tir.const(0), tir.const(3), tir.ForKind.UNROLLED, store)
>>> [s.indices[0].value for s in unroll_stmt(loop).seq]
[0, 1, 2]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...errors import GraphcError
from ..expr import IntImm, Var, const
from ..function import PrimFunc
from ..functor import StmtMutator, substitute
from ..stmt import For, ForKind, LetStmt, SeqStmt
from .function_pass import prim_func_pass

DEFAULT_MAX_EXTENT = 32
_OPTIONS = ("explicit_unroll", "max_extent", "auto_max_step")
# AttrStmt keys (from `pragma_*` loop or block annotations) that set an option in their scope
_PRAGMAS = {"pragma_auto_unroll_max_step": "auto_max_step", "pragma_unroll_explicit": "explicit_unroll"}


@dataclass(frozen=True)
class UnrollConfig:
    """How far `UnrollLoop` goes (see the module docstring)."""

    explicit_unroll: bool = True
    max_extent: int = DEFAULT_MAX_EXTENT
    auto_max_step: int = 0


def _steps(stmt) -> int | None:
    """Total iterations of the loop nest in `stmt` when every extent is constant."""
    total = [1]

    class _Count(StmtMutator):
        def visit_For(self, op):
            if not isinstance(op.extent, IntImm):
                total[0] = None
                return op
            inner = _steps(op.body)
            if inner is None or total[0] is None:
                total[0] = None
            else:
                total[0] += op.extent.value * inner
            return op

    _Count().visit_stmt(stmt)
    return total[0]


class _Unroller(StmtMutator):
    def __init__(self, config: UnrollConfig):
        self.config = config

    def visit_AttrStmt(self, op):
        """`pragma_auto_unroll_max_step` / `pragma_unroll_explicit` scopes (consumed here)."""
        if op.attr_key not in _PRAGMAS or not isinstance(op.value, IntImm):
            return super().visit_AttrStmt(op)
        saved = self.config
        field = _PRAGMAS[op.attr_key]
        value = bool(op.value.value) if field == "explicit_unroll" else op.value.value
        self.config = dataclasses.replace(saved, **{field: value})
        try:
            return self.visit_stmt(op.body)
        finally:
            self.config = saved

    def visit_For(self, op: For):
        body = self.visit_stmt(op.body)
        op = op.replace(body=body)
        if not isinstance(op.extent, IntImm) or not isinstance(op.min, IntImm):
            return op
        n = op.extent.value
        if op.kind == ForKind.UNROLLED:
            if not (self.config.explicit_unroll and n <= self.config.max_extent):
                return op  # stays a loop: an unroll hint for the code generator
        elif op.kind == ForKind.SERIAL and self.config.auto_max_step > 0:
            inner = _steps(body)
            if inner is None or n * inner > self.config.auto_max_step:
                return op
            if not self.config.explicit_unroll:
                return op.replace(kind=ForKind.UNROLLED)
        else:
            return op
        copies = [
            substitute(body, {op.loop_var: const(op.min.value + k, op.loop_var.dtype)}) for k in range(n)
        ]
        # each copy defines its own inner loop and let variables (a variable is defined once)
        return SeqStmt.flatten(copies[0], *(_RenewDefs().visit_stmt(c) for c in copies[1:]))


class _RenewDefs(StmtMutator):
    """A statement whose loop and let variables are new Vars (same names and dtypes)."""

    def visit_For(self, op: For):
        new = Var(op.loop_var.name, op.loop_var.dtype, op.loop_var.type_annotation)
        body = self.visit_stmt(substitute(op.body, {op.loop_var: new}))
        return op.replace(loop_var=new, body=body)

    def visit_LetStmt(self, op: LetStmt):
        new = Var(op.var.name, op.var.dtype, op.var.type_annotation)
        body = self.visit_stmt(substitute(op.body, {op.var: new}))
        return op.replace(var=new, body=body)


def _config(options: dict) -> UnrollConfig:
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise GraphcError(f"UnrollLoop options are {', '.join(_OPTIONS)}; got unknown {', '.join(unknown)}")
    return UnrollConfig(**options)


def unroll_stmt(stmt, **options):
    """`stmt` with its small `unroll` loops expanded (options as in UnrollConfig)."""
    return _Unroller(_config(options)).visit_stmt(stmt)


@prim_func_pass(opt_level=0, name="UnrollLoop")
class UnrollLoop:
    """Expand unroll loops; options given here override `config["tir.UnrollLoop"]`."""

    def __init__(self, **options):
        _config(options)
        self.options = options

    def transform_function(self, func: PrimFunc, mod, ctx) -> PrimFunc:
        options = dict(ctx.config.get("tir.UnrollLoop", {}))
        options.update(self.options)
        return func.with_body(_Unroller(_config(options)).visit_stmt(func.body))


__all__ = ["UnrollConfig", "UnrollLoop", "unroll_stmt"]
