"""CI gates on scaling with three outcomes: pass, fail (exit 8) or undecided (exit 9).

Contract: pure functions of values, never of argparse, and nothing printed.
`judge(fit, limit)` is the one rule every gate shares (`--fail-above`,
`compare --fail-on`, a Python `assert_scales`): it reads the fit's bracket
(`Fit.at_least` … `Fit.at_most`, the classes the data support at 95%; a settled
class is its own bracket) against the registry's order (`quadscope.classes`).
It passes when even the fastest supported class is within the limit, fails when
even the slowest is above it (or, for exactly counted work, when k's whole
interval is above the fastest the limit grows at these sizes: `exact=`), and
otherwise is undecided, naming the n that
would decide when the fit names one (`Fit.decide_n`). So a gate on "n log n"
passes a sweep bracketed "n … n log n", and no single noisy class flips it.

`parse_gates(items)` turns `--fail-above` values into `Gate`s (a `UsageError`
names a bad one): "CLASS" gates what the verdict line leads with
(`headline.lead_fit`: the work, where the meter counts it exactly and its class
is settled, else the time), "METRIC=CLASS" that metric. A class may be
written in any spelling quadscope prints (`classes.Registry.parse`: "n²",
"quadratic", "O(n log n)"); `parse_class` reads one alone.
`judge_metric(fits, metric, limit, work=)` is `judge` of one metric's fit
(None: the lead fit), undecided when that metric was not measured; `judge_gates`
and `assert_scales` both go through it.
`judge_gates(gates, analysis, strict=)` returns one `GateOutcome` per gate,
each with its sentence and exit code (`strict`: an undecided gate exits
GATE_FAILED_EXIT too); `worst_exit(codes)`, of the outcomes' exit codes, is
the code the CLI exits with: GATE_FAILED_EXIT over GATE_UNDECIDED_EXIT over 0. The options themselves and
the printing are the CLI's (`commands/gates.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quadscope.analyse.headline import label, lead_fit
from quadscope.classes import REGISTRY, UnknownClassError
from quadscope.errors import GATE_FAILED_EXIT, GATE_UNDECIDED_EXIT, UsageError
from quadscope.model import METRICS, Fit

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis

GATE_EXIT = GATE_FAILED_EXIT
PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
EXIT_CODES = {PASS: 0, FAIL: GATE_FAILED_EXIT, UNDECIDED: GATE_UNDECIDED_EXIT}


@dataclass(frozen=True, slots=True)
class Gate:
    """One `--fail-above` value: the metric gated (None: the headline, `headline.lead_fit`)
    and the limit."""

    text: str  # as the user gave it, e.g. "max_rss_bytes=n"
    metric: str | None
    limit: str  # a class of the registry


@dataclass(frozen=True, slots=True)
class GateOutcome:
    """What one gate decided, one sentence saying why, and the n that would decide it.

    `strict`: the gate was asked to treat undecided as failed (`--strict-gate`),
    which changes its exit code, never its outcome or its sentence.
    """

    outcome: str  # PASS, FAIL or UNDECIDED
    sentence: str
    decide_n: int | None = None
    strict: bool = False

    @property
    def exit_code(self) -> int:
        if self.strict and self.outcome == UNDECIDED:
            return GATE_FAILED_EXIT
        return EXIT_CODES[self.outcome]


# Exact counts whose k interval lies this far above the fastest a class grows at the sizes
# counted are surely faster than that class (an exponent, not a noise margin: a count has
# none, and lower-order terms only pull k down).
EXACT_K_MARGIN = 0.1


def _exact_excess(fit: Fit, limit: str) -> str:
    """Where exactly counted work straddles k between `limit` and the next class (a count
    following no law of one or two terms, `analyse.evidence._straddle`) and k's whole
    interval is above the fastest `limit` grows at these sizes: the numbers saying so;
    "" otherwise. strcat's counts at 5000..80000 read "n log n or n²" with k = 1.90
    [1.87, 1.92], while n log n grows there with k ≤ 1.12."""
    d = next((d for d in fit.doubts if d.check == "exponent" and d.at_least == limit), None)
    if d is None:
        return ""
    values = [x for key in ("k", "k_lo", "k_hi", "below_k")
              if isinstance(x := d.numbers.get(key), float)]
    if len(values) < 4:
        return ""
    k, k_lo, k_hi, limit_k = values
    if k_lo <= limit_k + EXACT_K_MARGIN:
        return ""
    return f"k = {k:.2f} [{k_lo:.2f}, {k_hi:.2f}]"


def judge(fit: Fit, limit: str, size_word: str = "n", *, exact: bool = False) -> GateOutcome:
    """The shared gate rule: pass if at_most ≤ limit, fail if at_least > limit, else undecided.

    `exact`: the fit is of exactly counted work, whose k interval carries no noise, so a
    bracket straddling k from `limit` fails where k is surely above anything `limit`
    grows as at these sizes (`_exact_excess`)."""
    limit = parse_class(limit)
    allowed = label(limit, size_word)
    lo, hi = fit.at_least, fit.at_most
    if fit.confident and not (lo and hi):
        lo = hi = fit.cls  # a fit from before brackets: a settled class is its own bracket
    if lo not in REGISTRY or hi not in REGISTRY:
        return _undecided(fit, f"{fit.metric}'s growth is not settled ({fit.reason or 'no bracket'})",
                          allowed)
    span = label(lo, size_word) if lo == hi else f"{label(lo, size_word)} … {label(hi, size_word)}"
    top = REGISTRY.index(limit)
    if REGISTRY.index(hi) <= top:
        return GateOutcome(PASS, f"gate passed: {fit.metric} grows as {span}, within {allowed}")
    if REGISTRY.index(lo) > top:
        return GateOutcome(FAIL, f"gate failed: {fit.metric} grows as {span}, faster than "
                                 f"the allowed {allowed}")
    if exact and (k := _exact_excess(fit, limit)):
        return GateOutcome(FAIL, f"gate failed: {fit.metric} (counted exactly) grows with {k}, "
                                 f"faster than {allowed} grows at these sizes")
    return _undecided(fit, f"{fit.metric} grows as {span}, which may or may not exceed", allowed)


def _undecided(fit: Fit, why: str, allowed: str) -> GateOutcome:
    meter = next((d.meter for d in fit.doubts if d.meter and not d.decide_n), "")
    tail = (f"; measure up to n = {fit.decide_n} to decide" if fit.decide_n
            else f"; count the work with --meter {meter} to decide" if meter
            else "; measure more sizes or repeats to decide")
    joiner = " " if why.endswith("exceed") else ", so it may or may not exceed "
    return GateOutcome(UNDECIDED, f"gate undecided: {why}{joiner}{allowed}{tail}", fit.decide_n)


def parse_class(text: str) -> str:
    """The registry name of a class written in any spelling quadscope prints (`Registry.parse`)."""
    try:
        return REGISTRY.parse(text).name
    except UnknownClassError as exc:
        raise UsageError(str(exc)) from None


def judge_metric(fits: Mapping[str, Fit], metric: str | None, limit: str,
                 size_word: str = "n", work: str | None = None) -> GateOutcome:
    """`judge` of `metric`'s fit (None: what the verdict leads with, `headline.lead_fit`:
    the exactly counted `work` when settled, else the time); undecided when not measured."""
    limit = parse_class(limit)
    fit = lead_fit(fits, work) if metric is None else fits.get(metric)
    if fit is None:
        return GateOutcome(UNDECIDED, f"gate undecided: {metric or 'time'} was not measured, "
                                      f"so nothing says it stays within {label(limit, size_word)}")
    return judge(fit, limit, size_word, exact=bool(work) and fit.metric == work)


def parse_gates(items: Iterable[str]) -> list[Gate]:
    """`--fail-above` values as gates; a `UsageError` names the first bad one."""
    gates: list[Gate] = []
    for item in items:
        metric, _, cls = item.rpartition("=")
        try:
            cls = REGISTRY.parse(cls).name
        except UnknownClassError as exc:
            raise UsageError(f"--fail-above {item!r}: {exc}") from None
        if metric and metric not in METRICS:
            raise UsageError(f"--fail-above {item!r}: {metric!r} is not a metric; use one of "
                             + ", ".join(METRICS))
        gates.append(Gate(item, metric or None, cls))
    return gates


def judge_gates(gates: Sequence[Gate], analysis: Analysis, *,
                strict: bool = False) -> list[GateOutcome]:
    """Each gate judged on A's fits, in order (see the module docstring)."""
    fits = analysis.fits.get("A", {})
    size_word = "i" if analysis.sweep.mode == "accumulate" else "n"
    out = []
    for gate in gates:
        outcome = judge_metric(fits, gate.metric, gate.limit, size_word, analysis.work_metric)
        out.append(GateOutcome(outcome.outcome, outcome.sentence, outcome.decide_n, strict))
    return out


def worst_exit(codes: Iterable[int]) -> int:
    """The exit code of several gates: a failed one outranks an undecided one, which outranks 0."""
    return max(codes, key=lambda c: (c == GATE_FAILED_EXIT, c), default=0)


__all__ = ["EXIT_CODES", "FAIL", "GATE_EXIT", "PASS", "UNDECIDED", "Gate", "GateOutcome",
           "judge", "judge_gates", "judge_metric", "parse_class", "parse_gates", "worst_exit"]
