"""Relax expressions: leaves, calls, tuples, control flow and functions.

Every expression carries struct info. Leaves (constants, shapes, strings, ...) get it when
they are built; calls get it from the operator registry when a `BlockBuilder` normalizes
them. `expr.struct_info_` is None until then, and `expr.struct_info` raises.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> x.struct_info
R.Tensor((2, 3), dtype="float32")
>>> relax.const(1.0).struct_info
R.Tensor((), dtype="float32")
>>> relax.Call(relax.Op.get("relax.nn.relu"), [x]).struct_info_ is None
True
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.module import GlobalVar
from ..ir.node import Node, node, repr_text
from ..tir.expr import IntImm, PrimExpr
from .struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
    as_dim,
    canonical_dtype,
)


class Attrs(dict):
    """Static operator or function parameters: a read-only dict whose keys read as attributes.

    >>> Attrs(axes=(1, 0)).axes
    (1, 0)
    """

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"attrs have no field {key!r} (fields: {sorted(self)})") from None

    def _readonly(self, *args, **kwargs):
        raise TypeError("Attrs are immutable; build a new Attrs (e.g. with dict(attrs, key=value))")

    __setitem__ = __delitem__ = __setattr__ = update = pop = popitem = clear = setdefault = _readonly  # type: ignore
    __ior__ = _readonly  # type: ignore[assignment]

    def __reduce__(self):
        return (Attrs, (dict(self),))


EMPTY_ATTRS = Attrs()


def _attrs(value) -> Attrs:
    if value is None:
        return EMPTY_ATTRS
    return value if isinstance(value, Attrs) else Attrs(value)


class Expr(Node):
    """Base class of Relax expressions. `_struct_info` is set once, by normalization."""

    __slots__ = ("_struct_info",)
    __hash__ = object.__hash__

    @property
    def struct_info_(self) -> StructInfo | None:
        """The struct info, or None if this expression was not normalized yet."""
        return getattr(self, "_struct_info", None)

    @property
    def struct_info(self) -> StructInfo:
        """The struct info; raises when it was not inferred yet (emit or normalize the expression)."""
        sinfo = self.struct_info_
        if sinfo is None:
            raise TypeInferenceError(
                f"{type(self).__name__} {self!r} has no struct info yet; "
                "normalize it first (BlockBuilder.normalize or BlockBuilder.emit)"
            )
        return sinfo

    def __repr__(self) -> str:
        return repr_text(self)


def set_struct_info(expr: Expr, sinfo: StructInfo) -> None:
    """Attach `sinfo` to `expr` once (normalization does this; TVM's UpdateStructInfo).

    Re-setting to a different struct info is an error: expressions are immutable values.
    """
    if isinstance(expr, Var):
        if expr.struct_info_ is None:
            raise TypeInferenceError(f"Var {expr.name_hint!r} needs its struct info when it is created")
        return
    current = expr.struct_info_
    if current is not None and current is not sinfo:
        from ..ir.structural import structural_equal

        if not structural_equal(current, sinfo):
            raise TypeInferenceError(
                f"{type(expr).__name__} already has struct info {current}; cannot change it to {sinfo}"
            )
        return
    object.__setattr__(expr, "_struct_info", sinfo)


class LeafExpr(Expr):
    """Expressions that A-normal form allows as call arguments (besides tuples of them)."""

    __slots__ = ()


@node
class Var(LeafExpr):
    """A variable bound by a function parameter or a binding; compared by binding structurally."""

    name_hint: str
    struct_info_: StructInfo | None = None
    __structural_binding__ = True

    def __init__(self, name_hint: str, struct_info: StructInfo | None = None):
        if struct_info is not None and not isinstance(struct_info, StructInfo):
            raise TypeInferenceError(
                f"Var {name_hint!r}: struct_info must be a StructInfo, got "
                f"{struct_info!r}")
        object.__setattr__(self, "name_hint", name_hint)
        object.__setattr__(self, "struct_info_", struct_info)


@node
class DataflowVar(Var):
    """A variable visible only inside its dataflow block."""

    def __init__(self, name_hint: str, struct_info: StructInfo | None = None):
        Var.__init__(self, name_hint, struct_info)


@node
class Constant(LeafExpr):
    """A constant tensor (a `graphc.runtime.Tensor`; numpy arrays are converted)."""

    data: object

    def __init__(self, data, struct_info: StructInfo | None = None):
        from ..runtime import tensor as _tensor

        if isinstance(data, np.ndarray | np.generic):
            data = _tensor(np.asarray(data))
        object.__setattr__(self, "data", data)
        sinfo = struct_info or TensorStructInfo(tuple(int(d) for d in data.shape), str(data.dtype))
        object.__setattr__(self, "_struct_info", sinfo)


def const(value, dtype: str | None = None) -> Constant:
    """A constant tensor from a Python number, list, numpy array or graphc Tensor.

    Python floats default to float32 and ints to int64 (TVM's `relax.const`).

    >>> const([1, 2], "int32").struct_info
    R.Tensor((2,), dtype="int32")
    """
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    if dtype is None:
        array = np.asarray(value)
        if array.dtype == np.float64 and not isinstance(value, np.ndarray):
            array = array.astype("float32")
    else:
        array = np.asarray(value, dtype=canonical_dtype(dtype))
    return Constant(array)


@node
class ShapeExpr(LeafExpr):
    """A shape value: a tuple of int64 PrimExprs (ints are converted)."""

    values: tuple

    def __init__(self, values):
        if isinstance(values, int | PrimExpr):
            values = (values,)
        values = tuple(as_dim(v) for v in values)
        for v in values:
            if not v.dtype.startswith(("int", "uint")):
                raise TypeInferenceError(
                    f"ShapeExpr dimensions must be integers, got {v!r} of "
                    f"dtype {v.dtype}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "_struct_info", ShapeStructInfo(values))

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index):
        return self.values[index]

    def __iter__(self):
        return iter(self.values)


@node
class PrimValue(LeafExpr):
    """A scalar PrimExpr used as a Relax value (Python ints become int64)."""

    value: PrimExpr

    def __init__(self, value):
        if isinstance(value, bool):
            value = IntImm("bool", int(value))
        elif isinstance(value, int):
            value = as_dim(value)
        elif isinstance(value, float):
            from ..tir.expr import FloatImm

            value = FloatImm("float64", value)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "_struct_info", PrimStructInfo(value.dtype, value))


@node
class StringImm(LeafExpr):
    """A string value."""

    value: str

    def __post_init__(self):
        object.__setattr__(self, "_struct_info", ObjectStructInfo())


@node
class DataTypeImm(LeafExpr):
    """A data type used as a value (e.g. the dtype argument of `astype`)."""

    value: str

    def __post_init__(self):
        object.__setattr__(self, "value", canonical_dtype(self.value))
        object.__setattr__(self, "_struct_info", ObjectStructInfo())


@node
class ExternFunc(LeafExpr):
    """A function provided by the runtime, looked up by `global_symbol`."""

    global_symbol: str

    def __post_init__(self):
        object.__setattr__(self, "_struct_info", FuncStructInfo.opaque_func())


@node
class Tuple(Expr):
    """A tuple of expressions; its struct info is known as soon as every field's is."""

    fields: tuple

    def __init__(self, fields):
        fields = tuple(fields)
        object.__setattr__(self, "fields", fields)
        sinfos = [f.struct_info_ if isinstance(f, Expr) else None for f in fields]
        if all(s is not None for s in sinfos):
            object.__setattr__(self, "_struct_info", TupleStructInfo(sinfos))

    def __len__(self) -> int:
        return len(self.fields)

    def __getitem__(self, index):
        return self.fields[index]


@node
class TupleGetItem(Expr):
    """Field `index` of a tuple-valued expression."""

    tuple_value: Expr
    index: int


@node
class Call(Expr):
    """Call `op` (an Op, a GlobalVar, a Var or an ExternFunc) on `args`.

    `attrs` holds the operator's static parameters; `sinfo_args` carry result struct info for
    operators that cannot infer it (`call_tir`, packed calls).
    """

    op: object
    args: tuple
    attrs: Attrs = None  # type: ignore[assignment]  (always set by __init__)
    sinfo_args: tuple = ()

    def __init__(self, op, args, attrs=None, sinfo_args=()):
        if isinstance(sinfo_args, StructInfo):
            sinfo_args = (sinfo_args,)
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "args", tuple(args))
        object.__setattr__(self, "attrs", _attrs(attrs))
        object.__setattr__(self, "sinfo_args", tuple(sinfo_args))


@node
class If(Expr):
    """`true_branch` when `cond` (a boolean scalar) holds, else `false_branch` (each a SeqExpr)."""

    cond: Expr
    true_branch: Expr
    false_branch: Expr


# --- bindings, blocks, functions ---------------------------------------------------------


class Binding(Node):
    """Base class of bindings: `var` is defined by the binding."""

    __slots__ = ()
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return repr_text(self)


@node
class VarBinding(Binding):
    """`var = value`."""

    var: Var
    value: Expr


@node
class MatchCast(Binding):
    """`var = match_cast(value, struct_info)`: a run-time check that may define symbolic vars."""

    var: Var
    value: Expr
    struct_info: StructInfo


@node
class BindingBlock(Node):
    """A sequence of bindings, possibly impure."""

    bindings: tuple

    def __init__(self, bindings=()):
        object.__setattr__(self, "bindings", tuple(bindings))

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return repr_text(self)


@node
class DataflowBlock(BindingBlock):
    """A pure, side-effect free block; only non-dataflow Vars are visible after it."""

    def __init__(self, bindings=()):
        BindingBlock.__init__(self, bindings)


@node
class SeqExpr(Expr):
    """Run `blocks` in order, then evaluate `body`."""

    blocks: tuple
    body: Expr

    def __init__(self, blocks, body):
        object.__setattr__(self, "blocks", tuple(blocks))
        object.__setattr__(self, "body", body)


@node
class Function(Expr):
    """A Relax function. `attrs` hold e.g. `global_symbol`, `num_input`, `Primitive`.

    Its struct info, a FuncStructInfo, is known from the parameters and `ret_struct_info`
    (which defaults to the body's struct info, erased to what the parameters define).
    """

    params: tuple
    body: Expr
    ret_struct_info: StructInfo | None = None
    is_pure: bool = True
    attrs: Attrs = None  # type: ignore[assignment]  (always set by __init__)

    def __init__(self, params, body, ret_struct_info=None, is_pure: bool = True, attrs=None):
        from .struct_info import defined_tir_vars, erase_to_well_defined

        params = tuple(params)
        for p in params:
            if not isinstance(p, Var) or p.struct_info_ is None:
                raise TypeInferenceError(f"Function parameters must be Vars with struct info, got {p!r}")
        if ret_struct_info is None and isinstance(body, Expr) and body.struct_info_ is not None:
            defined = {v: v for p in params for v in defined_tir_vars(p.struct_info)}
            ret_struct_info = erase_to_well_defined(body.struct_info_, defined, {p: p for p in params})
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "ret_struct_info", ret_struct_info)
        object.__setattr__(self, "is_pure", bool(is_pure))
        object.__setattr__(self, "attrs", _attrs(attrs))
        if ret_struct_info is not None:
            sinfo = FuncStructInfo([p.struct_info for p in params], ret_struct_info, is_pure)
            object.__setattr__(self, "_struct_info", sinfo)

    def with_attr(self, key, value=None) -> Function:
        """A copy with attribute `key` set (or several, when `key` is a dict)."""
        attrs = dict(self.attrs)
        attrs.update(key if isinstance(key, dict) else {key: value})
        return Function(self.params, self.body, self.ret_struct_info, self.is_pure, attrs)

    def without_attr(self, key) -> Function:
        attrs = {k: v for k, v in self.attrs.items() if k != key}
        return Function(self.params, self.body, self.ret_struct_info, self.is_pure, attrs)

    def replace(self, **changes):
        if all(getattr(self, k) is v for k, v in changes.items()):
            return self
        fields = dict(params=self.params, body=self.body, ret_struct_info=self.ret_struct_info,
                      is_pure=self.is_pure, attrs=self.attrs)
        fields.update(changes)
        return Function(**fields)


def is_leaf(expr) -> bool:
    """A leaf in A-normal form: a Var, constant, shape, scalar, string, dtype, GlobalVar or Op."""
    from .op.registry import Op

    return isinstance(expr, LeafExpr | GlobalVar | Op)


__all__ = [
    "Attrs", "Binding", "BindingBlock", "Call", "Constant", "DataTypeImm", "DataflowBlock", "DataflowVar",
    "Expr", "ExternFunc", "Function", "GlobalVar", "If", "LeafExpr", "MatchCast", "PrimValue", "SeqExpr",
    "ShapeExpr", "StringImm", "Tuple", "TupleGetItem", "Var", "VarBinding", "const", "is_leaf",
    "set_struct_info",
]
