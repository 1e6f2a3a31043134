"""A sweep's history across commits: each commit's class, exponent and cost at a reference n.

Contract: pure functions of stored sweeps and their fits, never running
anything. `reference_n(size_sets)` is the largest size every sweep measured
(the smallest of their largest sizes when they share none, so no sweep is
extrapolated beyond its data). `order_sweeps(sweeps, commits)` puts sweeps in
git's order of their commits (oldest first; several sweeps of one commit by
time), then any sweep whose commit git does not list, by time; without
`commits` (no repository) everything goes by time. `build_history(entries,
name=, metric=, ref_n=, order=)` takes (sweep, fit) pairs in that order
(`order`: "git" or "time", as they were ordered), each fit made with
`predict_n = ref_n`, and returns a `History` that marks where the class
changed (between the last confident class and this confident one) and where
the constant stepped. `with_subjects(history, subjects)` fills each point's
commit `subject` (by full hash; git's text, not yet made safe to show).

The step test is a changepoint segmentation of y = log(cost at ref_n): the
segmentation minimising Σ_segments Σ_i (y_i − ȳ_seg)² / v_i + β·(segments − 1)
is found exactly by optimal partitioning (Jackson et al. 2005, "An algorithm
for optimal partitioning of data on an interval"; PELT, Killick, Fearnhead &
Eckley 2012, JASA 107:1590, is the same search with pruning, needless at a
few hundred commits). ȳ_seg is the inverse-variance weighted mean; v_i =
s_i² + τ², with s_i the standard error read from the fit's 95% bootstrap
interval of the cost ((ln hi − ln lo) / (2·1.96)) and τ the scatter between
sweeps that one sweep's bootstrap cannot see (load, frequency, layout),
estimated robustly from successive differences, σ = MAD(Δy) / (0.6745·√2)
(the usual noise estimate of changepoint work, e.g. Fryzlewicz 2014, "Wild
binary segmentation", §3) once there are at least MIN_POINTS_FOR_SCATTER
points; with fewer, τ = 0 and the bootstrap intervals alone decide. β is the
Schwarz (BIC) penalty for a change in mean with known variance, 2·ln N per
changepoint (Schwarz 1978; the "SIC"/"BIC" penalty of R's changepoint
package, Killick & Eckley 2014).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from quadscope.analyse.change import class_label
from quadscope.classes import INCONCLUSIVE
from quadscope.model import Fit, Sweep

Z95 = 1.959963984540054
MIN_POINTS_FOR_SCATTER = 5  # a median of ≥ 4 differences is not carried by one or two steps


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """One sweep in the history: where it ran and how its metric grew."""

    sweep_id: int
    commit: str  # full hash, "" when the sweep was not run inside a repository
    branch: str
    dirty: bool
    created_at: float
    machine: str
    meter: str
    cls: str
    exponent: float | None
    exponent_ci: tuple[float, float] | None
    cost: float | None  # the fitted cost at the reference n
    cost_lo: float | None
    cost_hi: float | None
    class_changed: str = ""  # "n → n²" (labels) where the class changed, else ""
    step: float | None = None  # the ratio of the new segment's cost to the previous one's
    subject: str = ""  # the commit's subject line, read from git when shown ("" unknown)


@dataclass(frozen=True, slots=True)
class History:
    name: str
    metric: str
    ref_n: int
    order: str  # "git" or "time": how the points are ordered
    scatter: float  # τ, the between-sweep scatter of ln(cost) used by the step test
    points: tuple[HistoryPoint, ...]

    @property
    def changes(self) -> tuple[HistoryPoint, ...]:
        return tuple(p for p in self.points if p.class_changed or p.step is not None)


def reference_n(size_sets: Sequence[Sequence[int]]) -> int:
    """The largest size common to every sweep, else the smallest of their largest sizes."""
    sets = [set(s) for s in size_sets if s]
    if not sets:
        return 0
    common = set.intersection(*sets)
    return max(common) if common else min(max(s) for s in sets)


def order_sweeps(sweeps: Sequence[Sweep], commits: Sequence[str] | None) -> list[Sweep]:
    """Sweeps in git's commit order (oldest first), unlisted commits after, each by time."""
    if commits is None:
        return sorted(sweeps, key=lambda s: (s.created_at, s.id))
    place = {c: i for i, c in enumerate(commits)}

    def key(s: Sweep) -> tuple[int, int, float, int]:
        i = place.get(s.git_commit)
        return (0, i, s.created_at, s.id) if i is not None else (1, 0, s.created_at, s.id)

    return sorted(sweeps, key=key)


def _segment_cost(y: Sequence[float], w: Sequence[float], i: int, j: int) -> float:
    """Weighted squared deviation of y[i:j] about its weighted mean."""
    sw = sum(w[i:j])
    mean = sum(wk * yk for wk, yk in zip(w[i:j], y[i:j], strict=True)) / sw
    return sum(wk * (yk - mean) ** 2 for wk, yk in zip(w[i:j], y[i:j], strict=True))


def changepoints(y: Sequence[float], var: Sequence[float], penalty: float) -> list[int]:
    """Indices where a new segment starts in the optimal partition (Jackson et al. 2005)."""
    n = len(y)
    if n < 2:
        return []
    w = [1.0 / v for v in var]
    best = [0.0] + [math.inf] * n  # best[j]: cost of y[:j] plus β per segment
    last = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            c = best[i] + _segment_cost(y, w, i, j) + penalty
            if c < best[j]:
                best[j], last[j] = c, i
    starts, j = [], n
    while j > 0:
        starts.append(last[j])
        j = last[j]
    return sorted(s for s in starts if s > 0)


def between_sweep_scatter(y: Sequence[float]) -> float:
    """σ of ln(cost) from successive differences, MAD-based (0 below MIN_POINTS_FOR_SCATTER)."""
    if len(y) < MIN_POINTS_FOR_SCATTER:
        return 0.0
    diffs = [abs(b - a) for a, b in pairwise(y)]
    return statistics.median(diffs) / (0.6744897501960817 * math.sqrt(2.0))


def _cost(fit: Fit | None) -> tuple[float, float, float] | None:
    p = fit.prediction if fit is not None else None
    if p is None or not (p.value > 0 and p.lo > 0 and p.hi > 0):
        return None  # a log constant needs a positive cost
    return p.value, p.lo, p.hi


def build_history(entries: Sequence[tuple[Sweep, Fit | None]], *, name: str, metric: str,
                  ref_n: int, order: str) -> History:
    """The history of (sweep, fit at ref_n) pairs already in commit order, changes marked."""
    costs = [_cost(fit) for _, fit in entries]
    kept = [(i, c) for i, c in enumerate(costs) if c is not None]
    have = [i for i, _ in kept]
    y = [math.log(value) for _, (value, _, _) in kept]
    s = [max(math.log(hi) - math.log(lo), 1e-12) / (2 * Z95) for _, (_, lo, hi) in kept]
    tau = between_sweep_scatter(y)
    starts = changepoints(y, [si * si + tau * tau for si in s], 2.0 * math.log(max(len(y), 2)))
    bounds = [0, *starts, len(y)]
    steps: dict[int, float] = {}
    for k, start in enumerate(starts):
        before = y[bounds[k]:start]
        after = y[start:bounds[k + 2]]
        steps[have[start]] = math.exp(sum(after) / len(after) - sum(before) / len(before))

    points: list[HistoryPoint] = []
    last_cls = ""
    for i, (sweep, fit) in enumerate(entries):
        cls = fit.cls if fit is not None else INCONCLUSIVE
        changed = ""
        if cls != INCONCLUSIVE:
            if last_cls and cls != last_cls:
                changed = f"{class_label(last_cls)} → {class_label(cls)}"
            last_cls = cls
        c = costs[i]
        points.append(HistoryPoint(
            sweep_id=sweep.id, commit=sweep.git_commit, branch=sweep.git_branch,
            dirty=sweep.git_dirty, created_at=sweep.created_at, machine=sweep.machine,
            meter=sweep.meter, cls=cls,
            exponent=fit.exponent if fit is not None else None,
            exponent_ci=fit.exponent_ci if fit is not None else None,
            cost=c[0] if c else None, cost_lo=c[1] if c else None, cost_hi=c[2] if c else None,
            class_changed=changed, step=steps.get(i),
        ))
    return History(name=name, metric=metric, ref_n=ref_n, order=order, scatter=tau,
                   points=tuple(points))


def with_subjects(history: History, subjects: Mapping[str, str]) -> History:
    """`history` with each point's commit subject from `subjects` (full hash → subject line)."""
    points = tuple(replace(p, subject=subjects.get(p.commit, p.subject)) for p in history.points)
    return replace(history, points=points)
