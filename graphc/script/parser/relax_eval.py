"""What the Relax parser adds to expression evaluation: calls, indexing and module references.

`RelaxEvaluator` turns `f(x)` on a Relax function value into a Call, `t[0]` on a Relax
expression into a TupleGetItem, and `cls.f` into the module's GlobalVar `f`. Names not
found otherwise resolve through the function's symbolic variables (`m` after
`R.match_cast(x, R.Tensor(("m",)))`). `ModuleContext` knows the functions of the
`@I.ir_module` class being parsed and their signatures, so that calls between Relax
functions get their struct info before the callee is parsed.

>>> from graphc import relax
>>> ev = RelaxEvaluator(Source("t[1]"), {})
>>> ev.bind("t", relax.Var("t", relax.TupleStructInfo([relax.ObjectStructInfo()] * 2)))
>>> ev.eval(ast.parse("t[1]", mode="eval").body)
t[1]
"""

from __future__ import annotations

import ast

from ...errors import GraphcError
from ...ir.module import GlobalVar
from ...relax import expr as relax_expr
from ...relax.block_builder import BlockBuilder, BlockBuilderError
from ...relax.struct_info import FuncStructInfo, ObjectStructInfo
from .. import relax as R
from .. import tir as T
from .diagnostics import Source  # noqa: F401  (doctest)
from .evaluator import _MISSING, Evaluator


class ModuleRef:
    """The value of `cls` in `cls = Module`: attribute `f` is the module's GlobalVar `f`."""

    def __init__(self, name: str, global_vars: dict | None):
        self._name, self._global_vars = name, global_vars  # None: make GlobalVars on demand

    def __getattr__(self, attr: str) -> GlobalVar:
        if attr.startswith("_"):
            raise AttributeError(attr)
        if self._global_vars is None:
            return GlobalVar(attr)
        try:
            return self._global_vars[attr]
        except KeyError:
            names = ", ".join(sorted(self._global_vars))
            raise AttributeError(f"module {self._name} has no function {attr!r} (it has: {names})") from None


class ModuleContext:
    """The `@I.ir_module` class being parsed: its name, GlobalVars and function definitions."""

    def __init__(self, ev: Evaluator):
        node = getattr(ev, "module_node", None)
        self.name = node.name if node is not None else None
        self.global_vars = dict(getattr(ev, "global_vars", {}) or {})
        body = node.body if node is not None else ()
        self.defs = {s.name: s for s in body if isinstance(s, ast.FunctionDef)}
        self.ev = ev
        self._signatures: dict[str, object] = {}

    @staticmethod
    def of(ev: Evaluator) -> ModuleContext:
        ctx = getattr(ev, "relax_module", None)
        if ctx is None or ctx.name != getattr(getattr(ev, "module_node", None), "name", None):
            ctx = ev.relax_module = ModuleContext(ev)
        return ctx

    def ref(self) -> ModuleRef:
        return ModuleRef(self.name, self.global_vars)

    def struct_info(self, gv: GlobalVar):
        """The callee's FuncStructInfo, read from its signature (parsed on first use)."""
        name = gv.name_hint
        if name not in self._signatures:
            node = self.defs.get(name)
            if node is None:
                raise BlockBuilderError(f"call to {name!r}, which is not a function of the module")
            self._signatures[name] = self._signature(node)
        return self._signatures[name]

    def _signature(self, node: ast.FunctionDef):
        from .relax_parser import declare_symbols, decorator_options

        options = decorator_options(self.ev, node)
        if options is None:  # a PrimFunc: called through call_tir only
            return FuncStructInfo.opaque_func(ObjectStructInfo(), purity=False)
        if node.returns is None:
            raise BlockBuilderError(f"function {node.name!r} is called before it is parsed and has no "
                                    "return annotation; add `-> R.Tensor(...)` to its signature")
        ev = RelaxEvaluator(self.ev.source, self.ev.globals, self.ev.extra)
        with R.symbol_scope({}) as symbols:
            ev.symbols = symbols
            declare_symbols(ev, node.body, set())
            params = [R.to_sinfo(ev.eval(a.annotation)) for a in node.args.args]
            ret = R.to_sinfo(ev.eval(node.returns))
        return FuncStructInfo(params, ret, options.get("pure", True))


class ParserBuilder(BlockBuilder):
    """A BlockBuilder whose calls to module functions look up the signatures being parsed."""

    def __init__(self, module: ModuleContext | None):
        super().__init__()
        self.module = module

    def _global_struct_info(self, gv: GlobalVar):
        if self.module is None or not self.module.defs:
            raise BlockBuilderError(f"call to {gv.name_hint!r} outside an @I.ir_module class")
        return self.module.struct_info(gv)


class RelaxEvaluator(Evaluator):
    """The TensorIR script evaluator, plus the Relax meanings of calls, indexing and names."""

    symbols: dict = {}

    def lookup(self, name: str, default=_MISSING):
        value = super().lookup(name, _MISSING)
        if value is _MISSING and name in self.symbols:
            return self.symbols[name]
        if value is _MISSING and name == "R":
            return R
        return default if value is _MISSING else value

    def eval_Call(self, node, name_hint: str | None = None):
        func = self.eval(node.func)
        if isinstance(func, GlobalVar | relax_expr.Expr):
            args = [self.eval(a) for a in node.args]
            if node.keywords:
                raise self.error(node, "calls of Relax functions take positional arguments only")
            return self.guard(node, lambda: relax_expr.Call(func, [R.to_expr(a) for a in args]))
        if isinstance(func, T.DTypeFactory) and not node.args:
            raise self.error(node, f"declare symbolic variables at the top of the function body: "
                                   f"`n = {func!r}()`")
        return super().eval_Call(node, name_hint)

    def eval_Attribute(self, node):
        base = self.eval(node.value)
        if base is R or isinstance(base, R.OpNamespace | ModuleRef):
            try:
                return getattr(base, node.attr)
            except AttributeError as err:
                raise self.error(node, str(err)) from None
        return super().eval_Attribute(node)

    def eval_Subscript(self, node, name_hint: str | None = None):
        base = self.eval(node.value)
        if isinstance(base, relax_expr.Expr):
            index = self.eval(node.slice)
            if not isinstance(index, int):
                raise self.error(node.slice, f"a tuple index must be an integer, got {index!r}")
            return relax_expr.TupleGetItem(base, index)
        return super().eval_Subscript(node, name_hint)


def guarded(ev: Evaluator, node, fn):
    """Run `fn`, reporting IR errors (struct info inference, builders) at `node`."""
    try:
        return fn()
    except GraphcError as err:
        if isinstance(err, SyntaxError):
            raise
        message = str(err).replace("emit it with bb.emit_output(...)", "list it in R.output(...)")
        raise ev.error(node, f"{type(err).__name__}: {message}") from err
    except (TypeError, ValueError) as err:
        raise ev.error(node, str(err)) from err
