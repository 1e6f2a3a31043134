"""A stored sweep over several sizes, analysed: its runs grouped into points and fitted (pure).

Contract: `analyse_multi(sweep, runs, seed=, n_boot=, variant=, metric=)`
returns a `MultiReport`: the metric it fits (the meter's exact count where it
counts one, else wall time, unless `metric` names one), the `MultiVerdict` of
`analyse/multi` on the medians of every point's successful, non-warm-up runs
of the main command (`variant` "B": the --vs command's), the runs it was given
(for the CSV), or `refusal`, one sentence
saying why nothing could be fitted (too few points with runs, a size of 0, a
value of 0). `judge_axis_gates(report, gates)` judges `--fail-above AXIS=CLASS`
(or a bare CLASS, every axis) with the rule of `analyse/gate.judge`: pass when
even the fastest class the axis's interval allows is within the limit, fail when
even the slowest is above it, undecided otherwise. `brief_text(report)` is the
verdict in a few words for `quadscope list`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from quadscope.analyse.gate import FAIL, PASS, UNDECIDED
from quadscope.analyse.multi import MultiVerdict, analyse_points
from quadscope.analyse.multiclass import class_label
from quadscope.analyse.multifit import GridPoint
from quadscope.classes import REGISTRY
from quadscope.errors import GATE_FAILED_EXIT, GATE_UNDECIDED_EXIT, UsageError
from quadscope.meters import exact_metric
from quadscope.model import Run, Sweep
from quadscope.run.design import MIN_POINTS


@dataclass(frozen=True, slots=True)
class MultiReport:
    sweep: Sweep
    metric: str
    n_runs: int
    n_failed: int
    verdict: MultiVerdict | None
    refusal: str = ""
    runs: tuple[Run, ...] = ()  # every stored run, as the CSV writes them
    variant: str = "A"  # the command fitted: "B" is --vs's


@dataclass(frozen=True, slots=True)
class AxisGate:
    """One `--fail-above` on a sweep over several sizes: the axis ("" = every axis) and limit."""

    text: str
    axis: str
    limit: str


@dataclass(frozen=True, slots=True)
class AxisGateOutcome:
    gate: AxisGate
    axis: str
    outcome: str  # pass | fail | undecided
    sentence: str

    @property
    def exit_code(self) -> int:
        return {PASS: 0, FAIL: GATE_FAILED_EXIT, UNDECIDED: GATE_UNDECIDED_EXIT}[self.outcome]


def metric_of(sweep: Sweep) -> str:
    return exact_metric(sweep.meter) or "wall_s"


def points_of(sweep: Sweep, runs: Sequence[Run], metric: str,
              variant: str = "A") -> list[GridPoint]:
    names = sweep.axis_names
    values: dict[tuple[int, ...], list[float]] = defaultdict(list)
    for r in runs:
        v = r.value(metric)
        if r.variant != variant or r.warmup or not r.measurement.ok or v is None:
            continue
        others = dict(r.axes)
        key = (r.size_n, *(others.get(n, -1) for n in names[1:]))
        values[key].append(v)
    return [GridPoint(k, tuple(v)) for k, v in sorted(values.items())]


def analyse_multi(sweep: Sweep, runs: Sequence[Run], *, seed: int = 0,
                  n_boot: int = 400, variant: str = "A",
                  metric: str | None = None) -> MultiReport:
    """The report on a stored sweep over several sizes (see the module docstring): its
    `variant`'s runs ("B": the --vs command's), on `metric` (None: `metric_of(sweep)`)."""
    metric = metric or metric_of(sweep)
    measured = [r for r in runs if r.variant == variant and not r.warmup]
    failed = sum(not r.measurement.ok for r in measured)
    points = points_of(sweep, runs, metric, variant)

    def refused(why: str) -> MultiReport:
        return MultiReport(sweep, metric, len(measured), failed, None, why, tuple(runs), variant)

    if len(points) < MIN_POINTS:
        return refused(f"only {len(points)} of {len(sweep.points)} points have a successful run "
                       f"({failed} runs failed); at least {MIN_POINTS} are needed to fit the cost "
                       "in several sizes")
    if any(min(p.sizes) < 1 for p in points):
        return refused("a size of 0 cannot be fitted as a power of the size; start every axis at 1 "
                       "or more")
    if any(min(p.values) <= 0 for p in points):
        return refused(f"some runs measured {metric} = 0, which no power of the sizes fits; "
                       "give larger sizes")
    verdict = analyse_points(sweep.axis_names, points, metric=metric, seed=sweep.seed,
                             n_boot=n_boot)
    return MultiReport(sweep, metric, len(measured), failed, verdict, "", tuple(runs), variant)


def brief_text(report: MultiReport) -> str:
    """The few words `list` shows: the model that fits ("rows²·cols", "rows² + cols", "rows²·cols
    plus a rows² term"), or each
    size's class where product and sum tie ("rows², cols … cols log cols")."""
    v = report.verdict
    if v is None:
        return "no fit"
    if v.nested:
        return v.nest_text
    if v.separable == "no":
        return v.product_text
    if v.separable == "yes":
        return v.sum_text
    parts = []
    for a in v.axes:
        g = a.growth
        parts.append(class_label(g.name, a.axis) if g.name else
                     f"{class_label(g.at_least, a.axis)} … {class_label(g.at_most, a.axis)}")
    return ", ".join(parts)


def parse_axis_gates(items: Sequence[str], names: Sequence[str]) -> list[AxisGate]:
    """`--fail-above` values on a sweep over axes `names`; UsageError names a bad one."""
    gates = []
    for text in items:
        axis, _, limit = text.rpartition("=") if "=" in text else ("", "", text)
        axis = axis.strip()
        if axis and axis not in names:
            raise UsageError(f"--fail-above {text!r}: this sweep's sizes are "
                             f"{', '.join(names)}; gate one of them, e.g. "
                             f"--fail-above {names[0]}=\"n log n\"")
        gates.append(AxisGate(text, axis, REGISTRY.parse(limit).name))
    return gates


def judge_axis_gates(report: MultiReport, gates: Sequence[AxisGate]) -> list[AxisGateOutcome]:
    out = []
    order = REGISTRY.index
    for gate in gates:
        if report.verdict is None:
            out.append(AxisGateOutcome(gate, gate.axis, UNDECIDED,
                                       f"gate {gate.text}: undecided: nothing was fitted"))
            continue
        for a in report.verdict.axes:
            if gate.axis and a.axis != gate.axis:
                continue
            g, limit = a.growth, order(gate.limit)
            label = class_label(gate.limit, a.axis)
            shown = (class_label(g.name, a.axis) if g.name else
                     f"{class_label(g.at_least, a.axis)} … {class_label(g.at_most, a.axis)}")
            lo, hi = a.interval
            if order(g.at_most) <= limit:
                outcome, why = PASS, "within"
            elif order(g.at_least) > limit:
                outcome, why = FAIL, "above"
            else:
                outcome, why = UNDECIDED, "maybe above"
            out.append(AxisGateOutcome(
                gate, a.axis, outcome,
                f"gate {a.axis} ≤ {label}: {outcome}: the cost grows as {shown} in {a.axis} "
                f"(exponent {a.exponent:.2f}, 95% {lo:.2f}–{hi:.2f}), {why} the limit"))
    return out
