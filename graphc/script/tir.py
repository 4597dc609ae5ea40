"""The `T.` namespace of the TensorIR script syntax (`from graphc.script import tir as T`).

Names that make sense in plain Python work at run time too: `T.float32(1)` is a FloatImm,
`T.Buffer((4,), "float32")` a Buffer, `T.exp(x)` a call. Names that only mean something
inside a parsed function (`T.block`, `T.axis.spatial`, `T.reads`, ...) raise a ScriptError
when called outside `@T.prim_func`; the parser recognises them by identity.

>>> T = __import__("graphc.script.tir", fromlist=["tir"])
>>> T.float32(1), T.int64(4), T.int32(3)
(T.float32(1.0), T.int64(4), 3)
>>> T.Buffer((4,), "float32").shape
(4,)

Operators fold constants (`T.int32(0) + 7` is `7`); `T.Add(0, 7)` and the other node names
build their node as written, which is how the printer spells a node its operator would fold:

>>> T.int32(0) + 7, T.Add(0, 7), T.LT(0, 7)
(7, T.Add(0, 7), T.LT(0, 7))
"""

from __future__ import annotations

from ..errors import DataTypeError, ScriptError, TIRError
from ..ir.dtype import DataType, canonical
from ..tir import expr as _expr
from ..tir import op as _op
from ..tir.buffer import decl_buffer as _decl_buffer
from ..tir.expr import SizeVar, Var, broadcast, const, convert, floordiv, floormod, ramp, truncdiv, truncmod  # noqa: F401 - T.<name>
from ..tir.expr import select as Select  # noqa: F401 - T.Select
from ..tir.op import *  # noqa: F403 - the intrinsic helpers, as T.<name>


class DTypeFactory:
    """`T.int32` and friends: a type annotation, a constant maker and a variable maker.

    `T.int32(5)` is a constant; `T.int32()` a fresh variable (named by the parser after the
    name it is assigned to); `T.int32(is_size_var=True)` a SizeVar.
    """

    __slots__ = ("dtype",)

    def __init__(self, dtype: str):
        self.dtype = canonical(dtype)

    def __call__(self, value=None, is_size_var: bool = False, name: str = "v"):
        if value is None:
            return (SizeVar if is_size_var else Var)(name, self.dtype)
        if isinstance(value, str) and DataType(self.dtype).is_float:
            value = float(value)  # "inf", "-inf", "nan"
        if isinstance(value, _expr.PrimExpr):
            return _expr.cast(value, self.dtype)
        return const(value, self.dtype)

    def __repr__(self) -> str:
        return f"T.{self.dtype}"


int8, int16, int32, int64 = (DTypeFactory(f"int{b}") for b in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (DTypeFactory(f"uint{b}") for b in (8, 16, 32, 64))
float16, float32, float64 = (DTypeFactory(f"float{b}") for b in (16, 32, 64))
bfloat16 = DTypeFactory("bfloat16")
bool = DTypeFactory("bool")  # noqa: A001 - TVM's name
handle = DTypeFactory("handle")


def __getattr__(name: str):
    # Vector types such as T.float32x4 / T.int8x16 are made on demand.
    if "x" in name and name.split("x")[0] in globals():
        try:
            return DTypeFactory(name)
        except DataTypeError as err:  # not a dtype name: no such attribute
            raise AttributeError(f"graphc.script.tir has no attribute {name!r}") from err
    raise AttributeError(f"graphc.script.tir has no attribute {name!r}")


# --- buffers ---------------------------------------------------------------------------


def _make_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                 align=-1, offset_factor=0, buffer_type="", axis_separators=None, name="buffer"):
    if isinstance(shape, int | _expr.PrimExpr):
        shape = (shape,)
    strides = tuple(Var(s, "int32") if isinstance(s, str) else s for s in strides or ())
    if isinstance(elem_offset, str):
        elem_offset = Var(elem_offset, "int32")
    return _decl_buffer(tuple(shape), dtype, name, data, strides, elem_offset, scope, align,
                        offset_factor, axis_separators)


class BufferFactory:
    """`T.Buffer(shape, dtype, ...)` (also the older `T.Buffer[shape, dtype]`): a Buffer."""

    __slots__ = ()

    def __call__(self, shape, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="", axis_separators=None,
                 name="buffer"):
        return _make_buffer(shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                            buffer_type, axis_separators, name)

    def __getitem__(self, keys):
        return self(*keys) if isinstance(keys, tuple) else self(keys)

    def __repr__(self) -> str:
        return "T.Buffer"


Buffer = BufferFactory()


def decl_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                align=-1, offset_factor=0, buffer_type="", axis_separators=None, name="buffer"):
    """A Buffer; inside a parsed function it also emits a DeclBuffer statement."""
    return _make_buffer(shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                        buffer_type, axis_separators, name)


def alloc_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                 align=-1, offset_factor=0, buffer_type="", axis_separators=None, name="buffer"):
    """A Buffer; inside a parsed function it is allocated by the enclosing block."""
    return _make_buffer(shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                        buffer_type, axis_separators, name)


# --- expressions whose script spelling builds the node as written -----------------------


def Cast(dtype: str, value):  # noqa: N802 - TVM's name
    """The node `Cast(dtype, value)`, without folding (see `T.cast` for the folding builder)."""
    value = convert(value)
    return _expr.Cast(canonical(dtype), value)


def cast(value, dtype: str):
    """`value` converted to `dtype` (folded for constants)."""
    return _expr.cast(value, dtype)


def Ramp(base, stride, lanes: int):  # noqa: N802 - TVM's name
    return ramp(base, stride, int(lanes))


def Broadcast(value, lanes: int):  # noqa: N802 - TVM's name
    value = convert(value)
    return _expr.Broadcast(value, int(lanes), str(DataType(value.dtype).with_lanes(int(lanes))))


def Shuffle(vectors, indices):  # noqa: N802 - TVM's name
    vectors = tuple(convert(v) for v in vectors)
    indices = tuple(convert(i) for i in indices)
    elem = DataType(vectors[0].dtype).element_of()
    return _expr.Shuffle(vectors, indices, str(elem.with_lanes(len(indices))))


def Let(var, value, body):  # noqa: N802 - TVM's name
    return _expr.let(var, value, body)


def call_node(dtype: str, op: str, *args):
    """A Call node exactly as given (any op name); used for calls without a nicer spelling."""
    return _expr.Call(canonical(dtype), op, _args(args))


def _args(args) -> tuple:
    return tuple(_expr.StringImm(a) if isinstance(a, str) else convert(a) for a in args)


def call_extern(dtype: str, func_name: str, *args):
    """A call of the external C function `func_name`; string arguments become StringImms."""
    return _expr.Call(canonical(dtype), "tir.call_extern", (_expr.StringImm(func_name), *_args(args)))


def call_pure_extern(dtype: str, func_name: str, *args):
    """A call of a side-effect free external C function."""
    return _expr.Call(canonical(dtype), "tir.call_pure_extern", (_expr.StringImm(func_name), *_args(args)))


def StringImm(value: str):  # noqa: N802 - TVM's name
    return _expr.StringImm(value)


def truediv(a, b):
    return _expr.truediv(a, b)


# `T.Add(a, b)` and friends build their node as written, never folded, as TVM's do: the printer
# spells a node this way when its operator (`a + b`) would fold it, e.g. `T.Add(0, 7)`.
def _same_dtype(name: str, a, b) -> tuple:
    """Both operands as PrimExprs; a Python number takes the other operand's dtype."""
    a = _expr._operand(a, b if isinstance(b, _expr.PrimExpr) else None)
    b = _expr._operand(b, a)
    if a.dtype != b.dtype:
        raise TIRError(f"T.{name} needs operands of one dtype, got {a.dtype} and {b.dtype}; "
                       f"cast one of them with T.Cast")
    return a, b


def _binary_node(cls, result_dtype):
    def build(a, b):
        a, b = _same_dtype(cls.__name__, a, b)
        return cls(a, b, result_dtype(a))

    build.__name__ = build.__qualname__ = cls.__name__
    build.__doc__ = f"The node `{cls.__name__}(a, b)` as written (no folding)."
    return build


def _bool_of(a) -> str:
    lanes = DataType(a.dtype).lanes
    return "bool" if lanes == 1 else f"boolx{lanes}"


Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max = (
    _binary_node(cls, lambda a: a.dtype) for cls in (_expr.Add, _expr.Sub, _expr.Mul, _expr.Div, _expr.Mod,
                                                     _expr.FloorDiv, _expr.FloorMod, _expr.Min, _expr.Max))
EQ, NE, LT, LE, GT, GE = (_binary_node(cls, _bool_of) for cls in (_expr.EQ, _expr.NE, _expr.LT, _expr.LE,
                                                                   _expr.GT, _expr.GE))


def And(a, b):  # noqa: N802 - TVM's name
    """The node `And(a, b)` as written (no folding)."""
    a, b = _same_dtype("And", _expr._as_bool(a), _expr._as_bool(b))
    return _expr.And(a, b, a.dtype)


def Or(a, b):  # noqa: N802 - TVM's name
    """The node `Or(a, b)` as written (no folding)."""
    a, b = _same_dtype("Or", _expr._as_bool(a), _expr._as_bool(b))
    return _expr.Or(a, b, a.dtype)


def Not(a):  # noqa: N802 - TVM's name
    """The node `Not(a)` as written (no folding)."""
    a = _expr._as_bool(a)
    return _expr.Not(a, a.dtype)


def all(*conds):  # noqa: A001 - TVM's name
    return _op.all(*conds)


def any(*conds):  # noqa: A001 - TVM's name
    return _op.any(*conds)


# --- names that only mean something inside a parsed function ----------------------------


class ScriptOnly:
    """A script construct (e.g. `T.block`); the parser handles it, Python calls fail."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise ScriptError(f"T.{self.name} can only be used inside a function decorated with @T.prim_func")

    def __repr__(self) -> str:
        return f"T.{self.name}"


block = ScriptOnly("block")
sblock = block
init = ScriptOnly("init")
where = ScriptOnly("where")
reads = ScriptOnly("reads")
writes = ScriptOnly("writes")
block_attr = ScriptOnly("block_attr")
func_attr = ScriptOnly("func_attr")
match_buffer = ScriptOnly("match_buffer")
evaluate = ScriptOnly("evaluate")
serial = ScriptOnly("serial")
parallel = ScriptOnly("parallel")
vectorized = ScriptOnly("vectorized")
unroll = ScriptOnly("unroll")
thread_binding = ScriptOnly("thread_binding")
grid = ScriptOnly("grid")
launch_thread = ScriptOnly("launch_thread")
env_thread = ScriptOnly("env_thread")
allocate = ScriptOnly("allocate")
attr = ScriptOnly("attr")
LetStmt = ScriptOnly("LetStmt")
Assert = ScriptOnly("Assert")


class _Axis:
    """`T.axis.spatial / reduce / scan / opaque / remap`: block iteration variables."""

    spatial = ScriptOnly("axis.spatial")
    S = spatial
    reduce = ScriptOnly("axis.reduce")
    R = reduce
    scan = ScriptOnly("axis.scan")
    opaque = ScriptOnly("axis.opaque")
    remap = ScriptOnly("axis.remap")


axis = _Axis()


def prim_func(func=None, *, private: bool = False, check_well_formed: bool = True):
    """Parse a Python function written in the script syntax into a PrimFunc (never runs it).

    Inside an `@I.ir_module` class the method is returned as is; the module parses it.
    """
    from .parser.entry import prim_func_decorator

    return prim_func_decorator(func, private=private)
