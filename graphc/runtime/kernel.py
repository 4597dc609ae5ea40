"""Calling compiled kernels from Python: argument checking and the slot calling convention.

A kernel is `int32 f(int64 *slots)`: one slot per parameter (a buffer's data pointer, or a
scalar's value: int64, or the bits of a double), then one per symbolic variable. The
metadata describing this (plain JSON data, made by the code generator) is turned ONCE
into a check plan; each call then only reads each argument's pointer, dtype and shape,
checks them, fills a per-thread slot array and calls the machine code. Nothing here
imports the compiler.

>>> meta = {"name": "f", "params": [{"kind": "buffer", "name": "A", "dtype": "float32",
...     "shape": ["n", ["*", "n", 2]], "strides": [], "written": False, "align": 0}],
...     "sym_vars": [["n", "int32"]], "errors": []}
>>> import numpy as np
>>> Kernel(meta, None).check_only(np.zeros((3, 6), "float32"))
{'n': 3}
"""

from __future__ import annotations

import ctypes
import struct
import threading

import numpy as np

from ..errors import GraphcError
from ..ir.dispatch import TypeTable
from ..ir.dtype import canonical


class KernelArgumentError(GraphcError, ValueError):
    """An argument does not match the kernel's parameter (dtype, shape, layout, device)."""


class KernelArgumentCountError(KernelArgumentError, TypeError):
    """A kernel was called with the wrong number of arguments."""


class KernelError(GraphcError, RuntimeError):
    """The kernel reported a failure (an assertion or an allocation) and returned early."""


class KernelIndexError(KernelError, IndexError):
    """A kernel found an index value out of range (`tir.check_index`) and returned early."""


class KernelValueError(KernelError, ValueError):
    """A kernel found a value it cannot use (`tir.check_size`: a negative or overflowing size)."""


_ERROR_TYPES = {"IndexError": KernelIndexError, "ValueError": KernelValueError}


_DIM_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "/": lambda a, b: int(a / b),
    "min": min, "max": max, "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b), "and": lambda a, b: int(bool(a) and bool(b)),
    "or": lambda a, b: int(bool(a) or bool(b)), "not": lambda a: int(not a),
    "select": lambda c, t, f: t if c else f,
}  # fmt: skip
_INT_RANGES = {"int8": 7, "int16": 15, "int32": 31, "int64": 63}
_UINT_BITS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
_NP_DTYPES: dict = {}


def eval_dim(tree, env: dict) -> int:
    """Evaluate a dimension tree (int, variable name or [op, operands...]) under `env`.

    >>> eval_dim(["*", "n", 2], {"n": 5})
    10
    """
    if isinstance(tree, int):
        return tree
    if isinstance(tree, str):
        return env[tree]
    return _DIM_OPS[tree[0]](*(eval_dim(t, env) for t in tree[1:]))


def _dim_text(tree) -> str:
    if isinstance(tree, list):
        if len(tree) != 3:
            return f"{tree[0]}({', '.join(_dim_text(t) for t in tree[1:])})"
        return f"({_dim_text(tree[1])} {tree[0]} {_dim_text(tree[2])})"
    return str(tree)


def _np_dtype_name(dtype) -> str:
    name = _NP_DTYPES.get(dtype)
    if name is None:
        try:
            name = canonical(dtype)
        except ValueError:
            name = str(dtype)
        _NP_DTYPES[dtype] = name
    return name


# --- argument views: (ptr, shape, strides in elements or None when known C-contiguous, dtype,
#     writeable, device type) ---------------------------------------------------------------


def _view_numpy(a: np.ndarray):
    strides = None if a.flags.c_contiguous else tuple(s // a.itemsize for s in a.strides)
    return (a.__array_interface__["data"][0], a.shape, strides, _np_dtype_name(a.dtype),
            a.flags.writeable, "cpu")


def _view_tensor(t):
    return t.data_ptr, t.shape, t.strides, t.dtype, True, t.device.device_type


def _view_torch(t):
    return t.data_ptr(), tuple(t.shape), t.stride(), _np_dtype_name(t.dtype), True, t.device.type


def _non_contig(shape, strides):
    """None when `strides` (in elements) are C-contiguous for `shape`, else the strides."""
    if 0 in shape:  # no elements: any strides read nothing
        return None
    step = 1
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != step:
            return tuple(strides)
        step *= dim
    return None


def _view_dlpack(obj):
    return _view_numpy(np.from_dlpack(obj))


def _viewer_of(base):
    """The viewer for arguments of class `base` (torch is matched by name, never imported)."""
    if base is np.ndarray:
        return _view_numpy
    if base.__module__ == "graphc.runtime.tensor" and base.__name__ == "Tensor":
        return _view_tensor
    if base.__module__.startswith("torch") and base.__name__ == "Tensor":
        return _view_torch
    return None


# argument class -> its viewer (None: not a tensor); any other DLPack producer goes through DLPack
_VIEWERS = TypeTable(_viewer_of, fallback=lambda cls: _view_dlpack if hasattr(cls, "__dlpack__") else None)


def _viewer(arg):
    return _VIEWERS[type(arg)]


class Kernel:
    """A callable compiled kernel: `kernel(*args)` checks the arguments, then runs it."""

    def __init__(self, meta: dict, address: int | None, owner=None):
        self.name = meta["name"]
        self.meta = meta
        self.params = meta["params"]
        self.sym_vars = [tuple(v) for v in meta["sym_vars"]]
        self.errors = meta.get("errors", [])
        self.device_type = meta.get("device", "cpu")  # where the buffer arguments must live
        self.trailing_slots: tuple = ()  # slots after the symbolic variables (GPU host code: its launcher)
        self._owner = owner  # keeps the execution engine (and the machine code) alive
        # a failed check writes its values into the first `error_slots` slots
        self._nslots = max(len(self.params) + len(self.sym_vars), meta.get("error_slots", 0), 1)
        self._local = threading.local()
        self._fn = None
        self.address = address  # of `int32 name(int64 *slots)`, for callers that fill slots themselves
        self.num_slots = self._nslots
        if address is not None:
            self._fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(address)
        self.entry = self._fn  # `int32 entry(int64 *slots)` as a ctypes function (None without code)
        self._deferred = [(p["name"], axis, what, tree)
                          for p in self.params if p["kind"] == "buffer"
                          for what, dims in (("dimension", p["shape"]), ("stride", p["strides"]))
                          for axis, tree in enumerate(dims) if isinstance(tree, list)]

        base = len(self.params)
        self._sym_slots = [(base + k, name, -(1 << _INT_RANGES.get(dt, 63)), 1 << _INT_RANGES.get(dt, 63))
                           for k, (name, dt) in enumerate(self.sym_vars)]
        self._plans = [self._plan_buffer(i, p) if p["kind"] == "buffer" else self._plan_scalar(i, p)
                       for i, p in enumerate(self.params)]

    # -- per-parameter check plans, prepared once -------------------------------------------------
    def _plan_scalar(self, index: int, param: dict):
        def check(arg, env, slots, fixups):
            self._scalar(param, index, arg, env, slots, index)

        return check

    def _plan_buffer(self, index: int, param: dict):
        """A fast check for the common case; anything unusual goes through `_buffer`."""
        dtype, rank, written, align = param["dtype"], len(param["shape"]), param["written"], param["align"]
        dims = param["shape"]
        static = tuple(dims) if all(isinstance(d, int) for d in dims) else None
        static_strides = _c_strides(static) if static is not None else None
        var_dims = [(axis, d) for axis, d in enumerate(dims) if isinstance(d, str)]
        int_dims = [(axis, d) for axis, d in enumerate(dims) if isinstance(d, int)]
        simple = not param["strides"] and not any(isinstance(d, list) for d in dims)
        slow = self._buffer
        home = self.device_type

        def check(arg, env, slots, fixups):
            viewer = _VIEWERS.get(type(arg)) if simple else None
            if viewer is not None:
                ptr, shape, strides, dt, writeable, device = viewer(arg)
                if strides is not None and strides != (static_strides or _c_strides(shape)):
                    viewer = None  # maybe contiguous after all (extent-1 dims): the slow path decides
                elif (dt == dtype and device == home and len(shape) == rank
                        and (writeable or not written) and not (align and ptr % align)
                        and (shape == static if static is not None
                             else all(shape[axis] == d for axis, d in int_dims))):
                    for axis, name in var_dims:
                        got, bound = shape[axis], env.get(name)
                        if bound is None:
                            env[name] = got
                        elif bound != got:
                            break
                    else:
                        slots[index] = ptr
                        return
            slow(param, index, arg, env, slots, index, fixups)

        return check

    def __repr__(self) -> str:
        names = ", ".join(p["name"] for p in self.params)
        return f"<graphc kernel {self.name}({names})>"

    # -- the unchecked fast path, for callers that proved their arguments (the VM) ----------------
    def sym_var_sources(self) -> list[tuple[int, int]]:
        """For each symbolic variable slot, the (parameter index, axis) of a dimension that is it.

        A caller that has proven its arguments match the signature fills the slots itself:
        the parameters' pointers or values, then `shape[axis]` of argument `index` for each
        symbolic variable, then `trailing_slots`, and calls `entry` with the slot array's
        address (a nonzero result goes to `raise_error`).

        >>> meta = {"name": "f", "params": [{"kind": "buffer", "name": "A", "dtype": "float32",
        ...     "shape": ["n", 4], "strides": [], "written": False, "align": 0}],
        ...     "sym_vars": [["n", "int64"]], "errors": []}
        >>> Kernel(meta, None).sym_var_sources()
        [(0, 0)]
        """
        sources = []
        for name, _dtype in self.sym_vars:
            for index, p in enumerate(self.params):
                if p["kind"] == "buffer" and name in p["shape"]:
                    sources.append((index, p["shape"].index(name)))
                    break
            else:
                sources.append(None)  # bound only by a stride: the caller must use the checked call
        return sources

    def error(self, rc: int, record=None) -> KernelError:
        """The exception for return code `rc`; `record` is the slot array of the failed call,
        where an error with `fields` left its values (the index and its valid range).

        >>> meta = {"name": "f", "params": [], "sym_vars": [], "error_slots": 3, "errors": [
        ...     {"type": "IndexError", "format": "index {index} not in [{lo}, {hi})",
        ...      "fields": ["index", "lo", "hi"]}]}
        >>> Kernel(meta, None).error(1, [7, 0, 5])
        KernelIndexError('index 7 not in [0, 5) (kernel f)')
        """
        entry = self.errors[rc - 1] if 0 < rc <= len(self.errors) else f"error code {rc}"
        if not isinstance(entry, dict):
            return KernelError(f"{self.name} failed: {entry}")
        fields = entry.get("fields", [])
        values = {f: int(record[k]) for k, f in enumerate(fields)} if record is not None else {}
        try:
            text = entry["format"].format(**values)
        except (KeyError, IndexError, ValueError):  # no record given, or a malformed format
            text = f"{entry['format']} (values {values})"
        return _ERROR_TYPES.get(entry.get("type"), KernelError)(f"{text} (kernel {self.name})")

    def error_message(self, rc: int, record=None) -> str:
        """The failure the kernel reported with return code `rc`."""
        return str(self.error(rc, record))

    def raise_error(self, rc: int, record=None) -> None:
        raise self.error(rc, record)

    # -- checking -----------------------------------------------------------------------------
    def _fail(self, param: dict, index: int, what: str, expected, actual, hint: str = ""):
        msg = (f"{self.name}: argument #{index} ({param['name']}) has the wrong {what}: "
               f"expected {expected}, got {actual}")
        raise KernelArgumentError(msg + (f"; {hint}" if hint else ""))

    def _bind(self, env: dict, name: str, value: int, param: dict, index: int, what: str) -> None:
        bound = env.get(name)
        if bound is None:
            env[name] = value
        elif bound != value:
            self._fail(param, index, what, f"{name} = {bound} (bound by an earlier argument)", value)

    def _check_dims(self, dims, actual, env, param, index, what) -> None:
        for axis, (tree, got) in enumerate(zip(dims, actual)):
            if isinstance(tree, int):
                if tree != got:
                    self._fail(param, index, f"{what} {axis}", tree, got)
            elif isinstance(tree, str):
                self._bind(env, tree, int(got), param, index, f"{what} {axis} ({tree})")

    def _buffer(self, param: dict, index: int, arg, env: dict, slots, slot: int, fixups: list):
        viewer = _viewer(arg)
        if viewer is None:
            self._fail(param, index, "type", "a graphc Tensor, numpy array or DLPack tensor",
                       type(arg).__name__)
        ptr, shape, strides, dtype, writeable, device = viewer(arg)
        strides = None if strides is None else _non_contig(shape, strides)
        if device != self.device_type:
            where = "graphc.cpu()" if self.device_type == "cpu" else f"a {self.device_type} device, e.g. " \
                f"graphc.runtime.tensor(array, graphc.{self.device_type}())"
            self._fail(param, index, "device", self.device_type, device, f"copy the tensor to {where} first")
        if dtype != param["dtype"]:
            self._fail(param, index, "dtype", param["dtype"], dtype)
        if len(shape) != len(param["shape"]):
            self._fail(param, index, "rank", f"{len(param['shape'])} (shape {param['shape']})",
                       f"{len(shape)} (shape {tuple(shape)})")
        self._check_dims(param["shape"], shape, env, param, index, "dimension")
        if param["strides"]:
            actual = strides if strides is not None else _c_strides(shape)
            self._check_dims(param["strides"], actual, env, param, index, "stride")
        elif strides is not None:
            self._fail(param, index, "layout", "a C-contiguous array", f"strides {strides}",
                       "pass a contiguous copy (numpy.ascontiguousarray)")
        if param["written"] and not writeable:
            self._fail(param, index, "access", "a writeable array (the kernel writes it)",
                       "a read-only array")
        align = param["align"]
        if align and ptr % align:
            ptr = self._aligned_copy(arg, param, align, fixups)
        slots[slot] = ptr

    def _aligned_copy(self, arg, param: dict, align: int, fixups: list) -> int:
        """Copy a misaligned argument into an aligned temporary (copied back when written)."""
        source = arg if isinstance(arg, np.ndarray) else np.from_dlpack(arg)
        if any(s < 0 for s in source.strides):
            self._fail(param, self.params.index(param), "layout", "non-negative strides for a "
                       f"{align}-byte aligned copy", f"strides {source.strides}")
        span = source.itemsize + sum((d - 1) * s for d, s in zip(source.shape, source.strides) if d)
        raw = np.empty(span + align, dtype=np.uint8)
        offset = (-raw.__array_interface__["data"][0]) % align
        # same byte strides as the source, so the strides the kernel was given stay valid
        tmp = np.ndarray(source.shape, source.dtype, buffer=raw, offset=offset, strides=source.strides)
        np.copyto(tmp, source)
        fixups.append((source, tmp) if param["written"] else (None, tmp))
        return tmp.__array_interface__["data"][0]

    def _scalar(self, param: dict, index: int, arg, env: dict, slots, slot: int) -> None:
        dtype = param["dtype"]
        if isinstance(arg, np.ndarray) and arg.ndim == 0:
            arg = arg[()]  # a 0-d array passes as its scalar
        if dtype.startswith(("float", "bfloat")):
            if not isinstance(arg, int | float | np.integer | np.floating):
                self._fail(param, index, "type", f"a Python number for {dtype}", type(arg).__name__)
            slots[slot] = struct.unpack("<q", struct.pack("<d", float(arg)))[0]
            return
        if isinstance(arg, float | np.floating) or not isinstance(arg, int | np.integer | np.bool_):
            self._fail(param, index, "type", f"an integer for {dtype}", type(arg).__name__)
        value = int(arg)
        if dtype in _INT_RANGES and not -(1 << _INT_RANGES[dtype]) <= value < 1 << _INT_RANGES[dtype]:
            self._fail(param, index, "value", f"a value that fits {dtype}", value)
        if dtype in _UINT_BITS and not 0 <= value < 1 << _UINT_BITS[dtype]:
            self._fail(param, index, "value", f"a value that fits {dtype}", value)
        self._bind(env, param["name"], value, param, index, "value")
        slots[slot] = value - (1 << 64) if value >= 1 << 63 else value

    def _check(self, args, slots, fixups: list) -> dict:
        if len(args) != len(self.params):
            names = ", ".join(p["name"] for p in self.params)
            raise KernelArgumentCountError(
                f"{self.name} takes {len(self.params)} arguments ({names}), got {len(args)}")
        env: dict = {}
        for check, arg in zip(self._plans, args):
            check(arg, env, slots, fixups)
        for name, axis, what, tree in self._deferred:
            param = next(p for p in self.params if p["name"] == name)
            index = self.params.index(param)
            expected = eval_dim(tree, env)
            arg_dims = _viewer(args[index])(args[index])
            actual = arg_dims[1][axis] if what == "dimension" else \
                (arg_dims[2] or _c_strides(arg_dims[1]))[axis]
            if expected != actual:
                self._fail(param, index, f"{what} {axis}", f"{_dim_text(tree)} = {expected}", actual)
        for slot, name, lo, hi in self._sym_slots:
            value = env[name]
            if not lo <= value < hi:
                raise KernelArgumentError(f"{self.name}: {name} = {value} does not fit its dtype")
            slots[slot] = value
        return env

    def check_only(self, *args) -> dict:
        """Check `args` without running; returns the bound symbolic variables."""
        return self._check(args, np.zeros(self._nslots, np.int64), [])

    # -- calling ------------------------------------------------------------------------------
    def __call__(self, *args) -> None:
        local = self._local
        slots = getattr(local, "slots", None)
        if slots is None:  # one slot array per thread, reused by every call
            slots = local.slots = np.zeros(self._nslots, np.int64)
            local.address = slots.__array_interface__["data"][0]
        fixups: list = []
        self._check(args, slots, fixups)
        if self._fn is None:
            raise KernelError(f"{self.name} has no machine code loaded")
        rc = self._fn(local.address)
        for target, tmp in fixups:
            if target is not None:
                np.copyto(target, tmp)
        if rc:
            raise self.error(rc, slots)


def _c_strides(shape) -> tuple:
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return tuple(reversed(strides))
