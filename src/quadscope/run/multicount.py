"""Counting the work of a sweep over several sizes after its timed plan (`--meter auto`).

Contract: the several-size side of `run.counting`. `open_reason(sweep, runs)`
is why the timed multi verdict (`analyse.multi_sweep.analyse_multi` on wall
time) left the class open: any axis read as a bracket ("" when every axis has
one class, or when nothing could be fitted: counting answers a bracket, not
too few points). `count_points(sweep, runs)` is the timed points to count, in
the order they are counted: first those that span every axis (the corners of
the sizes and each axis's line through the base point: its two ends and the
base), then the rest of the design, smallest first, at most MAX_POINTS in all.
`PointCountPlan` hands them out one job at a time within `counting.budget_s`
(one count per point: an exact count repeats), each priced from the last
counted job's cost scaled by how much longer the plain timed run is at that
point (the first by the exact meter's `Cost` model); a point that would not
fit is skipped for the next cheaper one. Where the executor counts a batch
under one start, every point goes in one batch when the cost model says it
fits, else one point. `counted_points(runs, metric)` is how many points have
a count: the sweep is marked exact (`Counting.mark`) only when at least
`design.MIN_POINTS` were counted, the fewest the multi fit takes. A sweep with
`--vs` counts both commands at the same points (B's job right after A's), and
is exact only when each has `MIN_POINTS` counted, so A and B are compared on
the same metric.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from quadscope.meters.base import Cost
from quadscope.model import Run, Sweep
from quadscope.run.plan import Batch, PlannedRun, Scheduled

MAX_POINTS = 12  # counted points beyond this add cost, not evidence: a count repeats exactly

Key = tuple[int, tuple[tuple[str, int], ...]]  # (size_n, the other axes) as a run stores them


def _measured(runs: Sequence[Run], variant: str = "A") -> list[Run]:
    return [r for r in runs if r.variant == variant and not r.warmup and r.measurement.ok]


def _variants(runs: Sequence[Run]) -> list[str]:
    """The commands swept: A, and B where `--vs` gave one."""
    return sorted({r.variant for r in runs}) or ["A"]


def open_reason(sweep: Sweep, runs: Sequence[Run]) -> str:
    """Why the timed verdict left the class open ("" when every axis has one class); with
    --vs, either command's (B's named as such), so both are counted alike."""
    from quadscope.analyse.multi_sweep import analyse_multi

    for variant in _variants(runs):
        verdict = analyse_multi(sweep, runs, variant=variant).verdict
        open_axes = [a.axis for a in verdict.axes if not a.growth.name] if verdict else []
        if open_axes:
            whose = "" if variant == "A" else f" of {variant}"
            return f"time alone left the class{whose} in {', '.join(open_axes)} open"
    return ""


def _key(names: Sequence[str], point: Sequence[int]) -> Key:
    return point[0], tuple(zip(names[1:], point[1:], strict=True))


def _spanning(sweep: Sweep) -> list[tuple[int, ...]]:
    """The corners of the sizes and each axis's line through the base point (ends and base)."""
    sizes = [s for _, s in sweep.axes]
    base = tuple(s[len(s) // 2] for s in sizes)
    corners = [tuple((s[0], s[-1])[(k >> i) & 1] for i, s in enumerate(sizes))
               for k in range(2 ** len(sizes))]
    ends = [(*base[:i], end, *base[i + 1:]) for i, s in enumerate(sizes) for end in (s[0], s[-1])]
    return [*corners, *ends, base]


def count_points(sweep: Sweep, runs: Sequence[Run]) -> list[Key]:
    """The timed points to count, in order (see the module docstring)."""
    names = sweep.axis_names
    timed = {(r.size_n, r.axes) for v in _variants(runs) for r in _measured(runs, v)}
    order: list[Key] = []
    for point in [*_spanning(sweep), *sorted(sweep.points)]:
        key = _key(names, point)
        if key in timed and key not in order:
            order.append(key)
    return order[:MAX_POINTS]


def counted_points(runs: Sequence[Run], metric: str) -> int:
    """The points counted, for the command with the fewest (A, and B with --vs)."""
    return min(len({(r.size_n, r.axes) for r in _measured(runs, v) if r.value(metric) is not None})
               for v in _variants(runs))


def _plain(history: Sequence[Run], job: PlannedRun) -> float:
    walls = [r.measurement.wall_s for r in _measured(history, job.variant)
             if (r.size_n, r.axes) == (job.size_n, job.axes)]
    return statistics.median(walls) if walls else 0.0


class PointCountPlan:
    """One counted point at a time, within the budget (see the module docstring)."""

    def __init__(self, jobs: Sequence[PlannedRun], *, metric: str, cost: Cost,
                 timeout_s: float | None, reason: str) -> None:
        self.jobs = tuple(jobs)
        self.reason = reason
        self.metric = metric
        self.cost = cost
        self.timeout_s = timeout_s
        self.batched = False  # the executor counts a whole batch under one start
        self._before_s: float | None = None  # the budget left before the last job
        self._last: PlannedRun | None = None
        self._tried: set[PlannedRun] = set()  # handed out or skipped: never asked again

    @property
    def total_runs(self) -> int:
        return len(self.jobs)

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        todo = [j for j in self.jobs if j not in self._tried]
        if not todo:
            return None
        if self.batched:
            price = self.cost.run_s(sum(_plain(history, j) for j in todo))
            if remaining_s is not None and price > remaining_s:
                todo = todo[:1]
            self._tried.update(todo)
            return tuple(Scheduled(j, self.timeout_s) for j in todo)
        for job in todo:  # the first that fits what is left; a dearer one is skipped
            if remaining_s is None or self._price(history, job, remaining_s) <= remaining_s:
                self._tried.add(job)
                self._before_s, self._last = remaining_s, job
                return (Scheduled(job, self.timeout_s),)
            self._tried.add(job)
        return None

    def _price(self, history: Sequence[Run], job: PlannedRun, remaining_s: float) -> float:
        """The last counted job's cost scaled by the plain runs' ratio, or the cost model."""
        plain = _plain(history, job)
        if self._before_s is None or self._last is None:
            return self.cost.run_s(plain)
        spent = max(self._before_s - remaining_s, 0.0)
        last_plain = _plain(history, self._last)
        return spent * max(plain / last_plain if last_plain > 0 else 1.0, 1.0)


def plan(sweep: Sweep, runs: Sequence[Run], *, metric: str, cost: Cost) -> PointCountPlan | None:
    """The counting a timed sweep over several sizes calls for; None when time settled it."""
    reason = open_reason(sweep, runs)
    if not reason:
        return None
    repeat = 1 + max((r.repeat for r in runs), default=0)  # a repeat no timed run has
    measured = {v: {(r.size_n, r.axes) for r in _measured(runs, v)} for v in _variants(runs)}
    jobs = [PlannedRun(v, n, repeat, axes=axes) for n, axes in count_points(sweep, runs)
            for v in measured if (n, axes) in measured[v]]
    return (PointCountPlan(jobs, metric=metric, cost=cost, timeout_s=sweep.timeout_s,
                           reason=reason) if jobs else None)
