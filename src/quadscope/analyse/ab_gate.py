"""CI gates on an A/B comparison: `--fail-on class` and `--fail-on slower=RATIO`.

Contract: pure functions of values (the option itself is declared and printed by
`commands/gates.py`, for `compare` and `run --vs` alike). `parse_fail_on(items)`
turns the option's values into `AbRule`s (a `UsageError` names a bad one);
`decide(analysis, rules)` is a pure function
returning one `AbOutcome` per rule and metric (a bare `class` rule gives two,
for wall_s and max_rss_bytes), each "pass", "fail" or "undecided" with
one sentence that says why, and for "undecided" what would decide it.
`exit_code(outcomes)` is 0 when every rule passed, FAIL_EXIT (8, as
`--fail-above`) when one failed, UNDECIDED_EXIT (9) when none failed but one
could not be decided: an undecided gate never passes silently.

Rules:
- `class` (or `class=METRIC`): B fails when it grows in a faster class than A
  for wall_s and max_rss_bytes (or METRIC). Settled classes are compared in
  the registry's order; an unsettled side is compared by its bracket
  (`Fit.at_least`/`at_most`): B fails when its slowest supported class is
  faster than A's fastest, passes when its fastest is no faster than A's
  slowest, and is undecided otherwise, naming the size that would settle it
  (`Fit.decide_n`). B also fails when its exponent interval lies more than
  `compare.EXPONENT_GAP` above A's (neither class being "1"), which `compare`
  calls a class change; intervals apart the other way pass nothing by
  themselves.
- `slower=RATIO` (or `slower=RATIO:METRIC`, default wall_s): at the largest
  size both measured, B fails when the 95% interval of B/A (ratio of medians,
  percentile bootstrap, `analyse.compare`) lies wholly above RATIO, passes
  when it lies wholly at or below it, and is undecided when it straddles it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quadscope.classes import REGISTRY
from quadscope.errors import GATE_FAILED_EXIT, GATE_UNDECIDED_EXIT, UsageError
from quadscope.model import METRICS, Fit
from quadscope.units import fmt_count

if TYPE_CHECKING:  # only annotations: `--fail-on` is added to parsers that must build fast
    from quadscope.analyse.analysis import Analysis

FAIL_EXIT = GATE_FAILED_EXIT
UNDECIDED_EXIT = GATE_UNDECIDED_EXIT
PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
CLASS_METRICS = ("wall_s", "max_rss_bytes")


@dataclass(frozen=True, slots=True)
class AbRule:
    kind: str  # "class" | "slower"
    metrics: tuple[str, ...]
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
            chosen = tuple(rest.split(",")) if rest else CLASS_METRICS
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


def _class_outcome(metric: str, fa: Fit, fb: Fit, word: str) -> AbOutcome:
    # Imported here: compare needs scipy, and this module is read to build the parser.
    from quadscope.analyse.compare import EXPONENT_GAP

    ba, bb = _bounds(fa), _bounds(fb)
    ca, cb = fa.exponent_ci, fb.exponent_ci
    apart = (ca is not None and cb is not None and "1" not in (fa.cls, fb.cls)
             and cb[0] > ca[1] + EXPONENT_GAP)
    if apart:
        return AbOutcome(FAIL, f"{metric}: B grows faster than A (k {fb.exponent:.2f} "
                               f"against {fa.exponent:.2f}, intervals apart)")
    if ba is not None and bb is not None:
        if bb[0] > ba[1]:
            return AbOutcome(FAIL, f"{metric}: B grows as {REGISTRY.names[bb[0]]} or faster, "
                                   f"A as {REGISTRY.names[ba[1]]} at most")
        if bb[1] <= ba[0]:
            return AbOutcome(PASS, f"{metric}: B grows no faster than A")
    decide = [f.decide_n for f in (fa, fb) if f.decide_n]
    hint = (f"a sweep to {word} = {fmt_count(max(decide))} would decide" if decide
            else "a sweep over a wider range of sizes would decide")
    return AbOutcome(UNDECIDED, f"{metric}: cannot tell whether B grows faster than A "
                                f"(a class is not settled); {hint}")


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
    if last.lo > rule.limit:
        return AbOutcome(FAIL, f"{where}: above the allowed {rule.limit:g}")
    if last.hi <= rule.limit:
        return AbOutcome(PASS, f"{where}: within the allowed {rule.limit:g}")
    return AbOutcome(UNDECIDED, f"{where}: straddles the allowed {rule.limit:g}; more repeats "
                                "(--repeat) would narrow it enough to decide")


def decide(analysis: Analysis, rules: Sequence[AbRule]) -> list[AbOutcome]:
    """One outcome per (rule, metric) — see the module docstring."""
    out: list[AbOutcome] = []
    fits_a, fits_b = analysis.fits.get("A", {}), analysis.fits.get("B", {})
    for rule in rules:
        if rule.kind == "slower":
            out.append(_slower_outcome(rule, analysis))
            continue
        for metric in rule.metrics:
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


__all__ = ["FAIL_EXIT", "UNDECIDED_EXIT", "AbOutcome", "AbRule", "decide", "exit_code", "parse_fail_on"]
