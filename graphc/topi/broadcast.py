"""Binary TE computes with numpy broadcasting: arithmetic, comparisons, logic, bits, `where`.

Shapes align on the right; a dimension that is the constant 1 broadcasts against the other
operand's (symbolic dimensions that are not 1 are taken to be equal, as TVM's topi does).

>>> from graphc import te, topi
>>> a = te.placeholder((3, 1), "float32", name="a")
>>> b = te.placeholder((4,), "float32", name="b")
>>> c = topi.add(a, b)
>>> [int(d) for d in c.shape], c.op.name
([3, 4], 'T_add')
>>> topi.less(a, b).dtype
'bool'
"""

from __future__ import annotations

from .. import te
from ..tir import expr as _e
from ..tir import op as _op


def _is_one(d) -> bool:
    return isinstance(d, _e.IntImm) and d.value == 1


def broadcast_shape(*shapes) -> tuple:
    """The numpy broadcast of `shapes` (constant-1 dimensions give way to the others)."""
    ndim = max(len(s) for s in shapes)
    out = []
    for k in range(ndim):
        dims = [s[len(s) - ndim + k] for s in shapes if len(s) - ndim + k >= 0]
        non_unit = [d for d in dims if not _is_one(d)]
        out.append(non_unit[0] if non_unit else dims[0])
    return tuple(out)


def broadcast_index(tensor: te.Tensor, out_shape, index) -> tuple:
    """The index into `tensor` for output `index`: right-aligned, 0 on its size-1 dimensions."""
    offset = len(out_shape) - len(tensor.shape)
    return tuple(
        _e.const(0, i.dtype) if _is_one(d) and not _is_one(out_shape[offset + k]) else i
        for k, (d, i) in enumerate(zip(tensor.shape, index[offset:]))
    )


def _operand(x, out_shape, index):
    if isinstance(x, te.Tensor):
        return x(*broadcast_index(x, out_shape, index))
    return x


def broadcast_compute(f, name: str, *inputs) -> te.Tensor:
    """`f(*elements)` over the broadcast shape of the tensor `inputs` (scalars are used as is)."""
    shape = broadcast_shape(*(t.shape for t in inputs if isinstance(t, te.Tensor)))
    return te.compute(shape, lambda *ax: f(*(_operand(t, shape, ax) for t in inputs)), name=name)


def _binary(fn, tvm_name: str, doc: str):
    def compute(lhs, rhs) -> te.Tensor:
        return broadcast_compute(fn, f"T_{tvm_name}", lhs, rhs)

    compute.__name__ = compute.__qualname__ = tvm_name
    compute.__doc__ = f"{doc}, with numpy broadcasting."
    return compute


def _floor_divide(a, b):
    if a.dtype.startswith("float"):
        return _op.floor(a / b)
    return _e.floordiv(a, b)


def _floor_mod(a, b):
    if a.dtype.startswith("float"):
        return a - _op.floor(a / b) * b
    return _e.floormod(a, b)


def _trunc_mod(a, b):
    if a.dtype.startswith("float"):
        return _op.fmod(a, b)
    return _e.truncmod(a, b)


def _logical_xor(a, b):
    return _e.logical_or(_e.logical_and(a, _e.logical_not(b)), _e.logical_and(_e.logical_not(a), b))


def _cmp(cls):
    return lambda a, b: _e._compare(cls, a, b)


add = _binary(lambda a, b: a + b, "add", "`lhs + rhs`")
subtract = _binary(lambda a, b: a - b, "subtract", "`lhs - rhs`")
multiply = _binary(lambda a, b: a * b, "multiply", "`lhs * rhs`")
divide = _binary(lambda a, b: a / b, "divide", "`lhs / rhs` (truncating on integers, as TVM)")
floor_divide = _binary(_floor_divide, "floor_divide", "`floor(lhs / rhs)`")
def _power(a, b):
    if a.dtype.startswith(("float", "bfloat")):
        return _op.pow(a, b)
    # integers: exact through float64 (every int32 result; int64 up to 2**53), rounded back
    exact = _op.pow(_e.cast(a, "float64"), _e.cast(b, "float64"))
    return _e.cast(_op.round(exact), a.dtype)


power = _binary(_power, "power", "`lhs ** rhs` (integers stay integers)")
maximum = _binary(_op.max, "maximum", "The larger of `lhs` and `rhs`")
minimum = _binary(_op.min, "minimum", "The smaller of `lhs` and `rhs`")
mod = _binary(_trunc_mod, "mod", "The remainder of truncating division (C's fmod)")
floor_mod = _binary(_floor_mod, "floor_mod", "The remainder of floor division (numpy's mod)")
equal = _binary(_cmp(_e.EQ), "equal", "`lhs == rhs` as bool")
not_equal = _binary(_cmp(_e.NE), "not_equal", "`lhs != rhs` as bool")
less = _binary(_cmp(_e.LT), "less", "`lhs < rhs` as bool")
less_equal = _binary(_cmp(_e.LE), "less_equal", "`lhs <= rhs` as bool")
greater = _binary(_cmp(_e.GT), "greater", "`lhs > rhs` as bool")
greater_equal = _binary(_cmp(_e.GE), "greater_equal", "`lhs >= rhs` as bool")
logical_and = _binary(_e.logical_and, "logical_and", "`lhs and rhs` on bools")
logical_or = _binary(_e.logical_or, "logical_or", "`lhs or rhs` on bools")
logical_xor = _binary(_logical_xor, "logical_xor", "`lhs xor rhs` on bools")
bitwise_and = _binary(_op.bitwise_and, "bitwise_and", "`lhs & rhs` on integers")
bitwise_or = _binary(_op.bitwise_or, "bitwise_or", "`lhs | rhs` on integers")
bitwise_xor = _binary(_op.bitwise_xor, "bitwise_xor", "`lhs ^ rhs` on integers")
left_shift = _binary(_op.shift_left, "left_shift", "`lhs << rhs` on integers")
right_shift = _binary(_op.shift_right, "right_shift", "`lhs >> rhs` on integers (logical on unsigned)")


def where(condition, x, y) -> te.Tensor:
    """`x` where `condition` (bool) holds, else `y`; all three broadcast together.

    >>> from graphc import te, topi
    >>> c = te.placeholder((2, 1), "bool", name="c")
    >>> x = te.placeholder((3,), "float32", name="x")
    >>> [int(d) for d in topi.where(c, x, x).shape]
    [2, 3]
    """

    def f(c, a, b):
        if c.dtype != "bool":
            c = _e._compare(_e.NE, c, _e.const(0, c.dtype))
        return _e.select(c, a, b)

    return broadcast_compute(f, "T_where", condition, x, y)


def broadcast_to(x: te.Tensor, shape) -> te.Tensor:
    """`x` broadcast to `shape` (numpy's broadcast_to)."""
    shape = tuple(shape)
    return te.compute(shape, lambda *ax: x(*broadcast_index(x, shape, ax)), name="T_broadcast_to")
