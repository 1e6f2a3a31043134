"""Adaptive mode over several sizes as a `Plan`: a base design, then a look after each step.

Contract: `MultiAdaptivePlan(names, starts, metric=, repeat=, warmup=,
timeout_s=, seed=)` is a `Plan` (`run/plan.py`): it decides from the runs it
is given and the budget left, nothing else. It measures the base design
(`run.multigrow.base_points`: each start × 1, 2, 4), `repeat` runs a point
after `warmup` warm-ups at the smallest point, then looks: it fits the points'
medians of `metric` (`analyse.multi.analyse_points`, LOOK_BOOT bootstrap
replicates; a look that would stop the sweep is fitted again with the report's
REPORT_BOOT and the sweep's seed, so the sweep stops on the verdict its report
shows) and asks `multigrow.decide` for the next step: the points of an axis's
extension (`repeat` runs each), one more run at the CONFIRM_POINTS points
whose runs spread most (relative median absolute deviation; a point has at
most MAX_REPEATS), or the end. An
axis whose last extension had a failed or cut-off run grows no further: that
size is the program's limit or the budget's. Runs go to the runner one at a
time, each with the user's `--timeout` capped by the budget left, except that
a step's runs go in one batch when a `--timeout` is given and what is left
covers one more run than the step holds at it (the rule of `run/adaptive`).
Given earlier runs (a resumed sweep), it measures what the base design
lacks, then looks. `steps` are the steps taken, with their reasons.
Every run is stored as a sweep over several sizes stores it (the first axis
as size_n, the others in `axes`), and the runner records the sizes and points
measured on the sweep (`shaped`), so every report, gate and renderer reads it
as a fixed sweep's.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence

from quadscope.model import Run, Sweep
from quadscope.run import multigrow
from quadscope.run.design import MIN_POINTS, Point
from quadscope.run.plan import Batch, PlannedRun, Scheduled

LOOK_BOOT = 100
REPORT_BOOT = 400  # analyse.multi_sweep.analyse_multi's default
CONFIRM_POINTS = 4
MAX_REPEATS = 10  # run/adaptive's: a point with this many runs gets no more


def _point(names: Sequence[str], run: Run | PlannedRun) -> Point:
    others = dict(run.axes)
    return (run.size_n, *(others.get(n, -1) for n in names[1:]))


def _key(r: Run | PlannedRun) -> tuple[int, int, bool, tuple[tuple[str, int], ...]]:
    return (r.size_n, r.repeat, r.warmup, r.axes)


def _values(names: Sequence[str], runs: Sequence[Run], metric: str) -> dict[Point, list[float]]:
    by: dict[Point, list[float]] = defaultdict(list)
    for r in runs:
        v = r.value(metric)
        if r.variant == "A" and not r.warmup and r.measurement.ok and v is not None and v > 0:
            by[_point(names, r)].append(v)
    return dict(by)


def shaped(sweep: Sweep, runs: Sequence[Run]) -> Sweep:
    """`sweep` with the sizes and points its runs measured (an adaptive sweep's design)."""
    import dataclasses

    names = sweep.axis_names
    points = sorted({_point(names, r) for r in runs if not r.warmup and r.variant == "A"})
    if not points:
        return sweep
    axes = tuple((n, tuple(sorted({p[i] for p in points}))) for i, n in enumerate(names))
    return dataclasses.replace(sweep, axes=axes, points=tuple(points), sizes=axes[0][1])


class MultiAdaptivePlan:
    """The adaptive policy over several sizes (see the module docstring)."""

    def __init__(self, names: Sequence[str], starts: Sequence[int], *, metric: str,
                 repeat: int, warmup: int, timeout_s: float | None, seed: int) -> None:
        self.names = tuple(names)
        self.metric = metric
        self.repeat = repeat
        self.timeout_s = timeout_s
        self.seed = seed
        axes = multigrow.base_axes(list(zip(self.names, starts, strict=True)))
        base = multigrow.base_points(axes)
        self._pending: list[PlannedRun] = [
            self._planned(base[w % len(base)], w, warm=True) for w in range(warmup)]
        self._pending += [self._planned(p, r) for r in range(repeat) for p in base]
        self._previous: tuple[str, ...] | None = None
        self._spent_s = 0.0
        self._stuck: set[str] = set()  # axes whose top size failed or was cut off
        self._last_extension: tuple[str, tuple[Point, ...]] | None = None
        self.steps: list[multigrow.Step] = []
        self._done = False

    @property
    def total_runs(self) -> None:
        return None

    def _planned(self, p: Point, repeat: int, warm: bool = False) -> PlannedRun:
        return PlannedRun("A", p[0], repeat, warm, tuple(zip(self.names[1:], p[1:], strict=True)))

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        if remaining_s is None:
            raise ValueError("an adaptive plan needs a budget")
        if self._done:
            return None
        self._spent_s = sum(r.measurement.wall_s for r in history)
        done = {_key(r) for r in history if r.variant == "A"}
        todo = [p for p in self._pending if _key(p) not in done]
        if not todo:  # a step's runs already stored (a resumed sweep's) are not run again
            todo = [p for p in self._look(history, remaining_s) if _key(p) not in done]
            if not todo:
                self._done = True
                return None
        timeout = remaining_s if self.timeout_s is None else min(self.timeout_s, remaining_s)
        if self.timeout_s is not None and remaining_s >= (len(todo) + 1) * self.timeout_s:
            return tuple(Scheduled(p, timeout) for p in todo)
        return (Scheduled(todo[0], timeout),)

    def _look(self, history: Sequence[Run], remaining_s: float) -> list[PlannedRun]:
        """The next step's runs after a look at `history` ([] to stop)."""
        values = _values(self.names, history, self.metric)
        self._note_stuck(history)
        if len(values) < MIN_POINTS:
            self.steps.append(multigrow.Step("stop", reason=f"only {len(values)} points measured"))
            return []
        step, fit = self._decide(values, history, remaining_s, LOOK_BOOT, self.seed + 1)
        if step.kind == "stop":  # decided on the report's own fit, as it will read
            step, fit = self._decide(values, history, remaining_s, REPORT_BOOT, self.seed)
        self._previous = fit
        self.steps.append(step)
        if step.kind == "extend":
            i = self.names.index(step.axis)
            points = multigrow.extension(sorted(values), i)
            self._last_extension = (step.axis, points)
            self._pending = [self._planned(p, r) for r in range(self.repeat) for p in points]
        elif step.kind == "confirm":
            self._pending = [self._planned(p, 1 + self._top_repeat(history, p))
                             for p in self._noisiest(values)]
        else:
            self._pending = []
        return list(self._pending)

    def _decide(self, values: dict[Point, list[float]], history: Sequence[Run],
                remaining_s: float, n_boot: int, seed: int,
                ) -> tuple[multigrow.Step, tuple[str, ...]]:
        from quadscope.analyse.multi import analyse_points
        from quadscope.analyse.multifit import GridPoint
        from quadscope.classes import REGISTRY

        points = [GridPoint(p, tuple(v)) for p, v in sorted(values.items())]
        verdict = analyse_points(self.names, points, metric=self.metric, seed=seed, n_boot=n_boot)
        budget_s = self._spent_s + remaining_s
        states = [multigrow.AxisState(
            a.axis, a.sizes, a.interval,
            a.growth.name or f"{a.growth.at_least}…{a.growth.at_most}",
            a.growth.settled and not (a.growth.name == "1" and multigrow.flat_open(
                a.sizes, spent_s=self._spent_s, budget_s=budget_s)),
            a.axis not in self._stuck,
            REGISTRY.index(a.growth.at_most) - REGISTRY.index(a.growth.at_least) == 1)
            for a in verdict.axes]
        walls = self._walls(history)
        model = verdict.models.product
        prices = {}
        for i, name in enumerate(self.names):
            added = multigrow.extension(sorted(values), i)
            prices[name] = (self.repeat * sum(multigrow.price_s(p, walls, model.exponents,
                                                                model.coef) for p in added)
                            if added and walls else math.inf)
        noisiest = self._noisiest(values)
        confirm_s = sum(walls.get(p, math.inf) for p in noisiest) if noisiest else math.inf
        step = multigrow.decide(states, previous=self._previous, prices_s=prices,
                                confirm_s=confirm_s, remaining_s=remaining_s,
                                spent_s=self._spent_s)
        return step, tuple(s.verdict for s in states)

    def _walls(self, history: Sequence[Run]) -> dict[Point, float]:
        """Each measured point's median wall time (what a run there costs)."""
        return {p: statistics.median(v) for p, v in _values(self.names, history, "wall_s").items()}

    def _noisiest(self, values: dict[Point, list[float]]) -> list[Point]:
        def spread(v: list[float]) -> float:
            med = statistics.median(v)
            return statistics.median(abs(x - med) for x in v) / med if len(v) > 1 else math.inf
        open_points = [p for p in values if len(values[p]) < MAX_REPEATS]
        return sorted(open_points, key=lambda p: (-spread(values[p]), p))[:CONFIRM_POINTS]

    def _top_repeat(self, history: Sequence[Run], p: Point) -> int:
        return max((r.repeat for r in history if not r.warmup and _point(self.names, r) == p),
                   default=-1)

    def _note_stuck(self, history: Sequence[Run]) -> None:
        """An axis whose last extension had a run fail or time out grows no further."""
        if self._last_extension is None:
            return
        axis, points = self._last_extension
        if any(not r.measurement.ok for r in history
               if not r.warmup and _point(self.names, r) in points):
            self._stuck.add(axis)
