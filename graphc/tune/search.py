"""The search of one task: evolutionary search over decision vectors, guided by the cost model.

A candidate is a decision vector: the decisions of the sampling instructions the task's
schedule rule makes (`graphc.tune.space.sample_schedule` replays it with a `ReplaySampler`).
Each round (`TaskSearch.round`) breeds a pool of unmeasured candidates: children of the
fastest measured ones (one or two decisions mutated with `mutate_decision`, the rest
replayed; a decision that no longer fits falls back to a random one) and fresh random
samples (`RandomSampler`). The cost model ranks the pool; the best `1 - epsilon` share of the
measurements go to its favourites, the rest to random members of the pool (so that the model
keeps learning about what it rates low). Before the model has data, the pool is measured in
the order it was bred. Candidates measured before (in this run or in the records file) are
never measured again; the default schedule's decisions are measured first (the baseline and
the reference for checking outputs).
"""

from __future__ import annotations

import math
import random
import time

from .cost_model import CostModel, decision_features, features
from .database import Database, TuningRecord, decision_key, target_key
from .tasks import Task


class Candidate:
    """A scheduled variant of a task: its schedule, decisions and (lazily) its features."""

    def __init__(self, sch, rule: str):
        self.sch, self.rule = sch, rule
        self.decisions = [[int(k), d] for k, d in sch.trace.decisions()]
        self.key = decision_key(self.decisions)
        self._features = None

    @property
    def func(self):
        return self.sch.mod[self.sch.func_name]

    @property
    def features(self) -> list[float]:
        if self._features is None:
            self._features = features(self.func) + decision_features(self.decisions)
        return self._features


class TaskSearch:
    """The search state of one task (see the module docstring)."""

    def __init__(self, task: Task, target, database: Database, runner, *, seed: int = 0,
                 epsilon: float = 0.2, population: int = 4, pool_factor: int = 3):
        from ..target import Target

        self.task, self.target = task, Target.resolve(target)
        self.key = target_key(self.target)
        self.db, self.runner = database, runner
        self.rng = random.Random(f"{seed}:{task.workload}")
        self.epsilon, self.population, self.pool_factor = epsilon, population, pool_factor
        self.model = CostModel(seed=seed)
        self.default: Candidate | None = None
        self.default_time = math.inf
        self.exhausted = False  # no new candidate could be bred
        self.failed_rounds = 0
        self.sample_errors = 0  # samples the rule could not schedule (not candidates)
        self.rule = ""
        self.why_not = ""  # why start() found nothing to tune
        self.known: dict[str, Candidate] = {}  # the candidates measured in this run, by decision key
        self.history: list[tuple[float, float]] = []  # (wall-clock time, best seconds) after each round

    # -- the state, from the records ----------------------------------------------------------------
    @property
    def records(self) -> list[TuningRecord]:
        return self.db.task_records(self.task.workload, self.key)

    @property
    def trials(self) -> int:
        """Candidates measured for this task (the default's baseline and the final
        re-measurements not counted)."""
        return sum(1 for r in self.records if not r.default and not r.confirmed)

    @property
    def best_time(self) -> float:
        """The best candidate's time, as its ratio to the default measured with it times the
        default's own time (so that a load that changed between rounds does not count)."""
        best = self.db.best(self.task.workload, self.key)
        if best is None:
            return math.inf
        if not math.isfinite(self.default_time):
            return best.time
        default = self.db.default_record(self.task.workload, self.key)
        return self.default_time * self.db.relative(best, default)

    @property
    def speedup(self) -> float:
        best = self.best_time
        return self.default_time / best if math.isfinite(best) and math.isfinite(self.default_time) else 1.0

    @property
    def gflops(self) -> float:
        best = self.best_time
        return (self.task.flops or 0) / best / 1e9 if math.isfinite(best) and best > 0 else 0.0

    def _normalized(self, result) -> float:
        """A measurement's time as the cost model learns it: relative to the default measured with
        it, scaled by the default's own time (inf for a failed candidate)."""
        base = result.baseline_time if hasattr(result, "baseline_time") else 0.0
        if result.status != "ok" or not base or not math.isfinite(self.default_time):
            return result.time
        return result.time / base * self.default_time

    # -- sampling -----------------------------------------------------------------------------------
    def _sample(self, sampler) -> Candidate | None:
        from .space import sample_schedule

        try:
            sch = sample_schedule(self.task.func, self.target, sampler)
        except Exception:  # noqa: BLE001 - a rule that fails under some decisions: not a candidate
            self.sample_errors += 1
            return None
        if sch is None:
            return None
        return Candidate(sch, self.rule)

    def start(self) -> bool:
        """Schedule the default, measure it (the reference outputs), record it once. False when
        the task has nothing to tune (no rule takes it, or its rule samples nothing)."""
        from ..tir.schedule.sampling import DefaultSampler
        from .space import rule_of

        self.rule = rule_of(self.task.func, self.target) or ""
        self.default = self._sample(DefaultSampler())
        if self.default is None or not self.default.decisions:
            self.exhausted = True
            self.why_not = "no schedule rule with decisions to search takes it"
            return False
        result = self.runner.reference(self.task, self.default.func)
        if result.status != "ok":
            self.exhausted = True
            self.why_not = f"its default schedule did not run: {result.status}, {result.error}"
            return False
        previous = self.db.default_record(self.task.workload, self.key)
        if previous is None:
            self.db.add(self._record(self.default, result, default=True))
            self.default_time = result.time
        else:
            self.default_time = previous.time
        self.model.update(self.default.features, self.default_time)
        self.known[self.default.key] = self.default
        resumed = [r for r in self.records if not r.default and r.status == "ok" and not r.confirmed]
        default_record = self.db.default_record(self.task.workload, self.key)
        for record in resumed[-64:]:  # a resumed run: teach the model the latest records
            candidate = self._replay(record.decisions, fallback=False)
            if candidate is not None and candidate.key == record.decision_key:
                self.model.update(candidate.features,
                                  self.db.relative(record, default_record) * self.default_time)
        self.history.append((time.time(), self.best_time))
        return True

    def _replay(self, decisions, fallback: bool = True) -> Candidate | None:
        from ..tir.schedule.sampling import RandomSampler, ReplaySampler

        sampler = ReplaySampler([d for _, d in decisions],
                                fallback=RandomSampler(self.rng.randrange(1 << 30)) if fallback else None)
        return self._sample(sampler)

    def _mutant(self, parent_decisions) -> Candidate | None:
        from ..tir.schedule.sampling import mutate_decision

        parent = self.known.get(decision_key(parent_decisions))
        parent = parent or self._replay(parent_decisions, fallback=True)
        if parent is None:
            return None
        samples = [inst for inst in parent.sch.trace.insts if inst.is_sample and inst.info is not None]
        if not samples:
            return None
        decisions = [d for _, d in parent.decisions]
        for _ in range(1 + (self.rng.random() < 0.3)):
            k = self.rng.randrange(len(samples))
            inst = samples[k]
            decisions[k] = mutate_decision(inst.info.kind, inst.decision, inst.info, self.rng)
        return self._replay([[k, d] for k, d in enumerate(decisions)], fallback=True)

    def _random(self) -> Candidate | None:
        from ..tir.schedule.sampling import RandomSampler

        return self._sample(RandomSampler(self.rng.randrange(1 << 30)))

    def _ranked(self) -> list[TuningRecord]:
        """The correct candidates measured, fastest (relative to the default) first, one each."""
        default = self.db.default_record(self.task.workload, self.key)
        ok = sorted((r for r in self.records if r.status == "ok" and not r.confirmed),
                    key=lambda r: self.db.relative(r, default))
        seen, out = set(), []
        for r in ok:
            if r.decision_key not in seen:
                seen.add(r.decision_key)
                out.append(r)
        return out

    def _parents(self) -> list:
        return [r.decisions for r in self._ranked()[: self.population]]

    def breed(self, size: int) -> list[Candidate]:
        """Up to `size` new candidates, none measured before: mutants of the best, and random ones."""
        measured = self.db.measured(self.task.workload, self.key)
        parents = self._parents()
        pool: dict[str, Candidate] = {}
        attempts = 0
        while len(pool) < size and attempts < size * 4:
            attempts += 1
            if parents and self.rng.random() < 0.6:
                candidate = self._mutant(self.rng.choice(parents))
            else:
                candidate = self._random()
            if candidate is not None and candidate.key not in measured and candidate.key not in pool:
                pool[candidate.key] = candidate
        return list(pool.values())

    def pick(self, pool: list[Candidate], n: int) -> list[Candidate]:
        """`n` of `pool` to measure: the model's favourites and an epsilon share at random."""
        if len(pool) <= n:
            return pool
        scores = self.model.predict([c.features for c in pool]) if self.model.trained else None
        if scores is None:
            return pool[:n]
        ranked = [c for _, c in sorted(zip(scores, pool), key=lambda sc: sc[0])]
        explore = int(round(n * self.epsilon))
        chosen = ranked[: n - explore]
        rest = ranked[n - explore:]
        chosen += self.rng.sample(rest, min(explore, len(rest)))
        return chosen

    # -- one round ----------------------------------------------------------------------------------
    def round(self, n: int) -> list[TuningRecord]:
        """Breed, rank and measure up to `n` new candidates; their records (added to the database)."""
        if self.default is None:
            raise RuntimeError("TaskSearch.round before start()")
        pool = self.breed(n * self.pool_factor if self.model.trained else n)
        if not pool:
            self.failed_rounds += 1
            self.exhausted = self.failed_rounds >= 3
            return []
        self.failed_rounds = 0
        chosen = self.pick(pool, n)
        results = self.runner.measure(self.task, [c.func for c in chosen])
        records = []
        for candidate, result in zip(chosen, results):
            self.known[candidate.key] = candidate
            record = self._record(candidate, result)
            self.db.add(record)
            self.model.update(candidate.features, self._normalized(result))
            records.append(record)
        self.history.append((time.time(), self.best_time))
        return records

    def confirm(self, k: int = 4, repeat: int | None = None) -> list[TuningRecord]:
        """Measure the `k` fastest candidates again, interleaved with the default, with more
        repeats; recorded as confirmations (`TuningRecord.confirmed`), which then decide the
        best (`Database.best`): the fastest of many noisy first measurements is biased to a
        lucky one. Nothing to do when no candidate beat the default."""
        if self.default is None:
            raise RuntimeError("TaskSearch.confirm before start()")
        top = [r for r in self._ranked() if not r.default][:k]
        if not top or self.db.relative(top[0], self.db.default_record(self.task.workload, self.key)) >= 1.0:
            return []
        chosen = []
        for record in top:
            candidate = self.known.get(record.decision_key) or self._replay(record.decisions, fallback=False)
            if candidate is not None and candidate.key == record.decision_key:
                chosen.append(candidate)
        if not chosen:
            return []
        kwargs = {"repeat": repeat} if repeat is not None else {}
        results = self.runner.measure(self.task, [c.func for c in chosen], **kwargs)
        base = next((r.baseline for r in results if r.status == "ok" and r.baseline), None)
        if base is None:
            return []
        from .measure import MeasureResult

        records = [self._record(self.default, MeasureResult("ok", list(base), baseline=list(base)),
                                default=True, confirmed=True)]
        records += [self._record(c, r, confirmed=True) for c, r in zip(chosen, results)]
        for record in records:
            self.db.add(record)
        self.history.append((time.time(), self.best_time))
        return records

    def _record(self, candidate: Candidate, result, default: bool = False,
                confirmed: bool = False) -> TuningRecord:
        base = result.baseline_time if hasattr(result, "baseline_time") else 0.0
        return TuningRecord(
            workload=self.task.workload, target=self.key, rule=candidate.rule,
            trace=candidate.sch.trace.to_json(), decisions=candidate.decisions, times=list(result.times),
            status=result.status, error=result.error, workload_text=self.task.script(), default=default,
            baseline=base if result.status == "ok" else 0.0, confirmed=confirmed)


__all__ = ["Candidate", "TaskSearch"]
