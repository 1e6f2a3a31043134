"""A against B for sweeps over several sizes: each size's growth, and the cost at shared points.

Contract: pure functions of two `MultiReport`s (`analyse/multi_sweep`) over the
same axes. `check_axes(names_a, names_b)` is None when both sweeps name the
same sizes (in any order), else the one sentence refusing them.
`compare_multi(a, b, seed=)` returns a `MultiComparison`: per axis an
`AxisChange` (A's and B's exponent, interval and class or bracket, and
whether B's growth in that size is worse, better, the same or not decided),
the B/A ratio of medians at every point both measured (95% percentile
bootstrap of the runs within each point, as `analyse.compare` per size, Efron
& Tibshirani 1993, §8 and §13), and the headline: "B changed the growth:
rows: rows → rows² (k 1.00 → 2.00), cols unchanged; B/A 1.2× to 8.0× at 16
shared points". `decide(comparison, rules)` judges `--fail-on` per axis, the
rule of `analyse.ab_gate` (one-sided): `class` fails when, in some size, B's
growth surely exceeds A's upper end (B's slowest supported class faster than
A's fastest, or B's exponent interval more than `compare.EXPONENT_GAP` above
A's, neither class being "1"), passes when in every size it surely does not
(B's fastest class no faster than A's slowest, or its interval that far
below), and is undecided otherwise; `slower=RATIO` judges B/A's interval at
the largest shared point (every size at its largest both measured).

A size changed class when the two exponent intervals lie more than
EXPONENT_GAP apart (neither class "1"), or when the brackets (a settled class
is its own) do not overlap; it is unchanged when both settle the same class,
and not decided otherwise. Which metric: both reports' own (the caller picks
one both sides measured: `shared_metric`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from quadscope.analyse.ab_gate import FAIL, PASS, UNDECIDED, AbOutcome, AbRule, ratio_outcome
from quadscope.analyse.multi import AxisVerdict
from quadscope.analyse.multi_sweep import MultiReport, points_of
from quadscope.analyse.multiclass import class_label
from quadscope.classes import REGISTRY
from quadscope.model import Run, Sweep
from quadscope.run.design import MIN_POINTS

WORSE, BETTER, SAME, UNCLEAR = "worse", "better", "same", "undecided"


@dataclass(frozen=True, slots=True)
class AxisChange:
    """One size's growth in A and in B, and what changed (`direction`)."""

    axis: str
    a: AxisVerdict
    b: AxisVerdict
    direction: str  # WORSE | BETTER | SAME | UNCLEAR

    def to_dict(self) -> dict[str, Any]:
        return {"axis": self.axis, "a": self.a.to_dict(), "b": self.b.to_dict(),
                "change": self.direction}


@dataclass(frozen=True, slots=True)
class PointRatio:
    """B/A of the metric's medians at one point both measured (sizes in A's axis order)."""

    sizes: tuple[int, ...]
    ratio: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, Any]:
        return {"sizes": list(self.sizes), "ratio": self.ratio, "lo": self.lo, "hi": self.hi}


@dataclass(frozen=True, slots=True)
class MultiComparison:
    a: MultiReport
    b: MultiReport
    metric: str
    axes: tuple[AxisChange, ...]  # empty when a side has no fit
    ratios: tuple[PointRatio, ...]
    summary: str

    @property
    def direction(self) -> str:
        """The change as a whole: worse if any size grows faster in B, better if one grows
        slower and none faster, the same when every size settled alike, else undecided."""
        ds = {c.direction for c in self.axes}
        if WORSE in ds:
            return WORSE
        if BETTER in ds:
            return BETTER
        return SAME if ds == {SAME} else UNCLEAR

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "summary": self.summary, "change": self.direction,
                "axes": [c.to_dict() for c in self.axes],
                "ratios": [r.to_dict() for r in self.ratios]}


def check_axes(names_a: Sequence[str], names_b: Sequence[str]) -> str | None:
    """None when both sweeps are over the same sizes, else the sentence saying they are not."""
    if sorted(names_a) == sorted(names_b):
        return None
    return (f"A is a sweep over {', '.join(names_a) or 'one size'} and B over "
            f"{', '.join(names_b) or 'one size'}: compare sweeps over the same sizes")


def shared_metric(sweep_a: Sweep, runs_a: Sequence[Run], variant_a: str,
                  sweep_b: Sweep, runs_b: Sequence[Run], variant_b: str) -> str:
    """The metric both sides are fitted on: the exact count where each side counted it at
    enough points (`design.MIN_POINTS`), else wall time for both."""
    from quadscope.analyse.multi_sweep import metric_of

    metric = metric_of(sweep_a)
    if metric == metric_of(sweep_b) and all(
            len(points_of(s, r, metric, v)) >= MIN_POINTS
            for s, r, v in ((sweep_a, runs_a, variant_a), (sweep_b, runs_b, variant_b))):
        return metric
    return "wall_s"


def _bracket(a: AxisVerdict) -> tuple[int, int]:
    g = a.growth
    return REGISTRY.index(g.at_least), REGISTRY.index(g.at_most)


def _apart(low: tuple[float, float], high: tuple[float, float]) -> bool:
    from quadscope.analyse.compare import EXPONENT_GAP

    return high[0] > low[1] + EXPONENT_GAP


def _powers(a: AxisVerdict, b: AxisVerdict) -> bool:
    return "1" not in (a.growth.name, b.growth.name)


def _direction(a: AxisVerdict, b: AxisVerdict) -> str:
    (a_lo, a_hi), (b_lo, b_hi) = _bracket(a), _bracket(b)
    if b_lo > a_hi or (_powers(a, b) and _apart(a.interval, b.interval)):
        return WORSE
    if b_hi < a_lo or (_powers(a, b) and _apart(b.interval, a.interval)):
        return BETTER
    if a.growth.settled and b.growth.settled and a.growth.name == b.growth.name:
        return SAME
    return UNCLEAR


def class_text(a: AxisVerdict) -> str:
    g = a.growth
    if g.name is not None:
        return class_label(g.name, a.axis)
    return f"{class_label(g.at_least, a.axis)} … {class_label(g.at_most, a.axis)}"


def _axis_text(c: AxisChange) -> str:
    k = f"k {c.a.exponent:.2f} → {c.b.exponent:.2f}"
    if c.direction == SAME:
        return f"{c.axis} unchanged ({class_text(c.a)}, {k})"
    if c.direction == UNCLEAR:
        return f"{c.axis} not decided ({class_text(c.a)} → {class_text(c.b)}, {k})"
    return f"{c.axis}: {class_text(c.a)} → {class_text(c.b)} ({k})"


def fmt_ratio(r: float) -> str:
    return f"{r:.3g}×"


def _ratio_text(ratios: Sequence[PointRatio]) -> str:
    if not ratios:
        return "no point was measured on both sides"
    lo, hi = min(r.ratio for r in ratios), max(r.ratio for r in ratios)
    span = fmt_ratio(lo) if fmt_ratio(lo) == fmt_ratio(hi) else f"{fmt_ratio(lo)} to {fmt_ratio(hi)}"
    return f"B/A {span} at {len(ratios)} shared points"


def _summary(axes: Sequence[AxisChange], ratios: Sequence[PointRatio]) -> str:
    ds = {c.direction for c in axes}
    lead = ("B changed the growth" if ds & {WORSE, BETTER} else
            "B grows as A" if ds == {SAME} else "whether B grows as A is not decided")
    return f"{lead}: {', '.join(_axis_text(c) for c in axes)}; {_ratio_text(ratios)}"


def _ratios(a: MultiReport, b: MultiReport, order: Sequence[int],
            seed: int) -> tuple[PointRatio, ...]:
    """B/A at each point both measured; `order[i]` is A's axis i's place in B's sizes."""
    from quadscope.analyse.compare import size_ratios

    pa = points_of(a.sweep, a.runs, a.metric, a.variant)
    pb = {tuple(p.sizes[j] for j in order): p
          for p in points_of(b.sweep, b.runs, b.metric, b.variant)}
    shared = [p for p in pa if p.sizes in pb]
    xa, ya, xb, yb = [], [], [], []
    for i, p in enumerate(shared):
        xa += [i] * len(p.values)
        ya += list(p.values)
        q = pb[p.sizes]
        xb += [i] * len(q.values)
        yb += list(q.values)
    got = size_ratios(xa, ya, xb, yb, seed=seed)
    return tuple(PointRatio(shared[r.size_n].sizes, r.ratio, r.lo, r.hi) for r in got)


def compare_multi(a: MultiReport, b: MultiReport, *, seed: int = 0) -> MultiComparison:
    """A against B, both over the same sizes (`check_axes`): see the module docstring."""
    names_a, names_b = a.sweep.axis_names, b.sweep.axis_names
    order = [names_b.index(n) for n in names_a]
    ratios = _ratios(a, b, order, seed)
    if a.verdict is None or b.verdict is None:
        side = "A" if a.verdict is None else "B"
        why = (a if a.verdict is None else b).refusal
        return MultiComparison(a, b, a.metric, (), ratios,
                               f"nothing to compare: {side} has no fit ({why}); "
                               f"{_ratio_text(ratios)}")
    by_name = {v.axis: v for v in b.verdict.axes}
    axes = tuple(AxisChange(v.axis, v, by_name[v.axis], _direction(v, by_name[v.axis]))
                 for v in a.verdict.axes)
    return MultiComparison(a, b, a.metric, axes, ratios, _summary(axes, ratios))


def _class_outcome(c: AxisChange) -> AbOutcome:
    """Does B surely grow faster than A in this size (fail), surely not (pass), or neither?"""
    (a_lo, a_hi), (b_lo, b_hi) = _bracket(c.a), _bracket(c.b)
    spans = (f"A {class_text(c.a)}, k {c.a.exponent:.2f} [{c.a.interval[0]:.2f}, "
             f"{c.a.interval[1]:.2f}]; B {class_text(c.b)}, k {c.b.exponent:.2f} "
             f"[{c.b.interval[0]:.2f}, {c.b.interval[1]:.2f}]")
    if b_lo > a_hi or (_powers(c.a, c.b) and _apart(c.a.interval, c.b.interval)):
        return AbOutcome(FAIL, f"{c.axis}: B grows faster than A ({spans})")
    if b_hi <= a_lo or (_powers(c.a, c.b) and _apart(c.b.interval, c.a.interval)):
        slower = b_hi < a_lo or _apart(c.b.interval, c.a.interval)
        return AbOutcome(PASS, f"{c.axis}: B grows " + (
            "slower than A" if slower else "no faster than A") + f" ({spans})")
    return AbOutcome(UNDECIDED, f"{c.axis}: cannot tell whether B grows faster than A (their "
                                f"growths overlap: {spans}); a sweep over a wider range of "
                                f"{c.axis} would decide")


def _slower_outcome(rule: AbRule, comp: MultiComparison) -> AbOutcome:
    if not comp.ratios:
        return AbOutcome(UNDECIDED, f"{comp.metric}: no point was measured on both sides; "
                                    "sweep both over the same sizes")
    names = comp.a.sweep.axis_names
    last = max(comp.ratios, key=lambda r: (sum(r.sizes), r.sizes))
    where = ", ".join(f"{n} = {s:,}" for n, s in zip(names, last.sizes, strict=True))
    said = (f"B/A of {comp.metric} at {where} is {last.ratio:.3g} "
            f"(95% {last.lo:.3g}–{last.hi:.3g})")
    return ratio_outcome(said, last.lo, last.hi, rule.limit)


def decide(comp: MultiComparison, rules: Sequence[AbRule]) -> list[AbOutcome]:
    """One outcome per `slower` rule and per axis of each `class` rule (module docstring)."""
    out: list[AbOutcome] = []
    for rule in rules:
        if rule.kind == "slower":
            out.append(_slower_outcome(rule, comp))
        elif not comp.axes:
            out.append(AbOutcome(UNDECIDED, f"{comp.metric}: not fitted on both sides, so "
                                            "the growth cannot be compared"))
        else:
            out += [_class_outcome(c) for c in comp.axes]
    return out


__all__ = ["AxisChange", "MultiComparison", "PointRatio", "check_axes", "class_text",
           "compare_multi", "decide", "shared_metric"]
