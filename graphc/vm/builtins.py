"""The VM's builtins (`vm.builtin.*`): allocation, tuples, reshape, shape heap ops and input checks.

Builtins are plain Python functions looked up by name when an executable is loaded. Those
whose first argument is the VM context (`%vm` in the bytecode) get the running `Frame`.
The shape builtins follow TVM's conventions: `match_shape` and `make_shape` read their
work list as (code, value) pairs, with the codes of `shape_codes`.

>>> heap = np.zeros(2, "int64")
>>> import graphc.runtime as rt
>>> x = rt.empty((3, 4), "float32")
>>> match_shape(x, heap, 2, MatchShapeCode.STORE_TO_HEAP, 0, MatchShapeCode.ASSERT_EQUAL_TO_IMM, 4, "ctx")
>>> make_shape(heap, 2, MakeShapeCode.LOAD_SHAPE, 0, MakeShapeCode.USE_IMM, 8)
ShapeTuple(3, 8)
"""

from __future__ import annotations

import re

import numpy as np

from ..runtime.registry import get_global_func, register_func
from ..runtime.tensor import Tensor
from .shape_codes import MakeShapeCode, MatchShapeCode
from .values import DataType, ShapeTuple, Storage, VMError, reshape_view

_BUILTINS: dict[str, object] = {}


def register_builtin(name: str, fn=None, override: bool = False):
    """Make `fn` callable from bytecode as `name` (usable as a decorator); it is a global
    function too (`graphc.get_global_func(name)`)."""

    def register(f):
        if name in _BUILTINS and not override:
            raise ValueError(f"builtin {name!r} is already registered; pass override=True to replace it")
        _BUILTINS[name] = f
        register_func(name, f, override=True)
        return f

    return register(fn) if fn is not None else register


def get_builtin(name: str):
    """The builtin `name`, or None."""
    return _BUILTINS.get(name)


def packed_function(name: str):
    """The function the bytecode calls as `name`: a builtin, else a global function
    (`graphc.register_func`) whose numpy or torch results become Tensors; None if neither."""
    fn = _BUILTINS.get(name)
    if fn is not None:
        return fn
    fn = get_global_func(name, allow_missing=True)
    if fn is None:
        return None

    def call(*args):
        return as_vm_value(fn(*args))

    call.__name__ = call.__qualname__ = name
    return call


def as_vm_value(value):
    """A Python function's result as a VM value: arrays and torch tensors become Tensors."""
    if isinstance(value, np.ndarray):
        return Tensor._from_host_array(np.ascontiguousarray(value))
    if isinstance(value, list | tuple) and not isinstance(value, ShapeTuple):
        return tuple(as_vm_value(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    if type(value).__module__.startswith("torch") and hasattr(value, "__dlpack__"):
        from ..runtime.dlpack import from_dlpack

        return from_dlpack(value.detach().contiguous())
    return value


def list_builtins() -> list[str]:
    return sorted(_BUILTINS)


# --- error context -------------------------------------------------------------------------

_CTX = re.compile(r"ErrorContext\(fn=(?P<fn>[^,]*), loc=(?P<loc>[^,]*)(?:, param=(?P<param>[^,]*))?, "
                  r"annotation=(?P<ann>.*)\)$")


_CAST_CTX = re.compile(r"ErrorContext\(match_cast, struct_info=(?P<ann>.*)\)$")


def _where(err_ctx) -> tuple[str, str]:
    """('main: parameter x', 'R.Tensor((n, 4), dtype="float32")') from a TVM-style error context."""
    text = str(err_ctx)
    m = _CTX.match(text)
    if m is None:
        cast = _CAST_CTX.match(text)
        return ("a match_cast", cast["ann"]) if cast else (text, "")
    loc, param = m["loc"], m["param"]
    if param is None:
        what = "the return value" if loc == "return" else loc
    else:
        what = f"parameter {param!r}" if loc.startswith("param") else f"{loc} ({param})"
    return f"{m['fn']}: {what}", m["ann"]


def _dim_names(annotation: str) -> list[str]:
    m = re.search(r"\(\(([^()]*)\)", annotation)
    if m is None:
        return []
    return [d.strip() for d in m.group(1).split(",") if d.strip()]


def _describe(value) -> str:
    if isinstance(value, Tensor):
        return f"a tensor of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, ShapeTuple):
        return f"shape {tuple(value)}"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)} fields"
    return f"{type(value).__name__} {value!r}"


class ArgumentKindError(ValueError, TypeError):
    """A value of the wrong kind (a shape where a tensor is expected, ...): a ValueError like every
    failed input check, and a TypeError as TVM raises for it."""


class RuntimeCheckError(ValueError, RuntimeError):
    """A failed run-time check of a value (a wrong dimension, a wrong number of inputs): a
    ValueError like every failed input check, and a RuntimeError as TVM raises for it."""


def _fail(err_ctx, problem: str, value, kind: bool = False) -> None:
    where, ann = _where(err_ctx)
    where = where or "a run-time check"
    expected = f" expects {ann}" if ann else ""
    raise (ArgumentKindError if kind else RuntimeCheckError)(
        f"{where}{expected}, got {_describe(value)}: {problem}")


# --- checks (VMShapeLower) -------------------------------------------------------------------


def check_tensor_info(value, *args) -> None:
    """`check_tensor_info(x, [ndim,] [dtype,] err_ctx)`: x is a tensor of that rank and dtype."""
    err_ctx = args[-1]
    ndim, dtype = -1, None
    for a in args[:-1]:
        if isinstance(a, str):
            dtype = a
        else:
            ndim = a
    if not isinstance(value, Tensor):
        _fail(err_ctx, "expected a tensor", value, kind=True)
    if ndim != -1 and value.ndim != ndim:
        _fail(err_ctx, f"expected rank {ndim}, got rank {value.ndim} (an ndim mismatch)", value)
    if dtype and dtype != "void" and value.dtype != dtype:
        _fail(err_ctx, f"expected dtype {dtype}, got {value.dtype}", value)


def check_shape_info(value, ndim, err_ctx) -> None:
    if not isinstance(value, ShapeTuple):
        _fail(err_ctx, "expected a shape", value, kind=True)
    if ndim != -1 and len(value) != ndim:
        _fail(err_ctx, f"expected a shape of {ndim} dimensions, got {len(value)}", value)


def check_tuple_info(value, size, err_ctx) -> None:
    if not isinstance(value, tuple) or isinstance(value, ShapeTuple):
        _fail(err_ctx, "expected a tuple", value, kind=True)
    if size != -1 and len(value) != size:
        _fail(err_ctx, f"expected a tuple of {size} fields, got {len(value)}", value)


def check_prim_value_info(value, dtype, err_ctx) -> None:
    if isinstance(value, np.generic):
        value = value.item()
    dtype = str(dtype or "")
    if dtype.startswith("float"):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif dtype == "bool":
        ok = isinstance(value, bool | int)
    elif dtype.startswith(("int", "uint")):
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, int | float | bool)
    if not ok:
        _fail(err_ctx, f"expected a {dtype or 'scalar'} value", value, kind=True)


def check_dim_range(value, axis, lower, upper, err_ctx) -> None:
    """`check_dim_range(x, axis, lower, upper, err_ctx)`: dimension `axis` of `x` lies in the
    declared range `[lower, upper]` of the symbolic size it defines."""
    got = (value.shape if isinstance(value, Tensor) else value)[axis]
    if not lower <= got <= upper:
        where = str(err_ctx) or f"dimension {axis}"
        raise ValueError(f"{where} is {got}, outside its declared range [{lower}, {upper}]: the model was "
                         "compiled for that range (declare a wider one, e.g. torch.export.Dim(..., max=...))")


def check_func_info(value, err_ctx) -> None:
    if not callable(value):
        _fail(err_ctx, "expected a function", value, kind=True)


def _heap(heap):
    return heap._array if isinstance(heap, Tensor) else heap


def match_shape(value, heap, ndim, *args) -> None:
    """Check the dimensions of `value` (a tensor or shape), storing to and comparing with `heap`."""
    err_ctx = args[-1]
    heap = _heap(heap)
    shape = value.shape if isinstance(value, Tensor) else value
    if not isinstance(value, Tensor | ShapeTuple):
        _fail(err_ctx, "expected a tensor or a shape", value, kind=True)
    if len(shape) != ndim:
        _fail(err_ctx, f"expected rank {ndim}, got rank {len(shape)} (an ndim mismatch)", value)
    for axis in range(ndim):
        code, v = args[2 * axis], args[2 * axis + 1]
        got = shape[axis]
        if code == MatchShapeCode.STORE_TO_HEAP:
            heap[v] = got
        elif code == MatchShapeCode.ASSERT_EQUAL_TO_IMM:
            if got != v:
                _fail(err_ctx, f"dimension {axis} must be {v}, got {got}", value)
        elif code == MatchShapeCode.ASSERT_EQUAL_TO_LOAD:
            want = int(heap[v])
            if got != want:
                names = _dim_names(_where(err_ctx)[1])
                name = names[axis] if axis < len(names) else f"dimension {axis}"
                _fail(err_ctx, f"dimension {axis} ({name}) is {got}, but {name} = {want} from an earlier "
                      "dimension or input", value)


def make_shape(heap, ndim, *args) -> ShapeTuple:
    """A shape whose dimensions are immediates (`USE_IMM`) or heap slots (`LOAD_SHAPE`)."""
    heap = _heap(heap)
    return ShapeTuple(
        int(heap[args[2 * i + 1]]) if args[2 * i] == MakeShapeCode.LOAD_SHAPE else args[2 * i + 1]
        for i in range(ndim)
    )


def match_prim_value(value, heap, code, reg, err_ctx) -> None:
    heap = _heap(heap)
    value = int(value)
    if code == MatchShapeCode.STORE_TO_HEAP:
        heap[reg] = value
    elif code == MatchShapeCode.ASSERT_EQUAL_TO_IMM and value != reg:
        _fail(err_ctx, f"expected the value {reg}", value)
    elif code == MatchShapeCode.ASSERT_EQUAL_TO_LOAD and value != int(heap[reg]):
        _fail(err_ctx, f"expected the value {int(heap[reg])} (bound earlier)", value)


def make_prim_value(heap, code, reg) -> int:
    heap = _heap(heap)
    return int(heap[reg]) if code == MakeShapeCode.LOAD_SHAPE else reg


# --- memory ----------------------------------------------------------------------------------


def alloc_storage(ctx, size, device_index, dtype_hint="uint8", scope="global") -> Storage:
    """Storage of `size[0]` bytes on the VM's device number `device_index`."""
    nbytes = size[0] if isinstance(size, tuple) else int(size)
    return Storage.allocate(nbytes, ctx.device(device_index))


def alloc_tensor(storage: Storage, offset, shape, dtype) -> Tensor:
    return storage.view(int(offset), shape, dtype)


def alloc_shape_heap(ctx, size) -> Tensor:
    from ..runtime.tensor import empty

    return empty((max(int(size), 1),), "int64")


def null_value():
    return None


def reshape(tensor: Tensor, shape) -> Tensor:
    return reshape_view(tensor, shape)


def shape_of(tensor: Tensor) -> ShapeTuple:
    return ShapeTuple(tensor.shape)


def tensor_to_values(tensor: Tensor, what: str = "tensor_to_values") -> ShapeTuple:
    """The values of a 1-d integer tensor as a shape tuple (indices, offsets: any sign)."""
    values = np.asarray(tensor)
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise ValueError(f"{what} expects a 1-d integer tensor, got shape {values.shape} and dtype "
                         f"{values.dtype}")
    return ShapeTuple(int(v) for v in values)


def tensor_to_shape(tensor: Tensor) -> ShapeTuple:
    """The values of a 1-d integer tensor as a shape: sizes read from data, checked here."""
    shape = tensor_to_values(tensor, "tensor_to_shape")
    bad = [d for d in shape if d < 0]
    if bad:
        raise ValueError(f"tensor_to_shape: the size {bad[0]} read from a tensor is negative (shape {shape})")
    return shape


def shape_to_tensor(shape) -> Tensor:
    from ..runtime.tensor import tensor

    return tensor(np.asarray([int(v) for v in shape], dtype="int64").reshape(-1))


def make_tuple(*fields) -> tuple:
    return tuple(fields)


def tuple_getitem(value, index):
    return value[index]


def copy(value):
    return value


def invoke_closure(func, *args):
    """Call a function value (a VM function, a kernel or a builtin) held in a register."""
    if not callable(func):
        raise VMError(f"cannot call a value of type {type(func).__name__}: it is not a function")
    return func(*args)


def call_tir_dyn(func, *args):
    """Call kernel `func` on `args`, the last of which is a shape: its values are scalar arguments."""
    *tensors, shape = args
    return func(*tensors, *shape)


def read_if_cond(value) -> bool:
    if isinstance(value, Tensor):
        return bool(np.asarray(value).reshape(-1)[0])
    return bool(value)


def to_device(ctx, tensor: Tensor, device_type, device_id=0) -> Tensor:
    from ..runtime.device import Device

    return tensor.copyto(Device(device_type, device_id))


def _printable(value):
    if isinstance(value, Tensor):
        array = value.numpy()
        return array.item() if array.ndim == 0 else array
    if isinstance(value, tuple) and not isinstance(value, ShapeTuple):
        return tuple(_printable(v) for v in value)
    return value


def _format(fmt: str, values) -> str:
    values = [_printable(v) for v in values]
    return fmt.format(*values) if fmt else " ".join(str(v) for v in values)


def run_print(fmt, *values) -> None:
    """`R.print(*values, format=fmt)` (TVM's `relax.run.print`): print the values."""
    print(_format(str(fmt), values))


def run_assert_op(condition, fmt, *values) -> None:
    """`R.assert_op(condition, values, format=fmt)`: raise AssertionError when `condition` is false."""
    if bool(_printable(condition)):
        return
    message = _format(str(fmt), values) if (fmt or values) else "Assertion Failed"
    raise AssertionError(message)


register_builtin("relax.run.print", run_print)
register_builtin("relax.run.assert_op", run_assert_op)

for _name, _fn in {
    "check_tensor_info": check_tensor_info, "check_shape_info": check_shape_info,
    "check_tuple_info": check_tuple_info, "check_prim_value_info": check_prim_value_info,
    "check_func_info": check_func_info, "check_dim_range": check_dim_range,
    "match_shape": match_shape, "make_shape": make_shape,
    "match_prim_value": match_prim_value, "make_prim_value": make_prim_value,
    "alloc_storage": alloc_storage, "alloc_tensor": alloc_tensor, "alloc_shape_heap": alloc_shape_heap,
    "null_value": null_value, "reshape": reshape, "shape_of": shape_of, "tensor_to_shape": tensor_to_shape,
    "tensor_to_values": tensor_to_values, "shape_to_tensor": shape_to_tensor,
    "make_tuple": make_tuple, "tuple_getitem": tuple_getitem, "copy": copy, "read_if_cond": read_if_cond,
    "to_device": to_device, "invoke_closure": invoke_closure, "call_tir_dyn": call_tir_dyn,
}.items():
    register_builtin("vm.builtin." + _name, _fn)

__all__ = ["DataType", "MakeShapeCode", "MatchShapeCode", "VMError", "as_vm_value", "get_builtin",
           "list_builtins", "packed_function", "register_builtin"]
