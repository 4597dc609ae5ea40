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
    return _S.as_dim(value) if isinstance(value, int) else value


# --- struct info -------------------------------------------------------------------------


def Tensor(shape=None, dtype=None, ndim: int = -1):  # noqa: N802 - TVM's name
    """`R.Tensor((n, 4), dtype="float32")`, `R.Tensor(ndim=2)`, or a shape variable as `shape`."""
    if isinstance(shape, builtins.str) and dtype is None:
        shape, dtype = None, shape  # R.Tensor("float32")
    if isinstance(shape, list | builtins.tuple):
        shape = builtins.tuple(dim(d) for d in shape)
    return _S.TensorStructInfo(shape, dtype, ndim)


def Tuple(*fields):  # noqa: N802 - TVM's name
    """`R.Tuple(R.Tensor(...), R.Object)` (a single list of fields is accepted too)."""
    if len(fields) == 1 and isinstance(fields[0], list | builtins.tuple):
        fields = fields[0]
    return _S.TupleStructInfo([to_sinfo(f) for f in fields])


def Shape(values=None, ndim: int = -1):  # noqa: N802 - TVM's name
    """`R.Shape([n, 4])` or `R.Shape(ndim=2)`."""
    if values is not None:
        values = [dim(v) for v in values]
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
    """A Relax expression from a script value (Python tuples and lists become relax Tuples)."""
    if isinstance(value, list | builtins.tuple):
        return _E.Tuple([to_expr(v) for v in value])
    if isinstance(value, _E.Expr | GlobalVar):
        return value
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

    if isinstance(out_sinfo, list | builtins.tuple):
        out_sinfo = [to_sinfo(s) for s in out_sinfo]
    else:
        out_sinfo = to_sinfo(out_sinfo)
    return _call_tir(gvar, to_expr(args), out_sinfo, tir_vars)


def call_packed(func, *args, sinfo_args=()):
    """A call of the runtime function named `func` (`R.call_packed("f", x, sinfo_args=...)`)."""
    if isinstance(sinfo_args, _S.StructInfo) or sinfo_args in (Tensor, Object, Shape, Tuple, Prim):
        sinfo_args = [sinfo_args]
    op = func if isinstance(func, _E.Expr) else _E.ExternFunc(func)
    return _E.Call(op, [to_expr(a) for a in args], None, [to_sinfo(s) for s in sinfo_args])


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
    args = [to_expr(a) if isinstance(a, list | builtins.tuple | _E.Expr) else a for a in args]
    if op_name == "relax.call_builtin_with_ctx" and args and isinstance(args[0], builtins.str):
        args[0] = _E.ExternFunc(args[0])  # TVM's spelling: the builtin by name
    builder = _builder(op_name)
    if builder is not None and not sinfo_args:
        try:
            inspect.signature(builder).bind(*args, **kwargs)
        except TypeError:
            builder = None
        if builder is not None:
            call = builder(*args, **kwargs)
            if isinstance(call, _E.Call) and getattr(call.op, "name", None) == op_name:
                return call
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
    if full in names:

        def call(*args, **kwargs):
            return make_op_call(full, args, kwargs)

        call.__name__ = call.__qualname__ = "R." + full.removeprefix("relax.")
        call.op_name = full
        return call
    if any(n.startswith(full + ".") for n in names):
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
