"""Sharing the tuning time among tasks: MetaSchedule's gradient-based task scheduler.

The model's latency is estimated as the sum over tasks of weight x best time. Each step
gives one round of measurements to the task whose next round is expected to shorten that
sum the most: its weighted latency times its recent rate of improvement (the backward
gradient over the last `window` rounds), or, while it has not improved lately, an optimistic
share that shrinks with the trials already spent on it. Every task gets one round first
(the warm-up); a small share of steps (`epsilon`) go to a random task; a task whose space
is exhausted gets no more.

>>> class Fake:
...     def __init__(self, best, trials, weight=1):
...         self.best_time, self.trials, self.exhausted = best, trials, False
...         self.task = type("T", (), {"weight": weight})()
...         self.history = [(0, best)]
>>> s = TaskScheduler([Fake(1e-3, 8), Fake(4e-3, 8)], epsilon=0.0)
>>> s.done(0); s.done(1)
>>> s.next_task()  # after the warm-up: the slower task weighs more in the model's latency
1
"""

from __future__ import annotations

import math
import random


class TaskScheduler:
    """Picks the task (a `TaskSearch`) to give the next round of measurements to."""

    def __init__(self, searches, *, window: int = 3, epsilon: float = 0.05, seed: int = 0):
        self.searches = list(searches)
        self.window, self.epsilon = window, epsilon
        self.rng = random.Random(seed)
        self.rounds = [0] * len(self.searches)

    def latency(self) -> float:
        """The estimated model latency: weight x best time, summed over the tasks."""
        return sum(s.task.weight * s.best_time for s in self.searches if math.isfinite(s.best_time))

    def gradient(self, i: int) -> float:
        """The expected reduction of the model latency per round given to task `i`."""
        s = self.searches[i]
        best = s.best_time
        if not math.isfinite(best):
            return 0.0
        weighted = s.task.weight * best
        history = [b for _, b in s.history if math.isfinite(b)]
        backward = 0.0
        if len(history) > self.window:
            before = history[-1 - self.window]
            backward = (before - history[-1]) / before / self.window
        optimistic = 1.0 / (1.0 + s.trials / 8.0)  # unexplored tasks may still improve a lot
        return weighted * max(backward, 0.1 * optimistic)

    def next_task(self) -> int | None:
        """The index of the task to tune next, or None when every task is exhausted."""
        live = [i for i, s in enumerate(self.searches) if not s.exhausted]
        if not live:
            return None
        for i in live:  # the warm-up: one round each
            if self.rounds[i] == 0:
                return i
        if self.rng.random() < self.epsilon:
            return self.rng.choice(live)
        return max(live, key=self.gradient)

    def done(self, i: int) -> None:
        """Note that task `i` had a round."""
        self.rounds[i] += 1


__all__ = ["TaskScheduler"]
