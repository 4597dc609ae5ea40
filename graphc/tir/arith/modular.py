"""Modular sets: the values of an integer expression as `coeff * k + base` (TVM's ModularSet).

`coeff == 0` means the expression is exactly `base`; `coeff == 1` means nothing is known.

>>> from graphc.tir import Var
>>> i = Var("i")
>>> modular_set(i * 8 + 3, {}), modular_set((i * 8 + 3) // 4, {})
(ModularSet(coeff=8, base=3), ModularSet(coeff=2, base=0))
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from ..expr import Add, FloorDiv, FloorMod, IntImm, Mul, PrimExpr, Sub, Var


@dataclass(frozen=True)
class ModularSet:
    """{coeff * k + base for every integer k}; base is normalized into [0, coeff)."""

    coeff: int
    base: int

    @staticmethod
    def make(coeff: int, base: int) -> ModularSet:
        coeff = abs(coeff)
        return ModularSet(coeff, base % coeff if coeff else base)


EVERYTHING = ModularSet(1, 0)


def modular_set(expr: PrimExpr, subst: dict) -> ModularSet:
    """The modular set of `expr`; `subst` maps Vars to known constant values."""
    if isinstance(expr, IntImm):
        return ModularSet(0, expr.value)
    if isinstance(expr, Var):
        value = subst.get(expr)
        return modular_set(value, subst) if isinstance(value, IntImm) else EVERYTHING
    if isinstance(expr, Add | Sub):
        a, b = modular_set(expr.a, subst), modular_set(expr.b, subst)
        sign = 1 if isinstance(expr, Add) else -1
        return ModularSet.make(gcd(a.coeff, b.coeff), a.base + sign * b.base)
    if isinstance(expr, Mul):
        a, b = modular_set(expr.a, subst), modular_set(expr.b, subst)
        coeff = gcd(gcd(a.coeff * b.coeff, a.coeff * b.base), b.coeff * a.base)
        return ModularSet.make(coeff, a.base * b.base)
    if isinstance(expr, FloorDiv | FloorMod) and isinstance(expr.b, IntImm) and expr.b.value > 0:
        a, c = modular_set(expr.a, subst), expr.b.value
        if isinstance(expr, FloorDiv):
            if a.coeff % c == 0:  # (c*m*k + b) // c == m*k + b // c
                return ModularSet.make(a.coeff // c, a.base // c)
            return EVERYTHING
        if a.coeff % c == 0:
            return ModularSet(0, a.base % c)
        g = gcd(a.coeff, c)
        return ModularSet.make(g, a.base)
    return EVERYTHING
