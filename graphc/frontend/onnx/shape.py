"""Shape computations: Constant, Shape, Size, ConstantOfShape, Range, EyeLike.

`Shape` of a tensor yields its sizes as a known array at import (ints, and PrimExprs for
symbolic dimensions), so `Shape -> Gather -> Concat -> Reshape` chains fold while the
model is imported: into constants when the dimensions are static, and into expressions of
the symbolic dimensions otherwise (one compiled model for every size).
"""

from __future__ import annotations

import numpy as np

from ... import relax, tir
from .common import Emitting, as_prims, dtype_of, prim_array, shape_expr, shape_of, sinfo
from .dtypes import as_storage, graphc_dtype, is_float, narrow_format
from .importer import Known
from .registry import converter

op = Emitting(relax.op)

MAX_FOLDED_BYTES = 1 << 30  # a static ConstantOfShape up to this size becomes a constant


@converter("Constant", since=1)
def constant(node):
    names = [
        n
        for n in (
            "value",
            "value_float",
            "value_floats",
            "value_int",
            "value_ints",
            "value_string",
            "value_strings",
            "sparse_value",
        )
        if node.has_attr(n)
    ]
    if len(names) != 1:
        raise node.error(f"expects exactly one value attribute, got {names}")
    name = names[0]
    if name in ("value_string", "value_strings", "sparse_value"):
        raise node.unsupported(name, why="(strings and sparse tensors) is not supported by graphc")
    value = node.attr(name)
    if name == "value":
        if value.dtype.kind in "OSU":
            raise node.unsupported(name, "<string tensor>", "(strings) is not supported by graphc")
        elem = node.attrs["value"].t.data_type
        if narrow_format(elem) is not None:
            node.set_narrow(0, narrow_format(elem))
        return Known(as_storage(value), graphc_dtype(elem, "Constant value"))
    dtype = "float32" if name.startswith("value_float") else "int64"
    return np.asarray(value, dtype=dtype)


@converter("Shape", since=1)
def shape(node):
    x = node.input(0)
    dims = prim_array(shape_of(x))
    start, end = node.attr("start", 0), node.attr("end", None)
    n = len(dims)
    start = min(max(start + n if start < 0 else start, 0), n)
    end = n if end is None else min(max(end + n if end < 0 else end, 0), n)
    return Known(dims[start:end], "int64")


@converter("Size", since=1)
def size(node):
    total = tir.const(1, "int64")
    for d in shape_of(node.input(0)):
        total = total * d
    return Known(np.array(total, dtype=object), "int64")


@converter("ConstantOfShape", since=9)
def constant_of_shape(node):
    value = node.attr("value", None)
    dtype = "float32"
    fill = 0.0
    if value is not None:
        tensor = node.attrs["value"].t
        dtype = graphc_dtype(tensor.data_type, "ConstantOfShape value")
        fill = value.reshape(-1)[0]
    dims = node.ints(0, "shape")
    if all(isinstance(d, tir.IntImm) for d in dims):
        np_dtype = value.dtype if value is not None else np.dtype("float32")
        count = int(np.prod([d.value for d in dims]))
        # a static shape is a constant, as an initializer would be (models ship their weights
        # this way): the kernels then see a weight they pack once, not a `full` run every call
        if count * np_dtype.itemsize <= MAX_FOLDED_BYTES:
            return np.full([d.value for d in dims], fill, dtype=np_dtype)
    return op.full(shape_expr(dims), relax.const(fill, dtype), dtype)


@converter("Range", since=11)
def range_op(node):
    known = node.all_known(0, 1, 2)
    if known is not None and all(a.dtype != object for a in known):
        start, limit, delta = (a.reshape(-1)[0] for a in known)
        out = np.arange(start, limit, delta, dtype=known[0].dtype)
        if out.size <= 4096:
            return out
    start, limit, delta = node.input(0), node.input(1), node.input(2)
    dtype = dtype_of(start)
    if not is_float(dtype):
        s, lim, d = (node.ints(i, name)[0] for i, name in ((0, "start"), (1, "limit"), (2, "delta")))
        length = tir.max(
            tir.truncdiv(lim - s + d - tir.select(d > 0, tir.const(1, "int64"), tir.const(-1, "int64")), d),
            tir.const(0, "int64"),
        )
        length = node.importer.analyzer().simplify(length)  # sizes are never negative: max(n, 0) is n
        steps = op.arange(0, relax.PrimValue(length), 1, "int64")
        return op.add(op.multiply(op.astype(steps, dtype), delta), start)
    # float range: the element count is computed at run time and read back as a size
    count = op.ceil(op.divide(op.subtract(limit, start), delta))
    count = node.importer.emit(op.maximum(op.astype(count, "int64"), relax.const(0, "int64")))
    length = node.importer.int_values_of(count, "Range length")[0]
    steps = op.arange(0, relax.PrimValue(length), 1, "int64")
    return op.add(op.multiply(op.astype(steps, dtype), delta), start)


@converter("EyeLike", since=9)
def eye_like(node):
    x = node.input(0)
    dtype = node.attr("dtype", None)
    dtype = dtype_of(x) if dtype is None else graphc_dtype(dtype, "EyeLike dtype")
    k = node.attr("k")
    rows, cols = shape_of(x)
    r = op.arange(0, relax.PrimValue(rows), 1, "int64")
    c = op.arange(0, relax.PrimValue(cols), 1, "int64")
    diff = op.subtract(op.expand_dims(c, [0]), op.expand_dims(r, [1]))
    return op.astype(op.equal(diff, relax.const(k, "int64")), dtype)


__all__ = ["as_prims", "sinfo"]
