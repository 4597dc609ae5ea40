"""Affine iteration maps: is a list of index expressions a split/fuse of some iterators?

TVM's schedule checks ask one question of block bindings and buffer indices: can each
expression be written as a combination of *splits* of *marks*, where a mark is an iterator
(a loop variable over its range, or a fused group of other splits) and a split of a mark `m`
is `(m // lower) % extent * scale`, such that no two splits overlap? Bindings made by
`split`, `fuse` and `reorder` are of that form; `i + j`, `2 * i` or `(i * 8 + j) // 6` with
`j` over 8 values are not. (TVM calls this `DetectIterMap`; this module is our own, smaller
implementation of the same idea.)

- `is_affine_binding(values, dom, predicate, ana)`: the test TVM's schedule state caches per
  block ("surjective", and each binding a single split of scale 1).
- `detect_bijective(indices, dom, ana)` and `inverse(...)`: indices that visit every point of
  the iterators' domain exactly once, and the iterators as expressions of the indices (what
  `reverse_compute_inline` needs).

>>> from graphc import tir
>>> i, j = tir.Var("i"), tir.Var("j")
>>> dom = {i: tir.Range.make(4), j: tir.Range.make(8)}
>>> is_affine_binding([(i * 8 + j) // 16, (i * 8 + j) % 16], dom)
True
>>> is_affine_binding([i + j], dom), is_affine_binding([(i * 8 + j) // 6], dom)
(False, False)
"""

from __future__ import annotations

import dataclasses

from ..analysis.var_use import uses_any_var
from ..arith import Analyzer
from ..expr import (
    GE,
    GT,
    LE,
    LT,
    Add,
    And,
    Cast,
    FloorDiv,
    FloorMod,
    IntImm,
    Mul,
    PrimExpr,
    Range,
    Sub,
    Var,
    const,
    floordiv,
    floormod,
)  # fmt: skip
from ..functor import substitute


class NotAffine(Exception):
    """Raised inside the detector when an expression is not a split/fuse of the iterators."""


@dataclasses.dataclass(eq=False)
class Mark:
    """An iterator over [0, extent): a loop variable, or a fused group of splits."""

    source: object  # a Var, or a tuple of (Split, relative scale) from the lowest scale up
    extent: PrimExpr


@dataclasses.dataclass(eq=False)
class Split:
    """`(mark // lower) % extent * scale`."""

    mark: Mark
    lower: PrimExpr
    extent: PrimExpr
    scale: PrimExpr


@dataclasses.dataclass
class IterSum:
    """`sum(splits) + base`; `base` holds no iterator."""

    splits: list
    base: PrimExpr


class IterMapper:
    """Rewrites expressions over the iterators of `dom` (Var -> Range) into IterSums."""

    def __init__(self, dom: dict, ana: Analyzer | None = None, predicate=None):
        self.ana = ana or Analyzer()
        self.dom = dom
        self.marks = {v: Mark(v, r.extent) for v, r in dom.items()}
        self.fused: dict = {}  # key of a sorted split group -> its Mark (one mark per group)
        self.bounds: dict = {}  # key of a split group -> upper bound from the predicate
        self.constrained: list = []  # the fused marks the predicate bounds
        if predicate is not None:
            self._parse_predicate(predicate)

    # -- proofs --------------------------------------------------------------------------
    def _eq(self, a, b) -> bool:
        if isinstance(a, IntImm) and isinstance(b, IntImm):
            return a.value == b.value
        return self.ana.can_prove(a == b)

    def _divides(self, c, x) -> bool:
        """Whether `c` divides `x`."""
        if _is_zero(x):
            return True
        if isinstance(c, IntImm) and isinstance(x, IntImm):
            return c.value != 0 and x.value % c.value == 0
        fc, fx = _product_form(c), _product_form(x)
        if fc is not None and fx is not None and fc[0] != 0:
            if fx[0] % fc[0] == 0 and all(fx[1].get(v, 0) >= k for v, k in fc[1].items()):
                return True
        return self.ana.can_prove(floormod(x, c) == 0)

    def _positive(self, x) -> bool:
        """Whether `x` may be taken as positive: a positive constant, or a symbolic value (a
        size) that is not provably <= 0."""
        return x.value > 0 if isinstance(x, IntImm) else not self.ana.can_prove(x <= 0)

    def _simplify(self, x):
        return x if isinstance(x, IntImm | Var) else self.ana.simplify(x)

    def _exact_div(self, x, c):
        """`x // c` where `c` divides `x`, simplified through product forms where it can be."""
        if _is_zero(x):
            return x
        fx, fc = _product_form(x), _product_form(c)
        if fx is not None and fc is not None and fc[0] and fx[0] % fc[0] == 0:
            powers = dict(fx[1])
            if all(powers.get(v, 0) >= k for v, k in fc[1].items()):
                for v, k in fc[1].items():
                    powers[v] -= k
                out = const(fx[0] // fc[0], x.dtype)
                for v, k in powers.items():
                    for _ in range(k):
                        out = v.expr if _is_one(out) else out * v.expr
                return out
        return self._simplify(floordiv(x, c))

    # -- rewriting -----------------------------------------------------------------------
    def _has_iter(self, expr) -> bool:
        return uses_any_var(expr, self.marks)

    def to_sum(self, expr) -> IterSum:
        if not self._has_iter(expr):
            return IterSum([], expr)
        if isinstance(expr, Var):
            mark = self.marks[expr]
            one = const(1, expr.dtype)
            return IterSum([Split(mark, one, mark.extent, one)], self.dom[expr].min)
        if isinstance(expr, Add | Sub):
            a, b = self.to_sum(expr.a), self.to_sum(expr.b)
            if isinstance(expr, Sub):
                b = self._scale(b, const(-1, expr.dtype))
            return IterSum(a.splits + b.splits, self._simplify(a.base + b.base))
        if isinstance(expr, Mul):
            if not self._has_iter(expr.b):
                return self._scale(self.to_sum(expr.a), expr.b)
            if not self._has_iter(expr.a):
                return self._scale(self.to_sum(expr.b), expr.a)
            raise NotAffine(f"{expr} multiplies two iterators")
        if isinstance(expr, Cast) and _is_int(expr.dtype) and _is_int(expr.value.dtype):
            return self.to_sum(expr.value)  # between integer types (a fuse of int32 and int64 loops)
        if isinstance(expr, FloorDiv | FloorMod):
            if self._has_iter(expr.b) or not self._positive(expr.b):
                raise NotAffine(f"{expr} divides by an iterator or a non-positive value")
            fused = self.fuse(self.to_sum(expr.a))
            return self._div(fused, expr.b) if isinstance(expr, FloorDiv) else self._mod(fused, expr.b)
        raise NotAffine(f"{type(expr).__name__} is not an affine operation")

    def _scale(self, s: IterSum, c) -> IterSum:
        return IterSum(
            [Split(sp.mark, sp.lower, sp.extent, self._simplify(sp.scale * c)) for sp in s.splits],
            self._simplify(s.base * c),
        )

    def fuse(self, s: IterSum) -> IterSum:
        """`s` with its splits fused into one (over a new mark), or NotAffine."""
        if len(s.splits) <= 1:
            return s
        s = self._use_constrained(s)
        if len(s.splits) <= 1:
            return s
        for start in range(len(s.splits)):
            chain = self._chain(s.splits, start)
            if chain is not None:
                break
        else:
            raise NotAffine("the terms do not form a dense mixed-radix sum")
        base_scale = chain[0][0].scale
        parts = tuple((sp, rel) for sp, rel in chain)
        key = tuple((id(sp.mark), str(sp.lower), str(sp.extent), str(rel)) for sp, rel in parts)
        extent = const(1, base_scale.dtype)
        for sp, _ in parts:
            extent = self._simplify(extent * sp.extent)
        mark = self.fused.get(key)
        if mark is None:
            mark = Mark(parts, self.bounds.get(key, extent))
            self.fused[key] = mark
        one = const(1, base_scale.dtype)
        return IterSum([Split(mark, one, mark.extent, base_scale)], s.base)

    def _use_constrained(self, s: IterSum) -> IterSum:
        """`s` with each group of splits that a predicate bounds (all of a bounded mark's
        splits, scaled alike) written as one split of that mark: `a * 102 + b * 6 + c` under
        `a * 17 + b < 33` is `(a * 17 + b) * 6 + c`, a split of the bounded group."""
        splits = list(s.splits)
        changed = True
        while changed:
            changed = False
            for mark in self.constrained:
                found = self._find_group(splits, mark)
                if found is None:
                    continue
                used, base = found
                splits = [sp for sp in splits if not any(sp is u for u in used)]
                one = const(1, base.dtype)
                splits.append(Split(mark, one, mark.extent, base))
                changed = True
        return IterSum(splits, s.base)

    def _find_group(self, splits: list, mark: Mark):
        """The splits of `splits` that make up the bounded `mark` and the scale they share."""
        used, base = [], None
        for sub, rel in mark.source:
            same = [sp for sp in splits if sp.mark is sub.mark and not any(sp is u for u in used)]
            hit = next(
                (
                    sp
                    for sp in same
                    if self._eq(sp.lower, sub.lower) and self._eq(sp.extent, sub.extent)
                    and (base is None or self._eq(sp.scale, self._simplify(base * rel)))
                ),
                None,
            )  # fmt: skip
            if hit is None:
                return None
            if base is None:
                if not _is_one(rel):
                    return None
                base = hit.scale
            used.append(hit)
        return used, base

    def _chain(self, splits: list, start: int):
        """The splits ordered by scale, each scale the product of the extents below it."""
        first = splits[start]
        if not self._positive(first.scale):
            return None
        remaining = [sp for k, sp in enumerate(splits) if k != start]
        one = const(1, first.scale.dtype)
        chain, cur = [(first, one)], first.extent
        while remaining:
            want = self._simplify(first.scale * cur)
            hits = [sp for sp in remaining if self._eq(sp.scale, want)]
            if not hits:
                return None
            sp = next((h for h in hits if isinstance(h.extent, IntImm) and h.extent.value == 1), hits[0])
            remaining.remove(sp)
            chain.append((sp, cur))
            cur = self._simplify(cur * sp.extent)
        return chain

    def _div(self, s: IterSum, c) -> IterSum:
        if not s.splits:
            return IterSum([], floordiv(s.base, c))
        if not self._divides(c, s.base):
            raise NotAffine("the offset is not a multiple of the divisor")
        base = self._exact_div(s.base, c)
        (sp,) = s.splits
        if self._divides(c, sp.scale):
            return IterSum([Split(sp.mark, sp.lower, sp.extent, self._exact_div(sp.scale, c))], base)
        if not self._divides(sp.scale, c):
            raise NotAffine("the divisor and the scale do not divide one another")
        c = self._exact_div(c, sp.scale)
        one = const(1, c.dtype)
        if self._divides(c, sp.extent):
            extent = self._exact_div(sp.extent, c)
            if _is_one(extent):  # the quotient of the whole extent: always 0
                return IterSum([], base)
            return IterSum([Split(sp.mark, self._simplify(sp.lower * c), extent, one)], base)
        raise NotAffine("a floordiv that does not divide the iterator's extent")

    def _mod(self, s: IterSum, c) -> IterSum:
        if not s.splits:
            return IterSum([], floormod(s.base, c))
        if not self._divides(c, s.base):
            raise NotAffine("the offset is not a multiple of the modulus")
        (sp,) = s.splits
        zero = const(0, c.dtype)
        if self._divides(c, sp.scale):
            return IterSum([], zero)
        if not self._divides(sp.scale, c):
            raise NotAffine("the modulus and the scale do not divide one another")
        c = self._exact_div(c, sp.scale)
        if self._divides(c, sp.extent):
            return IterSum([Split(sp.mark, sp.lower, c, sp.scale)], zero)
        if self.ana.can_prove(sp.extent <= c):
            return IterSum([sp], zero)
        raise NotAffine("a floormod that does not divide the iterator's extent")

    def _parse_predicate(self, predicate) -> None:
        """Record `sum < bound` constraints (from non-dividing splits) as bounded fused marks,
        the smaller groups first so that a larger one is built on them."""
        for cond in sorted(_conjuncts(predicate), key=self._predicate_size):
            if isinstance(cond, IntImm) and cond.value:
                continue
            if isinstance(cond, LT | LE) and self._has_iter(cond.a) and not self._has_iter(cond.b):
                lhs, bound = cond.a, cond.b if isinstance(cond, LT) else cond.b + 1
            elif isinstance(cond, GT | GE) and self._has_iter(cond.b) and not self._has_iter(cond.a):
                lhs, bound = cond.b, cond.a if isinstance(cond, GT) else cond.a + 1
            elif isinstance(cond, GE | LE) and not self._has_iter(cond.b if isinstance(cond, GE) else cond.a):
                s = self.to_sum(cond.a if isinstance(cond, GE) else cond.b)
                low = cond.b if isinstance(cond, GE) else cond.a
                if (
                    s.splits
                    and all(self._positive(sp.scale) for sp in s.splits)
                    and self.ana.can_prove(low <= s.base)
                ):
                    continue  # a lower bound the iterators meet anyway
                raise NotAffine(f"cannot use the predicate {cond}")
            else:
                raise NotAffine(f"cannot use the predicate {cond}")
            s = self.to_sum(lhs)
            if len(s.splits) < 2:
                if s.splits and self.ana.can_prove(
                    s.splits[0].scale * (s.splits[0].extent - 1) + s.base < bound
                ):
                    continue
                raise NotAffine(f"cannot use the predicate {cond}")
            fused = self.fuse(s)
            (sp,) = fused.splits
            if not self._eq(sp.scale, const(1, sp.scale.dtype)):
                raise NotAffine(f"cannot use the predicate {cond}")
            key = next(k for k, m in self.fused.items() if m is sp.mark)
            sp.mark.extent = self._simplify(bound - fused.base)
            self.bounds[key] = sp.mark.extent
            self.constrained.append(sp.mark)

    def _predicate_size(self, cond) -> int:
        """How many iterator terms a predicate conjunct has (its order in `_parse_predicate`)."""
        side = cond.b if isinstance(cond, GT | GE) else getattr(cond, "a", None)
        if side is None:
            return 0
        try:
            return len(self.to_sum(side).splits)
        except NotAffine:
            return 0

    # -- checks --------------------------------------------------------------------------
    def check_no_overlap(self, sums: list, bijective: bool = False) -> None:
        """Raise NotAffine when two splits of one mark overlap (or, for a bijection, leave gaps
        or leave an iterator unused)."""
        refs: dict = {}
        stack = [sp for s in sums for sp in s.splits]
        seen: set = set()
        for mark in self.constrained:  # a bounded group uses its iterators too
            if id(mark) not in seen:
                seen.add(id(mark))
                stack.extend(sub for sub, _ in mark.source)
        while stack:
            sp = stack.pop()
            refs.setdefault(id(sp.mark), (sp.mark, []))[1].append(sp)
            if id(sp.mark) not in seen and isinstance(sp.mark.source, tuple):
                seen.add(id(sp.mark))
                stack.extend(sub for sub, _ in sp.mark.source)
        for mark, splits in refs.values():
            ordered = self._order(splits)
            one = const(1, mark.extent.dtype)
            expect = one
            for k, sp in enumerate(ordered):
                if bijective and not self._eq(sp.lower, expect):
                    raise NotAffine("the splits leave gaps in an iterator")
                if k and not bijective and not self.ana.can_prove(sp.lower >= expect):
                    raise NotAffine("two terms use overlapping parts of one iterator")
                expect = self._simplify(sp.lower * sp.extent)
            if bijective and not self._eq(expect, mark.extent):
                raise NotAffine("the splits do not cover an iterator")
        if bijective:
            used = {id(m) for m, _ in refs.values()}
            for var, mark in self.marks.items():
                if id(mark) not in used and not self._eq(mark.extent, const(1, mark.extent.dtype)):
                    raise NotAffine(f"iterator {var.name} is not used")

    def _order(self, splits: list) -> list:
        if all(isinstance(sp.lower, IntImm) for sp in splits):
            return sorted(splits, key=lambda sp: sp.lower.value)
        out = []
        rest = list(splits)
        while rest:
            low = next(
                (a for a in rest if all(a is b or self._divides(a.lower, b.lower) for b in rest)), None
            )
            if low is None:
                raise NotAffine("cannot order the splits of an iterator")
            rest.remove(low)
            out.append(low)
        return out


class _Factor:
    """A symbolic factor of a product (a Var, or an expression such as `(m + 31) // 32` taken
    whole): equal when structurally equal, so `(m + 31) // 32 * 2` divides `(m + 31) // 32 * 6`."""

    def __init__(self, expr):
        self.expr, self._key = expr, str(expr)

    def __eq__(self, other):
        return isinstance(other, _Factor) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __mul__(self, other):
        return self.expr * (other.expr if isinstance(other, _Factor) else other)

    def __rmul__(self, other):
        return other * self.expr


def _product_form(expr):
    """(constant, {factor: power}) when `expr` is a product of constants and symbolic factors
    (variables, or other expressions that contain no multiplication by a constant)."""
    if isinstance(expr, IntImm):
        return expr.value, {}
    if isinstance(expr, Mul):
        a, b = _product_form(expr.a), _product_form(expr.b)
        if a is None or b is None:
            return None
        powers = dict(a[1])
        for v, k in b[1].items():
            powers[v] = powers.get(v, 0) + k
        return a[0] * b[0], powers
    if isinstance(expr, PrimExpr) and _is_int(expr.dtype):
        return 1, {_Factor(expr): 1}
    return None


def _conjuncts(expr) -> list:
    if isinstance(expr, And):
        return _conjuncts(expr.a) + _conjuncts(expr.b)
    return [expr]


def _mapped(values, dom, ana, predicate):
    mapper = IterMapper(dom, ana, predicate)
    sums = [mapper.fuse(mapper.to_sum(v)) for v in values]
    return mapper, sums


def without_unit_loops(values, dom: dict, predicate=None):
    """`values`, `dom` and `predicate` with every loop of one iteration replaced by its start
    (a split by more than the extent leaves one, which the simplifier drops from the bindings
    but not from the predicate, where the detector would no longer recognise the fused sum)."""
    units = {v: r.min for v, r in dom.items() if isinstance(r.extent, IntImm) and r.extent.value == 1}
    if not units:
        return list(values), dom, predicate
    values = [substitute(v, units) for v in values]
    predicate = substitute(predicate, units) if predicate is not None else None
    return values, {v: r for v, r in dom.items() if v not in units}, predicate


def _tighten(predicate, dom: dict):
    """`loop < c` terms of `predicate` (a conjunction) moved into the loop's range, where the
    loop starts at a constant: the rest of the predicate and the tightened ranges."""
    if predicate is None:
        return None, dom
    terms, rest = [predicate], []
    while terms:
        term = terms.pop()
        if isinstance(term, And):
            terms += [term.a, term.b]
        elif (
            isinstance(term, LT)
            and isinstance(term.a, Var)
            and term.a in dom
            and isinstance(term.b, IntImm)
            and isinstance(dom[term.a].min, IntImm)
            and isinstance(dom[term.a].extent, IntImm)
        ):
            r = dom[term.a]
            extent = max(min(r.extent.value, term.b.value - r.min.value), 0)
            dom = {**dom, term.a: Range(r.min, const(extent, r.extent.dtype))}
        else:
            rest.append(term)
    if not rest:
        return None, dom
    out = rest[0]
    for term in rest[1:]:
        out = And(out, term)
    return out, dom


def is_affine_binding(values, dom: dict, predicate=None, ana: Analyzer | None = None) -> bool:
    """Whether `values` (block bindings) are non-overlapping splits of the loops in `dom`
    (Var -> Range), each of scale 1: TVM's "affine binding". A loop of one iteration is its
    start value (a split by a factor larger than the extent leaves one, which the simplifier
    drops from the bindings but not from the predicate)."""
    reduced = without_unit_loops(values, dom, predicate)
    if reduced[1] is not dom:  # loops of one iteration were dropped: narrow by `loop < c` too
        values, dom, predicate = reduced
        predicate, dom = _tighten(predicate, dom)
    dom = {v: r for v, r in dom.items() if any(uses_any_var(x, {v}) for x in values)
           or (predicate is not None and uses_any_var(predicate, {v}))}  # fmt: skip
    if not dom:
        return True
    try:
        mapper, sums = _mapped(values, dom, ana, predicate)
        for s in sums:
            if s.splits and not mapper._eq(s.splits[0].scale, const(1, s.splits[0].scale.dtype)):
                return False
        mapper.check_no_overlap(sums)
    except NotAffine:
        return False
    return True


def detect_bijective(indices, dom: dict, ana: Analyzer | None = None):
    """The IterMapper and fused IterSums of `indices` when they are a bijection from the box
    `dom` (Var -> Range) onto their image, else None. An index may run backwards (`9 - i`)."""
    try:
        mapper, sums = _mapped(indices, dom, ana, None)
        for s in sums:
            if s.splits and not (isinstance(s.splits[0].scale, IntImm) and abs(s.splits[0].scale.value) == 1):
                return None
        mapper.check_no_overlap(sums, bijective=True)
    except NotAffine:
        return None
    return mapper, sums


def inverse(mapper: IterMapper, sums: list, outputs: list) -> dict:
    """Each iterator of `mapper` as an expression of `outputs` (the values of the indices
    whose bijective IterSums are `sums`)."""
    values: dict = {}  # id(mark) -> list of terms adding up to the mark's value

    def give(sp: Split, value) -> None:
        values.setdefault(id(sp.mark), []).append(value if _is_one(sp.lower) else value * sp.lower)

    for s, out in zip(sums, outputs):
        if s.splits:
            if s.splits[0].scale.value < 0:  # out = base - x
                give(s.splits[0], s.base - out)
            else:
                give(s.splits[0], out - s.base if not _is_zero(s.base) else out)
    for mark in reversed(list(mapper.fused.values())):
        if id(mark) not in values:
            continue
        total = _add_all(values[id(mark)])
        for sp, rel in mark.source:
            part = total if _is_one(rel) else floordiv(total, rel)
            top = mapper._eq(mapper._simplify(rel * sp.extent), mark.extent)
            give(sp, part if top else floormod(part, sp.extent))
    out = {}
    for var, mark in mapper.marks.items():
        terms = values.get(id(mark))
        value = _add_all(terms) if terms else const(0, var.dtype)
        lo = mapper.dom[var].min
        out[var] = mapper._simplify(value if _is_zero(lo) else value + lo)
    return out


def _add_all(terms: list):
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def _is_int(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def _is_one(x) -> bool:
    return isinstance(x, IntImm) and x.value == 1


def _is_zero(x) -> bool:
    return isinstance(x, IntImm) and x.value == 0


__all__ = ["is_affine_binding", "detect_bijective", "inverse", "IterMapper", "NotAffine"]
