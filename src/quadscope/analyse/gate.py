"""CI gates on scaling with three outcomes: pass, fail (exit 8) or undecided (exit 9).

Contract: `judge(fit, limit)` is the one rule every gate shares (`--fail-above`,
`compare --fail-on`, a Python `assert_scales`): it reads the fit's bracket
(`Fit.at_least` … `Fit.at_most`, the classes the data support at 95%; a settled
class is its own bracket) against the registry's order (`quadscope.classes`).
It passes when even the fastest supported class is within the limit, fails when
even the slowest is above it, and otherwise is undecided, naming the n that
would decide when the fit names one (`Fit.decide_n`). So a gate on "n log n"
passes a sweep bracketed "n … n log n", and no single noisy class flips it.
`--fail-above CLASS` with no metric gates the headline metric (the time the
verdict line leads with, `headline.time_fit`); `--fail-above METRIC=CLASS`
(repeatable) gates that metric. `check_gates` prints one sentence per gate and
returns the worst exit code: GATE_FAILED_EXIT over GATE_UNDECIDED_EXIT over 0
(`--strict-gate` turns undecided into failed).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from quadscope.analyse.headline import label, time_fit
from quadscope.classes import NAMES, REGISTRY
from quadscope.errors import GATE_FAILED_EXIT, GATE_UNDECIDED_EXIT, UsageError
from quadscope.model import METRICS, Fit

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis

GATE_EXIT = GATE_FAILED_EXIT
PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
EXIT_CODES = {PASS: 0, FAIL: GATE_FAILED_EXIT, UNDECIDED: GATE_UNDECIDED_EXIT}
GATE_HELP = (f"exit {GATE_FAILED_EXIT} when a metric grows faster than CLASS at 95%%, "
             f"{GATE_UNDECIDED_EXIT} when the data cannot tell yet; without METRIC= it gates "
             "the headline time, e.g. 'n log n' or 'max_rss_bytes=n' (repeatable)")


@dataclass(frozen=True, slots=True)
class GateOutcome:
    """What one gate decided, one sentence saying why, and the n that would decide it."""

    outcome: str  # PASS, FAIL or UNDECIDED
    sentence: str
    decide_n: int | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]


def judge(fit: Fit, limit: str, size_word: str = "n") -> GateOutcome:
    """The shared gate rule: pass if at_most ≤ limit, fail if at_least > limit, else undecided."""
    if limit not in REGISTRY:
        raise UsageError(f"{limit!r} is not a class; use one of " + ", ".join(NAMES))
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
    return _undecided(fit, f"{fit.metric} grows as {span}, which may or may not exceed", allowed)


def _undecided(fit: Fit, why: str, allowed: str) -> GateOutcome:
    tail = (f"; measure up to n = {fit.decide_n} to decide" if fit.decide_n
            else "; measure more sizes or repeats to decide")
    joiner = " " if why.endswith("exceed") else ", so it may or may not exceed "
    return GateOutcome(UNDECIDED, f"gate undecided: {why}{joiner}{allowed}{tail}", fit.decide_n)


def add_gate_option(p: Any) -> None:
    p.add_argument("--fail-above", action="append", default=[], metavar="[METRIC=]CLASS",
                   help=GATE_HELP)
    p.add_argument("--strict-gate", action="store_true",
                   help=f"an undecided gate exits {GATE_FAILED_EXIT} too, not {GATE_UNDECIDED_EXIT}")


def parse_gates(items: list[str]) -> list[tuple[str | None, str]]:
    gates: list[tuple[str | None, str]] = []
    for item in items:
        metric, _, cls = item.rpartition("=")
        cls = cls.strip()
        if cls not in REGISTRY:
            raise UsageError(f"--fail-above {item!r}: {cls!r} is not a class; use one of "
                             + ", ".join(NAMES))
        if metric and metric not in METRICS:
            raise UsageError(f"--fail-above {item!r}: {metric!r} is not a metric; use one of "
                             + ", ".join(METRICS))
        gates.append((metric or None, cls))
    return gates


def check_gates(args: argparse.Namespace, analysis: Analysis) -> int:
    """Judge every `--fail-above` gate on A's fits; print one sentence each; the worst exit code."""
    gates = parse_gates(getattr(args, "fail_above", []) or [])
    fits = analysis.fits.get("A", {})
    size_word = "i" if analysis.sweep.mode == "accumulate" else "n"
    strict = bool(getattr(args, "strict_gate", False))
    worst = 0
    for metric, limit in gates:
        fit = time_fit(fits) if metric is None else fits.get(metric)
        if fit is None:
            outcome = GateOutcome(UNDECIDED, f"gate undecided: {metric or 'time'} was not "
                                             f"measured, so nothing says it stays within {limit}")
        else:
            outcome = judge(fit, limit, size_word)
        print(f"quadscope: {outcome.sentence}", file=sys.stderr)
        code = outcome.exit_code
        if strict and outcome.outcome == UNDECIDED:
            code = GATE_FAILED_EXIT
        worst = max(worst, code, key=lambda c: (c == GATE_FAILED_EXIT, c))
    return worst
