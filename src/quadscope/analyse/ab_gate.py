"""CI gates on an A/B comparison: `--fail-on class` and `--fail-on slower=RATIO`.

Contract: pure functions of values (the option itself is declared and printed by
`commands/gates.py`, for `compare` and `run --vs` alike). `parse_fail_on(items)`
turns the option's values into `AbRule`s (a `UsageError` names a bad one);
`judged_metrics(rule, analysis)` names the metrics a rule judges, and
`decide(analysis, rules)` is a pure function returning one `AbOutcome` per rule
and judged metric, each "pass", "fail" or "undecided" with one sentence that
says why, and for "undecided" what would decide it. `exit_code(outcomes)` is 0
when every rule passed, FAIL_EXIT (8, as `--fail-above`) when one failed,
UNDECIDED_EXIT (9) when none failed but one could not be decided: an undecided
gate never passes silently.

Rules, each a one-sided question (does B grow faster than A?):
- `class` judges the headline metric alone (`lead_metric`: the work, where the
  meter counts it exactly and both sides settle its class, as `--fail-above`
  does through `headline.lead_fit`; else the time A's verdict led with), never
  every metric: a peak memory that cannot be decided does not hold up a gate on
  time. `class=METRIC[,METRIC]` judges the metrics named.
- For each judged metric B fails when its growth surely exceeds A's upper end:
  B's slowest supported class (`Fit.at_least`; a settled class is its own
  bracket) is faster than A's fastest (`Fit.at_most`), or B's exponent
  interval lies more than `compare.EXPONENT_GAP` above A's (neither class being
  "1"), which `compare` calls a class change. So a bracketed A still fails a
  B that surely outgrows its bracket. B passes when its fastest supported class
  is no faster than A's slowest, or when its exponent interval lies that far
  below A's (an improvement, not undecided). Otherwise it is undecided, naming
  the size that would settle it (`Fit.decide_n`).
- `slower=RATIO` (or `slower=RATIO:METRIC`, default wall_s): at the largest
  size both measured, B fails when the 95% interval of B/A (ratio of medians,
  percentile bootstrap, `analyse.compare`) lies wholly above RATIO, passes
  when it lies wholly at or below it, and is undecided when it straddles it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quadscope.analyse.headline import label, lead_fit, time_fit
from quadscope.classes import REGISTRY
from quadscope.errors import GATE_FAILED_EXIT, GATE_UNDECIDED_EXIT, UsageError
from quadscope.model import METRICS, Fit
from quadscope.units import fmt_count

if TYPE_CHECKING:  # only annotations: `--fail-on` is added to parsers that must build fast
    from quadscope.analyse.analysis import Analysis

FAIL_EXIT = GATE_FAILED_EXIT
UNDECIDED_EXIT = GATE_UNDECIDED_EXIT
PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
HEADLINE_METRIC = "wall_s"  # a class rule's metric when neither side has a time or work fit


@dataclass(frozen=True, slots=True)
class AbRule:
    kind: str  # "class" | "slower"
    metrics: tuple[str, ...]  # () for a bare "class": the headline metric (`lead_metric`)
    limit: float = 1.0  # for "slower": the largest B/A allowed


@dataclass(frozen=True, slots=True)
class AbOutcome:
    outcome: str  # PASS | FAIL | UNDECIDED
    sentence: str


def parse_fail_on(items: Sequence[str]) -> list[AbRule]:
    rules = []
    for item in items:
        kind, _, rest = item.partition("=")
        if kind == "class":
            chosen = tuple(rest.split(",")) if rest else ()
            for m in chosen:
                if m not in METRICS:
                    raise UsageError(f"--fail-on {item!r}: {m!r} is not a metric; use one of "
                                     + ", ".join(METRICS))
            rules.append(AbRule("class", chosen))
        elif kind == "slower":
            ratio, _, metric = rest.partition(":")
            try:
                limit = float(ratio)
            except ValueError:
                limit = float("nan")
            if not limit > 0:
                raise UsageError(f"--fail-on {item!r}: give the largest B/A allowed, "
                                 "e.g. slower=1.1")
            metric = metric or "wall_s"
            if metric not in METRICS:
                raise UsageError(f"--fail-on {item!r}: {metric!r} is not a metric")
            rules.append(AbRule("slower", (metric,), limit))
        else:
            raise UsageError(f"--fail-on {item!r}: use 'class', 'class=METRIC' or "
                             "'slower=RATIO' (e.g. slower=1.1)")
    return rules


def _bounds(fit: Fit) -> tuple[int, int] | None:
    """Registry positions of the slowest and fastest class the fit supports."""
    lo = fit.cls if fit.confident else fit.at_least
    hi = fit.cls if fit.confident else fit.at_most
    if lo in REGISTRY and hi in REGISTRY:
        return REGISTRY.index(lo), REGISTRY.index(hi)
    return None


def _apart(low: tuple[float, float] | None, high: tuple[float, float] | None) -> bool:
    """`high`'s exponent interval lies more than EXPONENT_GAP above `low`'s."""
    # Imported here: compare needs scipy, and this module is read to build the parser.
    from quadscope.analyse.compare import EXPONENT_GAP

    return low is not None and high is not None and high[0] > low[1] + EXPONENT_GAP


def _k(fit: Fit) -> str:
    ci = fit.exponent_ci
    return f"{fit.exponent or 0:.2f}" + ("" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]")


def _class_outcome(metric: str, fa: Fit, fb: Fit, word: str) -> AbOutcome:
    """Does B surely grow faster than A (fail), surely not (pass), or cannot it tell?"""
    ba, bb = _bounds(fa), _bounds(fb)
    powers = "1" not in (fa.cls, fb.cls)
    if ba is not None and bb is not None and bb[0] > ba[1]:
        return AbOutcome(FAIL, f"{metric}: B grows as {_name(bb[0], word)} or faster, "
                               f"A as {_name(ba[1], word)} at most")
    if powers and _apart(fa.exponent_ci, fb.exponent_ci):
        return AbOutcome(FAIL, f"{metric}: B grows faster than A (k {_k(fb)} against "
                               f"{_k(fa)}, intervals apart)")
    if ba is not None and bb is not None and bb[1] <= ba[0]:
        slower = bb[1] < ba[0]
        return AbOutcome(PASS, f"{metric}: B grows " + (
            f"slower than A ({_name(bb[1], word)} at most, A {_name(ba[0], word)} or "
            "faster): an improvement" if slower else "no faster than A"))
    if powers and _apart(fb.exponent_ci, fa.exponent_ci):
        return AbOutcome(PASS, f"{metric}: B grows slower than A (k {_k(fb)} against "
                               f"{_k(fa)}, intervals apart): an improvement")
    decide = [f.decide_n for f in (fa, fb) if f.decide_n]
    meter = next((d.meter for f in (fa, fb) for d in f.doubts if d.meter and not d.decide_n), "")
    hint = (f"counting the work (--meter {meter}) would decide" if meter
            else f"a sweep to {word} = {fmt_count(max(decide))} would decide" if decide
            else "a sweep over a wider range of sizes would decide")
    return AbOutcome(UNDECIDED, f"{metric}: cannot tell whether B grows faster than A "
                                f"(their growths overlap: A {_span(fa, word)}, B {_span(fb, word)}); "
                                f"{hint}")


def _name(index: int, word: str) -> str:
    return label(REGISTRY.names[index], word)


def _span(fit: Fit, word: str) -> str:
    bounds = _bounds(fit)
    if bounds is None:
        return f"k {_k(fit)}"
    lo, hi = _name(bounds[0], word), _name(bounds[1], word)
    return (lo if lo == hi else f"{lo} … {hi}") + f", k {_k(fit)}"


def lead_metric(analysis: Analysis) -> str:
    """The metric a bare `class` rule judges: the one the A/B headline leads with
    (`Analysis.change`: the work counted exactly where it decides), else the work where
    both sides settle it (`headline.lead_fit`), else the time A's verdict led with."""
    fits_a, fits_b = analysis.fits.get("A", {}), analysis.fits.get("B", {})
    change = analysis.change
    if change is not None and change.metric in fits_a and change.metric in fits_b:
        return change.metric
    work = analysis.work_metric
    la, lb = lead_fit(fits_a, work), lead_fit(fits_b, work)
    if work and la is not None and lb is not None and la.metric == lb.metric == work:
        return work
    time = time_fit(fits_a)
    if time is not None and time.metric in fits_b:
        return time.metric
    return HEADLINE_METRIC


def judged_metrics(rule: AbRule, analysis: Analysis) -> tuple[str, ...]:
    """The metrics `rule` judges: those it names, else the headline metric."""
    if rule.kind == "slower":
        return rule.metrics[:1]
    return rule.metrics or (lead_metric(analysis),)


def _slower_outcome(rule: AbRule, analysis: Analysis) -> AbOutcome:
    metric = rule.metrics[0]
    comp = analysis.comparison
    mc = next((m for m in comp.metrics if m.metric == metric), None) if comp else None
    if mc is None or not mc.ratios:
        return AbOutcome(UNDECIDED, f"{metric}: no size was measured on both sides; sweep both "
                                    "over the same sizes")
    last = max(mc.ratios, key=lambda r: r.size_n)
    where = f"B/A of {metric} at {analysis.size_word} = {fmt_count(last.size_n)} is " \
            f"{last.ratio:.3g} (95% {last.lo:.3g}–{last.hi:.3g})"
    return ratio_outcome(where, last.lo, last.hi, rule.limit)


def ratio_outcome(said: str, lo: float, hi: float, limit: float) -> AbOutcome:
    """A `slower` rule judged on B/A's 95% interval [lo, hi] (one-sided), `said` leading."""
    if lo > limit:
        return AbOutcome(FAIL, f"{said}: above the allowed {limit:g}")
    if hi <= limit:
        return AbOutcome(PASS, f"{said}: within the allowed {limit:g}")
    return AbOutcome(UNDECIDED, f"{said}: straddles the allowed {limit:g}; more repeats "
                                "(--repeat) would narrow it enough to decide")


def decide(analysis: Analysis, rules: Sequence[AbRule]) -> list[AbOutcome]:
    """One outcome per (rule, metric) — see the module docstring."""
    out: list[AbOutcome] = []
    fits_a, fits_b = analysis.fits.get("A", {}), analysis.fits.get("B", {})
    for rule in rules:
        if rule.kind == "slower":
            out.append(_slower_outcome(rule, analysis))
            continue
        for metric in judged_metrics(rule, analysis):
            fa, fb = fits_a.get(metric), fits_b.get(metric)
            if fa is None or fb is None:
                out.append(AbOutcome(UNDECIDED, f"{metric}: not fitted on both sides, so its "
                                                "class cannot be compared"))
            else:
                out.append(_class_outcome(metric, fa, fb, analysis.size_word))
    return out


def exit_code(outcomes: Sequence[AbOutcome]) -> int:
    if any(o.outcome == FAIL for o in outcomes):
        return FAIL_EXIT
    if any(o.outcome == UNDECIDED for o in outcomes):
        return UNDECIDED_EXIT
    return 0


__all__ = ["FAIL_EXIT", "UNDECIDED_EXIT", "AbOutcome", "AbRule", "decide", "exit_code",
           "judged_metrics", "lead_metric", "parse_fail_on"]
