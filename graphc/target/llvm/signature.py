"""The calling convention of a compiled PrimFunc, as plain JSON-able metadata.

Each kernel is `i32 @name(i64* args)`: one 8-byte slot per parameter (a buffer's data
pointer, or a scalar's value: int64, or the bits of a double), then one slot per symbolic
variable of the buffers' shapes and strides, in `sym_vars` order. The runtime
(`graphc.runtime.kernel`) checks arguments against this metadata and fills the slots.

>>> from graphc import tir
>>> n = tir.Var("n", "int32")
>>> A = tir.decl_buffer((n, n * 2), "float32", "A")
>>> a = tir.Var("a", "handle")
>>> meta = func_signature("f", tir.PrimFunc([a], tir.Evaluate(0), buffer_map={a: A}))
>>> meta["params"][0]["shape"], meta["sym_vars"]
(['n', ['*', 'n', 2]], [['n', 'int32']])
"""

from __future__ import annotations

from ...errors import CodegenError
from ...ir.dtype import DataType
from ...tir import expr as tir_expr
from ...tir.functor import post_order_visit
from ...tir.stmt import BufferStore

_OPS = {tir_expr.Add: "+", tir_expr.Sub: "-", tir_expr.Mul: "*", tir_expr.FloorDiv: "//",
        tir_expr.FloorMod: "%", tir_expr.Div: "/", tir_expr.Min: "min", tir_expr.Max: "max",
        tir_expr.EQ: "==", tir_expr.NE: "!=", tir_expr.LT: "<", tir_expr.LE: "<=", tir_expr.GT: ">",
        tir_expr.GE: ">=", tir_expr.And: "and", tir_expr.Or: "or"}


def dim_tree(expr, where: str):
    """A dimension as an int, a variable name, or `[op, operands...]`."""
    if isinstance(expr, tir_expr.IntImm):
        return expr.value
    if isinstance(expr, tir_expr.Var):
        return expr.name
    if isinstance(expr, tir_expr.Cast):
        return dim_tree(expr.value, where)
    if isinstance(expr, tir_expr.Select):  # sizes chosen by run-time values (ONNX axes given as tensors)
        return ["select", *(dim_tree(v, where) for v in (expr.condition, expr.true_value, expr.false_value))]
    if isinstance(expr, tir_expr.Not):
        return ["not", dim_tree(expr.a, where)]
    op = _OPS.get(type(expr))
    if op is None:
        raise CodegenError(f"{where}: cannot express dimension {expr!r} ({type(expr).__name__}) "
                           "in the calling convention; use +, -, *, //, %, min, max, comparisons "
                           "and select of variables")
    return [op, dim_tree(expr.a, where), dim_tree(expr.b, where)]


def written_buffers(func) -> set:
    """The data Vars the body stores to (or passes to external calls, conservatively).

    The host code of a GPU function stores nothing itself: its kernels' stores are listed by
    name in the attribute "tir.device_written" (set by SplitHostDevice).
    """
    written: set = set()
    device_written = set(func.attrs.get("tir.device_written", ()))
    for buf in func.buffer_map.values():
        if buf.data.name in device_written:
            written.add(buf.data)

    def visit(node):
        if isinstance(node, BufferStore):
            written.add(node.buffer.data)
        elif isinstance(node, tir_expr.Call) and node.op in ("tir.call_extern", "tir.address_of"):
            for arg in node.args:
                if isinstance(arg, tir_expr.Var) and DataType(arg.dtype).is_handle:
                    written.add(arg)
                if isinstance(arg, tir_expr.BufferLoad):
                    written.add(arg.buffer.data)

    post_order_visit(func.body, visit)
    return written


def func_signature(name: str, func) -> dict:
    """The metadata of `func` compiled as `name` (see the module docstring)."""
    written = written_buffers(func)
    scalar_names = {p.name for p in func.params if p not in func.buffer_map}
    params, sym_vars, seen = [], [], set(scalar_names)
    var_dtypes: dict[str, str] = {}

    def note_vars(expr):
        def visit(node):
            if isinstance(node, tir_expr.Var):
                var_dtypes[node.name] = node.dtype
                if node.name not in seen:
                    seen.add(node.name)
                    sym_vars.append([node.name, node.dtype])

        post_order_visit(expr, visit)

    for param in func.params:
        buf = func.buffer_map.get(param)
        if buf is None:
            params.append({"kind": "scalar", "name": param.name, "dtype": param.dtype})
            continue
        where = f"{name}: parameter {buf.name}"
        for dim in (*buf.shape, *buf.strides):
            note_vars(dim)
        if buf.elem_offset is not None and not (isinstance(buf.elem_offset, tir_expr.IntImm)
                                                and buf.elem_offset.value == 0):
            raise CodegenError(f"{where}: a parameter buffer with elem_offset {buf.elem_offset!r} "
                               "is not supported; pass a view with offset 0")
        params.append({
            "kind": "buffer",
            "name": buf.name,
            "dtype": buf.dtype,
            "shape": [dim_tree(d, where) for d in buf.shape],
            "strides": [dim_tree(s, where) for s in buf.strides],
            "written": buf.data in written or param in written,
            "align": buf.data_alignment if buf.data_alignment >= 64 else 0,
        })
    _check_bindable(name, params, sym_vars)
    return {"name": name, "params": params, "sym_vars": sym_vars}


def _check_bindable(name: str, params: list, sym_vars: list) -> None:
    """Every symbolic variable must appear alone as some dimension or stride."""
    plain = {p["name"] for p in params if p["kind"] == "scalar"}
    for p in params:
        if p["kind"] == "buffer":
            plain.update(d for d in (*p["shape"], *p["strides"]) if isinstance(d, str))
    for var, _dtype in sym_vars:
        if var not in plain:
            raise CodegenError(
                f"{name}: symbolic variable {var!r} appears only inside compound dimensions, so "
                "its value cannot be read from the arguments; add it as a scalar parameter"
            )
