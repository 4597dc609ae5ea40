"""Entry points of the parser: `@T.prim_func`, `@I.ir_module` and `from_source`.

The decorated function or class is never run: its source is read with `inspect`, parsed
with `ast`, and names that are not script names are looked up in the caller's closure,
frame and module globals (so `N = 128` at module level can size a buffer).
Other IRs register their function decorators in `FUNCTION_PARSERS`.
"""

from __future__ import annotations

import ast
import inspect
import sys

from ...errors import ScriptError
from ...ir.module import GlobalVar, IRModule
from ...tir import expr as tir_expr
from ...tir import stmt as tir_stmt
from ...tir.function import PrimFunc
from .. import ir as I
from .. import tir as T
from .diagnostics import Source
from .evaluator import Evaluator
from .frames import FuncFrame
from .tir_parser import TIRParser


def _decorator_info(ev: Evaluator, dec) -> tuple[object, dict]:
    """(decorator object, its keyword arguments) for `@T.prim_func` or `@T.prim_func(private=True)`."""
    if isinstance(dec, ast.Call):
        return ev.eval(dec.func), {kw.arg: ev.eval(kw.value) for kw in dec.keywords}
    return ev.eval(dec), {}


def _predeclare(parser: TIRParser, body: list) -> None:
    """Create the `n = T.int32()` variables first, so parameter annotations may use them."""
    for stmt in body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target, value = stmt.targets[0], stmt.value
        pairs = []
        if isinstance(target, ast.Name):
            pairs = [(target.id, value)]
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            pairs = [(t.id, v) for t, v in zip(target.elts, value.elts) if isinstance(t, ast.Name)]
        for name, val in pairs:
            if isinstance(val, ast.Call) and not val.args:
                try:
                    func = parser.ev.eval(val.func)
                except ScriptError:
                    continue
                if isinstance(func, T.DTypeFactory):
                    var = parser.ev.eval(val, name)
                    parser.predeclared[id(val)] = var
                    parser.ev.bind(name, var)


def parse_prim_func(ev: Evaluator, node: ast.FunctionDef, private: bool = False) -> PrimFunc:
    """The PrimFunc a `@T.prim_func` function definition describes."""
    parser = TIRParser(ev)
    frame = FuncFrame(node.name)
    ev.scopes.append({})
    try:
        _predeclare(parser, node.body)
        params = []
        for arg in node.args.args:
            if arg.annotation is None:
                raise ev.error(arg, f"parameter {arg.arg!r} needs a type: T.handle, T.int32, "
                                    'T.Buffer((n,), "float32"), ...')
            ann = ev.eval(arg.annotation, arg.arg)
            if isinstance(ann, T.DTypeFactory):
                var = tir_expr.Var(arg.arg, ann.dtype)
                ev.bind(arg.arg, var)
            elif isinstance(ann, T.BufferFactory):
                raise ev.error(arg.annotation, 'T.Buffer needs a shape and dtype: T.Buffer((n,), "float32")')
            elif hasattr(ann, "shape") and hasattr(ann, "data"):
                var = tir_expr.Var(arg.arg, "handle")
                frame.buffer_map[var] = ann
                ev.bind(arg.arg, ann)
            else:
                raise ev.error(arg.annotation,
                               f"expected T.handle, a scalar type or T.Buffer(...), got {ann!r}")
            params.append(var)
        parser.frames.append(frame)
        body = parser.parse_body(node.body)
    finally:
        ev.scopes.pop()
    body = _wrap_root(body, frame.alloc_buffers)
    attrs = dict(frame.attrs)
    if not private and "global_symbol" not in attrs:
        attrs = {"global_symbol": node.name, **attrs}
    buffer_map = {p: frame.buffer_map[p] for p in params if p in frame.buffer_map}
    return PrimFunc(params, body, None, buffer_map, attrs)


def _wrap_root(body, alloc_buffers) -> tir_stmt.Stmt:
    from ..printer.function import contains_block

    explicit = (isinstance(body, tir_stmt.BlockRealize) and body.block.name_hint == "root"
                and not body.block.iter_vars)
    if explicit and not alloc_buffers:
        return body
    if not alloc_buffers and not contains_block(body):
        return body
    root = tir_stmt.Block((), (), (), "root", body, None, tuple(alloc_buffers), (), {})
    return tir_stmt.BlockRealize((), tir_expr.const(True), root)


def _parse_function(ev: Evaluator, node: ast.FunctionDef):
    if not node.decorator_list:
        raise ev.error(node, f"function {node.name!r} needs a decorator such as @T.prim_func")
    dec, kwargs = _decorator_info(ev, node.decorator_list[0])
    parser = FUNCTION_PARSERS.get(id(dec))
    if parser is None:
        raise ev.error(node.decorator_list[0],
                       f"unknown function decorator {dec!r}; expected @T.prim_func or @R.function")
    return parser(ev, node, **kwargs)


def _prim_func_rule(ev, node, private: bool = False, check_well_formed: bool = True):
    return parse_prim_func(ev, node, private)


# id(decorator object) -> fn(evaluator, ast.FunctionDef, **decorator kwargs) -> function
FUNCTION_PARSERS: dict[int, object] = {id(T.prim_func): _prim_func_rule}


def parse_module(ev: Evaluator, node: ast.ClassDef) -> IRModule:
    """The IRModule an `@I.ir_module` class describes."""
    mod = IRModule()
    # Functions refer to each other (`cls.f` in Relax) through these GlobalVars.
    ev.module_node = node
    ev.global_vars = {s.name: GlobalVar(s.name) for s in node.body if isinstance(s, ast.FunctionDef)}
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef):
            mod[ev.global_vars[stmt.name]] = _parse_function(ev, stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                ev.eval(stmt.value.func) is I.module_attrs:
            mod.attrs.update(ev.eval(stmt.value.args[0]))
        elif isinstance(stmt, ast.Pass) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue
        else:
            raise ev.error(stmt, "an @I.ir_module class may only contain decorated functions and "
                                 "I.module_attrs({...})")
    return mod


def _default_globals() -> dict:
    from .. import relax as R

    return {"T": T, "I": I, "R": R}


def from_source(text: str, globals_dict=None):
    """Parse script text: the first `@I.ir_module` class or `@T.prim_func` function in it."""
    source = Source(text)
    tree = source.parse()
    ev = Evaluator(source, {**_default_globals(), **(globals_dict or {})})
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            ev.globals[node.targets[0].id] = ev.eval(node.value)  # e.g. the `metadata = {...}` section
        if isinstance(node, ast.ClassDef):
            return parse_module(ev, node)
        if isinstance(node, ast.FunctionDef):
            return _parse_function(ev, node)
    raise ScriptError("<string>: error: expected an @I.ir_module class or a @T.prim_func function "
                      "in the source text, found neither")


def _source_of(obj) -> Source:
    try:
        lines, first = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or "<unknown>"
    except (OSError, TypeError) as err:
        raise ScriptError(f"cannot read the source of {obj!r} ({err}); use graphc.script.from_source(text) "
                          "for code that has no source file") from None
    return Source("".join(lines), filename, first)


def _closure(func) -> dict:
    cells = getattr(func, "__closure__", None) or ()
    out = {}
    for name, cell in zip(func.__code__.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            continue
    return out


def _first_def(source: Source, kind):
    for node in source.parse().body:
        if isinstance(node, kind):
            return node
    raise ScriptError(f"{source.filename}: error: could not find the definition in its source")


def prim_func_decorator(func, private: bool = False, depth: int = 2):
    if func is None:
        return lambda f: prim_func_decorator(f, private, depth=2)
    qual = func.__qualname__.split(".")
    if len(qual) > 1 and qual[-2] != "<locals>":
        func.__graphc_private__ = private  # a method of an @I.ir_module class: the module parses it
        return func
    caller = sys._getframe(depth)
    source = _source_of(func)
    ev = Evaluator(source, func.__globals__, {**caller.f_locals, **_closure(func)})
    node = _first_def(source, ast.FunctionDef)
    node.decorator_list = []
    return parse_prim_func(ev, node, private)


def ir_module_decorator(cls):
    caller = sys._getframe(2)
    module = sys.modules.get(cls.__module__)
    globals_dict = dict(vars(module)) if module is not None else {}
    extra = dict(caller.f_locals)
    for value in vars(cls).values():
        if callable(value) and hasattr(value, "__code__"):
            extra.update(_closure(value))
    source = _source_of(cls)
    ev = Evaluator(source, globals_dict, extra)
    return parse_module(ev, _first_def(source, ast.ClassDef))


from . import relax_parser as _relax_parser  # noqa: E402,F401  (registers @R.function in FUNCTION_PARSERS)
