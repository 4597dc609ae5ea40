"""Parsing the body of a `@T.prim_func`: statements, loops, blocks and scoped bindings.

Each Python statement kind has a `visit_<Kind>` method returning a Stmt, None (the line
only declared something, e.g. `T.reads`) or a `Wrap` that scopes over the rest of the
sequence (`x: T.int32 = v`, `A = T.allocate(...)`, `assert c, "msg"`).
Script-only calls (`T.reads`, `T.axis.remap`, ...) dispatch on the T object's identity.
"""

from __future__ import annotations

import ast
import builtins

from ...ir.dtype import canonical
from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from ...tir.buffer import Buffer
from .. import tir as T
from .block_parser import BlockRules
from .evaluator import _BINOPS, Evaluator, is_ir, range_extent
from .frames import BlockFrame, FuncFrame, Wrap, seq

_FOR_KINDS = {id(T.serial): tir_stmt.ForKind.SERIAL, id(T.parallel): tir_stmt.ForKind.PARALLEL,
              id(T.vectorized): tir_stmt.ForKind.VECTORIZED, id(T.unroll): tir_stmt.ForKind.UNROLLED,
              id(T.thread_binding): tir_stmt.ForKind.THREAD_BINDING}


class TIRParser(BlockRules):
    """Turns the statements of one script function into TensorIR."""

    def __init__(self, ev: Evaluator):
        self.ev = ev
        self.frames: list = []
        self.loop_extents: dict[int, tir_expr.PrimExpr] = {}
        self.thread_ivs: dict[int, tir_stmt.IterVar] = {}
        self.predeclared: dict[int, object] = {}

    def error(self, node, message: str):
        return self.ev.error(node, message)

    # -- sequences and scopes ---------------------------------------------------------------
    def parse_body(self, stmts: list) -> tir_stmt.Stmt:
        out = []
        for k, node in enumerate(stmts):
            result = self.ev.guard(node, lambda n=node: self.visit(n))
            if isinstance(result, Wrap):
                out.append(result.make(self.parse_body(stmts[k + 1:])))
                break
            if result is not None:
                out.append(result)
        return seq(out)

    def scoped_body(self, stmts: list, bindings: dict | None = None) -> tir_stmt.Stmt:
        self.ev.scopes.append(dict(bindings or {}))
        try:
            return self.parse_body(stmts)
        finally:
            self.ev.scopes.pop()

    def visit(self, node):
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise self.error(node, f"unsupported statement ({type(node).__name__}) in a TensorIR function")
        return method(node)

    def callee(self, node):
        """The object a call node calls (evaluated without calling it), else None."""
        if isinstance(node, ast.Call):
            return self.ev.eval(node.func)
        return None

    def call_args(self, node: ast.Call) -> tuple[list, dict]:
        args = list(self.ev._elements(node.args))
        return args, {kw.arg: self.ev.eval(kw.value) for kw in node.keywords}

    def innermost(self, *kinds):
        for frame in reversed(self.frames):
            if isinstance(frame, kinds):
                return frame
        return None

    # -- simple statements ------------------------------------------------------------------
    def visit_Pass(self, node):
        return None

    def visit_Expr(self, node):
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return None  # a docstring
        func = self.callee(value)
        if isinstance(func, T.ScriptOnly):
            rule = self.STMT_CALLS.get(func.name)
            if rule is None:
                raise self.error(value, f"{func!r}(...) cannot be used as a statement here")
            args, kwargs = self.call_args(value)
            return self.ev.guard(value, lambda: rule(self, value, *args, **kwargs))
        result = self.ev.eval(value)
        if isinstance(result, tir_expr.PrimExpr):
            return tir_stmt.Evaluate(result)
        if result is None:
            return None
        raise self.error(value, f"expected a statement or an expression to evaluate, got a "
                                f"{type(result).__name__} that would be discarded")

    def visit_Assign(self, node):
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment (a = b = ...) is not supported")
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return self.store(node, target, self.ev.eval(node.value))
        if isinstance(target, ast.Tuple):
            return self.assign_tuple(node, target)
        if not isinstance(target, ast.Name):
            raise self.error(target, "expected a name or a buffer element on the left of '='")
        return self.assign_name(node, target.id, node.value)

    def assign_name(self, node, name: str, value_node):
        func = self.callee(value_node)
        if isinstance(func, T.ScriptOnly):
            rule = self.ASSIGN_CALLS.get(func.name)
            if rule is None:
                raise self.error(value_node, f"{func!r}(...) cannot be assigned to a name")
            args, kwargs = self.call_args(value_node)
            return self.ev.guard(value_node, lambda: rule(self, value_node, name, *args, **kwargs))
        if id(value_node) in self.predeclared:
            self.ev.bind(name, self.predeclared[id(value_node)])
            return None
        if func is T.alloc_buffer:
            return self.alloc_buffer(value_node, name)
        if func is T.decl_buffer:
            buf = self.ev.eval(value_node, name)
            self.ev.bind(name, buf)
            return Wrap(lambda rest: tir_stmt.DeclBuffer(buf, rest))
        value = self.ev.eval(value_node, name)
        if isinstance(func, T.DTypeFactory) and isinstance(value, tir_expr.Var) and not value_node.args:
            self.ev.bind(name, value)  # `n = T.int32()` declares a variable
            return None
        if is_ir(value):
            value = tir_expr.convert(value)
            var = tir_expr.Var(name, value.dtype)
            self.ev.bind(name, var)
            return Wrap(lambda rest: tir_stmt.LetStmt(var, value, rest))
        self.ev.bind(name, value)
        return None

    def assign_tuple(self, node, target):
        names = [elt.id if isinstance(elt, ast.Name) else None for elt in target.elts]
        if None in names:
            raise self.error(target, "expected plain names on the left of a tuple assignment")
        func = self.callee(node.value)
        if func is T.axis.remap:
            args, kwargs = self.call_args(node.value)
            return self.axis_remap(node.value, names, *args, **kwargs)
        if isinstance(node.value, ast.Tuple) and len(node.value.elts) == len(names):
            results = [self.assign_name(node, n, v) for n, v in zip(names, node.value.elts)]
            if any(r is not None for r in results):
                raise self.error(node, "tuple assignment can only declare variables and buffers")
            return None
        values = self.ev.eval(node.value)
        if not isinstance(values, tuple | list) or len(values) != len(names):
            raise self.error(node, f"cannot unpack {type(values).__name__} into {len(names)} names")
        for name, value in zip(names, values):
            self.ev.bind(name, value)
        return None

    def visit_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "expected a name before ':' in an annotated assignment")
        ann = self.ev.eval(node.annotation)
        if not isinstance(ann, T.DTypeFactory):
            raise self.error(node.annotation, f"expected a type such as T.int32, got {ann!r}")
        name = node.target.id
        if node.value is None:
            self.ev.bind(name, tir_expr.Var(name, ann.dtype))
            return None
        value = tir_expr.convert(self.ev.eval(node.value), ann.dtype)
        var = tir_expr.Var(name, ann.dtype)
        self.ev.bind(name, var)
        return Wrap(lambda rest: tir_stmt.LetStmt(var, value, rest))

    def store(self, node, target: ast.Subscript, value):
        buf = self.ev.eval(target.value)
        if not isinstance(buf, Buffer):
            raise self.error(target.value, f"expected a buffer to store into, got {type(buf).__name__}")
        items = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        indices = tuple(tir_expr.convert(i) for i in self.ev._elements(items))
        if not is_ir(value):
            value = tir_expr.convert(value, buf.dtype)
        value = tir_expr.convert(value)
        lanes = max([tir_expr.DataType(i.dtype).lanes for i in indices] + [1])
        if tir_expr.DataType(value.dtype).element_of() != tir_expr.DataType(buf.dtype):
            raise self.error(node, f"cannot store a {value.dtype} value into buffer {buf.name} of dtype "
                                   f"{buf.dtype}; convert it with T.Cast({buf.dtype!r}, ...)")
        if lanes > 1 and tir_expr.DataType(value.dtype).lanes == 1:
            value = tir_expr.broadcast(value, lanes)
        return tir_stmt.BufferStore(buf, value, indices)

    def visit_AugAssign(self, node):
        target = node.target
        if not isinstance(target, ast.Subscript):
            raise self.error(target, "augmented assignment needs a buffer element, e.g. C[i] += x")
        current = self.ev.eval(target)
        value = self.ev.guard(node, lambda: _BINOPS[type(node.op)](current, self.ev.eval(node.value)))
        return self.store(node, target, value)

    def visit_If(self, node):
        cond = self.ev.eval(node.test)
        if not is_ir(cond):  # a Python-level condition is decided now
            chosen = node.body if cond else node.orelse
            return self.scoped_body(chosen) if chosen else None
        then_case = self.scoped_body(node.body)
        else_case = self.scoped_body(node.orelse) if node.orelse else None
        return tir_stmt.IfThenElse(tir_expr.convert(cond), then_case, else_case)

    def visit_While(self, node):
        return tir_stmt.While(tir_expr.convert(self.ev.eval(node.test)), self.scoped_body(node.body))

    def visit_Assert(self, node):
        cond = tir_expr.convert(self.ev.eval(node.test))
        message = self.ev.eval(node.msg) if node.msg is not None else ""
        message = tir_expr.StringImm(message) if isinstance(message, str) else message
        return Wrap(lambda rest: tir_stmt.AssertStmt(cond, message, rest))

    # -- loops ------------------------------------------------------------------------------
    def visit_For(self, node):
        if node.orelse:
            raise self.error(node, "for ... else is not supported in TensorIR")
        func = self.callee(node.iter)
        if not isinstance(node.iter, ast.Call) or func is None:
            raise self.error(node.iter,
                             "expected range(...), T.grid(...), T.serial(...) or another loop kind")
        args, kwargs = self.call_args(node.iter)
        if func is T.grid:
            loops = [(tir_expr.const(0, tir_expr.convert(a).dtype), tir_expr.convert(a),
                      tir_stmt.ForKind.SERIAL, None, {}) for a in args]
        elif func is builtins.range or id(func) in _FOR_KINDS:
            kind = _FOR_KINDS.get(id(func), tir_stmt.ForKind.SERIAL)
            loops = [self.loop_range(node.iter, kind, *args, **kwargs)]
        else:
            raise self.error(node.iter, f"expected range(...), T.grid(...) or a T loop kind, got {func!r}")
        names = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        if len(names) != len(loops) or not all(isinstance(n, ast.Name) for n in names):
            raise self.error(node.target, f"expected {len(loops)} loop variable name(s)")
        loop_vars = []
        for (_, extent, *_), name in zip(loops, names):
            var = tir_expr.Var(name.id, extent.dtype)
            loop_vars.append(var)
            self.loop_extents[id(var)] = extent
        body = self.scoped_body(node.body, {n.id: v for n, v in zip(names, loop_vars)})
        for var, (lo, extent, kind, thread, annots) in reversed(list(zip(loop_vars, loops))):
            binding = None
            if kind is tir_stmt.ForKind.THREAD_BINDING:
                binding = tir_stmt.IterVar(None, tir_expr.Var(thread, var.dtype),
                                           tir_stmt.IterType.THREAD_INDEX, thread)
            body = tir_stmt.For(var, lo, extent, kind, body, binding, dict(annots or {}))
        return body

    def loop_range(self, node, kind, start, stop=None, step=None, thread=None, annotations=None):
        if isinstance(stop, str):
            stop, thread = None, stop
        if step is not None and not (isinstance(step, int) and step == 1):
            raise self.error(node, "loops with a step other than 1 are not supported")
        if stop is None:
            start, stop = 0, start
        lo, hi = tir_expr.match_types(start,
                                      stop) if (is_ir(start) or is_ir(stop)) else (tir_expr.convert(start),
                                                                                   tir_expr.convert(stop))
        extent = tir_expr.convert(range_extent(lo, hi))
        if kind is tir_stmt.ForKind.THREAD_BINDING and not thread:
            raise self.error(node, 'T.thread_binding needs thread="threadIdx.x" (or another thread tag)')
        return lo, extent, kind, thread, annotations

    # -- statement calls --------------------------------------------------------------------
    def func_attr(self, node, attrs):
        frame = self.innermost(FuncFrame)
        if not isinstance(attrs, dict):
            raise self.error(node, f"T.func_attr expects a dict, got {type(attrs).__name__}")
        frame.attrs.update(attrs)

    def evaluate(self, node, value):
        return tir_stmt.Evaluate(tir_expr.convert(value))

    def attr(self, node, attr_node, key, value):
        value = tir_expr.convert(value)
        return Wrap(lambda rest: tir_stmt.AttrStmt(attr_node, key, value, rest))

    def launch_existing(self, node, var, extent):
        iv = self.thread_ivs.get(id(var))
        if iv is None:
            raise self.error(node, "T.launch_thread(var, extent) needs a var from T.env_thread(...); "
                                   'or write tx = T.launch_thread("threadIdx.x", extent)')
        extent = tir_expr.convert(extent)
        return Wrap(lambda rest: tir_stmt.AttrStmt(iv, "thread_extent", extent, rest))

    def launch_thread(self, node, name, tag, extent):
        if not isinstance(tag, str):
            return self.launch_existing(node, tag, extent)
        extent = tir_expr.convert(extent)
        var = tir_expr.Var(name, extent.dtype)
        iv = tir_stmt.IterVar(tir_expr.Range(tir_expr.const(0, extent.dtype), extent), var,
                              tir_stmt.IterType.THREAD_INDEX, tag)
        self.thread_ivs[id(var)] = iv
        self.ev.bind(name, var)
        return Wrap(lambda rest: tir_stmt.AttrStmt(iv, "thread_extent", extent, rest))

    def env_thread(self, node, name, tag, dtype="int32"):
        var = tir_expr.Var(name, dtype)
        self.thread_ivs[id(var)] = tir_stmt.IterVar(None, var, tir_stmt.IterType.THREAD_INDEX, tag)
        self.ev.bind(name, var)

    def allocate(self, node, name, extents, dtype="float32", scope="global", condition=True,
                 annotations=None):
        dtype = canonical(dtype)
        var = tir_expr.Var(name, "handle", type_annotation=dtype)
        extents = tuple(tir_expr.convert(e) for e in (extents if isinstance(extents,
                                                                            list | tuple) else [extents]))
        cond = tir_expr.convert(condition)
        self.ev.bind(name, var)
        return Wrap(lambda rest: tir_stmt.Allocate(var, dtype, extents, cond, rest, scope,
                                                   dict(annotations or {})))

    def match_buffer(self, node, name, source, shape, dtype="float32", **kwargs):
        kwargs.pop("buffer_type", None)
        buf = T.decl_buffer(shape, dtype, name=name, **kwargs)
        self.ev.bind(name, buf)
        if isinstance(source, tir_expr.Var):
            frame = self.innermost(FuncFrame)
            if frame is None or source.dtype != "handle":
                raise self.error(node, "T.match_buffer(handle, ...) expects a T.handle parameter")
            frame.buffer_map[source] = buf
            return None
        frame = self.innermost(BlockFrame)
        if frame is None:
            raise self.error(node, "T.match_buffer of a region must be inside a block")
        from .frames import to_region

        frame.match_buffers.append(tir_stmt.MatchBufferRegion(buf, to_region(source)))
        return None

    def alloc_buffer(self, node, name):
        buf = self.ev.eval(node, name)
        frame = self.innermost(BlockFrame, FuncFrame)
        frame.alloc_buffers.append(buf)
        self.ev.bind(name, buf)
        return None

    def with_launch(self, node, name, tag, extent):
        if isinstance(tag, str):
            return self.launch_thread(node, name or "v", tag, extent)
        return self.launch_existing(node, tag, extent)

    def with_let(self, node, name, value, dtype=None):
        value = tir_expr.convert(value)
        var = tir_expr.Var(name, dtype or value.dtype)
        self.ev.bind(name, var)
        return Wrap(lambda rest: tir_stmt.LetStmt(var, tir_expr.convert(value, var.dtype), rest))

    def with_assert(self, node, name, cond, message=""):
        message = tir_expr.StringImm(message) if isinstance(message, str) else message
        return Wrap(lambda rest: tir_stmt.AssertStmt(tir_expr.convert(cond), message, rest))

    def with_attr(self, node, name, attr_node, key, value):
        return self.attr(node, attr_node, key, value)

    def with_allocate(self, node, name, *args, **kwargs):
        return self.allocate(node, name or "buf", *args, **kwargs)

    STMT_CALLS = {
        "func_attr": func_attr, "evaluate": evaluate, "attr": attr,
        "launch_thread": lambda self, node, var, extent: self.launch_existing(node, var, extent),
        **BlockRules.STMT_CALLS,
    }
    ASSIGN_CALLS = {
        "match_buffer": match_buffer, "launch_thread": launch_thread, "env_thread": env_thread,
        "allocate": allocate, **BlockRules.ASSIGN_CALLS,
    }
    WITH_CALLS = {
        "launch_thread": with_launch, "LetStmt": with_let, "Assert": with_assert, "attr": with_attr,
        "allocate": with_allocate,
    }

    def visit_With(self, node):
        if len(node.items) != 1:
            raise self.error(node, "expected one context manager per with statement")
        item = node.items[0]
        func = self.callee(item.context_expr)
        target = item.optional_vars
        name = target.id if isinstance(target, ast.Name) else None
        if target is not None and name is None:
            raise self.error(target, "expected a plain name after 'as'")
        if func is T.decl_buffer:
            buf = self.ev.eval(item.context_expr, name)
            body = self.scoped_body(node.body, {name: buf} if name else {})
            return tir_stmt.DeclBuffer(buf, body)
        if isinstance(func, T.ScriptOnly) and func.name in self.BLOCK_WITH:
            args, kwargs = self.call_args(item.context_expr)
            return self.BLOCK_WITH[func.name](self, node, *args, **kwargs)
        if isinstance(func, T.ScriptOnly) and func.name in self.WITH_CALLS:
            args, kwargs = self.call_args(item.context_expr)
            self.ev.scopes.append({})
            try:
                wrap = self.WITH_CALLS[func.name](self, item.context_expr, name, *args, **kwargs)
                return wrap.make(self.parse_body(node.body))
            finally:
                self.ev.scopes.pop()
        raise self.error(item.context_expr,
                         "expected T.block(...), T.init(), T.launch_thread(...), T.allocate(...), "
                         "T.decl_buffer(...), T.LetStmt(...) or T.attr(...)")
