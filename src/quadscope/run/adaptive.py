"""Adaptive sweeps: grow n until the verdicts are confident or the budget is spent.

Contract: `run_adaptive` never spends more than `budget_s` of the clock on runs:
every run's timeout is capped by what is left of the budget, and a size is
only started when the runs already measured predict that it fits. It grows n
geometrically from `start_n` (by 4 while start-up cost still dominates, then by
2), measures `repeat` runs of each variant per size, ends growth at a size
whose runs hit the user's `--timeout`, and once four or more sizes are in,
re-fits after every step and stops as soon as every watched metric's verdict
is confident. Where the verdicts are not yet confident it either grows n
towards the fit's `decide_n` (when that is affordable) or adds repeats at the
sizes whose spread is widest (relative median absolute deviation), in a
shuffled order, A and B alternating.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from quadscope.analyse.analysis import fit_runs
from quadscope.classes import REGISTRY
from quadscope.measure.clock import Clock
from quadscope.measure.launcher import Executor
from quadscope.model import METRICS, Run, Sweep
from quadscope.run.plan import PlannedRun
from quadscope.run.runner import Progress, Runner, SweepSpec
from quadscope.store import Store

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


class _Adaptive:
    def __init__(self, sweep: Sweep, spec: SweepSpec, runner: Runner, clock: Clock,
                 history: list[Run], budget_s: float) -> None:
        self.sweep = sweep
        self.spec = spec
        self.runner = runner
        self.clock = clock
        self.history = history
        self.deadline = clock.monotonic() + budget_s
        self.variants = ("A", "B") if sweep.vs_command is not None else ("A",)
        self.rng = random.Random(spec.seed)
        self.user_timeout_hit = False
        self.budget_out = False

    def remaining_s(self) -> float:
        return self.deadline - self.clock.monotonic()

    def _run(self, planned: PlannedRun) -> Run | None:
        left = self.remaining_s()
        if left <= 0:
            self.budget_out = True
            return None
        user = self.sweep.timeout_s
        limit = left if user is None else min(user, left)
        run = self.runner.execute(planned, timeout_s=limit)
        if run.measurement.timed_out:
            if user is not None and limit >= user:
                self.user_timeout_hit = True
            else:
                self.budget_out = True
        if not run.warmup:
            self.history.append(run)
        return run

    def measured(self, variant: str = "A") -> list[Run]:
        return [r for r in self.history if r.variant == variant and r.measurement.ok]

    def sizes(self) -> list[int]:
        return sorted({r.size_n for r in self.history})

    def measure_size(self, n: int, repeats: int) -> None:
        for rep in range(repeats):
            for v in self.variants:
                if self._run(PlannedRun(v, n, rep)) is None:
                    return

    def verdicts_confident(self, growing: bool) -> tuple[bool, int | None]:
        """Whether every watched metric is confident, and the largest decide_n asked for."""
        decide: int | None = None
        sizes = self.sizes()
        span = sizes[-1] / max(sizes[0], 1)
        for v in self.variants:
            fits, _ = fit_runs(self.measured(v), seed=self.spec.seed,
                               metrics=self.spec.until or METRICS)
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

    def refine(self) -> bool:
        """One more run per variant at the widest-spread sizes (up to 3), shuffled.

        False when every size already has the most repeats worth taking.
        """
        counts: dict[int, int] = defaultdict(int)
        for r in self.history:
            if r.variant == "A":
                counts[r.size_n] += 1
        cap = max(MAX_REPEATS, 3 * self.spec.repeat)
        spread = {n: s for n, s in _relative_spread(self.measured()).items() if counts[n] < cap}
        if not spread:
            return False
        widest = sorted(spread, key=lambda n: spread[n], reverse=True)[:3]
        self.rng.shuffle(widest)
        for n in widest:
            for v in self.variants:
                if self._run(PlannedRun(v, n, counts[n])) is None:
                    return True
        return True

    def affordable(self, n: int) -> bool:
        cost = estimate_wall_s(self.measured(), n) * self.spec.repeat * len(self.variants)
        return cost < 0.5 * self.remaining_s()

    def next_size(self, n: int) -> int:
        med = _medians(self.measured())
        first = med[min(med)] if med else 0.0
        last = med[max(med)] if med else 0.0
        factor = FAST_GROWTH if last < 2 * first else SLOW_GROWTH
        return max(n + 1, n * factor)

    def go(self, n: int) -> None:
        if self.spec.warmup and not self.history:
            for _ in range(self.spec.warmup):
                for v in self.variants:
                    if self._run(PlannedRun(v, n, 0, warmup=True)) is None:
                        return
        growing = True
        while not self.budget_out and self.remaining_s() > 0:
            if growing:
                if len(self.sizes()) >= MIN_SIZES and not self.affordable(n):
                    growing = False
                    continue
                self.measure_size(n, self.spec.repeat)
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
            if not growing and not self.refine():
                return

    def _enough_repeats(self) -> bool:
        counts: dict[int, int] = defaultdict(int)
        for r in self.measured():
            counts[r.size_n] += 1
        return all(c >= self.spec.repeat for c in counts.values())


def _finish(store: Store, sweep: Sweep, history: Sequence[Run]) -> Sweep:
    sizes = tuple(sorted({r.size_n for r in history}))
    done = dataclasses.replace(sweep, sizes=sizes, status="complete")
    store.update_sweep(done)
    return done


def run_adaptive(sweep: Sweep, spec: SweepSpec, *, executor: Executor, clock: Clock,
                 store: Store, progress: Progress) -> Sweep:
    progress.started(sweep, None)
    runner = Runner(sweep, executor=executor, clock=clock, store=store, progress=progress)
    state = _Adaptive(sweep, spec, runner, clock, [], spec.budget_s)
    try:
        state.go(max(spec.start_n, 1))
    except BaseException:
        store.update_sweep(dataclasses.replace(
            sweep, sizes=tuple(sorted({r.size_n for r in state.history})), status="interrupted"))
        raise
    return _finish(store, sweep, state.history)


def resume_adaptive(sweep: Sweep, done: Sequence[Run], *, executor: Executor, clock: Clock,
                    store: Store, progress: Progress) -> Sweep:
    """Continue with what is left of the budget, counting the wall time already spent."""
    spent = sum(r.measurement.wall_s for r in done)
    budget = max((sweep.budget_s or 0.0) - spent, 0.0)
    spec = SweepSpec(command=sweep.command, mode="adaptive", repeat=sweep.repeat, warmup=0,
                     timeout_s=sweep.timeout_s, budget_s=budget, seed=sweep.seed)
    progress.started(sweep, None)
    runner = Runner(sweep, executor=executor, clock=clock, store=store, progress=progress,
                    first_seq=store.next_seq(sweep.id), done=len(done))
    history = [r for r in done if not r.warmup]
    state = _Adaptive(sweep, spec, runner, clock, history, budget)
    start = max(state.sizes()) if history else 1
    try:
        state.go(state.next_size(start) if history else start)
    except BaseException:
        store.set_status(sweep.id, "interrupted")
        raise
    return _finish(store, sweep, state.history)
