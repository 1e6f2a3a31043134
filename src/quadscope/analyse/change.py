"""The A/B result in one line: what B changed, in the words every renderer shows.

Contract: `change_summary(comparison, fits_a, fits_b, size_word)` is a pure
function of a `Comparison` and both sides' fits; it returns a `ChangeSummary`
(its `text`, e.g. "B changed the class: n² → n; 300× faster at n = 64k", and
its `direction`: "worse", "better", "same" or "unclear") or None when nothing
was compared. The terminal, the HTML page and the JSON (`comparison.summary`)
all show this one text, so the words and their order agree everywhere. The
lead metric is the work (`work=`, the metric the meter counts exactly) when both
sides' classes of it are settled or its comparison decided a change (of class,
factor or constant: a bracketed side surely apart from the other), else wall_s
when it was compared (what a user feels), else the first compared metric in
registry order. The size quoted is the largest size
measured on both sides; the ratio there is B/A of the medians (compare.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from quadscope.analyse.headline import bracket_text, bracketed
from quadscope.classes import REGISTRY
from quadscope.model import Comparison, Fit, MetricComparison
from quadscope.units import fmt_count

LEAD_METRIC = "wall_s"

WORSE, BETTER, SAME, UNCLEAR = "worse", "better", "same", "unclear"


@dataclass(frozen=True, slots=True)
class ChangeSummary:
    text: str
    direction: str  # WORSE | BETTER | SAME | UNCLEAR
    metric: str

    def to_dict(self) -> dict[str, str]:
        return {"text": self.text, "direction": self.direction, "metric": self.metric}


def class_label(cls: str, size_word: str = "n") -> str:
    """A class in mathematical type ("n²"), its size renamed; unknown text as it is."""
    return REGISTRY.relabel(cls, size_word)


def _fit_label(fit: Fit, size_word: str) -> str:
    if fit.confident:
        return class_label(fit.cls, size_word)
    if bracketed(fit) and fit.at_least != fit.at_most:
        return bracket_text(fit, size_word)  # "n or n log n", as the tables write it
    return f"{class_label(fit.best, size_word)}?" if fit.best else "?"


def _times(x: float) -> str:
    """A factor above 1: "300×", "2.5×", and a near one as a share, "0.04%" (B/A 1.0004 was
    "1× more work")."""
    if x < 1.095:
        return f"{(x - 1) * 100:.2g}%"
    return f"{x:.0f}×" if x >= 100 else f"{x:.3g}×"


def ratio_phrase(mc: MetricComparison, size_word: str = "n",
                 work: bool = False) -> tuple[str, str]:
    """("300× faster at n = 64k", direction) from B/A at the largest common size; `work`:
    the metric is the work counted exactly ("3.1× less work")."""
    if not mc.ratios:
        return "no size was measured on both sides", UNCLEAR
    last = max(mc.ratios, key=lambda r: r.size_n)
    where = f"at {size_word} = {fmt_count(last.size_n)}"
    timed = mc.metric.endswith("_s")
    if last.lo <= 1.0 <= last.hi or last.ratio <= 0:
        return f"no measurable difference {where} (B/A {last.ratio:.3g})", SAME
    if last.ratio < 1.0:
        word = "less work" if work else "faster" if timed else f"lower {mc.metric}"
        return f"{_times(1.0 / last.ratio)} {word} {where}", BETTER
    word = "more work" if work else "slower" if timed else f"higher {mc.metric}"
    return f"{_times(last.ratio)} {word} {where}", WORSE


def _class_direction(fa: Fit, fb: Fit) -> str:
    ca = fa.cls if fa.confident else fa.best
    cb = fb.cls if fb.confident else fb.best
    if ca in REGISTRY and cb in REGISTRY and ca != cb:
        return WORSE if REGISTRY.index(cb) > REGISTRY.index(ca) else BETTER
    if fa.exponent is not None and fb.exponent is not None:
        return WORSE if fb.exponent > fa.exponent else BETTER
    return UNCLEAR


def summarise(mc: MetricComparison, fa: Fit, fb: Fit, size_word: str = "n",
              work: bool = False) -> ChangeSummary:
    """One metric's change as a sentence (see the module docstring); `work`: the metric
    is the work counted exactly, named as such ("B changed the class of the work")."""
    of = (f" of the work ({mc.metric})" if work else
          "" if mc.metric == LEAD_METRIC else f" of {mc.metric}")
    phrase, by_ratio = ratio_phrase(mc, size_word, work)
    if mc.change == "class":
        direction = _class_direction(fa, fb)
        if fa.confident and fb.confident:
            head = f"B changed the class{of}: {_fit_label(fa, size_word)} → {_fit_label(fb, size_word)}"
        elif fa.exponent is None or fb.exponent is None:  # a flat count has no k: the classes
            head = (f"B changed the growth{of}: {_fit_label(fa, size_word)} → "
                    f"{_fit_label(fb, size_word)}")
        else:
            head = (f"B changed the growth{of}: k = {fa.exponent:.2f} → "
                    f"{fb.exponent:.2f} ({_fit_label(fa, size_word)} → "
                    f"{_fit_label(fb, size_word)})")
        return ChangeSummary(f"{head}; {phrase}", direction, mc.metric)
    # "B kept the class of the work (instructions): n on both sides", never "(instructions) (n)".
    label = f"{_fit_label(fa, size_word)} on both sides"
    if mc.change == "constant":
        return ChangeSummary(f"B kept the class{of}: {label}, with a different factor; {phrase}",
                             by_ratio if by_ratio != SAME else UNCLEAR, mc.metric)
    if mc.change == "offset":
        return ChangeSummary(f"B kept the class{of}: {label}, with a different constant; "
                             f"{phrase}", by_ratio if by_ratio != SAME else UNCLEAR, mc.metric)
    if mc.change == "none":
        return ChangeSummary(f"B kept the growth{of}: {label}; {phrase}", SAME, mc.metric)
    side = "A" if not fa.confident else "B"
    return ChangeSummary(f"B against A is undecided{of}: {side}'s class is not settled "
                         f"({_fit_label(fa, size_word)} → {_fit_label(fb, size_word)}); {phrase}",
                         UNCLEAR, mc.metric)


# What the comparison of the work decided, which the summary leads with even when a side's
# class is bracketed: exact counts that surely changed class or factor beat a noisy time.
DECIDED = ("class", "constant", "offset")


def lead_comparison(comparison: Comparison, work: str | None = None,
                    settled: Mapping[str, bool] | None = None) -> MetricComparison | None:
    """The compared metric the summary is about: the exactly counted `work` when it was
    compared and `settled` on both sides or its change decided (`DECIDED`), else wall_s,
    else the first one."""
    by_metric = {mc.metric: mc for mc in comparison.metrics}
    if work and work in by_metric and ((settled or {}).get(work)
                                       or by_metric[work].change in DECIDED):
        return by_metric[work]
    return by_metric.get(LEAD_METRIC) or next(iter(comparison.metrics), None)


def change_summary(
    comparison: Comparison | None,
    fits_a: Mapping[str, Fit],
    fits_b: Mapping[str, Fit],
    size_word: str = "n",
    work: str | None = None,
) -> ChangeSummary | None:
    """The A/B headline, or None when nothing was compared; led by the work (`work`,
    counted exactly) when both sides' classes of it are settled."""
    if comparison is None:
        return None
    settled = {m: fits_a[m].confident and fits_b[m].confident
               for m in fits_a.keys() & fits_b.keys()}
    mc = lead_comparison(comparison, work, settled)
    if mc is None or mc.metric not in fits_a or mc.metric not in fits_b:
        return None
    return summarise(mc, fits_a[mc.metric], fits_b[mc.metric], size_word,
                     work=mc.metric == work)


__all__ = ["BETTER", "SAME", "UNCLEAR", "WORSE", "ChangeSummary",
           "change_summary", "class_label", "lead_comparison", "ratio_phrase", "summarise"]
