"""Sampling instructions: a schedule rule's decisions as trace instructions (TVM MetaSchedule's).

A rule that would pick a tile size, a candidate or a compute location asks the schedule
instead, passing its own best guess as `decision=`:

    mr, nv = sch.sample_categorical([[6, 4], [4, 3], [8, 2]], decision=0)
    k0, k1 = sch.sample_perfect_tile(k, n=2, max_innermost_factor=64, decision=[8, 64])
    loc = sch.sample_compute_location(pack, decision=-1)      # a LoopRV, or None (root)

Each call returns a plain Python value (a LoopRV or None for a location) and is recorded in
the trace with the decision taken (`decision=[8, 64]` in the printed trace,
`trace.decisions()` lists them). Who takes the decision is the schedule's *sampler*
(`Schedule(func, sampler=...)`, `sch.sampler = ...`, or `use_sampler(s)` around code that makes
schedules, such as a dlight rule):

- `DefaultSampler()` (the default): the rule's `decision=`, or a fixed sensible choice;
- `RandomSampler(seed)`: a uniformly random valid decision (a categorical with `probs` draws by
  them), reproducible by seed;
- `ReplaySampler(decisions, fallback=None)`: the i-th sampling instruction of the schedule takes
  `decisions[i]`; a missing or invalid one goes to `fallback` (a sampler) or raises ScheduleError.

The sampler protocol: `sampler.decide(kind, info, default) -> decision`, where `kind` is
"perfect_tile", "categorical" or "compute_location", `info` a `SampleInfo` (the valid choices:
`info.choices()`, `info.is_valid(d)`, `info.random(rng)`, and `info.index`, the instruction's
position among the schedule's sampling instructions) and `default` what DefaultSampler would
take. Decisions: a perfect tile's is its list of factors (product = the loop's extent, the last
<= `max_innermost_factor`); a categorical's the index of the candidate; a compute location's -1
for the root (stay where it is) or the index of the loop among `info.locations`, the loops of the
block's first consumer at which `compute_at` is legal, outermost first. `trace.apply_to(sch)`
replays a sampling instruction with its recorded decision whatever the sampler, so a stored trace
re-creates its schedule; `mutate_decision` gives a tuner a neighbouring decision.

>>> from graphc import te, tir
>>> A = te.placeholder((64,), name="A")
>>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
>>> sch = tir.Schedule(te.create_prim_func([A, B]))
>>> (i,) = sch.get_loops("B")
>>> sch.sample_perfect_tile(i, n=2, max_innermost_factor=16, decision=[4, 16])
[4, 16]
>>> sch.sampler = RandomSampler(seed=0)
>>> f = sch.sample_perfect_tile(i, n=2, max_innermost_factor=16)
>>> f[0] * f[1] == 64 and f[1] <= 16
True
>>> [d for _, d in sch.trace.decisions()][0]
[4, 16]
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
import random

from ...errors import ScheduleError
from ..expr import IntImm
from .trace import BlockRV, LoopRV

KINDS = ("perfect_tile", "categorical", "compute_location")
# enumerating a perfect tile's factorisations stops here (a loop of 2^20 split 5 ways has 10626)
_MAX_CHOICES = 1 << 17


# -- what a sampling instruction may decide ---------------------------------------------------


@dataclasses.dataclass
class SampleInfo:
    """The choices of one sampling instruction (JSON-able through `to_json`).

    `kind`: "perfect_tile" (`extent`, `n`, `max_innermost_factor`), "categorical"
    (`candidates`, `probs`) or "compute_location" (`locations`: loop names, outermost first);
    `index`: the instruction's position among its schedule's sampling instructions; `hint`: the
    decision the rule passed (None when it passed none).
    """

    kind: str
    index: int = 0
    hint: object = None
    extent: int | None = None
    n: int | None = None
    max_innermost_factor: int | None = None
    candidates: list | None = None
    probs: list | None = None
    locations: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self._choices = None

    # -- the valid decisions ---------------------------------------------------------------
    def why_invalid(self, decision) -> str | None:
        """None when `decision` is valid here, else what is wrong with it."""
        if self.kind == "perfect_tile":
            if not isinstance(decision, list | tuple) or len(decision) != self.n:
                return f"a perfect tile decision is a list of {self.n} factors, got {decision!r}"
            if any(not _is_int(f) or f < 1 for f in decision):
                return f"the factors must be positive integers, got {list(decision)}"
            if math.prod(decision) != self.extent:
                return (f"the factors {list(decision)} multiply to {math.prod(decision)}, not the extent "
                        f"{self.extent}")  # fmt: skip
            if decision[-1] > self.max_innermost_factor:
                return (f"the innermost factor {decision[-1]} exceeds max_innermost_factor="
                        f"{self.max_innermost_factor}")  # fmt: skip
            return None
        if self.kind == "categorical":
            if not _is_int(decision) or not 0 <= decision < len(self.candidates):
                return (f"a categorical decision is a candidate index in [0, {len(self.candidates)}), got "
                        f"{decision!r}")  # fmt: skip
            if self.probs is not None and self.probs[decision] == 0:
                return f"candidate {decision} has probability 0"
            return None
        if not _is_int(decision) or not -1 <= decision < len(self.locations):
            return (f"a compute location decision is -1 (root) or a location index in "
                    f"[0, {len(self.locations)}), got {decision!r}")  # fmt: skip
        return None

    def is_valid(self, decision) -> bool:
        return self.why_invalid(decision) is None

    def choices(self) -> list:
        """Every valid decision (perfect tiles: every factorisation, in a fixed order)."""
        if self._choices is None:
            if self.kind == "perfect_tile":
                self._choices = _factorisations(self.extent, self.n, self.max_innermost_factor)
            elif self.kind == "categorical":
                probs = self.probs or [1] * len(self.candidates)
                self._choices = [k for k in range(len(self.candidates)) if probs[k] > 0]
            else:
                self._choices = [-1, *range(len(self.locations))]
        return self._choices

    def num_choices(self) -> int:
        return len(self.choices())

    def default(self):
        """The decision when nobody chooses: the rule's hint, else a fixed sensible one (a perfect
        tile's largest innermost factor allowed with the rest outermost; the most likely
        candidate, the first on ties; the root)."""
        if self.hint is not None:
            return self.normalize(self.hint)
        if self.kind == "perfect_tile":
            inner = max(f for f in _divisors(self.extent) if f <= self.max_innermost_factor)
            if self.n == 1:
                return [inner]
            return [self.extent // inner] + [1] * (self.n - 2) + [inner]
        if self.kind == "categorical":
            if self.probs is None:
                return 0
            return max(range(len(self.probs)), key=lambda k: (self.probs[k], -k))
        return -1

    def random(self, rng: random.Random):
        """A random valid decision: uniform, or by `probs` for a categorical that has them."""
        if self.kind == "categorical" and self.probs is not None:
            return rng.choices(range(len(self.candidates)), weights=self.probs)[0]
        return self.normalize(rng.choice(self.choices()))

    def normalize(self, decision):
        return [int(f) for f in decision] if self.kind == "perfect_tile" else int(decision)

    # -- JSON -------------------------------------------------------------------------------
    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {k: v for k, v in out.items() if v is not None and v != []}

    @staticmethod
    def from_json(obj: dict) -> SampleInfo:
        return SampleInfo(**obj)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _divisors(n: int) -> list:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _factorisations(extent: int, n: int, max_inner: int) -> list:
    """Every list of `n` factors of `extent` whose last is <= `max_inner`."""
    out: list = []

    def rec(rest: int, prefix: list) -> None:
        if len(out) > _MAX_CHOICES:
            raise ScheduleError(f"sample_perfect_tile: {extent} split {n} ways has too many factorisations")
        if len(prefix) == n - 1:
            if rest <= max_inner:
                out.append([*prefix, rest])
            return
        for d in _divisors(rest):
            rec(rest // d, [*prefix, d])

    rec(extent, [])
    return out


# -- samplers ---------------------------------------------------------------------------------


class Sampler:
    """Takes the decisions of sampling instructions: `decide(kind, info, default) -> decision`."""

    is_default = False

    def decide(self, kind: str, info: SampleInfo, default):
        raise NotImplementedError(f"{type(self).__name__} does not define decide()")


class DefaultSampler(Sampler):
    """The rule's own decision (`decision=`), else SampleInfo.default(): the untuned schedule.
    (`is_default` tells a rule it is not being tuned; a wrapping sampler may pass it on.)"""

    is_default = True

    def decide(self, kind, info, default):
        return default

    def __repr__(self) -> str:
        return "DefaultSampler()"


class RandomSampler(Sampler):
    """A random valid decision for every instruction (see `SampleInfo.random`), by `seed`."""

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self.rng = random.Random(seed)

    def decide(self, kind, info, default):
        return info.random(self.rng)

    def __repr__(self) -> str:
        return f"RandomSampler(seed={self.seed})"


class ReplaySampler(Sampler):
    """The i-th sampling instruction takes `decisions[i]` (a list of decisions, or the
    `(instruction index, decision)` pairs `trace.decisions()` gives). A missing or invalid
    decision goes to `fallback` (a sampler), or raises ScheduleError naming the instruction.
    `fell_back` lists the positions that went to the fallback."""

    def __init__(self, decisions, fallback: Sampler | None = None):
        decisions = list(decisions)
        if decisions and all(isinstance(d, tuple) and len(d) == 2 and _is_int(d[0]) for d in decisions):
            decisions = [d for _, d in decisions]
        self.decisions = decisions
        self.fallback = fallback
        self.fell_back: list = []

    def decide(self, kind, info, default):
        i = info.index
        if i < len(self.decisions):
            why = info.why_invalid(self.decisions[i])
            if why is None:
                return info.normalize(self.decisions[i])
        else:
            why = f"only {len(self.decisions)} decisions were given"
        if self.fallback is not None:
            self.fell_back.append(i)
            return self.fallback.decide(kind, info, default)
        raise ScheduleError(
            f"ReplaySampler: sampling instruction {i} (sample_{kind}) has no valid decision: {why}"
        )

    def __repr__(self) -> str:
        return f"ReplaySampler({self.decisions!r}, fallback={self.fallback!r})"


class _Recorded(Sampler):
    """Replays the decision `apply_to` passes (validated as the rule's hint)."""

    def decide(self, kind, info, default):
        return default


_CURRENT: contextvars.ContextVar = contextvars.ContextVar("graphc_sampler", default=None)


@contextlib.contextmanager
def use_sampler(sampler: Sampler):
    """Schedules made inside the `with` (by a dlight rule, say) take their decisions from `sampler`."""
    _check_sampler(sampler)
    token = _CURRENT.set(sampler)
    try:
        yield sampler
    finally:
        _CURRENT.reset(token)


def current_sampler() -> Sampler:
    """The sampler of `use_sampler`, else a DefaultSampler."""
    return _CURRENT.get() or DefaultSampler()


def _check_sampler(sampler) -> None:
    if not callable(getattr(sampler, "decide", None)):
        raise ScheduleError(
            f"a sampler needs a decide(kind, info, default) method, got {type(sampler).__name__}"
        )


# -- the primitives ---------------------------------------------------------------------------


def _plain(x) -> bool:
    if x is None or isinstance(x, bool | int | float | str):
        return True
    return isinstance(x, list | tuple) and all(_plain(y) for y in x)


class SamplingPrimitives:
    """sample_perfect_tile / sample_categorical / sample_compute_location; mixed into `Schedule`."""

    @property
    def sampler(self) -> Sampler:
        """Who takes this schedule's decisions (see the module docstring)."""
        return self._sampler

    @sampler.setter
    def sampler(self, sampler: Sampler | None) -> None:
        if sampler is None:
            sampler = DefaultSampler()
        _check_sampler(sampler)
        self._sampler = sampler

    def sample_perfect_tile(
        self, loop: LoopRV, n: int, max_innermost_factor: int = 16, decision=None
    ) -> list:
        """`n` factors whose product is `loop`'s (constant) extent, the innermost at most
        `max_innermost_factor`: the factors of a perfect split."""
        what = "sample_perfect_tile"
        with self._sampling(loop):
            if not _is_int(n) or n < 1:
                raise ScheduleError(f"{what}: n must be a positive integer, got {n!r}")
            if not _is_int(max_innermost_factor) or max_innermost_factor < 1:
                raise ScheduleError(
                    f"{what}: max_innermost_factor must be a positive integer, got {max_innermost_factor!r}"
                )
            self._check_loops(loop)
            extent = self.get(loop).extent
            if not isinstance(extent, IntImm):
                raise ScheduleError(
                    f"{what}: loop {loop.var.name} has the non-static extent {extent}; a perfect tile "
                    f"needs a constant extent (sample a categorical factor and split with a guard instead)"
                )
            info = SampleInfo("perfect_tile", self._trace.num_samples, decision, extent.value, n,
                              max_innermost_factor)  # fmt: skip
            if not info.choices():
                raise ScheduleError(
                    f"{what}: loop {loop.var.name} of extent {extent.value} has no split into {n} factors "
                    f"with the innermost <= {max_innermost_factor}"
                )
            taken = self._decide(what, info)
        kwargs = {"n": n, "max_innermost_factor": max_innermost_factor}
        return self._record(what, (loop,), kwargs, list(taken), taken, info)

    def sample_categorical(self, candidates, probs=None, decision=None):
        """One of `candidates` (plain values: numbers, strings, None, lists of them), drawn by
        `probs` when random; the decision is the candidate's index."""
        what = "sample_categorical"
        with self._sampling():
            if not isinstance(candidates, list | tuple) or not candidates:
                raise ScheduleError(f"{what}: candidates must be a non-empty list, got {candidates!r}")
            if not all(_plain(c) for c in candidates):
                raise ScheduleError(
                    f"{what}: candidates must be plain values (numbers, strings, None, lists of them) so "
                    f"the trace serialises, got {candidates!r}"
                )
            if probs is not None:
                probs = [float(p) for p in probs]
                if len(probs) != len(candidates):
                    raise ScheduleError(f"{what}: {len(probs)} probs for {len(candidates)} candidates")
                if any(p < 0 for p in probs) or abs(sum(probs) - 1.0) > 1e-6:
                    raise ScheduleError(f"{what}: probs must be non-negative and sum to 1, got {probs}")
            candidates = [list(c) if isinstance(c, tuple) else c for c in candidates]
            info = SampleInfo(
                "categorical", self._trace.num_samples, decision, candidates=candidates, probs=probs
            )
            taken = self._decide(what, info)
        kwargs = {} if probs is None else {"probs": probs}
        return self._record(what, (candidates,), kwargs, candidates[taken], taken, info)

    def sample_compute_location(self, block, decision=None, check: bool = True,
                                outermost: int | None = None) -> LoopRV | None:
        """A loop of `block`'s first consumer at which `compute_at(block, loop)` is legal, or
        None for the root (decision -1).

        `check=False` offers every loop of the consumer without trying `compute_at` at each
        (a trial per loop costs as much as the move itself): the caller's `compute_at` then
        raises ScheduleError for an illegal pick, which a tuner counts as a failed sample.
        `outermost=n` offers only the consumer's `n` outermost loops (not the inside of a
        register tile, say)."""
        what = "sample_compute_location"
        given = block
        with self._sampling(block):
            block = self._block(block)
            self._block_path(block)
            consumers = self.get_consumers(block)
            loops = self.get_loops(consumers[0]) if consumers else []
            if outermost is not None:
                loops = loops[: max(int(outermost), 0)]
            legal = [lp for lp in loops if not check or self._compute_at_legal(block, lp)]
            info = SampleInfo("compute_location", self._trace.num_samples, decision,
                              locations=[lp.var.name for lp in legal])  # fmt: skip
            taken = self._decide(what, info)
        out = None if taken == -1 else legal[taken]
        kwargs = {} if check else {"check": False}
        if outermost is not None:
            kwargs["outermost"] = int(outermost)
        return self._record(what, (given,), kwargs, out, taken, info)

    # -- helpers ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _sampling(self, *handles):
        """Run a sampling primitive's look-ups unrecorded (they are part of the instruction)."""
        from .trace import _name_unknown_handles

        if self._depth == 0:
            _name_unknown_handles(self, handles, {})
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    def _decide(self, what: str, info: SampleInfo):
        if info.hint is not None:
            why = info.why_invalid(info.hint)
            if why is not None:
                raise ScheduleError(f"{what}: decision out of range: {why}")
        sampler = self._sampler
        taken = sampler.decide(info.kind, info, info.default())
        why = info.why_invalid(taken)
        if why is not None:
            raise ScheduleError(f"{what}: the sampler {sampler!r} took an invalid decision: {why}")
        return info.normalize(taken)

    def _record(self, what: str, args: tuple, kwargs: dict, out, taken, info: SampleInfo):
        if self._depth == 0:
            self._trace.append(what, args, kwargs, out, decision=taken, info=info)
        return out

    def _compute_at_legal(self, block: BlockRV, loop: LoopRV) -> bool:
        trial = self.copy()
        try:
            trial.compute_at(block, loop)
        except ScheduleError:
            return False
        return True

    def _replay_sample(self, name: str, args: tuple, kwargs: dict, decision):
        """Re-run sampling instruction `name` with its recorded `decision` (Trace.apply_to)."""
        saved = self._sampler
        self._sampler = _Recorded()
        try:
            return getattr(self, name)(*args, **kwargs, decision=decision)
        finally:
            self._sampler = saved


# -- mutations ----------------------------------------------------------------------------------


def mutate_decision(kind: str, decision, info: SampleInfo, rng: random.Random):
    """A valid decision near `decision` (another one when there is one): a perfect tile moves a
    prime factor between two of its factors, a categorical takes another candidate, a compute
    location another loop (or the root).

    >>> info = SampleInfo("perfect_tile", extent=64, n=2, max_innermost_factor=16)
    >>> d = mutate_decision("perfect_tile", [8, 8], info, random.Random(0))
    >>> d != [8, 8] and info.is_valid(d)
    True
    """
    if kind != info.kind:
        raise ScheduleError(f"mutate_decision: kind {kind!r} does not match the instruction's {info.kind!r}")
    if kind == "perfect_tile" and info.is_valid(decision) and len(decision) > 1:
        for _ in range(16):
            i, j = rng.sample(range(len(decision)), 2)
            primes = _prime_factors(decision[i])
            if not primes:
                continue
            p = rng.choice(primes)
            new = list(decision)
            new[i] //= p
            new[j] *= p
            if info.is_valid(new):
                return new
    others = info.choices()
    if info.is_valid(decision):
        others = [c for c in others if c != info.normalize(decision)]
    return info.normalize(rng.choice(others)) if others else info.normalize(decision)


def _prime_factors(n: int) -> list:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


__all__ = [
    "DefaultSampler",
    "KINDS",
    "RandomSampler",
    "ReplaySampler",
    "SampleInfo",
    "Sampler",
    "SamplingPrimitives",
    "current_sampler",
    "mutate_decision",
    "use_sampler",
]
