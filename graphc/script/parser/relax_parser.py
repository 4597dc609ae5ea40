"""The Relax function parser: `@R.function` source to a normalized `relax.Function`.

Statements map to bindings one by one: `v: ann = value` (the value is normalized through a
BlockBuilder, so its struct info is inferred and checked against the annotation),
`v = R.match_cast(x, sinfo)`, `with R.dataflow(): ... R.output(a, b)`, `if c: ... else: ...`
(each branch ends with `v = result`), `return value`. `R.func_attr({...})`, symbolic
variable declarations (`n = T.int64()`) and `cls = Module` are declarations, not bindings.

>>> from graphc.script import from_source
>>> f = from_source('''
... @R.function
... def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
...     n = T.int64()
...     with R.dataflow():
...         lv: R.Tensor((n, 4), dtype="float32") = R.add(x, x)
...         gv: R.Tensor((n, 4), dtype="float32") = R.nn.relu(lv)
...         R.output(gv)
...     return gv
... ''')
>>> [type(v).__name__ for v in (f.body.blocks[0].bindings[0].var, f.body.body)]
['DataflowVar', 'Var']
"""

from __future__ import annotations

import ast
import sys

from ...relax import expr as relax_expr
from ...relax.block_builder import finish_seq
from ...relax.struct_info import is_base_of
from .. import relax as R
from .. import tir as T
from .entry import FUNCTION_PARSERS, _closure, _decorator_info, _first_def, _source_of
from .evaluator import Evaluator
from .relax_eval import ModuleContext, ModuleRef, ParserBuilder, RelaxEvaluator, guarded


def decorator_options(ev: Evaluator, node: ast.FunctionDef) -> dict | None:
    """The keyword options of `@R.function(...)` on `node`; None when it is not a Relax function."""
    if not node.decorator_list:
        return None
    dec, kwargs = _decorator_info(ev, node.decorator_list[0])
    return kwargs if dec is R.function else None


def declare_symbols(ev: RelaxEvaluator, body: list, skip: set) -> None:
    """Bind each `n = T.int64()` of the body as a symbolic variable (ids of those lines go to `skip`)."""
    for stmt in body:
        single = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
        if not (single and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)
                and not stmt.value.args):
            continue
        try:
            factory = ev.eval(stmt.value.func)
        except SyntaxError:
            continue
        if isinstance(factory, T.DTypeFactory):
            name = stmt.targets[0].id
            var = ev.symbols.get(name)
            if var is None or var.dtype != factory.dtype:
                var = ev.symbols[name] = factory(name=name)
            ev.bind(name, var)
            skip.add(id(stmt))


class FunctionParser:
    """Parses one `@R.function` definition."""

    def __init__(self, ev: Evaluator, node: ast.FunctionDef, private: bool, pure: bool):
        self.module = ModuleContext.of(ev) if getattr(ev, "module_node", None) is not None else None
        self.ev = RelaxEvaluator(ev.source, ev.globals, ev.extra)
        self.ev.scopes = [dict(s) for s in ev.scopes] + [{}]
        self.node, self.private, self.pure = node, private, pure
        self.bb = ParserBuilder(self.module)
        self.attrs: dict = {}
        self.skip: set = set()
        self.outputs: set | None = None  # names R.output makes visible, inside a dataflow block

    def error(self, node, message: str):
        return self.ev.error(node, message)

    def parse(self) -> relax_expr.Function:
        node, ev = self.node, self.ev
        with R.symbol_scope({}) as symbols:
            ev.symbols = symbols
            declare_symbols(ev, node.body, self.skip)
            params = []
            for arg in node.args.args:
                if arg.annotation is None:
                    raise self.error(arg, f"parameter {arg.arg!r} needs struct info: "
                                          'x: R.Tensor((n, 4), dtype="float32")')
                sinfo = guarded(ev, arg.annotation, lambda a=arg: R.to_sinfo(ev.eval(a.annotation)))
                params.append(relax_expr.Var(arg.arg, sinfo))
                ev.bind(arg.arg, params[-1])
            ret = None
            if node.returns is not None:
                ret = guarded(ev, node.returns, lambda: R.to_sinfo(ev.eval(node.returns)))
            self.bb.begin_scope()
            result = self.parse_stmts(node.body, final=True)
            blocks = self.bb.end_scope()
        body = finish_seq(None, blocks, result)
        if ret is not None and not is_base_of(ret, body.struct_info, self.bb.analyzer):
            raise self.error(node.returns, f"function {node.name!r} is annotated to return {ret}, but its "
                                           f"body has struct info {body.struct_info}")
        attrs = dict(self.attrs)
        if not self.private:
            attrs.setdefault("global_symbol", node.name)
        return relax_expr.Function(params, body, ret, self.pure, attrs)

    # -- statements -------------------------------------------------------------------------
    def parse_stmts(self, stmts: list, final: bool = False):
        """Parse `stmts`; with `final`, the last one must be `return value` (its value is returned)."""
        for i, stmt in enumerate(stmts):
            last = i == len(stmts) - 1
            if isinstance(stmt, ast.Return):
                if not (final and last):
                    raise self.error(stmt, "`return` must be the last statement of the function")
                return self.return_value(stmt)
            self.parse_stmt(stmt)
        if final:
            raise self.error(stmts[-1] if stmts else self.node, f"function {self.node.name!r} must end "
                                                                "with `return value`")
        return None

    def parse_stmt(self, stmt) -> None:
        if id(stmt) in self.skip or isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return  # docstring
            func = self.ev.eval(stmt.value.func) if isinstance(stmt.value, ast.Call) else None
            if func is R.func_attr:
                return self.attrs.update(self.ev.eval(stmt.value.args[0]))
            if func is R.output:
                raise self.error(stmt, "R.output(...) must be the last statement of `with R.dataflow():`")
            return self.bind(stmt, "_", None, stmt.value)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and len(stmt.targets) == 1:
            if self.module is not None and stmt.value.id == self.module.name:
                return self.ev.bind(stmt.targets[0].id, self.module.ref())  # cls = Module
            if self.module is None and self.ev.lookup(stmt.value.id, None) is None:
                # a standalone function printed from a module: `cls.f` names GlobalVars of no module
                return self.ev.bind(stmt.targets[0].id, ModuleRef(stmt.value.id, None))
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            if isinstance(stmt, ast.Assign) and len(stmt.targets) != 1 or not isinstance(target, ast.Name):
                raise self.error(stmt, "a binding assigns one name: `lv: R.Tensor(...) = value`")
            return self.bind(stmt, target.id, getattr(stmt, "annotation", None), stmt.value)
        if isinstance(stmt, ast.With):
            return self.dataflow(stmt)
        if isinstance(stmt, ast.If):
            return self.if_stmt(stmt)
        raise self.error(stmt, f"unsupported statement ({type(stmt).__name__}) in a Relax function; expected "
                               "bindings, `with R.dataflow():`, `if`/`else` or `return`")

    def make_var(self, name: str, sinfo) -> relax_expr.Var:
        dataflow = self.outputs is not None and name not in self.outputs
        return (relax_expr.DataflowVar if dataflow else relax_expr.Var)(name, sinfo)

    def annotation(self, ann):
        return None if ann is None else guarded(self.ev, ann, lambda: R.to_sinfo(self.ev.eval(ann)))

    def check(self, stmt, name: str, ann_node, ann, inferred):
        """The var's struct info: the annotation, which must describe the inferred struct info."""
        if ann is None:
            return inferred
        if not is_base_of(ann, inferred, self.bb.analyzer):
            raise self.error(stmt, f"in {self.node.name}, binding {name!r} is annotated {ann}, but its value "
                                   f"has struct info {inferred}; fix the annotation or the value")
        return ann

    def bind(self, stmt, name: str, ann_node, value_node) -> relax_expr.Var:
        ev, bb = self.ev, self.bb
        value = ev.eval(value_node)
        ann = self.annotation(ann_node)
        where = f"in {self.node.name}, binding {name!r}"
        if isinstance(value, R.MatchCastValue):
            arg = guarded(ev, value_node, lambda: bb.normalize_arg(value.value))
            var = self.make_var(name, self.check(stmt, name, ann_node, ann, value.struct_info))
            binding = relax_expr.MatchCast(var, arg, value.struct_info)
        else:
            expr = guarded(ev, value_node, lambda: R.to_expr(value))
            norm = guarded(ev, value_node, lambda: _with_context(where, lambda: bb.normalize(expr)))
            statement_kinds = (relax_expr.If, relax_expr.SeqExpr, relax_expr.Function)
            if isinstance(norm, statement_kinds) and not isinstance(expr, relax_expr.Var):
                raise self.error(value_node, f"{type(norm).__name__} values are written as statements")
            var = self.make_var(name, self.check(stmt, name, ann_node, ann, norm.struct_info))
            binding = relax_expr.VarBinding(var, norm)
        guarded(ev, value_node, lambda: bb._check_visible(binding.value))
        guarded(ev, stmt, lambda: bb.emit_normalized(binding))
        ev.bind(name, var)
        return var

    def return_value(self, stmt):
        if stmt.value is None:
            raise self.error(stmt, "a Relax function returns a value: `return gv`")
        expr = guarded(self.ev, stmt.value, lambda: R.to_expr(self.ev.eval(stmt.value)))
        norm = guarded(self.ev, stmt.value, lambda: self.bb.normalize(expr))
        guarded(self.ev, stmt.value, lambda: self.bb._check_visible(norm, "the function's return value"))
        if relax_expr.is_leaf(norm) or isinstance(norm, relax_expr.Tuple):
            return norm
        var = relax_expr.Var("gv", norm.struct_info)
        self.bb.emit_normalized(relax_expr.VarBinding(var, norm))
        return var

    def dataflow(self, stmt: ast.With) -> None:
        items = stmt.items
        if len(items) != 1 or not isinstance(items[0].context_expr, ast.Call) or \
                self.ev.eval(items[0].context_expr.func) is not R.dataflow:
            raise self.error(stmt, "the only `with` of a Relax function is `with R.dataflow():`")
        if self.outputs is not None:
            raise self.error(stmt, "dataflow blocks cannot be nested")
        body = stmt.body
        last = body[-1]
        is_output = isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
            self.ev.eval(last.value.func) is R.output
        if not is_output:
            raise self.error(last, "a dataflow block ends with R.output(...) naming the vars used after it")
        names = []
        for arg in last.value.args:
            if not isinstance(arg, ast.Name):
                raise self.error(arg, "R.output(...) takes the names of variables bound in the block")
            names.append(arg.id)
        self.outputs = set(names)
        self.bb.begin_dataflow_block()
        bound: set = set()
        try:
            for inner in body[:-1]:
                self.parse_stmt(inner)
                if isinstance(inner, ast.Assign | ast.AnnAssign):
                    target = inner.targets[0] if isinstance(inner, ast.Assign) else inner.target
                    bound.add(getattr(target, "id", None))
        finally:
            self.outputs = None
            self.bb.end_block()
        for arg in last.value.args:
            if arg.id not in bound:
                raise self.error(arg, f"R.output names {arg.id!r}, which the dataflow block does not bind")

    def if_stmt(self, stmt: ast.If) -> None:
        if not stmt.orelse:
            raise self.error(stmt, "an `if` in a Relax function needs an `else` branch")
        cond = guarded(self.ev, stmt.test, lambda: self.bb.normalize_arg(R.to_expr(self.ev.eval(stmt.test))))
        true_seq, name, ann_node = self.branch(stmt.body)
        false_seq, other, _ = self.branch(stmt.orelse)
        if name != other:
            raise self.error(stmt.orelse[-1], f"both branches must end by assigning the same variable "
                                              f"(the true branch assigns {name!r}, this one {other!r})")
        value = guarded(self.ev, stmt, lambda: self.bb.normalize(relax_expr.If(cond, true_seq, false_seq)))
        ann = self.annotation(ann_node)
        var = self.make_var(name, self.check(stmt, name, ann_node, ann, value.struct_info))
        self.bb.emit_normalized(relax_expr.VarBinding(var, value))
        self.ev.bind(name, var)

    def branch(self, stmts: list):
        """A branch as a SeqExpr whose body is the value its last line assigns."""
        last = stmts[-1]
        target = last.targets[0] if isinstance(last, ast.Assign) else getattr(last, "target", None)
        if not isinstance(target, ast.Name):
            raise self.error(last, "each branch of an `if` ends with `v = value` (v is the if's result)")
        self.bb.begin_scope()
        self.ev.scopes.append({})
        outputs, self.outputs = self.outputs, None
        try:
            self.parse_stmts(stmts[:-1])
            expr = guarded(self.ev, last.value, lambda: R.to_expr(self.ev.eval(last.value)))
            body = guarded(self.ev, last.value, lambda: self.bb.normalize(expr))
            if not (relax_expr.is_leaf(body) or isinstance(body, relax_expr.Tuple)):
                var = relax_expr.Var(target.id, body.struct_info)
                self.bb.emit_normalized(relax_expr.VarBinding(var, body))
                body = var
        finally:
            self.outputs = outputs
            self.ev.scopes.pop()
            blocks = self.bb.end_scope()
        return finish_seq(None, blocks, body), target.id, getattr(last, "annotation", None)


def _with_context(where: str, fn):
    from ...errors import TypeInferenceError

    try:
        return fn()
    except TypeInferenceError as err:
        raise type(err)(f"{err} ({where})") from err


def parse_function(ev: Evaluator, node: ast.FunctionDef, private: bool = False, pure: bool = True,
                   check_well_formed: bool = True) -> relax_expr.Function:
    """The Relax Function an `@R.function` definition describes."""
    return FunctionParser(ev, node, private, pure).parse()


def parse_decorated(func, private: bool = False, pure: bool = True, depth: int = 2) -> relax_expr.Function:
    """`@R.function` on a plain (non-method) Python function: parse its source."""
    caller = sys._getframe(depth + 1)
    source = _source_of(func)
    ev = Evaluator(source, func.__globals__, {**caller.f_locals, **_closure(func)})
    node = _first_def(source, ast.FunctionDef)
    node.decorator_list = []
    return parse_function(ev, node, private, pure)


FUNCTION_PARSERS[id(R.function)] = parse_function
