"""Struct info: what Relax knows statically about a value (kind, rank, dtype, symbolic shape).

Symbolic dimensions are `tir.Var`s (int64 by convention, as in TVM Relax), shared with the
TensorIR functions that the values are passed to. An unknown dtype is `"void"` (`""` is
accepted), an unknown rank is `ndim=-1`.

>>> from graphc import tir
>>> n = tir.Var("n", "int64")
>>> x = TensorStructInfo((n, 4), "float32")
>>> x.ndim, x.dtype, [prim_text(d) for d in x.shape.values]
(2, 'float32', ['n', '4'])
>>> is_base_of(TensorStructInfo(ndim=2, dtype="float32"), x)
True
>>> is_base_of(x, TensorStructInfo((n, 5), "float32"))
False
"""

from __future__ import annotations

import re

from ..errors import TypeInferenceError
from ..ir.dtype import canonical
from ..ir.node import Node, node
from ..tir.analysis.var_use import used_vars
from ..tir.arith import Analyzer
from ..tir.expr import IntImm, PrimExpr
from ..tir.expr import Var as TIRVar
from ..tir.functor import substitute

UNKNOWN_DTYPE = "void"


def canonical_dtype(dtype) -> str:
    """`"void"` for an unknown dtype (None, "" or "void"), else the canonical dtype string."""
    if dtype is None or dtype in ("", "void"):
        return UNKNOWN_DTYPE
    return canonical(str(dtype))


def as_dim(value) -> PrimExpr:
    """A shape dimension as a PrimExpr; Python ints become int64 constants."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeInferenceError(f"a shape dimension must be an int or a PrimExpr, got {value!r}")
    return IntImm("int64", int(value))


class StructInfo(Node):
    """Base class of struct info; `repr` shows the script spelling (`R.Tensor(...)`)."""

    __slots__ = ()
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return self.text()

    def __str__(self) -> str:
        return self.text()

    def text(self) -> str:
        raise NotImplementedError

    def is_base_of(self, derived: StructInfo) -> bool:
        """True when every value described by `derived` is described by `self` (TVM's name)."""
        return is_base_of(self, derived)


def prim_text(expr) -> str:
    """A PrimExpr as Relax scripts show it: int64 constants as plain numbers (`n * 2`)."""
    if isinstance(expr, IntImm):
        return str(expr.value)
    return re.sub(r"T\.int64\((-?\d+)\)", r"\1", repr(expr))


def _dims_text(values) -> str:
    inner = ", ".join(prim_text(v) for v in values)
    return f"({inner},)" if len(values) == 1 else f"({inner})"


@node
class ObjectStructInfo(StructInfo):
    """Any value at all."""

    def text(self) -> str:
        return "R.Object"


@node
class PrimStructInfo(StructInfo):
    """A scalar of `dtype`, optionally with a known `value` (a PrimExpr)."""

    dtype: str
    value: PrimExpr | None = None

    def __init__(self, dtype=None, value=None):
        if value is not None and not isinstance(value, PrimExpr):
            value = as_dim(value) if isinstance(value, int) else value
        if dtype is None and value is not None:
            dtype = value.dtype
        object.__setattr__(self, "dtype", canonical_dtype(dtype))
        object.__setattr__(self, "value", value)

    def text(self) -> str:
        if self.value is not None:
            return f"R.Prim(value={prim_text(self.value)})"
        return f'R.Prim("{self.dtype}")'


@node
class ShapeStructInfo(StructInfo):
    """A shape value: known `values` (a tuple of PrimExprs) or only its `ndim` (-1: unknown)."""

    values: tuple | None
    ndim: int

    def __init__(self, values=None, ndim: int = -1):
        if values is not None:
            values = tuple(as_dim(v) for v in values)
            if ndim not in (-1, len(values)):
                raise TypeInferenceError(f"ShapeStructInfo: ndim={ndim} but {len(values)} values")
            ndim = len(values)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "ndim", int(ndim))

    def text(self) -> str:
        if self.values is not None:
            return "R.Shape([" + _dims_text(self.values)[1:-1].rstrip(",") + "])"
        return f"R.Shape(ndim={self.ndim})"


@node
class TensorStructInfo(StructInfo):
    """A tensor: `shape` (a ShapeExpr, a Var of shape struct info, or None), `dtype`, `ndim`.

    A tuple of ints/PrimExprs given as `shape` becomes a `ShapeExpr`.
    """

    shape: object
    dtype: str
    ndim: int
    vdevice: object = None

    def __init__(self, shape=None, dtype="float32", ndim: int = -1, vdevice=None):
        from . import expr as _expr

        if shape is not None and not isinstance(shape, _expr.Expr):
            shape = _expr.ShapeExpr(shape)
        if shape is not None:
            sinfo = shape.struct_info_
            if not isinstance(sinfo, ShapeStructInfo):
                raise TypeInferenceError(f"TensorStructInfo: shape must have shape struct info, got {sinfo}")
            if ndim not in (-1, sinfo.ndim):
                raise TypeInferenceError(f"TensorStructInfo: ndim={ndim} but the shape has {sinfo.ndim} dims")
            ndim = sinfo.ndim
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", canonical_dtype(dtype))
        object.__setattr__(self, "ndim", int(ndim))
        object.__setattr__(self, "vdevice", vdevice)

    @property
    def is_unknown_ndim(self) -> bool:
        return self.ndim == -1

    @property
    def is_unknown_dtype(self) -> bool:
        return self.dtype == UNKNOWN_DTYPE

    @property
    def shape_values(self) -> tuple | None:
        """The dimensions as a tuple of PrimExprs, or None when the shape is not a known ShapeExpr."""
        from .expr import ShapeExpr

        return self.shape.values if isinstance(self.shape, ShapeExpr) else None

    def text(self) -> str:
        parts = []
        values = self.shape_values
        if values is not None:
            parts.append(_dims_text(values))
        elif self.shape is not None:
            parts.append(getattr(self.shape, "name_hint", "?"))
        if not self.is_unknown_dtype:
            parts.append(f'dtype="{self.dtype}"')
        if self.shape is None and self.ndim != -1:
            parts.append(f"ndim={self.ndim}")
        return f"R.Tensor({', '.join(parts)})"


@node
class TupleStructInfo(StructInfo):
    """A tuple whose fields have the given struct infos."""

    fields: tuple

    def __init__(self, fields=()):
        object.__setattr__(self, "fields", tuple(fields))

    def text(self) -> str:
        return f"R.Tuple({', '.join(f.text() for f in self.fields)})"


@node
class FuncStructInfo(StructInfo):
    """A function: `params` (None for an opaque function), `ret`, and whether it is pure."""

    params: tuple | None
    ret: StructInfo
    purity: bool = True

    def __init__(self, params, ret, purity: bool = True):
        object.__setattr__(self, "params", None if params is None else tuple(params))
        object.__setattr__(self, "ret", ret)
        object.__setattr__(self, "purity", bool(purity))

    @staticmethod
    def opaque_func(ret: StructInfo | None = None, purity: bool = False) -> FuncStructInfo:
        """A function of unknown parameters returning `ret` (any object by default)."""
        return FuncStructInfo(None, ret or ObjectStructInfo(), purity)

    def text(self) -> str:
        params = "..." if self.params is None else "[" + ", ".join(p.text() for p in self.params) + "]"
        return f"R.Callable({params}, {self.ret.text()}, purity={self.purity})"


# --- relations ---------------------------------------------------------------------------


def dims_equal(a, b, analyzer: Analyzer | None = None) -> bool:
    """Two dimension tuples are provably equal (same length, each pair equal by the Analyzer)."""
    if len(a) != len(b):
        return False
    analyzer = analyzer or Analyzer()
    return all(x is y or analyzer.can_prove_equal(x, y) for x, y in zip(a, b))


def _shape_base_of(base, derived, analyzer) -> bool:
    from .expr import ShapeExpr

    if base is None:
        return True
    if derived is None:
        return False
    if isinstance(base, ShapeExpr) and isinstance(derived, ShapeExpr):
        return dims_equal(base.values, derived.values, analyzer)
    return base is derived


def is_base_of(base: StructInfo, derived: StructInfo, analyzer: Analyzer | None = None) -> bool:
    """True when every value described by `derived` is also described by `base` (subtyping).

    >>> is_base_of(ObjectStructInfo(), TensorStructInfo((2,), "int32"))
    True
    >>> is_base_of(TensorStructInfo((2,), "int32"), TensorStructInfo(ndim=1, dtype="int32"))
    False
    """
    analyzer = analyzer or Analyzer()
    if isinstance(base, ObjectStructInfo):
        return True
    if type(base) is not type(derived):
        return False
    if isinstance(base, TensorStructInfo):
        return (
            (base.is_unknown_dtype or base.dtype == derived.dtype)
            and (base.ndim == -1 or base.ndim == derived.ndim)
            and (base.vdevice is None or base.vdevice == derived.vdevice)
            and _shape_base_of(base.shape, derived.shape, analyzer)
        )
    if isinstance(base, ShapeStructInfo):
        if base.ndim != -1 and base.ndim != derived.ndim:
            return False
        return base.values is None or (
            derived.values is not None and dims_equal(base.values, derived.values, analyzer)
        )
    if isinstance(base, PrimStructInfo):
        if base.dtype != UNKNOWN_DTYPE and base.dtype != derived.dtype:
            return False
        return base.value is None or (
            derived.value is not None and analyzer.can_prove_equal(base.value, derived.value)
        )
    if isinstance(base, TupleStructInfo):
        return len(base.fields) == len(derived.fields) and all(
            is_base_of(b, d, analyzer) for b, d in zip(base.fields, derived.fields)
        )
    if isinstance(base, FuncStructInfo):
        if base.purity and not derived.purity:
            return False
        if not is_base_of(base.ret, derived.ret, analyzer):
            return False
        if base.params is None:
            return True
        return derived.params is not None and len(base.params) == len(derived.params) and all(
            is_base_of(d, b, analyzer) for b, d in zip(base.params, derived.params)
        )
    return False


def struct_info_lca(a: StructInfo, b: StructInfo) -> StructInfo:
    """The most precise struct info describing both `a` and `b` (used for `If` branches)."""
    if is_base_of(a, b):
        return a
    if is_base_of(b, a):
        return b
    if isinstance(a, TensorStructInfo) and isinstance(b, TensorStructInfo):
        dtype = a.dtype if a.dtype == b.dtype else UNKNOWN_DTYPE
        return TensorStructInfo(dtype=dtype, ndim=a.ndim if a.ndim == b.ndim else -1)
    if isinstance(a, ShapeStructInfo) and isinstance(b, ShapeStructInfo):
        return ShapeStructInfo(ndim=a.ndim if a.ndim == b.ndim else -1)
    if isinstance(a, PrimStructInfo) and isinstance(b, PrimStructInfo):
        return PrimStructInfo(a.dtype if a.dtype == b.dtype else UNKNOWN_DTYPE)
    if isinstance(a, TupleStructInfo) and isinstance(b, TupleStructInfo) and len(a.fields) == len(b.fields):
        return TupleStructInfo([struct_info_lca(x, y) for x, y in zip(a.fields, b.fields)])
    return ObjectStructInfo()


# --- symbolic variables ------------------------------------------------------------------


def tir_vars_in_expr(expr: PrimExpr) -> list:
    """Every symbolic tir.Var `expr` uses, in order of first appearance."""
    return used_vars(expr)


def tir_vars_in_struct_info(sinfo: StructInfo) -> list:
    """Every symbolic tir.Var that `sinfo` mentions, in order of first appearance."""
    out: list = []
    for expr in _prim_exprs(sinfo):
        for v in tir_vars_in_expr(expr):
            if v not in out:
                out.append(v)
    return out


def defined_tir_vars(sinfo: StructInfo) -> list:
    """Symbolic vars a value of `sinfo` defines: those appearing as a bare dimension (TVM's rule)."""
    out: list = []
    for expr in _prim_exprs(sinfo, bare_only=True):
        if isinstance(expr, TIRVar) and expr not in out:
            out.append(expr)
    return out


def _prim_exprs(sinfo, bare_only: bool = False):
    if isinstance(sinfo, TensorStructInfo):
        yield from sinfo.shape_values or ()
    elif isinstance(sinfo, ShapeStructInfo):
        yield from sinfo.values or ()
    elif isinstance(sinfo, PrimStructInfo):
        if sinfo.value is not None:
            yield sinfo.value
    elif isinstance(sinfo, TupleStructInfo):
        for field in sinfo.fields:
            yield from _prim_exprs(field, bare_only)
    elif isinstance(sinfo, FuncStructInfo) and not bare_only:
        for p in sinfo.params or ():
            yield from _prim_exprs(p)
        yield from _prim_exprs(sinfo.ret)


def erase_to_well_defined(sinfo: StructInfo, shape_var_map: dict | None = None,
                          var_map: dict | None = None) -> StructInfo:
    """`sinfo` with every symbolic var outside `shape_var_map` erased (shapes degrade to ndim).

    Vars that are keys of `shape_var_map` are replaced by their values; Relax shape Vars that
    are not keys of `var_map` are erased too.

    >>> from graphc import tir
    >>> n = tir.Var("n", "int64")
    >>> erase_to_well_defined(TensorStructInfo((n, 2), "float32"))
    R.Tensor(dtype="float32", ndim=2)
    """
    from .expr import ShapeExpr

    shape_var_map = shape_var_map or {}
    var_map = var_map or {}

    def dims(values):
        if values is None:
            return None
        if any(v not in shape_var_map for e in values for v in tir_vars_in_expr(e)):
            return None
        analyzer = Analyzer()
        return tuple(analyzer.simplify(substitute(e, shape_var_map)) if shape_var_map else e for e in values)

    if isinstance(sinfo, TensorStructInfo):
        if sinfo.shape is None:
            return sinfo
        if isinstance(sinfo.shape, ShapeExpr):
            values = dims(sinfo.shape.values)
        else:
            mapped = var_map.get(sinfo.shape)
            return sinfo.replace(shape=mapped) if mapped is not None else TensorStructInfo(
                None, sinfo.dtype, sinfo.ndim, sinfo.vdevice)
        if values is None:
            return TensorStructInfo(None, sinfo.dtype, sinfo.ndim, sinfo.vdevice)
        if all(a is b for a, b in zip(values, sinfo.shape.values)):
            return sinfo
        return TensorStructInfo(values, sinfo.dtype, sinfo.ndim, sinfo.vdevice)
    if isinstance(sinfo, ShapeStructInfo):
        values = dims(sinfo.values)
        return sinfo if values is None and sinfo.values is None else ShapeStructInfo(values, sinfo.ndim)
    if isinstance(sinfo, PrimStructInfo):
        if sinfo.value is None:
            return sinfo
        value = dims((sinfo.value,))
        return PrimStructInfo(sinfo.dtype, value[0] if value else None)
    if isinstance(sinfo, TupleStructInfo):
        return TupleStructInfo([erase_to_well_defined(f, shape_var_map, var_map) for f in sinfo.fields])
    if isinstance(sinfo, FuncStructInfo):
        return sinfo
    return sinfo


def get_ndim(sinfo: StructInfo) -> int:
    """The rank of a tensor or shape struct info (-1 when unknown or not a tensor/shape)."""
    return sinfo.ndim if isinstance(sinfo, TensorStructInfo | ShapeStructInfo) else -1


def get_dtype(sinfo: StructInfo) -> str:
    """The dtype of a tensor or scalar struct info ("void" when unknown or not applicable)."""
    return sinfo.dtype if isinstance(sinfo, TensorStructInfo | PrimStructInfo) else UNKNOWN_DTYPE
