"""Evaluating script expressions from their AST, without running the user's function.

Names resolve through the parser's scopes, then the decorated function's closure and
defining frame, its module globals and Python builtins. Arithmetic on IR values builds IR
(through the same folding builders the rest of graphc uses); on Python values it is Python.

>>> import ast
>>> from graphc.script.parser.diagnostics import Source
>>> ev = Evaluator(Source("i * 2 + 1"), {})
>>> from graphc import tir
>>> ev.scopes[-1]["i"] = tir.Var("i")
>>> ev.eval(ast.parse("i * 2 + 1", mode="eval").body)
i * 2 + 1
"""

from __future__ import annotations

import ast
import builtins
import operator

from ...errors import GraphcError, ScriptError
from ...tir import expr as tir_expr
from ...tir.buffer import Buffer
from ...tir.stmt import BufferRegion
from .. import ir as _I
from .. import tir as _T

_MISSING = object()
_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_SHIFTS = {ast.LShift: ("shift_left", operator.lshift), ast.RShift: ("shift_right", operator.rshift)}
_CMP_NODES = {ast.Eq: tir_expr.EQ, ast.NotEq: tir_expr.NE, ast.Lt: tir_expr.LT, ast.LtE: tir_expr.LE,
              ast.Gt: tir_expr.GT, ast.GtE: tir_expr.GE}
_CMP_PY = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
# Callables that name what they create after the variable they are assigned to.
_NAMED = (_T.DTypeFactory, _T.BufferFactory)
_NAMED_FUNCS = {id(_T.decl_buffer), id(_T.alloc_buffer)}
_ERRORS = (GraphcError, TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError)


def is_ir(value) -> bool:
    return isinstance(value, tir_expr.PrimExpr | tir_expr.EqualOp)


def range_extent(lo, hi):
    """`hi - lo` as the printer wrote it: `lo + e` gives back `e` exactly."""
    if isinstance(hi, tir_expr.Add) and _same(hi.a, lo):
        return hi.b
    return hi - lo


def _same(a, b) -> bool:
    """Equal expressions with the very same variables (no renaming allowed)."""
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, tir_expr.Var) or not isinstance(a, tir_expr.PrimExpr):
        return isinstance(a, int | float | str) and a == b
    fields = a.__dataclass_fields__
    return all(_same_field(getattr(a, f), getattr(b, f)) for f in fields)


def _same_field(x, y) -> bool:
    if isinstance(x, tuple):
        return isinstance(y, tuple) and len(x) == len(y) and all(_same_field(p, q) for p, q in zip(x, y))
    if isinstance(x, tir_expr.PrimExpr):
        return _same(x, y)
    return x is y or x == y


class Evaluator:
    """Evaluates ast expressions; `scopes` is a stack of name -> value dicts."""

    def __init__(self, source, globals_dict: dict, extra: dict | None = None):
        self.source = source
        self.globals = globals_dict
        self.extra = extra or {}
        self.scopes: list[dict] = [{}]

    # -- names ------------------------------------------------------------------------------
    def lookup(self, name: str, default=_MISSING):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        for table in (self.extra, self.globals):
            if name in table:
                return table[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        if name in ("T", "I"):
            return _T if name == "T" else _I
        return default

    def bind(self, name: str, value) -> None:
        self.scopes[-1][name] = value

    def error(self, node, message: str) -> ScriptError:
        return self.source.error(node, message)

    # -- evaluation -------------------------------------------------------------------------
    def eval(self, node, name_hint: str | None = None):
        method = getattr(self, f"eval_{type(node).__name__}", None)
        if method is None:
            raise self.error(node, f"unsupported expression ({type(node).__name__}) in a script function")
        if name_hint is not None and isinstance(node, ast.Call | ast.Subscript):
            return method(node, name_hint)
        return method(node)

    def eval_Constant(self, node):
        return node.value

    def eval_Name(self, node):
        value = self.lookup(node.id)
        if value is _MISSING:
            raise self.error(node, f"unknown name {node.id!r}: expected a variable, buffer or "
                                   f"parameter defined before this point, or a module-level name")
        return value

    def eval_Attribute(self, node):
        base = self.eval(node.value)
        if isinstance(base, Buffer) and node.attr not in ("data", "shape", "strides", "elem_offset",
                                                          "dtype", "name", "scope", "ndim"):
            raise self.error(node, f"buffers have no script attribute {node.attr!r} "
                                   "(expected data, shape, strides, elem_offset, dtype or scope)")
        try:
            return getattr(base, node.attr)
        except AttributeError:
            owner = "T" if base is _T else "I" if base is _I else type(base).__name__
            raise self.error(node, f"{owner} has no attribute {node.attr!r}") from None

    def eval_Tuple(self, node):
        return tuple(self._elements(node.elts))

    def eval_List(self, node):
        return list(self._elements(node.elts))

    def _elements(self, elts):
        for elt in elts:
            if isinstance(elt, ast.Starred):
                yield from self.eval(elt.value)
            else:
                yield self.eval(elt)

    def eval_Dict(self, node):
        return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}

    def eval_IfExp(self, node):
        cond = self.eval(node.test)
        if is_ir(cond):
            return self.guard(node, lambda: tir_expr.select(cond, self.eval(node.body),
                                                            self.eval(node.orelse)))
        return self.eval(node.body) if cond else self.eval(node.orelse)

    def guard(self, node, fn):
        """Run `fn`, turning errors from IR builders into ScriptErrors at `node`."""
        try:
            return fn()
        except ScriptError:
            raise
        except _ERRORS as err:
            raise self.error(node, str(err)) from err

    def eval_BinOp(self, node):
        a, b = self.eval(node.left), self.eval(node.right)
        op = type(node.op)
        if op in _SHIFTS:
            name, py = _SHIFTS[op]
            fn = (lambda x, y: getattr(_T, name)(x, y)) if is_ir(a) or is_ir(b) else py
            return self.guard(node, lambda: fn(a, b))
        if op not in _BINOPS:
            raise self.error(node, f"unsupported operator {op.__name__}")
        return self.guard(node, lambda: _BINOPS[op](a, b))

    def eval_UnaryOp(self, node):
        value = self.eval(node.operand)
        op = type(node.op)
        if op is ast.Not:
            return self.guard(node, lambda: tir_expr.logical_not(value)) if is_ir(value) else not value
        if op is ast.USub:
            return self.guard(node, lambda: -value)
        if op is ast.UAdd:
            return value
        return self.guard(node, lambda: ~value)

    def eval_BoolOp(self, node):
        values = [self.eval(v) for v in node.values]
        if not any(is_ir(v) for v in values):
            result = values[0]
            for v in values[1:]:
                result = (result and v) if isinstance(node.op, ast.And) else (result or v)
            return result
        fn = tir_expr.logical_and if isinstance(node.op, ast.And) else tir_expr.logical_or
        result = values[0]
        for v in values[1:]:
            result = self.guard(node, lambda r=result, v=v: fn(r, v))
        return result

    def eval_Compare(self, node):
        left = self.eval(node.left)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node)
            if is_ir(left) or is_ir(right):
                cls = _CMP_NODES.get(type(op))
                if cls is None:
                    raise self.error(node, f"operator {type(op).__name__} does not apply to expressions")
                part = self.guard(node, lambda c=cls, a=left, b=right: tir_expr._compare(
                    c, tir_expr.convert(a), b))
            else:
                part = _CMP_PY[type(op)](left, right)
            if result is None:
                result = part
            elif is_ir(part) or is_ir(result):
                result = self.guard(node, lambda r=result, p=part: tir_expr.logical_and(r, p))
            else:
                result = result and part
            left = right
        return result

    def eval_Call(self, node, name_hint: str | None = None):
        func = self.eval(node.func)
        if func is _T.Let and node.args and isinstance(node.args[0], ast.Name) and len(node.args) == 3:
            return self.let_expr(node)
        if isinstance(func, _T.ScriptOnly):
            raise self.error(node, f"{func!r}(...) is a statement here; use it on a line of its own "
                                   "where the script syntax allows it")
        args = list(self._elements(node.args))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value))
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        if name_hint is not None and "name" not in kwargs and (
            isinstance(func, _NAMED) or id(func) in _NAMED_FUNCS
        ):
            kwargs["name"] = name_hint
        try:
            return self.guard(node, lambda: func(*args, **kwargs))
        except ScriptError as err:
            if isinstance(err.__cause__, TypeError):  # wrong arguments: name the callee
                raise self.error(node, f"in call to {ast.unparse(node.func)}: {err.__cause__}") from err
            raise

    def let_expr(self, node):
        """`T.Let(x, value, body)`: `x` is a new variable visible only in `body`."""
        value = tir_expr.convert(self.eval(node.args[1]))
        var = tir_expr.Var(node.args[0].id, value.dtype)
        self.scopes.append({var.name: var})
        try:
            body = self.eval(node.args[2])
        finally:
            self.scopes.pop()
        return self.guard(node, lambda: tir_expr.let(var, value, body))

    def eval_Subscript(self, node, name_hint: str | None = None):
        base = self.eval(node.value)
        if isinstance(base, _T.BufferFactory):
            keys = self.eval(node.slice)
            keys = keys if isinstance(keys, tuple) else (keys,)
            return self.guard(node, lambda: base(*keys, name=name_hint or "buffer"))
        if isinstance(base, Buffer):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(item, ast.Slice) for item in items):
                return self.region(node, base, items)
            indices = tuple(self._elements(items))
            return self.guard(node, lambda: base[indices])
        index = self.eval(node.slice)
        return self.guard(node, lambda: base[index])

    def eval_Slice(self, node):
        raise self.error(node, "a slice is only allowed when indexing a buffer region")

    def region(self, node, buffer: Buffer, items) -> BufferRegion:
        """`A[i, 0:n]` as a BufferRegion (points have extent 1)."""
        ranges = []
        for dim, item in enumerate(items):
            if isinstance(item, ast.Slice):
                lo = tir_expr.convert(self.eval(item.lower)) if item.lower is not None else None
                hi = self.eval(item.upper) if item.upper is not None else buffer.shape[dim]
                if lo is None:
                    lo = tir_expr.const(0, tir_expr.convert(hi).dtype)
                extent = self.guard(item, lambda lo=lo, hi=hi: tir_expr.convert(range_extent(lo, hi)))
                ranges.append(tir_expr.Range(lo, extent))
            else:
                index = tir_expr.convert(self.eval(item))
                ranges.append(tir_expr.Range(index, tir_expr.const(1, index.dtype)))
        return BufferRegion(buffer, tuple(ranges))
