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

from ...ir.module import GlobalVar
from ...relax import expr as relax_expr
from ...relax.block_builder import finish_seq
from ...relax.struct_info import TupleStructInfo, is_base_of
from .. import relax as R
from .. import tir as T
from .entry import FUNCTION_PARSERS, _closure, _decorator_info, _first_def, _source_of
from .evaluator import Evaluator
from .frames import ModuleRef
from .relax_eval import ModuleContext, ParserBuilder, RelaxEvaluator, guarded


def decorator_options(ev: Evaluator, node: ast.FunctionDef) -> dict | None:
    """The keyword options of `@R.function(...)` on `node`; None when it is not a Relax function."""
    if not node.decorator_list:
        return None
    dec, kwargs = _decorator_info(ev, node.decorator_list[0])
    return kwargs if dec is R.function else None


def _symbol_decls(stmt) -> list[tuple[str, ast.Call]]:
    """The (name, call) pairs of `n = T.int64()` or `n, m = T.int64(), T.int64()`; [] otherwise."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return []
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name):
        pairs = [(target, value)]
    elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and \
            len(target.elts) == len(value.elts):
        pairs = list(zip(target.elts, value.elts))
    else:
        return []
    if all(isinstance(t, ast.Name) and isinstance(v, ast.Call) and not v.args and not v.keywords
           for t, v in pairs):
        return [(t.id, v) for t, v in pairs]
    return []


def _statements(body: list):
    """The statements of `body` and of the blocks nested in it (`with`, `if`/`else`)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.With):
            yield from _statements(stmt.body)
        elif isinstance(stmt, ast.If):
            yield from _statements(stmt.body)
            yield from _statements(stmt.orelse)


def declare_symbols(ev: RelaxEvaluator, body: list, skip: set) -> None:
    """Bind each `n = T.int64()` of the body as a symbolic variable (ids of those lines go to `skip`)."""
    for stmt in _statements(body):
        pairs = _symbol_decls(stmt)
        factories = []
        for name, call in pairs:
            try:
                factory = ev.eval(call.func)
            except SyntaxError:
                break
            if not isinstance(factory, T.DTypeFactory):
                break
            factories.append((name, factory))
        if not factories or len(factories) != len(pairs):
            continue
        for name, factory in factories:
            var = ev.symbols.get(name)
            if var is None or var.dtype != factory.dtype:
                var = ev.symbols[name] = factory(name=name)
            ev.bind(name, var)
        skip.add(id(stmt))


_UNSET = object()  # "evaluate the binding's value node"


class FunctionParser:
    """Parses one `@R.function` definition (or a function nested in one)."""

    def __init__(self, ev: Evaluator, node: ast.FunctionDef, private: bool, pure: bool,
                 module: ModuleContext | None = None, symbols: dict | None = None):
        if module is None and getattr(ev, "module_node", None) is not None:
            module = ModuleContext.of(ev)
        self.module = module
        self.ev = RelaxEvaluator(ev.source, ev.globals, ev.extra)
        self.ev.scopes = [dict(s) for s in ev.scopes] + [{}]
        self.node, self.private, self.pure = node, private, pure
        self.bb = ParserBuilder(self.module)
        self.attrs: dict = {}
        self.skip: set = set()
        self.outputs: set | None = None  # names R.output makes visible, inside a dataflow block
        self.outer_symbols = dict(symbols or {})
        self.added_functions: list = []  # (name, PrimFunc) made by R.emit_te

    def error(self, node, message: str):
        return self.ev.error(node, message)

    def parse(self) -> relax_expr.Function:
        node, ev = self.node, self.ev
        with R.symbol_scope(dict(self.outer_symbols)) as symbols:
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
            self.check_defined_symbols(params, set(self.outer_symbols.values()))
            ret = None
            if node.returns is not None:
                ret = guarded(ev, node.returns, lambda: R.to_sinfo(ev.eval(node.returns)))
            self.bb.begin_scope()
            result = self.parse_stmts(node.body, final=True)
            blocks = self.bb.end_scope()
        body = finish_seq(None, blocks, result)
        if ret is not None and not compatible(ret, body.struct_info, self.bb.analyzer):
            raise self.error(node.returns, f"function {node.name!r} is annotated to return {ret}, but its "
                                           f"body has struct info {body.struct_info}")
        attrs = dict(self.attrs)
        if self.private and "global_symbol" in attrs:
            raise self.error(node, f"function {node.name!r} is private, so it cannot have a global_symbol; "
                                   "drop private=True or the global_symbol attribute")
        if not self.private:
            attrs.setdefault("global_symbol", node.name)
        self.added_functions = [(gv.name_hint, func) for gv, func in self.bb.get().functions.items()]
        return relax_expr.Function(params, body, ret, self.pure, attrs)

    def check_defined_symbols(self, params: list, outer: set) -> None:
        """Every symbolic variable in the parameters is given by itself somewhere (`R.Tensor(("m",))`,
        `R.Shape(["m"])`, `R.Prim(value="m")`): TVM's scripts never solve `m + 1` for `m`."""
        from ...relax.struct_info import tir_vars_in_struct_info

        defined = set(outer)
        for p in params:
            defined |= _plain_dims(p.struct_info)
        for arg, p in zip(self.node.args.args, params):
            missing = [v for v in tir_vars_in_struct_info(p.struct_info) if v not in defined]
            if missing:
                names = ", ".join(sorted({v.name for v in missing}))
                raise self.error(arg.annotation, f"symbolic variable(s) {names} of parameter {arg.arg!r} are "
                                                 "used in expressions but never given by themselves; make "
                                                 "one a dimension of some parameter, e.g. "
                                                 f'R.Tensor(("{missing[0].name}",), "float32")')

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
            return self.expression_statement(stmt)
        if isinstance(stmt, ast.FunctionDef):
            return self.local_function(stmt)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and len(stmt.targets) == 1:
            if self.module is not None and stmt.value.id == self.module.name:
                return self.ev.bind(stmt.targets[0].id, self.module.ref())  # cls = Module
            if self.module is None and self.ev.lookup(stmt.value.id, None) is None:
                # a standalone function printed from a module: `cls.f` names GlobalVars of no module
                return self.ev.bind(stmt.targets[0].id, ModuleRef(stmt.value.id, None))
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Tuple | ast.List):
            return self.unpack(stmt)
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            if isinstance(stmt, ast.Assign) and len(stmt.targets) != 1 or not isinstance(target, ast.Name):
                raise self.error(stmt, "a binding assigns one name (`lv: R.Tensor(...) = value`) or unpacks "
                                       "a "
                                       "tuple (`a, b = value`)")
            return self.bind(stmt, target.id, getattr(stmt, "annotation", None), stmt.value)
        if isinstance(stmt, ast.With):
            return self.dataflow(stmt)
        if isinstance(stmt, ast.If):
            return self.if_stmt(stmt)
        raise self.error(stmt, f"unsupported statement ({type(stmt).__name__}) in a Relax function; expected "
                               "bindings, `with R.dataflow():`, `if`/`else` or `return`")

    def expression_statement(self, stmt: ast.Expr) -> None:
        """A call on a line of its own: script statements, or a call that returns nothing."""
        if isinstance(stmt.value, ast.Constant):
            return  # docstring
        func = self.ev.eval(stmt.value.func) if isinstance(stmt.value, ast.Call) else None
        if func is R.func_attr:
            return self.attrs.update(self.ev.eval(stmt.value.args[0]))
        if func is R.output:
            raise self.error(stmt, "R.output(...) must be the last statement of `with R.dataflow():`")
        self.bind(stmt, "_", None, stmt.value, void_only=True)

    def local_function(self, stmt: ast.FunctionDef) -> None:
        """A function defined in a function body: a binding of a Relax function value."""
        options = decorator_options(self.ev, stmt)
        if options is None:
            raise self.error(stmt, f"function {stmt.name!r} defined in a Relax function must be an "
                                   "@R.function; define PrimFuncs in the module")
        inner = FunctionParser(self.ev, stmt, True, options.get("pure", True), self.module, self.ev.symbols)
        func = inner.parse()
        self.added_functions.extend(inner.added_functions)
        self.bind(stmt, stmt.name, None, None, value=func)

    def make_var(self, name: str, sinfo) -> relax_expr.Var:
        dataflow = self.outputs is not None and name not in self.outputs
        return (relax_expr.DataflowVar if dataflow else relax_expr.Var)(name, sinfo)

    def annotation(self, ann):
        return None if ann is None else guarded(self.ev, ann, lambda: R.to_sinfo(self.ev.eval(ann)))

    def check(self, stmt, name: str, ann, inferred, fresh: bool):
        """The var's struct info, as TVM decides it. A value computed on this line (`fresh`) takes
        the annotation (more or less precise than inference); a value that already has struct info
        (a var, a constant) keeps its own. Either way an annotation that contradicts the value is
        an error."""
        if ann is None:
            return inferred
        if not compatible(ann, inferred, self.bb.analyzer):
            raise self.error(stmt, f"in {self.node.name}, binding {name!r} is annotated {ann}, but its value "
                                   f"has struct info {inferred}; fix the annotation or the value")
        return ann if fresh else inferred

    def evaluate(self, value_node):
        """The value of a binding's right-hand side (`R.emit_te(...)` goes through the builder)."""
        if isinstance(value_node, ast.Call) and self.ev.eval(value_node.func) is R.emit_te:
            args = [self.ev.eval(a) for a in value_node.args]
            kwargs = {kw.arg: self.ev.eval(kw.value) for kw in value_node.keywords}
            if not args:
                raise self.error(value_node, "R.emit_te(func, *args) needs the TE function")
            return guarded(self.ev, value_node, lambda: self.bb.call_te(args[0], *args[1:], **kwargs))
        return self.ev.eval(value_node)

    def bind(self, stmt, name: str, ann_node, value_node, value=_UNSET, void_only: bool = False):
        ev, bb = self.ev, self.bb
        where_node = value_node if value_node is not None else stmt
        if value is _UNSET:
            value = self.evaluate(value_node)
        ann = self.annotation(ann_node)
        where = f"in {self.node.name}, binding {name!r}"
        if isinstance(value, R.MatchCastValue):
            arg = guarded(ev, where_node, lambda: bb.normalize_arg(value.value))
            var = self.make_var(name, self.check(stmt, name, ann, value.struct_info, True))
            binding = relax_expr.MatchCast(var, arg, value.struct_info)
        else:
            expr = guarded(ev, where_node, lambda: R.to_expr(value))
            fresh = expr.struct_info_ is None if isinstance(expr, relax_expr.Expr) else False
            norm = guarded(ev, where_node, lambda: _with_context(where, lambda: bb.normalize(expr)))
            statement_kinds = (relax_expr.If, relax_expr.SeqExpr, relax_expr.Function)
            written_as_value = value_node is not None and not isinstance(expr, relax_expr.Var)
            if isinstance(norm, statement_kinds) and written_as_value:
                raise self.error(value_node, f"{type(norm).__name__} values are written as statements")
            if void_only and not isinstance(norm, GlobalVar) and not _is_void(norm.struct_info):
                raise self.error(stmt, f"the result of {ast.unparse(value_node)} ({norm.struct_info}) is not "
                                       "used; assign it to a variable (`lv = ...`): only calls that return "
                                       "nothing, such as R.print or R.assert_op, stand on a line of their "
                                       "own")
            inferred = bb._global_struct_info(norm) if isinstance(norm, GlobalVar) else norm.struct_info
            sinfo = self.check(stmt, name, ann, inferred, fresh)
            annotated_call = fresh and ann is not None and isinstance(norm, relax_expr.Call)
            if annotated_call and sinfo is not norm.struct_info:
                # the annotation is the call's struct info, as in TVM
                norm = relax_expr.Call(norm.op, norm.args, norm.attrs, norm.sinfo_args)
                relax_expr.set_struct_info(norm, sinfo)
            var = self.make_var(name, sinfo)
            binding = relax_expr.VarBinding(var, norm)
        guarded(ev, where_node, lambda: bb._check_visible(binding.value))
        guarded(ev, stmt, lambda: bb.emit_normalized(binding))
        ev.bind(name, var)
        return var

    def unpack(self, stmt: ast.Assign) -> None:
        """`a, b = value`: a tuple value is bound once, then each name to one of its fields."""
        targets = stmt.targets[0].elts
        if not all(isinstance(t, ast.Name) for t in targets):
            raise self.error(stmt, "tuple unpacking assigns plain names: `a, b = value`")
        value = self.evaluate(stmt.value)
        if isinstance(value, list | tuple):
            if len(value) != len(targets):
                raise self.error(stmt, f"cannot unpack {len(value)} values into {len(targets)} names")
            for t, v in zip(targets, value):
                self.bind(stmt, t.id, None, stmt.value, value=v)
            return
        names = [t.id for t in targets]
        whole = self.bind(stmt, "_".join(names), None, stmt.value, value=value)
        sinfo = whole.struct_info
        if not isinstance(sinfo, TupleStructInfo) or len(sinfo.fields) != len(targets):
            raise self.error(stmt, f"cannot unpack a value of struct info {sinfo} into {len(targets)} names")
        for i, t in enumerate(targets):
            self.bind(stmt, t.id, None, stmt.value, value=relax_expr.TupleGetItem(whole, i))

    def return_value(self, stmt):
        if stmt.value is None:
            raise self.error(stmt, "a Relax function returns a value: `return gv`")
        expr = guarded(self.ev, stmt.value, lambda: R.to_expr(self.evaluate(stmt.value)))
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
                    elts = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
                    bound.update(getattr(t, "id", None) for t in elts)
        finally:
            self.outputs = None
            self.bb.end_block()
        for arg in last.value.args:
            if arg.id not in bound:
                raise self.error(arg, f"R.output names {arg.id!r}, which the dataflow block does not bind")

    def if_stmt(self, stmt: ast.If) -> None:
        if self.outputs is not None:
            raise self.error(stmt, "`if`/`else` is not allowed inside a dataflow block; end the block "
                                   "with R.output(...) first")
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
        var = self.make_var(name, self.check(stmt, name, ann, value.struct_info, True))
        self.bb.emit_normalized(relax_expr.VarBinding(var, value))
        self.ev.bind(name, var)

    def branch(self, stmts: list):
        """A branch as a SeqExpr whose body is the value its last line assigns (or a call on its
        own line that returns nothing, whose value is then the branch's)."""
        last = stmts[-1]
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
            target_name = "_"
        else:
            target = last.targets[0] if isinstance(last, ast.Assign) else getattr(last, "target", None)
            if not isinstance(target, ast.Name):
                raise self.error(last, "each branch of an `if` ends with `v = value` (v is the if's result)")
            target_name = target.id
        self.bb.begin_scope()
        self.ev.scopes.append({})
        outputs, self.outputs = self.outputs, None
        try:
            self.parse_stmts(stmts[:-1])
            value = self.evaluate(last.value)
            if isinstance(value, R.MatchCastValue):
                ann_node = getattr(last, "annotation", None)
                body = self.bind(last, target_name, ann_node, last.value, value=value)
            else:
                expr = guarded(self.ev, last.value, lambda: R.to_expr(value))
                body = guarded(self.ev, last.value, lambda: self.bb.normalize(expr))
                if target_name == "_" and not _is_void(body.struct_info):
                    raise self.error(last, "the result of this call is not used; assign it (`v = ...`)")
                if not (relax_expr.is_leaf(body) or isinstance(body, relax_expr.Tuple)):
                    var = relax_expr.Var(target_name, body.struct_info)
                    self.bb.emit_normalized(relax_expr.VarBinding(var, body))
                    body = var
        finally:
            self.outputs = outputs
            self.ev.scopes.pop()
            blocks = self.bb.end_scope()
        return finish_seq(None, blocks, body), target_name, getattr(last, "annotation", None)


def _is_void(sinfo) -> bool:
    return isinstance(sinfo, TupleStructInfo) and not sinfo.fields


def _plain_dims(sinfo) -> set:
    """The symbolic variables `sinfo` gives by themselves (a dimension or a prim value that is a Var)."""
    from ...relax.struct_info import PrimStructInfo, ShapeStructInfo, TensorStructInfo
    from ...tir.expr import Var as TIRVar

    if isinstance(sinfo, TensorStructInfo):
        dims = sinfo.shape_values or ()
    elif isinstance(sinfo, ShapeStructInfo):
        dims = sinfo.values or ()
    elif isinstance(sinfo, PrimStructInfo):
        dims = (sinfo.value,) if sinfo.value is not None else ()
    elif isinstance(sinfo, TupleStructInfo):
        return set().union(*[_plain_dims(f) for f in sinfo.fields]) if sinfo.fields else set()
    else:
        return set()
    return {d for d in dims if isinstance(d, TIRVar)}


def compatible(ann, inferred, analyzer) -> bool:
    """The annotation may describe the value: one is a base of the other, or they differ only in
    facts inference could not decide (symbolic dimensions, unknown dtype or rank)."""
    from ...relax.struct_info import FuncStructInfo, ObjectStructInfo, ShapeStructInfo, TensorStructInfo
    from .relax_eval import provably_different_dims

    if is_base_of(ann, inferred, analyzer) or is_base_of(inferred, ann, analyzer):
        return True
    if isinstance(ann, ObjectStructInfo) or isinstance(inferred, ObjectStructInfo):
        return True
    if type(ann) is not type(inferred):
        return False
    if isinstance(ann, TensorStructInfo):
        if not ann.is_unknown_dtype and not inferred.is_unknown_dtype and ann.dtype != inferred.dtype:
            return False
        if -1 not in (ann.ndim, inferred.ndim) and ann.ndim != inferred.ndim:
            return False
        return not provably_different_dims(ann.shape_values, inferred.shape_values, analyzer)
    if isinstance(ann, ShapeStructInfo):
        if -1 not in (ann.ndim, inferred.ndim) and ann.ndim != inferred.ndim:
            return False
        return not provably_different_dims(ann.values, inferred.values, analyzer)
    if isinstance(ann, TupleStructInfo):
        return len(ann.fields) == len(inferred.fields) and all(
            compatible(a, b, analyzer) for a, b in zip(ann.fields, inferred.fields))
    if isinstance(ann, FuncStructInfo):
        if ann.params is not None and inferred.params is not None and (
                len(ann.params) != len(inferred.params) or
                not all(compatible(a, b, analyzer) for a, b in zip(ann.params, inferred.params))):
            return False
        return compatible(ann.ret, inferred.ret, analyzer)
    return False


def _with_context(where: str, fn):
    from ...errors import TypeInferenceError

    try:
        return fn()
    except TypeInferenceError as err:
        raise type(err)(f"{err} ({where})") from err


def parse_function(ev: Evaluator, node: ast.FunctionDef, private: bool = False, pure: bool = True,
                   check_well_formed: bool = True) -> relax_expr.Function:
    """The Relax Function an `@R.function` definition describes."""
    parser = FunctionParser(ev, node, private, pure)
    func = parser.parse()
    if parser.added_functions:
        if getattr(ev, "module_functions", None) is None:
            raise ev.error(node, f"function {node.name!r} uses R.emit_te, which adds a PrimFunc to a module: "
                                 "define it inside an @I.ir_module class")
        ev.module_functions.extend(parser.added_functions)
    return func


def parse_decorated(func, private: bool = False, pure: bool = True, depth: int = 2) -> relax_expr.Function:
    """`@R.function` on a plain (non-method) Python function: parse its source."""
    caller = sys._getframe(depth)  # the frame the decorator is written in
    source = _source_of(func)
    ev = Evaluator(source, func.__globals__, {**caller.f_locals, **_closure(func)})
    node = _first_def(source, ast.FunctionDef)
    node.decorator_list = []
    return parse_function(ev, node, private, pure)


FUNCTION_PARSERS[id(R.function)] = parse_function
