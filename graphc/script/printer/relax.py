"""The Relax script printer: `@R.function`s, their bindings and blocks, and Relax modules.

Every binding carries its struct info as an annotation, except a `call_tir` whose result
is exactly its `out_sinfo` (the tutorial's style). Names are made unique by one `Namer`
per function; symbolic dimensions are declared as `n = T.int64()` at the top of the body;
`cls = Module` appears when the function refers to other functions of the module. Tensor
constants print as `metadata["relax.expr.Constant"][i]`, resolved by a
`metadata = {...}` section printed before the `@I.ir_module` class (before a standalone
function), which the parser reads back.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
>>> bb = relax.BlockBuilder()
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         gv = bb.emit_output(relax.op.nn.relu(x))
...     _ = bb.emit_func_output(gv)
>>> print(bb.get().script())
# from graphc.script import ir as I
# from graphc.script import relax as R
<BLANKLINE>
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((2,), dtype="float32") = R.nn.relu(x)
            R.output(gv)
        return gv
"""

from __future__ import annotations

from ...ir.module import IRModule
from ...ir.structural import structural_equal
from ...relax import expr as relax_expr
from ...relax.struct_info import StructInfo, tir_vars_in_expr, tir_vars_in_struct_info
from . import relax_expr as _rx  # a module import: relax_expr may be mid-import (it imports graphc.relax)
from .namer import Namer

_METADATA: list = []  # the metadata of the module being printed (a stack)
_INDENT = "    "


class FunctionPrinter:
    """Prints one Relax function; `lines(name)` returns its text lines."""

    def __init__(self, func: relax_expr.Function, metadata):
        namer = Namer()
        namer.used |= {"cls", "metadata", "Module"}
        self.func = func
        self.p = _rx.RelaxExprPrinter(namer, metadata)
        self.namer = namer

    def lines(self, name: str) -> tuple[list[str], set]:
        func, p = self.func, self.p
        for param in func.params:
            self.namer.define(param, param.name_hint)
        symbols = self._symbols()
        for v in symbols:
            self.namer.define(v, v.name)
        params = ", ".join(f"{p.var(v)}: {p.sinfo(v.struct_info, True)}" for v in func.params)
        ret = f" -> {p.sinfo(func.ret_struct_info, True)}" if func.ret_struct_info is not None else ""
        attrs = dict(func.attrs)
        options = []
        if attrs.get("global_symbol") == name:
            del attrs["global_symbol"]
        elif "global_symbol" not in attrs:
            options.append("private=True")
        if not func.is_pure:
            options.append("pure=False")
        deco = "@R.function" + (f"({', '.join(options)})" if options else "")
        body = self.body_lines(func.body, ret=True)
        head = [p.var(v) + f" = T.{v.dtype}()" for v in symbols]
        if attrs:
            head.insert(0, f"R.func_attr({p.value(attrs)})")
        if p.uses_cls:
            head.append("cls = Module")
        lines = [deco, f"def {name}({params}){ret}:"] + [_INDENT + line for line in head + body]
        return lines, {"R"} | ({"T"} if symbols or p.uses_tir else set())

    def _symbols(self) -> list:
        """Symbolic tir.Vars the function mentions, in order of first appearance."""
        out: list = []

        def add(vars_):
            out.extend(v for v in vars_ if v not in out)

        for param in self.func.params:
            add(tir_vars_in_struct_info(param.struct_info))
        if self.func.ret_struct_info is not None:
            add(tir_vars_in_struct_info(self.func.ret_struct_info))
        for binding in _bindings(self.func.body):
            add(tir_vars_in_struct_info(binding.var.struct_info))
            if isinstance(binding, relax_expr.MatchCast):
                add(tir_vars_in_struct_info(binding.struct_info))
            for leaf in _values(binding.value):
                if isinstance(leaf, relax_expr.ShapeExpr):
                    for d in leaf.values:
                        add(tir_vars_in_expr(d))
                elif isinstance(leaf, relax_expr.PrimValue):
                    add(tir_vars_in_expr(leaf.value))
                elif isinstance(leaf, relax_expr.Call):
                    for s in leaf.sinfo_args:
                        add(tir_vars_in_struct_info(s))
        return out

    def body_lines(self, seq, ret: bool, target=None) -> list[str]:
        """The blocks of `seq` then `return body` (or `target = body` in an If branch)."""
        lines: list[str] = []
        blocks, result = (seq.blocks, seq.body) if isinstance(seq, relax_expr.SeqExpr) else ((), seq)
        for block in blocks:
            lines += self.block_lines(block)
        if ret:
            return lines + [f"return {self.p.expr(result)}"]
        return lines + [f"{self.p.var(target)}: {self.p.sinfo(target.struct_info)} = {self.p.expr(result)}"]

    def block_lines(self, block) -> list[str]:
        if not isinstance(block, relax_expr.DataflowBlock):
            return [line for b in block.bindings for line in self.binding_lines(b)]
        lines = ["with R.dataflow():"]
        for b in block.bindings:
            lines += [_INDENT + line for line in self.binding_lines(b)]
        outputs = [self.p.var(b.var) for b in block.bindings if not isinstance(b.var, relax_expr.DataflowVar)]
        lines.append(_INDENT + f"R.output({', '.join(outputs)})")
        return lines

    def binding_lines(self, b) -> list[str]:
        p = self.p
        self.namer.define(b.var, b.var.name_hint)
        name = p.var(b.var)
        if isinstance(b, relax_expr.MatchCast):
            return [f"{name}: {p.sinfo(b.var.struct_info)} = R.match_cast({p.expr(b.value)}, "
                    f"{p.sinfo(b.struct_info)})"]
        value = b.value
        if isinstance(value, relax_expr.If):
            return ([f"if {p.expr(value.cond)}:"]
                    + [_INDENT + x for x in self.body_lines(value.true_branch, False, b.var)] + ["else:"]
                    + [_INDENT + x for x in self.body_lines(value.false_branch, False, b.var)])
        if isinstance(value, relax_expr.Function | relax_expr.SeqExpr):
            return [f"{name} = <unprintable {type(value).__name__}>"]
        if _implied_by_call(value, b.var.struct_info):
            return [f"{name} = {p.expr(value)}"]
        return [f"{name}: {p.sinfo(b.var.struct_info)} = {p.expr(value)}"]


def _implied_by_call(value, sinfo) -> bool:
    """A `call_tir` whose var has exactly the declared output struct info needs no annotation."""
    return (isinstance(value, relax_expr.Call) and getattr(value.op, "name", None) == "relax.call_tir"
            and len(value.sinfo_args) == 1 and structural_equal(value.sinfo_args[0], sinfo))


def _bindings(seq):
    if isinstance(seq, relax_expr.SeqExpr):
        for block in seq.blocks:
            for b in block.bindings:
                yield b
                if isinstance(b.value, relax_expr.If):
                    yield from _bindings(b.value.true_branch)
                    yield from _bindings(b.value.false_branch)


def _values(e):
    yield e
    if isinstance(e, relax_expr.Tuple):
        for f in e.fields:
            yield from _values(f)
    elif isinstance(e, relax_expr.Call):
        for a in e.args:
            yield from _values(a)
    elif isinstance(e, relax_expr.If):
        yield from _values(e.true_branch.body if isinstance(e.true_branch,
                                                            relax_expr.SeqExpr) else e.true_branch)
        yield from _values(e.false_branch.body if isinstance(e.false_branch,
                                                             relax_expr.SeqExpr) else e.false_branch)
    elif isinstance(e, relax_expr.TupleGetItem):
        yield from _values(e.tuple_value)


def function_lines(func: relax_expr.Function, name: str) -> tuple[list[str], set]:
    """The function's lines (metadata references go to the module being printed)."""
    return FunctionPrinter(func, _METADATA[-1] if _METADATA else None).lines(name)


def _with_metadata(lines: list[str], meta, before: str) -> list[str]:
    section = meta.lines()
    if not section:
        return lines
    at = next(i for i, line in enumerate(lines) if line.startswith(before))
    return lines[:at] + section + [""] + lines[at:]


def module_script(mod: IRModule, **kwargs) -> str:
    """The module with a metadata section for its tensor constants, if it has any."""
    from . import module_text

    meta = _rx.Metadata()
    _METADATA.append(meta)
    try:
        text = module_text(mod)
    finally:
        _METADATA.pop()
    return "\n".join(_with_metadata(text.split("\n"), meta, "@I.ir_module"))


def function_script(func: relax_expr.Function, name: str) -> str:
    """A standalone function: header, metadata section and the function."""
    from . import _header

    meta = _rx.Metadata()
    _METADATA.append(meta)
    try:
        lines, used = function_lines(func, name)
    finally:
        _METADATA.pop()
    return "\n".join(_header(used) + [""] + _with_metadata(lines, meta, "@R.function"))


# --- plain text for repr (names as they are; no uniqueness, no metadata) -----------------


def expr_text(e) -> str:
    """One line for `repr(expr)`; functions print in full."""
    if isinstance(e, relax_expr.Function):
        return "\n".join(FunctionPrinter(e, None).lines(e.attrs.get("global_symbol") or "main")[0])
    if isinstance(e, relax_expr.If | relax_expr.SeqExpr):
        fp = FunctionPrinter(relax_expr.Function([], relax_expr.SeqExpr([], relax_expr.Tuple([]))), None)
        fp.p.standalone = True
        if isinstance(e, relax_expr.SeqExpr):
            return "\n".join(fp.body_lines(e, ret=True))
        var = relax_expr.Var("_", e.struct_info_ or _object())
        return "\n".join(fp.binding_lines(relax_expr.VarBinding(var, e)))
    return _rx.RelaxExprPrinter(standalone=True).expr(e)


def _object():
    from ...relax.struct_info import ObjectStructInfo

    return ObjectStructInfo()


def binding_text(b) -> str:
    fp = FunctionPrinter(relax_expr.Function([], relax_expr.SeqExpr([], relax_expr.Tuple([]))), None)
    fp.p.standalone = True
    if b.var.struct_info_ is None:
        return f"{b.var.name_hint} = {fp.p.expr(b.value)}"
    return "\n".join(fp.binding_lines(b))


def block_text(block) -> str:
    fp = FunctionPrinter(relax_expr.Function([], relax_expr.SeqExpr([], relax_expr.Tuple([]))), None)
    fp.p.standalone = True
    return "\n".join(fp.block_lines(block))


def _register() -> None:
    from . import register_function_printer, register_printer, register_repr_printer

    register_function_printer(relax_expr.Function, function_lines)
    register_printer(IRModule, module_script)
    register_printer(relax_expr.Expr, lambda node, **kw: function_script(
        node, kw.get("name") or node.attrs.get("global_symbol") or "main")
        if isinstance(node, relax_expr.Function) else expr_text(node))
    register_printer(relax_expr.Binding, lambda node, **kw: binding_text(node))
    register_printer(relax_expr.BindingBlock, lambda node, **kw: block_text(node))
    register_printer(StructInfo, lambda node, **kw: _rx.RelaxExprPrinter(standalone=True).sinfo(node))
    register_repr_printer(relax_expr.Expr, expr_text)
    register_repr_printer(relax_expr.Binding, binding_text)
    register_repr_printer(relax_expr.BindingBlock, block_text)


_register()
