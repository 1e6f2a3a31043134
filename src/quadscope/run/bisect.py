"""The search of `quadscope bisect`: the first commit whose growth exceeds GOOD's.

Contract: pure, with no git, process or store in it. `bisect(commits, judge,
known=)` takes the commits oldest first (GOOD, the commits between, BAD) and a
`judge` that turns one commit into a `Probe` (how it measured and whether it
is GOOD, BAD or SKIP); `known` holds probes already made (GOOD's, measured
first to fix the limit), which are used instead of calling `judge` again. It
judges GOOD, then BAD, then halves the range between the last good and the
first bad commit. A skipped commit is never blamed (`git bisect run`'s exit
125): the next probe is the untried commit nearest the middle, and when only
skipped commits are left between the two, the answer is the range they span.
It returns a `Bisection`: FOUND (the first bad commit and the last good one),
GOOD_NOT_GOOD, BAD_NOT_BAD, or ALL_SKIPPED (`candidates`: any of them could be
the first bad commit), with every probe in the order it was made.

`probe_of(commit, fits, metric=, limit=, sweep_id=)` is one commit's probe from
its fits, judged by the gate's rule (`analyse.gate.judge_metric`): pass is
GOOD, fail is BAD, undecided is SKIP, so a noisy commit is skipped rather than
blamed. `limit_of(fit)` is the limit GOOD's own fit sets when no
`--fail-above` is given: the slowest class its data support (its bracket's
`at_most`), so a commit is BAD only when even its fastest supported class is
slower than anything GOOD could be.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from quadscope.analyse.gate import FAIL, PASS, judge_metric
from quadscope.analyse.headline import time_fit
from quadscope.classes import REGISTRY
from quadscope.model import Fit

GOOD, BAD, SKIP = "good", "bad", "skip"
FOUND, GOOD_NOT_GOOD, BAD_NOT_BAD, ALL_SKIPPED = (
    "found", "good is not good", "bad is not bad", "all skipped")


@dataclass(frozen=True, slots=True)
class Growth:
    """How one metric of a probed commit grew: its class ("" when none) and exponent."""

    metric: str
    cls: str
    exponent: float | None


@dataclass(frozen=True, slots=True)
class Probe:
    """One commit judged: GOOD, BAD or SKIP, the sentence why, and what was measured."""

    commit: str
    verdict: str
    why: str
    growth: tuple[Growth, ...] = ()  # the gated metric first, then time when it differs
    sweep_id: int | None = None


@dataclass(frozen=True, slots=True)
class Bisection:
    """The search's answer (module docstring) and every probe in the order it was made."""

    outcome: str
    probes: tuple[Probe, ...]
    first_bad: Probe | None = None
    last_good: Probe | None = None
    candidates: tuple[str, ...] = ()  # ALL_SKIPPED: the first bad commit is one of these


Judge = Callable[[str], Probe]


def _middle(lo: int, hi: int, skipped: set[int]) -> int | None:
    """The untried index strictly between lo and hi nearest their middle (the lower on a tie)."""
    left = [i for i in range(lo + 1, hi) if i not in skipped]
    return min(left, key=lambda i: (abs(2 * i - lo - hi), i)) if left else None


def bisect(commits: Sequence[str], judge: Judge,
           known: Mapping[str, Probe] | None = None) -> Bisection:
    """The first BAD commit after GOOD = commits[0] up to BAD = commits[-1] (module docstring)."""
    if len(commits) < 2:
        raise ValueError("bisect needs GOOD and BAD: at least two commits")
    made: list[Probe] = []

    def probe(i: int) -> Probe:
        p = (known or {}).get(commits[i]) or judge(commits[i])
        made.append(p)
        return p

    good = probe(0)
    if good.verdict != GOOD:
        return Bisection(GOOD_NOT_GOOD, tuple(made))
    bad = probe(len(commits) - 1)
    if bad.verdict != BAD:
        return Bisection(BAD_NOT_BAD, tuple(made), last_good=good)
    lo, hi = 0, len(commits) - 1
    last_good, first_bad = good, bad
    skipped: set[int] = set()
    while (mid := _middle(lo, hi, skipped)) is not None:
        p = probe(mid)
        if p.verdict == GOOD:
            lo, last_good = mid, p
        elif p.verdict == BAD:
            hi, first_bad = mid, p
        else:
            skipped.add(mid)
    if hi - lo == 1:
        return Bisection(FOUND, tuple(made), first_bad=first_bad, last_good=last_good)
    return Bisection(ALL_SKIPPED, tuple(made), first_bad=first_bad, last_good=last_good,
                     candidates=tuple(commits[lo + 1:hi + 1]))


def limit_of(fit: Fit | None) -> str | None:
    """The class GOOD's fit allows: its bracket's slowest class, its own when settled; None if neither."""
    if fit is None:
        return None
    if fit.at_most in REGISTRY:
        return fit.at_most
    return fit.cls if fit.confident else None


def _growth(fits: Mapping[str, Fit], metric: str | None) -> tuple[Growth, ...]:
    gated = time_fit(fits) if metric is None else fits.get(metric)
    shown = [gated] if gated is not None else []
    timed = time_fit(fits)
    if timed is not None and timed is not gated:
        shown.append(timed)
    return tuple(Growth(f.metric, f.cls if f.confident else "", f.exponent) for f in shown)


def probe_of(commit: str, fits: Mapping[str, Fit], *, metric: str | None, limit: str,
             sweep_id: int | None = None) -> Probe:
    """A measured commit judged by the gate: pass GOOD, fail BAD, undecided SKIP."""
    outcome = judge_metric(fits, metric, limit)
    verdict = {PASS: GOOD, FAIL: BAD}.get(outcome.outcome, SKIP)
    return Probe(commit, verdict, outcome.sentence, _growth(fits, metric), sweep_id)


__all__ = ["ALL_SKIPPED", "BAD", "BAD_NOT_BAD", "FOUND", "GOOD", "GOOD_NOT_GOOD", "SKIP",
           "Bisection", "Growth", "Judge", "Probe", "bisect", "limit_of", "probe_of"]
