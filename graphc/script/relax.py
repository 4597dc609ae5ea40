"""The `R.` namespace of the Relax script syntax (`from graphc.script import relax as R`).

Struct info annotations (`R.Tensor`, `R.Tuple`, `R.Shape`, `R.Prim`, `R.Object`, `R.Callable`)
and value builders (`R.const`, `R.shape`, `R.call_tir`, ...) work in plain Python too; every
registered operator is reachable from the registry by name (`"relax.nn.relu"` is
`R.nn.relu`). Statements that only mean something inside `@R.function` (`R.func_attr`,
`R.dataflow`, `R.output`) fail outside it. Symbolic dimensions written as strings (`"n"`)
become int64 `tir.Var`s, shared within the function being parsed (`symbol_scope`).

>>> R = __import__("graphc.script.relax", fromlist=["relax"])
>>> R.Tensor((1, 784), dtype="float32"), R.Tensor(("n", 4), "int8").shape.values[0].dtype
(R.Tensor((1, 784), dtype="float32"), 'int64')
>>> R.nn.relu(R.const(1.0, "float32")).op.name
'relax.nn.relu'
"""

from __future__ import annotations

import ast
import base64
import builtins
import difflib
import importlib
import inspect
from contextlib import contextmanager

import numpy as np

from ..errors import ScriptError, TypeInferenceError
from ..ir.module import GlobalVar
from ..relax import expr as _E
from ..relax import struct_info as _S
from ..relax.op import registry as _registry
from ..tir import expr as _tir
from .tir import ScriptOnly as _ScriptOnly

# Stack of {name: tir.Var} tables: the symbolic variables of the function being parsed.
_SYMBOLS: list[dict] = []


@contextmanager
def symbol_scope(table: dict):
    """Resolve string dimensions ("n") through `table` (new names are added to it)."""
    _SYMBOLS.append(table)
    try:
        yield table
    finally:
        _SYMBOLS.pop()


def _symbol(name: str) -> _tir.Var:
    table = _SYMBOLS[-1] if _SYMBOLS else {}
    if name not in table:
        table[name] = _tir.Var(name, "int64")
    return table[name]


def _sym_eval(node):
    if isinstance(node, ast.Name):
        return _symbol(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_sym_eval(node.operand)
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.FloorDiv: _tir.floordiv, ast.Mod: _tir.floormod}
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        return ops[type(node.op)](_sym_eval(node.left), _sym_eval(node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords and \
            isinstance(node.func.value, ast.Name) and node.func.value.id == "T":
        from . import tir as _T  # T.max(n, 1), T.min(...), T.floordiv(...), T.int64(4)

        fn = getattr(_T, node.func.attr, None)
        if fn is not None:
            return fn(*[_sym_eval(a) for a in node.args])
    raise TypeInferenceError(f"unsupported symbolic dimension {ast.unparse(node)!r}: use names, integers, "
                             "+ - * // % and T.<function>(...) calls")


def dim(value):
    """A shape dimension: an int, a PrimExpr, or a string naming (an expression of) symbolic vars."""
    if isinstance(value, builtins.str):
        value = _sym_eval(ast.parse(value, mode="eval").body)
    if hasattr(value, "asobject") and not isinstance(value, _tir.PrimExpr):
        value = value.asobject()  # `n == 0` written outside a script
    return _S.as_dim(value) if isinstance(value, int) else value


def shape_dim(value):
    """A dimension of a tensor or shape annotation: as `dim`, and it must be an int64."""
    value = dim(value)
    if isinstance(value, _tir.PrimExpr) and value.dtype != "int64":
        raise TypeInferenceError(f"shape dimensions are int64, but {value} is {value.dtype}; declare "
                                 "symbolic sizes with T.int64()")
    return value


# --- struct info -------------------------------------------------------------------------


def Tensor(shape=None, dtype=None, vdevice=None, ndim: int = -1):  # noqa: N802 - TVM's name
    """`R.Tensor((n, 4), dtype="float32")`, `R.Tensor(ndim=2)`, or a shape variable as `shape`."""
    if isinstance(shape, builtins.str) and dtype is None:
        shape, dtype = None, shape  # R.Tensor("float32")
    if vdevice is not None:
        raise TypeInferenceError(f"R.Tensor(..., vdevice={vdevice!r}): virtual devices are not supported by "
                                 "graphc; the device is chosen when the module is compiled")
    if isinstance(ndim, bool) or not isinstance(ndim, int) or ndim < -1:
        raise TypeInferenceError(f"R.Tensor expects ndim to be a non-negative int or -1 (unknown), got "
                                 f"{ndim!r}")
    if isinstance(shape, list | builtins.tuple):
        shape = builtins.tuple(shape_dim(d) for d in shape)
    return _S.TensorStructInfo(shape, dtype, ndim)


def Tuple(*fields):  # noqa: N802 - TVM's name
    """`R.Tuple(R.Tensor(...), R.Object)` (a single list of fields is accepted too)."""
    if len(fields) == 1 and isinstance(fields[0], list | builtins.tuple):
        fields = fields[0]
    return _S.TupleStructInfo([to_sinfo(f) for f in fields])


def Shape(values=None, ndim: int = -1):  # noqa: N802 - TVM's name
    """`R.Shape([n, 4])` or `R.Shape(ndim=2)`."""
    if values is not None:
        values = [shape_dim(v) for v in values]
    return _S.ShapeStructInfo(values, ndim)


def Prim(dtype=None, value=None):  # noqa: N802 - TVM's name
    """`R.Prim("int64")` or `R.Prim(value=n)`."""
    if value is not None:
        value = dim(value)
    return _S.PrimStructInfo(dtype, value)


def Object():  # noqa: N802 - TVM's name
    """Any value (`R.Object`)."""
    return _S.ObjectStructInfo()


def Callable(params=None, ret=None, purity: bool = True):  # noqa: N802 - TVM's name
    """`R.Callable((R.Tensor(...),), R.Tensor(...))`; no params means an opaque function."""
    ret = to_sinfo(ret) if ret is not None else _S.ObjectStructInfo()
    params = None if params is None else [to_sinfo(p) for p in params]
    return _S.FuncStructInfo(params, ret, purity)


def to_sinfo(value) -> _S.StructInfo:
    """An annotation as struct info (`R.Tensor` written without a call means an unknown tensor)."""
    if isinstance(value, _S.StructInfo):
        return value
    if value is None:  # `-> None`: the function returns nothing
        return _S.TupleStructInfo([])
    if value in (Tensor, Tuple, Shape, Prim, Object, Callable):
        return value()
    raise TypeInferenceError(f"expected struct info such as R.Tensor((n,), \"float32\"), got {value!r}")


# --- function-level statements (the parser handles them) --------------------------------


class _RScriptOnly(_ScriptOnly):
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        raise ScriptError(f"R.{self.name} can only be used inside a function decorated with @R.function")

    def __repr__(self) -> str:
        return f"R.{self.name}"


func_attr = _RScriptOnly("func_attr")
dataflow = _RScriptOnly("dataflow")
output = _RScriptOnly("output")
# `lv = R.emit_te(topi.add, x, y)`: the parser calls `bb.call_te` and adds the PrimFunc to the module
emit_te = _RScriptOnly("emit_te")


def function(func=None, *, private: bool = False, pure: bool = True, check_well_formed: bool = True,
             _depth: int = 2):
    """`@R.function`: parse a Relax function (inside `@I.ir_module`, the module parses it)."""
    if func is None:
        return lambda f: function(f, private=private, pure=pure, _depth=3)
    qual = func.__qualname__.split(".")
    if len(qual) > 1 and qual[-2] != "<locals>":
        return func  # a method of an @I.ir_module class: parsed with its module
    from .parser.relax_parser import parse_decorated

    return parse_decorated(func, private=private, pure=pure, depth=_depth)


class MatchCastValue:
    """What `R.match_cast(value, sinfo)` evaluates to; the parser turns it into a MatchCast binding."""

    __slots__ = ("value", "struct_info")

    def __init__(self, value, struct_info):
        self.value, self.struct_info = to_expr(value), to_sinfo(struct_info)


def match_cast(value, struct_info) -> MatchCastValue:
    """`lv: R.Tensor((n,), "float32") = R.match_cast(x, R.Tensor((n,), "float32"))`."""
    return MatchCastValue(value, struct_info)


# --- values ------------------------------------------------------------------------------


def to_expr(value):
    """A Relax expression from a script value, as TVM converts them: tuples and lists become
    relax Tuples, numbers and PrimExprs `R.prim_value`s, strings `R.str`s."""
    if isinstance(value, list | builtins.tuple):
        return _E.Tuple([to_expr(v) for v in value])
    if isinstance(value, _E.Expr | GlobalVar):
        return value
    if isinstance(value, builtins.str):
        return _E.StringImm(value)
    if isinstance(value, bool | int | float | _tir.PrimExpr):
        return _E.PrimValue(value)
    raise TypeInferenceError(f"expected a Relax expression, got {value!r}; wrap Python values with "
                      "R.const(...), R.prim_value(...) or R.shape([...])")


def const(value, dtype=None) -> _E.Constant:
    """A constant tensor (`R.const(1.0, "float32")`)."""
    return _E.const(value, dtype)


def const_from_base64(data: builtins.str, dtype: builtins.str, shape) -> _E.Constant:
    """A constant tensor from its raw little-endian bytes (how large constants are printed)."""
    array = np.frombuffer(base64.b64decode(data), dtype=np.dtype(dtype).newbyteorder("<"))
    return _E.Constant(array.astype(dtype).reshape(builtins.tuple(shape)))


def shape(values) -> _E.ShapeExpr:
    """A shape value (`R.shape([n, 4])`)."""
    return _E.ShapeExpr([dim(v) for v in values])


def prim_value(value) -> _E.PrimValue:
    return _E.PrimValue(dim(value) if isinstance(value, builtins.str) else value)


def dtype(value) -> _E.DataTypeImm:
    return _E.DataTypeImm(value)


def ExternFunc(global_symbol) -> _E.ExternFunc:  # noqa: N802 - TVM's name
    return _E.ExternFunc(global_symbol)


def tuple(*fields) -> _E.Tuple:  # noqa: A001 - TVM's name
    return _E.Tuple([to_expr(f) for f in fields])


def call_tir(gvar, args, out_sinfo, tir_vars=None) -> _E.Call:
    """`R.call_tir(cls.f, (x,), out_sinfo=R.Tensor(...), tir_vars=R.shape([n]))`."""
    from ..relax.op import call_tir as _call_tir

    if not isinstance(gvar, GlobalVar):
        raise TypeInferenceError(f"R.call_tir expects a PrimFunc of the module (cls.f), got {gvar!r}; "
                                 "call a runtime function with R.call_dps_packed")
    if isinstance(tir_vars, list | builtins.tuple):
        tir_vars = _E.ShapeExpr([dim(v) for v in tir_vars])
    return _call_tir(gvar, to_expr(args), _out_sinfo(out_sinfo), tir_vars)


def _sinfo_args(sinfo_args, ty_args) -> list:
    """`sinfo_args=` (or TVM's older `ty_args=`): one struct info or a list of them."""
    value = ty_args if sinfo_args is None else sinfo_args
    if value is None:
        return []
    if isinstance(value, _S.StructInfo) or value in (Tensor, Object, Shape, Tuple, Prim, Callable):
        value = [value]
    return [to_sinfo(v) for v in value]


def call_packed(func, *args, sinfo_args=None, ty_args=None):
    """A call of the global function named `func` (`R.call_packed("f", x, sinfo_args=...)`);
    impure: the callee may have effects. Register the callee with `graphc.register_func`."""
    op = func if isinstance(func, _E.Expr) else _E.ExternFunc(func)
    return _E.Call(op, [to_expr(a) for a in args], None, _sinfo_args(sinfo_args, ty_args))


def call_pure_packed(func, *args, sinfo_args=None, ty_args=None):
    """`R.call_pure_packed("f", x, sinfo_args=...)`: a call of a global function known to be pure."""
    from ..relax.op import call_pure_packed as _call

    return _call(func, *[to_expr(a) for a in args], sinfo_args=_sinfo_args(sinfo_args, ty_args))


def call_inplace_packed(func, *args, inplace_indices, sinfo_args=None, ty_args=None):
    """`R.call_inplace_packed("f", x, inplace_indices=[0], sinfo_args=...)`."""
    from ..relax.op import call_inplace_packed as _call

    return _call(func, *[to_expr(a) for a in args], inplace_indices=inplace_indices,
                 sinfo_args=_sinfo_args(sinfo_args, ty_args))


def _out_sinfo(out_sinfo):
    if isinstance(out_sinfo, list | builtins.tuple):
        return [to_sinfo(s) for s in out_sinfo]
    return to_sinfo(out_sinfo)


def call_dps_packed(func, args, out_sinfo):
    """`R.call_dps_packed("f", (x,), out_sinfo=R.Tensor(...))`: outputs are passed after `args`."""
    from ..relax.op import call_dps_packed as _call

    return _call(func, to_expr(args), _out_sinfo(out_sinfo))


def call_tir_inplace(gvar, args, inplace_indices, out_sinfo, tir_vars=None):
    """`R.call_tir_inplace(cls.f, (x, y), [0, -1], [R.Tensor(...), R.Tensor(...)])`."""
    from ..relax.op import call_tir_inplace as _call

    return _call(gvar, to_expr(args), inplace_indices, _out_sinfo(out_sinfo), tir_vars)


def _canonical_attr(value):
    if isinstance(value, list | builtins.tuple):
        return builtins.tuple(_canonical_attr(v) for v in value)
    return value


def _builder(op_name: builtins.str):
    """The Python builder of operator `op_name` (graphc.relax.op.nn.relu for "relax.nn.relu")."""
    *path, leaf = op_name.split(".")[1:]
    module_name = ".".join(["graphc.relax.op", *path])
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        # An operator registered under a namespace of its own has no builder module; a
        # module that exists but fails to import is a bug and propagates.
        if err.name is not None and (module_name + ".").startswith(err.name + "."):
            return None
        raise
    fn = getattr(module, leaf, None)
    return fn if builtins.callable(fn) else None


def make_op_call(op_name: builtins.str, args, kwargs) -> _E.Call:
    """A Call of registered operator `op_name`, through its builder when the arguments fit it.

    Keyword arguments that are not the builder's are the operator's attributes (from the
    registry); `sinfo_args=` gives explicit result struct info.
    """
    info = _registry.Op.get(op_name).info
    kwargs = {k: _canonical_attr(v) for k, v in kwargs.items()}
    sinfo_args = kwargs.pop("sinfo_args", ())
    if isinstance(sinfo_args, _S.StructInfo):
        sinfo_args = (sinfo_args,)
    args = list(args)
    if op_name == "relax.call_builtin_with_ctx" and args and isinstance(args[0], builtins.str):
        args[0] = _E.ExternFunc(args[0])  # TVM's spelling: the builtin by name
    builder = _builder(op_name)
    if builder is not None and not sinfo_args:
        # The builder gets the script's values as written (Python tuples of sizes are shapes,
        # numbers are prim values), as TVM's operator functions do.
        try:
            inspect.signature(builder).bind(*args, **kwargs)
        except TypeError:
            builder = None
        if builder is not None:
            call = builder(*args, **kwargs)
            if isinstance(call, _E.Call) and getattr(call.op, "name", None) == op_name:
                return call
    args = [to_expr(a) if isinstance(a, list | builtins.tuple | _E.Expr) else a for a in args]
    unknown = set(kwargs) - set(info.attrs)
    if unknown:
        raise TypeInferenceError(f"R.{op_name.removeprefix('relax.')} got unknown keyword argument(s) "
                          f"{sorted(unknown)}; its attributes are {sorted(info.attrs)}")
    return _E.Call(_registry.Op.get(op_name), [to_expr(a) for a in args], kwargs, sinfo_args)


class OpNamespace:
    """`R.nn` and friends: attribute `name` is the operator `<prefix>.name` from the registry."""

    def __init__(self, prefix: builtins.str):
        self._prefix = prefix

    def __getattr__(self, name: builtins.str):
        return _op_attr(f"{self._prefix}.{name}")

    def __repr__(self) -> str:
        return "R." + self._prefix.removeprefix("relax.")


def _op_attr(full: builtins.str):
    names = _registry.list_ops()
    if full not in names and full in _TVM_ONLY:
        raise AttributeError(f"R.{full.removeprefix('relax.')} is not supported by graphc "
                             f"({_TVM_ONLY[full]})")
    if full in names:

        def call(*args, **kwargs):
            return make_op_call(full, args, kwargs)

        call.__name__ = call.__qualname__ = "R." + full.removeprefix("relax.")
        call.op_name = full
        return call
    if any(n.startswith(full + ".") for n in [*names, *_TVM_ONLY]):
        return OpNamespace(full)
    close = difflib.get_close_matches(full, names, n=1)
    hint = f"; did you mean R.{close[0].removeprefix('relax.')}?" if close else ""
    raise AttributeError(f"R.{full.removeprefix('relax.')} is neither a script name nor a registered "
                         f"Relax operator{hint}")


def __getattr__(name: builtins.str):
    if name.startswith("__"):
        raise AttributeError(name)
    names = _registry.list_ops()
    if f"relax.{name}" not in names and (name in names or any(n.startswith(name + ".") for n in names)):
        return _op_attr(name)  # an operator registered outside the "relax." prefix
    return _op_attr(f"relax.{name}")


def _str(value) -> _E.StringImm:
    """A string value (`R.str("x")`)."""
    return _E.StringImm(value)


str = _str  # noqa: A001 - TVM's name (R.str)


ShapeExpr = shape  # TVM spells shape values both ways in scripts
Any = Object  # noqa: A001 - TVM's newer spelling of R.Object


def TupleGetItem(value, index: int) -> _E.TupleGetItem:  # noqa: N802 - TVM's name
    """`R.TupleGetItem(t, 1)`, the same as `t[1]`."""
    return _E.TupleGetItem(to_expr(value), index)


# TVM names under R. that graphc does not provide, each with the reason (the parser reports
# "R.X is not supported by graphc" instead of "unknown name").
_TVM_ONLY = {f"relax.{name}": why for why, names in {
    "gradients are not supported": ("call_tir_with_grad", "grad.end_checkpoint", "grad.start_checkpoint",
                                    "grad.no_grad", "grad.nll_loss_backward", "grad.max_pool2d_backward",
                                    "grad.avg_pool2d_backward", "grad.take_backward"),
    "virtual devices are not supported; the device is chosen at compile time": (
        "to_vdevice", "hint_on_device"),
    "closures are not supported; lift the function to the module": (
        "make_closure", "invoke_closure", "invoke_pure_closure"),
    "distributed and collective operators are not supported": (
        "ccl.allreduce", "ccl.allgather", "ccl.broadcast_from_worker0", "ccl.scatter_from_worker0",
        "dist.annotate_sharding", "dist.redistribute", "dist.call_tir_local_view",
        "dist.redistribute_replica_to_shard"),
    "quantization operators are not supported": ("quantize", "dequantize"),
    "script macros are not supported; use a Python function that builds the IR": ("macro",),
    "this operator has no graphc implementation yet": (
        "emit", "emit_match_cast", "emit_var_binding",
        "wrap_param", "dynamic_strided_slice", "hamming_window", "index_put", "index_tensor",
        "slice_scatter", "multinomial_from_uniform", "bucketize", "nonzero", "unique",
        "memory.view", "memory.ensure_zero_offset", "nn.attention_bias", "nn.attention_var_len",
        "image.resize3d", "image.affine_grid", "collapse_sum_like", "collapse_sum_to", "meshgrid",
        "masked_fill", "eye", "eye_like", "log_add_exp", "ewise_fma", "linear"),
}.items() for name in names}
