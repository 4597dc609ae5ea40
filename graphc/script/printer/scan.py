"""What a PrimFunc defines and uses, found before printing it.

The printer needs to know, before it prints the first line, which variables are free
(declared at the top as `n = T.int32()`) and which buffers are views that no statement
declares (printed as `X = T.Buffer(..., data=...)` where their data becomes available).

>>> from graphc import tir
>>> n = tir.Var("n")
>>> A = tir.decl_buffer((n,), "float32", "A")
>>> a = tir.Var("a", "handle")
>>> f = tir.PrimFunc([a], tir.BufferStore(A, tir.const(1.0), (0,)), buffer_map={a: A})
>>> info = scan(f)
>>> [v.name for v in info.free_vars], [b.name for b in info.views]
(['n'], [])
"""

from __future__ import annotations

import dataclasses

from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from ...tir.buffer import Buffer


@dataclasses.dataclass
class ScanResult:
    free_vars: list          # Vars used but bound nowhere, in first-use order
    views: list              # Buffers used but declared nowhere, in first-use order
    defined_vars: set        # ids of Vars some construct binds


class _Scanner:
    def __init__(self):
        self.seen: set[int] = set()
        self.used_vars: list = []
        self.used_buffers: list = []
        self.declared_buffers: set[int] = set()
        self.defined: set[int] = set()

    def define(self, var) -> None:
        self.defined.add(id(var))

    def walk(self, obj) -> None:
        if isinstance(obj, tuple | list):
            for item in obj:
                self.walk(item)
            return
        if isinstance(obj, dict):
            for key, value in obj.items():
                self.walk(key)
                self.walk(value)
            return
        if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
            return
        if isinstance(obj, tir_expr.Var):
            if id(obj) not in self.seen:
                self.seen.add(id(obj))
                self.used_vars.append(obj)
            return
        if isinstance(obj, Buffer):
            if id(obj) not in self.seen:
                self.seen.add(id(obj))
                self.used_buffers.append(obj)
                self.walk((obj.shape, obj.strides, obj.elem_offset))
            return
        hook = _HOOKS.get(type(obj))
        if hook is not None:
            hook(self, obj)
        for field in dataclasses.fields(obj):
            self.walk(getattr(obj, field.name))


def _for(sc: _Scanner, op: tir_stmt.For) -> None:
    sc.define(op.loop_var)
    if op.thread_binding is not None:
        sc.define(op.thread_binding.var)


def _block(sc: _Scanner, op: tir_stmt.Block) -> None:
    for iv in op.iter_vars:
        sc.define(iv.var)
    for buf in op.alloc_buffers:
        sc.declared_buffers.add(id(buf))
    for match in op.match_buffers:
        sc.declared_buffers.add(id(match.buffer))


def _attr(sc: _Scanner, op: tir_stmt.AttrStmt) -> None:
    if isinstance(op.node, tir_stmt.IterVar):
        sc.define(op.node.var)


_HOOKS = {
    tir_stmt.For: _for,
    tir_stmt.Block: _block,
    tir_stmt.LetStmt: lambda sc, op: sc.define(op.var),
    tir_expr.Let: lambda sc, op: sc.define(op.var),
    tir_stmt.Allocate: lambda sc, op: sc.define(op.buffer_var),
    tir_stmt.DeclBuffer: lambda sc, op: sc.declared_buffers.add(id(op.buffer)),
    tir_stmt.AttrStmt: _attr,
}


def scan(func) -> ScanResult:
    """Free variables and undeclared view buffers of `func` (a PrimFunc)."""
    sc = _Scanner()
    for param in func.params:
        sc.define(param)
    for buf in func.buffer_map.values():
        sc.declared_buffers.add(id(buf))
        sc.walk(buf)
    sc.walk(func.body)
    declared = [b for b in sc.used_buffers if id(b) in sc.declared_buffers]
    for buf in declared:
        sc.define(buf.data)
    views = [b for b in sc.used_buffers if id(b) not in sc.declared_buffers]
    view_data = {id(b.data) for b in views}
    free = [v for v in sc.used_vars if id(v) not in sc.defined and id(v) not in view_data]
    return ScanResult(free, views, sc.defined)
