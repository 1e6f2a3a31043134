"""Adaptive sweeps: grow n until the verdicts are confident or the budget is spent.

Contract: `AdaptivePlan` is a `Plan` (see `plan`): it decides from the runs
it is given and the remaining budget it is told, nothing else (no clock, no
store, no runner), so the same history and budgets give the same batches
wherever the runs execute. It never asks for more than the budget: every
run's timeout is the user's `--timeout` capped by what is left of the budget
when the run starts, and a size is only started when the runs already
measured predict that it fits. Runs therefore go to the runner one at a time,
except that a step's runs (its warm-ups, a size's repeats, a refinement round)
go in one batch when what is left covers one more run than the step holds at
`--timeout`: then the budget cannot bind inside the step. It grows n
geometrically from `start_n` (by 4 while start-up cost still dominates, then by
2), measures `repeat` runs of each variant per size, ends growth at a size
whose runs hit the user's `--timeout`, and once four or more sizes are in,
re-fits after every step and stops as soon as every watched metric's verdict
is confident. Where the verdicts are not yet confident it either grows n
towards the fit's `decide_n` (when that is affordable) or adds repeats at the
sizes whose spread is widest (relative median absolute deviation), in a
shuffled order, A and B alternating. Given earlier runs (a resumed sweep) it
goes on from the size after the largest measured, without warm-ups.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Generator, Sequence

import numpy as np

from quadscope.analyse.analysis import fit_runs
from quadscope.classes import REGISTRY
from quadscope.model import METRICS, Run
from quadscope.run.plan import Batch, PlannedRun, Scheduled

MIN_SIZES = 4
FAST_GROWTH = 4
SLOW_GROWTH = 2
# Refinement stops adding repeats at a size beyond max(this, 3 × --repeat).
MAX_REPEATS = 10


def _medians(runs: Sequence[Run], metric: str = "wall_s") -> dict[int, float]:
    by: dict[int, list[float]] = defaultdict(list)
    for r in runs:
        v = r.value(metric)
        if v is not None:
            by[r.size_n].append(v)
    return {n: float(np.median(v)) for n, v in sorted(by.items())}


def _relative_spread(runs: Sequence[Run], metric: str = "wall_s") -> dict[int, float]:
    by: dict[int, list[float]] = defaultdict(list)
    for r in runs:
        v = r.value(metric)
        if v is not None:
            by[r.size_n].append(v)
    out: dict[int, float] = {}
    for n, vals in by.items():
        arr = np.asarray(vals)
        med = float(np.median(arr))
        mad = float(np.median(np.abs(arr - med)))
        # One run says nothing about spread: treat it as the widest, so it gets repeats first.
        out[n] = math.inf if len(vals) < 2 else (mad / med if med > 0 else 0.0)
    return out


def estimate_wall_s(runs: Sequence[Run], n: int) -> float:
    """Wall time at n, extrapolated from the last two sizes, assuming at least linear growth."""
    med = _medians(runs)
    if not med:
        return 0.0
    sizes = sorted(med)
    last = sizes[-1]
    k = 1.0
    if len(sizes) >= 2 and sizes[-2] > 0 and med[sizes[-2]] > 0 and med[last] > 0:
        k = math.log(med[last] / med[sizes[-2]]) / math.log(last / sizes[-2])
    k = min(max(k, 1.0), 4.0)
    return med[last] * (n / max(last, 1)) ** k


class AdaptivePlan:
    """The adaptive policy (see the module docstring) as a `Plan`.

    It keeps its place between calls (the size it is at, whether it is still
    growing, its seeded shuffle) in a generator that yields one batch per call.
    """

    def __init__(self, *, variants: Sequence[str], repeat: int, warmup: int,
                 timeout_s: float | None, seed: int, until: Sequence[str] = (),
                 start_n: int = 1) -> None:
        self.variants = tuple(variants)
        self.repeat = repeat
        self.warmup = warmup
        self.timeout_s = timeout_s
        self.seed = seed
        self.until = tuple(until)
        self.start_n = start_n
        self.rng = random.Random(seed)
        self.user_timeout_hit = False
        self.budget_out = False
        self.runs: Sequence[Run] = ()
        self.history: list[Run] = []  # runs that are not warm-ups
        self.remaining_s = 0.0
        self._steps = self._go()

    @property
    def total_runs(self) -> None:
        return None

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        if remaining_s is None:
            raise ValueError("an adaptive plan needs a budget")
        self.runs = history
        self.history = [r for r in history if not r.warmup]
        self.remaining_s = remaining_s
        return next(self._steps, None)

    def _hand_over(self, planned: Sequence[PlannedRun]) -> Generator[Batch, None, bool]:
        """Yield `planned` as batches, in order; False when the budget ran out first."""
        user = self.timeout_s
        i = 0
        while i < len(planned):
            left = self.remaining_s
            if left <= 0:
                self.budget_out = True
                return False
            if user is not None and user * (len(planned) - i + 1) <= left:
                # One more run's worth of slack than the step needs: neither the
                # clock's rounding nor harness time can make the budget bind in it.
                limit, step = user, planned[i:]
            else:
                limit, step = (left if user is None else min(user, left)), planned[i:i + 1]
            yield tuple(Scheduled(p, limit) for p in step)
            for run in self.runs[len(self.runs) - len(step):]:
                if run.measurement.timed_out:
                    if user is not None and limit >= user:
                        self.user_timeout_hit = True
                    else:
                        self.budget_out = True
            i += len(step)
        return True

    def measured(self, variant: str = "A") -> list[Run]:
        return [r for r in self.history if r.variant == variant and r.measurement.ok]

    def sizes(self) -> list[int]:
        return sorted({r.size_n for r in self.history})

    def measure_size(self, n: int, repeats: int) -> Generator[Batch, None, None]:
        yield from self._hand_over(
            [PlannedRun(v, n, rep) for rep in range(repeats) for v in self.variants])

    def verdicts_confident(self, growing: bool) -> tuple[bool, int | None]:
        """Whether every watched metric is confident, and the largest decide_n asked for."""
        decide: int | None = None
        sizes = self.sizes()
        span = sizes[-1] / max(sizes[0], 1)
        for v in self.variants:
            fits, _ = fit_runs(self.measured(v), seed=self.seed, metrics=self.until or METRICS)
            for fit in fits.values():
                # A slow-growth verdict is final only over its class's settling span.
                settles = REGISTRY.get(fit.cls)
                if growing and settles is not None and span < settles.settling_span:
                    return False, None
                if not fit.confident:
                    if fit.decide_n:
                        decide = max(decide or 0, fit.decide_n)
                    return False, decide
        return True, decide

    def refine(self) -> Generator[Batch, None, bool]:
        """One more run per variant at the widest-spread sizes (up to 3), shuffled.

        False when every size already has the most repeats worth taking.
        """
        counts: dict[int, int] = defaultdict(int)
        for r in self.history:
            if r.variant == "A":
                counts[r.size_n] += 1
        cap = max(MAX_REPEATS, 3 * self.repeat)
        spread = {n: s for n, s in _relative_spread(self.measured()).items() if counts[n] < cap}
        if not spread:
            return False
        widest = sorted(spread, key=lambda n: spread[n], reverse=True)[:3]
        self.rng.shuffle(widest)
        yield from self._hand_over([PlannedRun(v, n, counts[n]) for n in widest
                                    for v in self.variants])
        return True

    def affordable(self, n: int) -> bool:
        cost = estimate_wall_s(self.measured(), n) * self.repeat * len(self.variants)
        return cost < 0.5 * self.remaining_s

    def next_size(self, n: int) -> int:
        med = _medians(self.measured())
        first = med[min(med)] if med else 0.0
        last = med[max(med)] if med else 0.0
        factor = FAST_GROWTH if last < 2 * first else SLOW_GROWTH
        return max(n + 1, n * factor)

    def _go(self) -> Generator[Batch, None, None]:
        n = self.next_size(max(self.sizes())) if self.history else max(self.start_n, 1)
        if self.warmup and not self.history:
            warmups = [PlannedRun(v, n, 0, warmup=True) for _ in range(self.warmup)
                       for v in self.variants]
            if not (yield from self._hand_over(warmups)):
                return
        growing = True
        while not self.budget_out and self.remaining_s > 0:
            if growing:
                if len(self.sizes()) >= MIN_SIZES and not self.affordable(n):
                    growing = False
                    continue
                yield from self.measure_size(n, self.repeat)
                if self.user_timeout_hit:
                    growing = False
                n = self.next_size(n)
                if not self.measured():
                    if len(self.sizes()) >= MIN_SIZES:
                        return  # every run so far failed: growing further only burns budget
                    continue
            if len(self.sizes()) < MIN_SIZES:
                if not growing:
                    return  # cannot reach enough sizes: the fit will say why
                continue
            confident, decide = self.verdicts_confident(growing)
            if confident and self._enough_repeats():
                return
            if (not growing and decide and decide > max(self.sizes())
                    and not self.user_timeout_hit and self.affordable(n)):
                growing = True
                continue
            if not growing and not (yield from self.refine()):
                return

    def _enough_repeats(self) -> bool:
        counts: dict[int, int] = defaultdict(int)
        for r in self.measured():
            counts[r.size_n] += 1
        return all(c >= self.repeat for c in counts.values())
