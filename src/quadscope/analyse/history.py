"""A sweep's history across commits: each commit's class, exponent and cost at a reference n.

Contract: pure functions of stored sweeps and their fits, never running
anything. `reference_n(size_sets)` is the largest size every sweep measured
(the smallest of their largest sizes when they share none, so no sweep is
extrapolated beyond its data). `order_sweeps(sweeps, commits)` puts sweeps in
git's order of their commits (oldest first; several sweeps of one commit by
time), then any sweep whose commit git does not list, by time; without
`commits` (no repository) everything goes by time. `history_metric(leads)` is
the metric a history follows by default: the one `run` led with (the work,
where every sweep's meter counted it exactly, `Analysis.work_metric`; else the
time `headline.time_fit` led with in most sweeps). `build_history(entries,
name=, metric=, ref_n=, order=)` takes (sweep, fit) pairs in that order
(`order`: "git" or "time", as they were ordered), each fit made with
`predict_n = ref_n`, and returns a `History` that marks where the growth
changed and where the cost stepped; `change_sentences(history)` says each
change in one sentence ("the work grew 3,500× at abc1234567: n log n → n²").
`with_subjects(history, subjects)` fills each point's commit `subject` (by
full hash; git's text, not yet made safe to show).

A change is judged from each sweep's own intervals, never from how far the
sweeps lie apart from each other (a spread of successive differences is
carried by the very steps it should find: five sweeps stepping 6 ms → 22 s →
8.8 ms once read as noise and marked nothing):

- The growth changed where a sweep's settled class differs from the last
  settled one, or, where either is not settled, where the 95% intervals of
  their exponents k lie more than `compare.EXPONENT_GAP` apart (the rule
  `compare` uses for A against B).
- The cost is judged on each sweep's own measurement at ref_n (`own_cost`: the
  median of its runs there and that median's standard error from its own runs,
  the `measured=` of `build_history`); a sweep without runs there is judged on
  its fit's 95% bootstrap interval of the cost, s = (ln hi − ln lo) / (2·1.96).
  The fit's interval alone is too narrow to judge by (a bootstrap of three runs
  a size): on flat simulated series it marked a false step in 17 of 30.
- Steps are the boundaries of a changepoint segmentation of y = ln(cost): the
  segmentation minimising Σ_segments Σ_i (y_i − ȳ_seg)² / s_i² + β·(segments − 1)
  is found exactly by optimal partitioning (Jackson et al. 2005, "An algorithm
  for optimal partitioning of data on an interval"; PELT, Killick, Fearnhead &
  Eckley 2012, JASA 107:1590, is the same search with pruning, needless at a few
  hundred commits), ȳ_seg the inverse-variance weighted mean, β = 3·ln N (the
  MBIC penalty, Zhang & Siegmund 2007, Biometrics 63:22; R changepoint's "MBIC").
  A boundary is kept only where it is sure: neighbouring segments must differ by
  more than z standard errors of their difference, z Bonferroni's for ALPHA
  shared among the N − 1 places a step could be, and by at least the smallest
  change worth reporting; the least sure boundary is merged first. That change is
  `compare.MIN_EFFECT` for a time (5%: below it a "significant" change is
  usually drift between two sessions, which one sweep's runs cannot see), and
  `EXACT_MIN_STEP` for the work counted exactly (every sweep's meter counts the
  metric, `meters.exact_metric`): held-still counts repeat to the instruction,
  so an exact 2× step is a change of the program, found whatever else changed.
  Measured (BENCHMARKS.md §12, `bench/history_steps.py`), on simulated series of
  ten sweeps: a false mark in 0 of 30 flat series at 5% noise, 1 of 30 at 10%,
  5 of 30 with a 3% drift between sessions (the fit's interval alone: 17, 9
  and 23); a 20% step found in 29 of 30, a 10% one in 25.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from quadscope.analyse.change import class_label
from quadscope.analyse.compare import EXPONENT_GAP, MIN_EFFECT
from quadscope.analyse.headline import metric_words, time_fit
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.meters import exact_metric
from quadscope.model import Fit, Sweep

Z95 = 1.959963984540054
EXACT_MIN_STEP = 0.01  # 1% of an exact count: far above a held-still count's jitter
MIN_SE = 1e-6  # an exact count's interval has no width: its log weight stays finite
PENALTY_PER_LOG_N = 3.0  # the changepoint penalty β = 3·ln N: MBIC's (Zhang & Siegmund 2007)
ALPHA = 0.05  # a flat history shows a false step in at most about 5% of cases
SE_QUANTILE = 0.995  # where a sweep's estimated error is widened to Student's t
TIME_ORDER = ("wall_s", "cpu_s", "user_s")  # a tie between leads goes to the first


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
    class_changed: str = ""  # "n → n²" (labels) where the growth changed, else ""
    step: float | None = None  # the ratio of the new segment's cost to the previous one's
    subject: str = ""  # the commit's subject line, read from git when shown ("" unknown)
    at_least: str = ""  # the fit's bracket (the class itself when settled; "" none)
    at_most: str = ""


@dataclass(frozen=True, slots=True)
class History:
    name: str
    metric: str
    ref_n: int
    order: str  # "git" or "time": how the points are ordered
    min_step: float  # the smallest relative change of the cost marked as a step
    points: tuple[HistoryPoint, ...]
    exact: bool = False  # every sweep counted `metric` exactly (the work)

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


def history_metric(leads: Sequence[tuple[Mapping[str, Fit], str | None]]) -> str:
    """The metric `run` led with, from each sweep's (fits, exactly counted metric or None):
    the work when every sweep counted the same one and fitted it, else the time metric
    `headline.time_fit` chose in most sweeps (wall_s first on a tie)."""
    works = {work for _, work in leads}
    if len(works) == 1 and (work := next(iter(works))) and all(work in f for f, _ in leads):
        return work
    chosen = Counter(t.metric for f, _ in leads if (t := time_fit(f)) is not None)
    if not chosen:
        return "wall_s"
    most = max(chosen.values())
    ties = [m for m in chosen if chosen[m] == most]
    return min(ties, key=lambda m: (TIME_ORDER.index(m) if m in TIME_ORDER else len(TIME_ORDER), m))


def _weighted_mean(y: Sequence[float], w: Sequence[float], i: int, j: int) -> float:
    return sum(wk * yk for wk, yk in zip(w[i:j], y[i:j], strict=True)) / sum(w[i:j])


def _segment_cost(y: Sequence[float], w: Sequence[float], i: int, j: int) -> float:
    """Weighted squared deviation of y[i:j] about its weighted mean."""
    mean = _weighted_mean(y, w, i, j)
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


def merge_unsure(y: Sequence[float], var: Sequence[float], starts: Sequence[int],
                 min_log: float, z: float) -> list[int]:
    """`starts` without the boundaries a step is not sure at: neighbouring segments whose
    weighted means differ by less than `min_log`, or by less than `z` standard errors of
    the difference, are merged, the least sure first."""
    w = [1.0 / v for v in var]
    bounds = [0, *starts, len(y)]
    while len(bounds) > 2:
        segs = list(pairwise(bounds))
        means = [_weighted_mean(y, w, a, b) for a, b in segs]
        errs = [1.0 / sum(w[a:b]) for a, b in segs]
        gaps = [abs(m2 - m1) for m1, m2 in pairwise(means)]
        score = [g / math.sqrt(e1 + e2)
                 for g, (e1, e2) in zip(gaps, pairwise(errs), strict=True)]
        unsure = [k for k in range(len(gaps)) if gaps[k] < min_log or score[k] < z]
        if not unsure:
            break
        del bounds[min(unsure, key=score.__getitem__) + 1]
    return bounds[1:-1]


def sure_z(points: int, alpha: float = ALPHA) -> float:
    """The two-sided normal quantile for `alpha` shared among the points − 1 places a step
    could be (Bonferroni)."""
    return statistics.NormalDist().inv_cdf(1.0 - alpha / (2.0 * max(points - 1, 1)))


def steps(y: Sequence[float], se: Sequence[float], min_step: float) -> dict[int, float]:
    """{index of the first sweep of a new segment: new cost / previous cost}, from each
    sweep's ln(cost) at ref_n and its standard error (see the module docstring)."""
    var = [max(s, MIN_SE) ** 2 for s in se]
    starts = changepoints(y, var, PENALTY_PER_LOG_N * math.log(max(len(y), 2)))
    starts = merge_unsure(y, var, starts, math.log1p(min_step), sure_z(len(y)))
    w = [1.0 / v for v in var]
    bounds = [0, *starts, len(y)]
    return {start: math.exp(_weighted_mean(y, w, start, bounds[k + 2])
                            - _weighted_mean(y, w, bounds[k], start))
            for k, start in enumerate(starts)}


def own_cost(sizes: Sequence[float], values: Sequence[float],
             ref_n: int) -> tuple[float, float] | None:
    """The sweep's own measurement at ref_n: (median of its runs there, standard error of
    ln(that median)). The error is the pooled within-size standard deviation of ln(value)
    over every size times √(π/2) / √m for the median of the m runs at ref_n (the median's
    asymptotic efficiency against the mean, e.g. Kendall & Stuart, The Advanced Theory of
    Statistics, vol. 1, §10.10), widened by t_df / z at 99.5% for a deviation estimated
    from df degrees of freedom (Student 1908): without it, a sweep whose few runs happened
    to agree outweighs its neighbours (false steps on flat series 9–16%, not ≤ 5%). None
    with no run at ref_n or under two degrees of freedom."""
    by_size: dict[float, list[float]] = {}
    for n, v in zip(sizes, values, strict=True):
        if v > 0 and math.isfinite(v):
            by_size.setdefault(float(n), []).append(math.log(v))
    df = sum(len(x) - 1 for x in by_size.values())
    at = by_size.get(float(ref_n), [])
    if df < 2 or not at:
        return None
    ss = sum(sum((xi - sum(x) / len(x)) ** 2 for xi in x) for x in by_size.values())
    from scipy.stats import t  # here: the history page imports this module for its records

    widen = float(t.ppf(SE_QUANTILE, df)) / statistics.NormalDist().inv_cdf(SE_QUANTILE)
    se = math.sqrt(ss / df) * math.sqrt(math.pi / 2) / math.sqrt(len(at)) * widen
    return math.exp(statistics.median(at)), se


def _cost(fit: Fit | None) -> tuple[float, float, float] | None:
    p = fit.prediction if fit is not None else None
    if p is None or not (p.value > 0 and p.lo > 0 and p.hi > 0):
        return None  # a log constant needs a positive cost
    return p.value, min(p.lo, p.value), max(p.hi, p.value)


def growth_label(p: HistoryPoint) -> str:
    """The class in type ("n²"), the bracket ("n … n log n") or k ("k ≈ 1.40") of a point:
    its class cell in the table and the page."""
    if p.cls != INCONCLUSIVE:
        return class_label(p.cls)
    if p.at_least in REGISTRY and p.at_most in REGISTRY:
        if p.at_least == p.at_most:
            return class_label(p.at_least)
        return f"{class_label(p.at_least)} … {class_label(p.at_most)}"
    return f"k ≈ {p.exponent:.2f}" if p.exponent is not None else "?"


def _apart(a: HistoryPoint, b: HistoryPoint) -> bool:
    """The exponents' 95% intervals lie more than EXPONENT_GAP apart (neither class "1")."""
    ca, cb = a.exponent_ci, b.exponent_ci
    return (ca is not None and cb is not None and "1" not in (a.cls, b.cls)
            and (ca[1] + EXPONENT_GAP < cb[0] or cb[1] + EXPONENT_GAP < ca[0]))


def class_changes(points: Sequence[HistoryPoint]) -> dict[int, str]:
    """{index: "n → n²"} where the growth changed (see the module docstring). Each point is
    judged against the last settled or changed one, so one change is marked once."""
    out: dict[int, str] = {}
    ref: HistoryPoint | None = None
    for i, p in enumerate(points):
        settled = p.cls != INCONCLUSIVE
        if ref is not None:
            both = settled and ref.cls != INCONCLUSIVE
            if (p.cls != ref.cls) if both else _apart(ref, p):
                out[i] = f"{growth_label(ref)} → {growth_label(p)}"
        if settled or i in out or (ref is None and p.exponent_ci is not None):
            ref = p
    return out


def _point(sweep: Sweep, fit: Fit | None,
           cost: tuple[float, float, float] | None) -> HistoryPoint:
    return HistoryPoint(
        sweep_id=sweep.id, commit=sweep.git_commit, branch=sweep.git_branch,
        dirty=sweep.git_dirty, created_at=sweep.created_at, machine=sweep.machine,
        meter=sweep.meter, cls=fit.cls if fit is not None else INCONCLUSIVE,
        exponent=fit.exponent if fit is not None else None,
        exponent_ci=fit.exponent_ci if fit is not None else None,
        cost=cost[0] if cost else None, cost_lo=cost[1] if cost else None,
        cost_hi=cost[2] if cost else None,
        at_least=fit.at_least if fit is not None else "",
        at_most=fit.at_most if fit is not None else "")


def _judged(cost: tuple[float, float, float] | None,
            own: tuple[float, float] | None) -> tuple[float, float] | None:
    """(ln cost, its standard error) a step is judged on: the sweep's own median at ref_n
    where it measured there, else its fitted cost and the fit's bootstrap interval."""
    if own is not None and own[0] > 0:
        return math.log(own[0]), own[1]
    if cost is None:
        return None
    value, lo, hi = cost
    return math.log(value), (math.log(hi) - math.log(lo)) / (2 * Z95)


def build_history(entries: Sequence[tuple[Sweep, Fit | None]], *, name: str, metric: str,
                  ref_n: int, order: str,
                  measured: Sequence[tuple[float, float] | None] | None = None) -> History:
    """The history of (sweep, fit at ref_n) pairs already in commit order, changes marked;
    `measured`: each sweep's `own_cost` at ref_n (None, or left out: its fit's)."""
    exact = bool(entries) and all(exact_metric(s.meter) == metric for s, _ in entries)
    min_step = EXACT_MIN_STEP if exact else MIN_EFFECT
    costs = [_cost(fit) for _, fit in entries]
    own = list(measured) if measured is not None else [None] * len(entries)
    judged = [_judged(c, o) for c, o in zip(costs, own, strict=True)]
    have = [i for i, j in enumerate(judged) if j is not None]
    kept = [j for j in judged if j is not None]
    stepped = {have[k]: r for k, r in steps([y for y, _ in kept], [e for _, e in kept],
                                            min_step).items()}
    points = [_point(sweep, fit, costs[i]) for i, (sweep, fit) in enumerate(entries)]
    changed = class_changes(points)
    points = [replace(p, class_changed=changed.get(i, ""), step=stepped.get(i))
              for i, p in enumerate(points)]
    return History(name=name, metric=metric, ref_n=ref_n, order=order, min_step=min_step,
                   points=tuple(points), exact=exact)


def _times(x: float) -> str:
    return f"{x:,.0f}×" if x >= 100 else f"{x:.3g}×"


def change_sentences(history: History) -> tuple[str, ...]:
    """Each change in one sentence: "the work grew 3,500× at abc1234567: n log n → n²"."""
    who = "the work" if history.exact else metric_words(history.metric)
    out = []
    for p in history.changes:
        where = p.commit[:10] or f"sweep {p.sweep_id}"
        if p.step is not None:
            moved = f"grew {_times(p.step)}" if p.step > 1 else f"fell {_times(1 / p.step)}"
        else:
            moved = "changed its growth"
        what = f": {p.class_changed}" if p.class_changed else f" ({growth_label(p)})"
        out.append(f"{who} {moved} at {where}{what}")
    return tuple(out)


def with_subjects(history: History, subjects: Mapping[str, str]) -> History:
    """`history` with each point's commit subject from `subjects` (full hash → subject line)."""
    points = tuple(replace(p, subject=subjects.get(p.commit, p.subject)) for p in history.points)
    return replace(history, points=points)
