"""Printing Relax values and struct info as `R.` script text (one line each).

`RelaxExprPrinter` names variables through the shared `Namer`, prints module functions as
`cls.name`, small scalar constants inline and tensor constants as references into the
module's metadata section (`metadata["relax.expr.Constant"][i]`, see `Metadata`).
In a signature (`signature=True`) symbolic dimensions print as strings (`"n"`), because
Python evaluates annotations before the body declares `n = T.int64()`.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> p = RelaxExprPrinter()
>>> p.sinfo(relax.TensorStructInfo((n, 4), "float32")), p.sinfo(relax.TensorStructInfo((n, 4)), True)
('R.Tensor((n, 4), dtype="float32")', 'R.Tensor(("n", 4), dtype="float32")')
>>> p.expr(relax.const(1.5, "float32")), p.expr(relax.ShapeExpr([n * 2, 3]))
('R.const(1.5, "float32")', 'R.shape([n * 2, 3])')
"""

from __future__ import annotations

import base64
import math

import numpy as np

from ...ir.dispatch import method_table
from ...ir.module import GlobalVar
from ...relax import expr as relax_expr
from ...relax import struct_info as relax_sinfo
from ...tir import expr as TE
from .expr import ATOM, ExprPrinter, pystr
from .namer import Namer

_CONSTANT_KEY = "relax.expr.Constant"


class Metadata:
    """Tensor constants of the module being printed, referred to by index."""

    def __init__(self):
        self.constants: list = []
        self._index: dict[int, int] = {}

    def ref(self, const) -> str:
        if id(const) not in self._index:
            self._index[id(const)] = len(self.constants)
            self.constants.append(const)
        return f'metadata["{_CONSTANT_KEY}"][{self._index[id(const)]}]'

    def lines(self) -> list[str]:
        """The section `metadata = {...}` that the references resolve against."""
        if not self.constants:
            return []
        lines = [f'metadata = {{"{_CONSTANT_KEY}": [']
        lines += [f"    {tensor_text(c.data.numpy())}," for c in self.constants]
        return lines + ["]}"]


def scalar_text(value) -> str:
    """A Python literal for a numpy scalar, exact for every float and integer dtype."""
    scalar = value[()] if isinstance(value, np.ndarray) else value
    item = scalar.item()
    if isinstance(item, float):
        if not math.isfinite(item):
            return f'float("{item}")'
        text = str(scalar)  # numpy's shortest text that reads back as the same float32/float16
        return text if any(ch in text for ch in ".en") else text + ".0"
    return repr(item)


def _nested(array: np.ndarray) -> str:
    if array.ndim == 0:
        return scalar_text(array)
    return "[" + ", ".join(_nested(sub) for sub in array) + "]"


def tensor_text(array: np.ndarray) -> str:
    """`R.const([...], "dtype")` for small arrays, base64 of the raw bytes for large ones."""
    dtype = str(array.dtype)
    if array.size <= 64 and array.dtype.kind in "biuf" and np.isfinite(array.astype("float64")).all():
        return f"R.const({_nested(array)}, {pystr(dtype)})"
    data = base64.b64encode(np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes())
    return f"R.const_from_base64({pystr(data.decode())}, {pystr(dtype)}, {tuple(array.shape)!r})"


class DimPrinter(ExprPrinter):
    """PrimExprs of Relax shapes: int64 constants as plain numbers (`n * 2`)."""

    def print_IntImm(self, op):
        if op.dtype == "int64":
            return str(op.value), ATOM if op.value >= 0 else 11
        if op.dtype == "int32":  # plain numbers mean int64 here
            return f"T.int32({op.value})", ATOM
        return super().print_IntImm(op)

    def constructor(self, op, operands):
        # A constructor's plain numbers are int32, as in TensorIR: `T.Add(T.int64(2), T.int64(7))`.
        args = (f"T.int64({a.value})" if isinstance(a, TE.IntImm) and a.dtype == "int64" else self(a)
                for a in operands)
        return f"T.{type(op).__name__}({', '.join(args)})", ATOM


class RelaxExprPrinter:
    """Prints Relax expressions and struct info; `metadata` collects tensor constants."""

    def __init__(self, namer: Namer | None = None, metadata: Metadata | None = None,
                 standalone: bool = False):
        self.namer = namer if namer is not None else Namer()
        self.dims = DimPrinter(self.namer)
        self.metadata = metadata
        self.standalone = standalone  # repr: names as they are, tensors summarized
        self.uses_cls = False
        self.uses_tir = False
        self._rules = method_table(type(self), "print_")

    # -- struct info ------------------------------------------------------------------------
    def dim(self, value, signature: bool = False) -> str:
        text = self.dims(value)
        if signature and not isinstance(value, TE.IntImm):
            return pystr(text)
        return text

    def dims_text(self, values, signature: bool) -> str:
        inner = ", ".join(self.dim(v, signature) for v in values)
        return f"({inner},)" if len(values) == 1 else f"({inner})"

    def sinfo(self, s, signature: bool = False) -> str:
        if isinstance(s, relax_sinfo.TensorStructInfo):
            parts = []
            values = s.shape_values
            if values is not None:
                parts.append(self.dims_text(values, signature))
            elif s.shape is not None:
                parts.append(self.expr(s.shape))
            if not s.is_unknown_dtype:
                parts.append(f"dtype={pystr(s.dtype)}")
            if s.shape is None and s.ndim != -1:
                parts.append(f"ndim={s.ndim}")
            return f"R.Tensor({', '.join(parts)})" if parts else "R.Tensor"
        if isinstance(s, relax_sinfo.ShapeStructInfo):
            if s.values is not None:
                return "R.Shape([" + ", ".join(self.dim(v, signature) for v in s.values) + "])"
            return f"R.Shape(ndim={s.ndim})" if s.ndim != -1 else "R.Shape"
        if isinstance(s, relax_sinfo.PrimStructInfo):
            if s.value is not None:
                return f"R.Prim(value={self.dim(s.value, signature)})"
            return f"R.Prim({pystr(s.dtype)})"
        if isinstance(s, relax_sinfo.TupleStructInfo):
            if not s.fields:
                return "R.Tuple"
            return "R.Tuple(" + ", ".join(self.sinfo(f, signature) for f in s.fields) + ")"
        if isinstance(s, relax_sinfo.FuncStructInfo):
            ret = self.sinfo(s.ret, signature)
            if s.params is None:
                return f"R.Callable(ret={ret}, purity={s.purity})"
            params = [self.sinfo(p, signature) for p in s.params]
            inner = ", ".join(params) + ("," if len(params) == 1 else "")
            return f"R.Callable(({inner}), {ret}, purity={s.purity})"
        if isinstance(s, relax_sinfo.ObjectStructInfo):
            return "R.Object"
        return f"<unprintable struct info {type(s).__name__}>"

    # -- values -----------------------------------------------------------------------------
    def var(self, v) -> str:
        if self.standalone:
            return v.name_hint
        name = self.namer.get(v)
        return name if name is not None else v.name_hint

    def expr(self, e) -> str:
        method = self._rules[type(e)]
        if method is None:
            name = getattr(e, "name", None)
            return f"Op({name!r})" if isinstance(name, str) else f"<unprintable {type(e).__name__}>"
        return method(self, e)

    def print_Var(self, e):
        return self.var(e)

    def print_GlobalVar(self, e):
        if self.standalone:
            return e.name_hint
        self.uses_cls = True
        return f"cls.{e.name_hint}"

    def print_Constant(self, e):
        array = e.data.numpy()
        if array.ndim == 0:
            return f"R.const({scalar_text(array)}, {pystr(str(array.dtype))})"
        if self.metadata is not None:
            return self.metadata.ref(e)
        if array.size <= 4:
            return tensor_text(array)
        return f"R.const(<{array.dtype} tensor of shape {tuple(array.shape)}>)"

    def print_ShapeExpr(self, e):
        self._note_tir(e.values)
        return "R.shape([" + ", ".join(self.dim(v) for v in e.values) + "])"

    def print_PrimValue(self, e):
        self._note_tir([e.value])
        return f"R.prim_value({self.dims(e.value)})"

    def _note_tir(self, values):
        if any(not (isinstance(v, TE.IntImm) and v.dtype == "int64") for v in values):
            self.uses_tir = True

    def print_StringImm(self, e):
        return f"R.str({pystr(e.value)})"

    def print_DataTypeImm(self, e):
        return f"R.dtype({pystr(e.value)})"

    def print_ExternFunc(self, e):
        return f"R.ExternFunc({pystr(e.global_symbol)})"

    def print_Tuple(self, e):
        inner = ", ".join(self.expr(f) for f in e.fields)
        return f"({inner},)" if len(e.fields) == 1 else f"({inner})"

    def print_TupleGetItem(self, e):
        return f"{self.expr(e.tuple_value)}[{e.index}]"

    def print_Call(self, call):
        op = call.op
        op_name = getattr(op, "name", None) if not isinstance(op, relax_expr.Expr | GlobalVar) else None
        sinfos = [self.sinfo(s) for s in call.sinfo_args]
        if op_name == "relax.call_tir":
            args = [self.expr(a) for a in call.args[:2]]
            out = sinfos[0] if sinfos else "R.Object"
            if call.sinfo_args and isinstance(call.sinfo_args[0], relax_sinfo.TupleStructInfo):
                out = "[" + ", ".join(self.sinfo(f) for f in call.sinfo_args[0].fields) + "]"
            args.append(f"out_sinfo={out}")
            if len(call.args) > 2:
                args.append(f"tir_vars={self.expr(call.args[2])}")
            return f"R.call_tir({', '.join(args)})"
        args = [self.expr(a) for a in call.args]
        args += [f"{k}={self.value(v)}" for k, v in call.attrs.items()]
        if sinfos:
            args.append("sinfo_args=" + (sinfos[0] if len(sinfos) == 1 else f"[{', '.join(sinfos)}]"))
        if isinstance(op, relax_expr.ExternFunc):
            return f"R.call_packed({', '.join([pystr(op.global_symbol)] + args)})"
        callee = "R." + op_name.removeprefix("relax.") if isinstance(op_name, str) else self.expr(op)
        return f"{callee}({', '.join(args)})"

    def value(self, v) -> str:
        """An attribute value: strings, numbers, None, lists, dicts, PrimExprs."""
        if isinstance(v, str):
            return pystr(v)
        if isinstance(v, bool | int | float) or v is None:
            return repr(v)
        if isinstance(v, TE.PrimExpr):
            return self.dims(v)
        if isinstance(v, tuple | list):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{self.value(k)}: {self.value(x)}" for k, x in v.items()) + "}"
        if isinstance(v, relax_expr.Expr | relax_sinfo.StructInfo):
            return self.expr(v) if isinstance(v, relax_expr.Expr) else self.sinfo(v)
        return repr(v)
