"""Structural equality and hashing of IR, with variables compared by binding.

Two programs are structurally equal when they have the same shape and constants, and
their variables and buffers correspond one to one (the first time a variable appears
on one side it is paired with the variable in the same place on the other side;
every later use must respect that pairing). Names of variables and buffers do not
matter; block names, attributes and constants do.

>>> from graphc import tir
>>> i, j = tir.Var("i"), tir.Var("j")
>>> structural_equal(i * 2 + 1, j * 2 + 1)
True
>>> structural_equal(i + j, i + i)
False
>>> structural_hash(i * 2) == structural_hash(j * 2)
True
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import math
import struct

import numpy as np

from .module import GlobalVar, IRModule

# Fields that name a thing rather than define it: ignored by the comparison.
_NAME_FIELDS = {"name", "name_hint", "span"}


def _is_var_like(obj) -> bool:
    """Objects paired by binding: variables and buffers (classes marked `__structural_binding__`)."""
    return getattr(type(obj), "__structural_binding__", False)


class _Equal:
    def __init__(self, map_free_vars: bool):
        self.lhs_to_rhs: dict[int, object] = {}
        self.rhs_to_lhs: dict[int, object] = {}
        self.map_free_vars = map_free_vars
        self.path: list[str] = []

    def bind(self, a, b) -> bool:
        ma, mb = self.lhs_to_rhs.get(id(a)), self.rhs_to_lhs.get(id(b))
        if ma is None and mb is None:
            self.lhs_to_rhs[id(a)] = b
            self.rhs_to_lhs[id(b)] = a
            return self.fields(a, b)
        return ma is b and mb is a

    def eq(self, a, b) -> bool:
        if a is b and not dataclasses.is_dataclass(a):
            return True
        if type(a) is not type(b):
            if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
                return a == b
            return False
        if isinstance(a, float):
            return a == b or (math.isnan(a) and math.isnan(b))  # a NaN constant equals a NaN constant
        if isinstance(a, str | int | bool | type(None) | enum.Enum):
            return a == b
        if isinstance(a, np.ndarray):
            return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
        if isinstance(a, tuple | list):
            return len(a) == len(b) and all(self.eq(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return self.dicts(a, b)
        if isinstance(a, GlobalVar):
            return a.name_hint == b.name_hint
        if isinstance(a, IRModule):
            return self.modules(a, b)
        if _is_var_like(a):
            return self.bind(a, b)
        if dataclasses.is_dataclass(a):
            return self.fields(a, b)
        if hasattr(a, "numpy"):
            return self.eq(a.numpy(), b.numpy())
        return a == b

    def dicts(self, a: dict, b: dict) -> bool:
        if len(a) != len(b):
            return False
        if all(isinstance(k, str) for k in a):
            return a.keys() == b.keys() and all(self.eq(a[k], b[k]) for k in a)
        # Keyed by IR objects (e.g. buffer_map): compare in insertion order.
        return all(self.eq(ka, kb) and self.eq(a[ka], b[kb]) for (ka, kb) in zip(a, b))

    def modules(self, a: IRModule, b: IRModule) -> bool:
        names_a = [gv.name_hint for gv in a.get_global_vars()]
        names_b = [gv.name_hint for gv in b.get_global_vars()]
        if names_a != names_b or not self.dicts(a.attrs, b.attrs):
            return False
        # Functions are closed: each gets its own variable pairing, so a symbolic var that
        # two functions happen to share (a Relax function and the PrimFunc it calls) does
        # not have to be shared on the other side too.
        return all(_Equal(self.map_free_vars).eq(a[n], b[n]) for n in names_a)

    def fields(self, a, b) -> bool:
        for field in _fields(type(a)):
            if not self.eq(getattr(a, field), getattr(b, field)):
                return False
        return True


def _fields(cls) -> tuple[str, ...]:
    cached = cls.__dict__.get("_structural_fields")
    if cached is None:
        cached = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _NAME_FIELDS)
        cls._structural_fields = cached
    return cached


def structural_equal(lhs, rhs, map_free_vars: bool = True) -> bool:
    """True when `lhs` and `rhs` have the same structure up to a renaming of variables."""
    return _Equal(map_free_vars).eq(lhs, rhs)


def assert_structural_equal(lhs, rhs, map_free_vars: bool = True) -> None:
    """Raise AssertionError showing both sides' scripts when they are not structurally equal."""
    if not structural_equal(lhs, rhs, map_free_vars):
        raise AssertionError(
            "structural mismatch\n--- lhs ---\n" + _text(lhs) + "\n--- rhs ---\n" + _text(rhs)
        )


def _text(x) -> str:
    try:
        return x.script() if hasattr(x, "script") else repr(x)
    except Exception as err:  # noqa: BLE001 - printing is best effort in an error message
        return f"<unprintable {type(x).__name__}: {err}>"


class _Hasher:
    def __init__(self):
        self.var_index: dict[int, int] = {}
        self.out = hashlib.blake2b(digest_size=8)

    def feed(self, tag: str, payload: bytes = b"") -> None:
        self.out.update(tag.encode())
        self.out.update(b"\0")
        self.out.update(payload)

    def visit(self, x) -> None:
        if x is None or isinstance(x, str | bool | int | float | enum.Enum):
            self.feed(type(x).__name__, repr(x.value if isinstance(x, enum.Enum) else x).encode())
            if isinstance(x, float) and not math.isnan(x):  # every NaN is equal (and repr "nan")
                self.feed("f", struct.pack("<d", x))
            return
        if isinstance(x, np.ndarray):
            self.feed("ndarray", str((x.shape, x.dtype.str)).encode() + x.tobytes())
            return
        if isinstance(x, tuple | list):
            self.feed("seq", str(len(x)).encode())
            for item in x:
                self.visit(item)
            return
        if isinstance(x, dict):
            self.feed("dict", str(len(x)).encode())
            items = sorted(x.items()) if all(isinstance(k, str) for k in x) else list(x.items())
            for k, v in items:
                self.visit(k)
                self.visit(v)
            return
        if isinstance(x, GlobalVar):
            self.feed("GlobalVar", x.name_hint.encode())
            return
        if isinstance(x, IRModule):
            self.feed("IRModule")
            self.visit(x.attrs)
            for gv in x.get_global_vars():
                self.feed("fn", gv.name_hint.encode())
                self.var_index, saved = {}, self.var_index
                self.visit(x[gv])
                self.var_index = saved
            return
        if _is_var_like(x):
            index = self.var_index.get(id(x))
            if index is not None:
                self.feed("ref", str(index).encode())
                return
            self.var_index[id(x)] = len(self.var_index)
            self.feed("def", type(x).__name__.encode())
        else:
            self.feed(type(x).__name__)
        if dataclasses.is_dataclass(x):
            for field in _fields(type(x)):
                self.visit(getattr(x, field))
        elif hasattr(x, "numpy"):
            self.visit(x.numpy())
        else:
            self.feed("opaque", repr(x).encode())


def structural_hash(x) -> int:
    """A hash consistent with `structural_equal`: equal structures hash equal."""
    hasher = _Hasher()
    hasher.visit(x)
    return int.from_bytes(hasher.out.digest(), "little")
