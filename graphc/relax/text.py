"""Plain-text rendering of Relax nodes in the R. script spelling, for `repr` and `script()`.

A minimal stand-in for the full Relax script printer (which belongs in graphc.script):
names are the variables' `name_hint`s as they are, and no round-trip is promised.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> relax.op.add(x, x)
R.add(x, x)
"""

from __future__ import annotations

from ..ir.module import GlobalVar
from ..tir.expr import PrimExpr
from . import expr as E
from .struct_info import prim_text


def _value(v) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, PrimExpr):
        return prim_text(v)
    if isinstance(v, tuple | list):
        inner = ", ".join(_value(x) for x in v)
        return f"[{inner}]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_value(k)}: {_value(x)}" for k, x in v.items()) + "}"
    return repr(v)


def _op_name(op) -> str:
    name = getattr(op, "name", None)
    if isinstance(name, str):
        return "R." + name.removeprefix("relax.")
    if isinstance(op, GlobalVar):
        return op.name_hint
    return expr_text(op)


def expr_text(e) -> str:
    """One-line text of an expression (functions and sequences print their name or a summary)."""
    if isinstance(e, E.Var):
        return e.name_hint
    if isinstance(e, GlobalVar):
        return e.name_hint
    if isinstance(e, E.Constant):
        data = e.data.numpy()
        return f"R.const({data.tolist()!r}, \"{data.dtype}\")" if data.size <= 4 else \
            f"R.const(<{data.dtype} tensor of shape {tuple(data.shape)}>)"
    if isinstance(e, E.ShapeExpr):
        return "R.shape([" + ", ".join(_value(v) for v in e.values) + "])"
    if isinstance(e, E.PrimValue):
        return f"R.prim_value({_value(e.value)})"
    if isinstance(e, E.StringImm):
        return f'R.str("{e.value}")'
    if isinstance(e, E.DataTypeImm):
        return f'R.dtype("{e.value}")'
    if isinstance(e, E.ExternFunc):
        return f'R.ExternFunc("{e.global_symbol}")'
    if isinstance(e, E.Tuple):
        inner = ", ".join(expr_text(f) for f in e.fields)
        return f"({inner},)" if len(e.fields) == 1 else f"({inner})"
    if isinstance(e, E.TupleGetItem):
        return f"{expr_text(e.tuple_value)}[{e.index}]"
    if isinstance(e, E.Call):
        return _call_text(e)
    if isinstance(e, E.If | E.SeqExpr | E.Function):
        return "\n".join(_lines(e, ""))
    name = getattr(e, "name", None)
    return f"Op({name!r})" if isinstance(name, str) else object.__repr__(e)


def _call_text(call: E.Call) -> str:
    args = [expr_text(a) for a in call.args]
    args += [f"{k}={_value(v)}" for k, v in call.attrs.items()]
    if call.sinfo_args:
        sinfos = [s.text() for s in call.sinfo_args]
        key = "out_sinfo" if getattr(call.op, "name", "").startswith("relax.call_") else "sinfo_args"
        args.append(f"{key}=" + (sinfos[0] if len(sinfos) == 1 else "[" + ", ".join(sinfos) + "]"))
    return f"{_op_name(call.op)}({', '.join(args)})"


def binding_text(b) -> str:
    sinfo = b.var.struct_info_
    annotation = f": {sinfo.text()}" if sinfo is not None else ""
    if isinstance(b, E.MatchCast):
        return f"{b.var.name_hint}{annotation} = R.match_cast({expr_text(b.value)}, {b.struct_info.text()})"
    value = b.value
    if isinstance(value, E.If | E.SeqExpr | E.Function):
        return f"{b.var.name_hint}{annotation} = <{type(value).__name__}>"
    return f"{b.var.name_hint}{annotation} = {expr_text(value)}"


def block_lines(block, indent: str = "") -> list[str]:
    if not isinstance(block, E.DataflowBlock):
        return [indent + binding_text(b) for b in block.bindings]
    lines = [indent + "with R.dataflow():"]
    lines += [indent + "    " + binding_text(b) for b in block.bindings]
    outputs = [b.var.name_hint for b in block.bindings if not isinstance(b.var, E.DataflowVar)]
    if outputs:
        lines.append(indent + f"    R.output({', '.join(outputs)})")
    return lines


def _lines(e, indent: str) -> list[str]:
    if isinstance(e, E.Function):
        return function_lines(e, e.attrs.get("global_symbol", ""), indent)
    if isinstance(e, E.SeqExpr):
        lines = []
        for block in e.blocks:
            lines += block_lines(block, indent)
        return lines + [indent + expr_text(e.body)]
    if isinstance(e, E.If):
        return ([indent + f"if {expr_text(e.cond)}:"] + _lines(e.true_branch, indent + "    ")
                + [indent + "else:"] + _lines(e.false_branch, indent + "    "))
    return [indent + expr_text(e)]


def function_lines(func: E.Function, name: str, indent: str = "") -> list[str]:
    """The function in R. syntax: decorator, signature, attributes, blocks, return."""
    params = ", ".join(f"{p.name_hint}: {p.struct_info.text()}" for p in func.params)
    ret = f" -> {func.ret_struct_info.text()}" if func.ret_struct_info is not None else ""
    deco = "@R.function" if func.is_pure else "@R.function(pure=False)"
    lines = [indent + deco, indent + f"def {name or 'func'}({params}){ret}:"]
    inner = indent + "    "
    attrs = {k: v for k, v in func.attrs.items() if k != "global_symbol"}
    if attrs:
        lines.append(inner + f"R.func_attr({_value(attrs)})")
    body = func.body
    if isinstance(body, E.SeqExpr):
        for block in body.blocks:
            lines += block_lines(block, inner)
        body = body.body
    lines.append(inner + f"return {expr_text(body)}")
    return lines


def _register() -> None:
    """Hook the minimal text into graphc.script so `str(func)` and `mod.script()` work."""
    from ..script.printer import register_function_printer, register_printer
    from .struct_info import StructInfo

    register_function_printer(E.Function, lambda func, name: (function_lines(func, name), {"R"}))
    register_printer(E.Expr, lambda node, **kw: expr_text(node) if not isinstance(node, E.Function)
                     else "\n".join(["# from graphc.script import relax as R", ""]
                                    + function_lines(node, kw.get("name") or node.attrs.get("global_symbol")
                                                     or "main")))
    register_printer(E.Binding, lambda node, **kw: binding_text(node))
    register_printer(E.BindingBlock, lambda node, **kw: "\n".join(block_lines(node)))
    register_printer(StructInfo, lambda node, **kw: node.text())


_register()
