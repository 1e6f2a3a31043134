"""The headline: how the work and the time grow, in words and symbols, and the text of a class.

Contract: pure functions of fits (`quadscope.model.Fit`); nothing is fitted
here. `verdict_line` answers the question a user came with, "how does it grow?".
Where the meter counts the work exactly (`work=`), it gives two answers: the
work, the algorithm's class, first ("quadratic: the work grows as n²
(instructions, exact, k = 2.00 ± 0.01)"), then the time the machine pays ("wall
time too (k = 1.96 [1.92, 1.99])" where it settled on the same class);
`lead_fit` is the fit gates judge (the work when settled or bracketed, unless a
narrower time verdict no faster than n² is at hand; else the time).
`work_note` is the line under it when the work's class is a term still small at
the largest size ("the n² term is 2% of the work at n = 64000 and dominates
beyond n ≈ 3300000; …", `analyse.exactfit`).
Otherwise it leads with wall time (or CPU time, when wall time is the noisier
of the two and they agree, or when CPU time's bracket holds what wall time's
verdict allows and says more: `time_fit`), as "quadratic: wall time grows as n² (k = 2.00 ±
0.02)"; when the class is not settled but the data bracket it, it says the
bracket and what it rules out ("wall time grows as n or n log n — not
quadratic (k = 1.03 [0.98, 1.09])"). Another metric joins only when it grows
faster than the lead, or when its growth is a story on its own (the kernel's
share, page faults or peak memory growing faster than n); none ever speaks
over a verdict that is not settled. A change of regime inside the sizes is
named: "quadratic: wall time grows as n² above n ≈ 130,000 (below: n)".
`class_text` and `exponent_text` are the one place a class cell and an
exponent cell are written, for every renderer: a flat metric, or a count that
never exceeded 1, reads "1" with no exponent, never "k ≥ 4" or 2ⁿ. Words and
symbols come from the class registry (`label`, `words`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from quadscope import metrics
from quadscope.analyse.text import doubt_text
from quadscope.classes import REGISTRY, GrowthClass
from quadscope.model import Doubt, Fit

# The free power law's k is searched over [0, 4] (classfit.K_GRID; not imported, as
# scipy would then load to build the parser): at its edge it only says "at least".
K_EDGE = 4.0
TIME_METRICS = ("wall_s", "cpu_s")
_TIE = 1e-6  # relative: two intervals this close in width are the same width
# What a person calls each metric; the others go by their names.
_WORDS = {
    "wall_s": "wall time",
    "cpu_s": "CPU time",
    "user_s": "user time",
    "sys_s": "the kernel's share",
    "max_rss_bytes": "peak memory",
    "minor_faults": "page faults",
    "major_faults": "major page faults",
    "page_faults": "page faults",
}
# Metrics whose superlinear growth is a story on its own, even under a faster time.
_STORIES = ("sys_s", "max_rss_bytes", "minor_faults", "major_faults", "page_faults")
_JOINERS = _STORIES  # the metrics that may join the headline at all
# A metric joins the headline only if its growth is at least this share of its cost
# at the largest size: a 1% drift in peak memory is not what the user needs first.
MATERIAL_GROWTH = 0.1


def metric_words(metric: str) -> str:
    return _WORDS.get(metric, metric)


def _grows(metric: str) -> str:
    """The metric and its verb: "wall time grows", "page faults grow"."""
    words = metric_words(metric)
    return f"{words} grow" if words.endswith("faults") else f"{words} grows"


def label(cls: str, size_word: str = "n") -> str:
    """The class in mathematical type with its size variable renamed: "n log n" -> "i log i"."""
    return REGISTRY.relabel(cls, size_word)


def trivial(fit: Fit, peak: float | None = None) -> bool:
    """Flat: settled constant, or a count that was never above 1 (nothing to grow)."""
    if fit.cls == "1":
        return True
    known = metrics.find(fit.metric)
    return (peak is not None and peak <= 1 and known is not None and known.unit == "count")


def bracketed(fit: Fit) -> bool:
    """Not settled, but the data name the slowest and fastest class they support."""
    return not fit.confident and fit.at_least in REGISTRY and fit.at_most in REGISTRY


def bracket_text(fit: Fit, size_word: str = "n") -> str:
    """"n or n log n" for neighbouring classes, "n … n³" for a wider bracket."""
    lo, hi = fit.at_least, fit.at_most
    if lo == hi:
        return label(lo, size_word)
    sep = " or " if REGISTRY.index(hi) - REGISTRY.index(lo) == 1 else " … "
    return label(lo, size_word) + sep + label(hi, size_word)


def class_text(fit: Fit, size_word: str = "n", peak: float | None = None) -> str:
    """The class cell: "n²" settled, "n or n log n" bracketed, "?" when nothing is ruled out."""
    if trivial(fit, peak):
        return "1"
    if fit.confident:
        return label(fit.cls, size_word)
    if bracketed(fit):
        return bracket_text(fit, size_word)
    return "?"


def exponent_text(fit: Fit, peak: float | None = None, *, symmetric: bool = False) -> str:
    """The exponent cell: "2.00 [1.98, 2.02]" ("2.00 ± 0.02" if `symmetric`), "" when flat.

    At the edge of the power law's search k only has a lower bound, which is
    worth saying for a metric that grows faster than every power; for a metric
    the data also allow to be flat it says nothing, so it is left out.
    """
    if trivial(fit, peak) or fit.exponent is None or fit.exponent_ci is None:
        return ""
    lo, hi = fit.exponent_ci
    if fit.exponent >= K_EDGE - 1e-6:
        floor = fit.at_least if fit.at_least else fit.cls
        top = fit.cls if fit.confident else fit.at_most
        growth = REGISTRY.get(floor)
        if (growth is None or not growth.growing or top not in REGISTRY
                or REGISTRY.index(top) <= REGISTRY.index("n^3")):
            # A bracket topped below every power ("n log n … n³") says the fit's k at the
            # edge is no bound the data hold: "n log n … n³ (k ≥ 4)" contradicted itself.
            return ""
        return f"≥ {K_EDGE:.0f}"
    if symmetric:
        return f"{fit.exponent:.2f} ± {(hi - lo) / 2:.2f}"
    return f"{fit.exponent:.2f} [{lo:.2f}, {hi:.2f}]"


def growth_fraction(fit: Fit, n_max: float | None) -> float:
    """The growing part's share of the fitted cost at n_max: b·f(n_max) / (a + b·f(n_max))."""
    growth = REGISTRY.of(fit.cls if fit.confident else fit.best, fit.coefficients)
    if n_max is None or growth is None or not growth.growing:
        return 0.0 if growth is not None and not growth.growing else 1.0
    import numpy as np  # here, not at the top: the CLI's parser reads this module

    a, b = fit.coefficients.get("a", 0.0), fit.coefficients.get("b", 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        grow = float(growth.evaluate(0.0, b, np.array([float(n_max)]))[0])
    total = a + grow
    return grow / total if total > 0 and math.isfinite(total) else 1.0


def _k(fit: Fit, symmetric: bool) -> str:
    k = exponent_text(fit, symmetric=symmetric)
    return f" (k {k})" if k.startswith("≥") else f" (k = {k})" if k else ""


def _spread(fit: Fit) -> float:
    lo, hi = fit.exponent_ci or (0.0, math.inf)
    return hi - lo


def _fastest(fit: Fit) -> GrowthClass | None:
    return REGISTRY.get(fit.cls if fit.confident else fit.at_most)


def time_fit(fits: Mapping[str, Fit]) -> Fit | None:
    """The fit the headline leads with: wall time, or CPU time where wall is noisier and they agree.

    CPU time also leads where both are brackets and CPU time's lies inside wall time's and
    is narrower, where wall time settled a class that CPU time's bracket holds while wall
    time's k lies outside CPU time's interval (`_cpu_bracket_leads`), and where wall time
    settled "1" while CPU time surely grows (`_surely_grows`), and where CPU time settled "1"
    beside a wall time that saw no rise either (`_flat_bracket`), and wherever wall time
    carries a "waiting" doubt (`analyse.waiting`: the runs were preempted, and wall time's
    verdict is either widened down to CPU time's or its k's interval the wider), and wherever
    it is unsettled with a "parallel" doubt (`analyse.parallel`: the program kept more CPUs
    busy as n grew, so wall time lagged the work and was widened up to CPU time's growth).
    """
    wall, cpu = fits.get("wall_s"), fits.get("cpu_s")
    if wall is None:
        return cpu or fits.get("user_s")
    if cpu is None:
        return wall
    if trivial(wall) and _surely_grows(cpu):
        return cpu
    if trivial(cpu) and _flat_bracket(wall):
        return cpu
    if trivial(cpu) != trivial(wall):
        return wall
    if any(d.check == "waiting" for d in wall.doubts):
        return cpu  # the runs waited for a CPU: wall time's excess is the machine's load
    if not wall.confident and any(d.check == "parallel" for d in wall.doubts):
        return cpu  # more CPUs busy as n grew: wall time lags the work until the cores run out
    if not cpu.confident:
        return cpu if _cpu_bracket_leads(wall, cpu) else wall
    agree = cpu.cls == wall.cls or (
        bracketed(wall) and REGISTRY.index(wall.at_least) <= REGISTRY.index(cpu.cls)
        <= REGISTRY.index(wall.at_most))
    # A tie (CPU time equal to wall time up to rounding) keeps wall time on every machine:
    # rounding differs between CPUs and numpy builds, and must not pick the headline.
    noisier = not wall.confident or _spread(wall) > _spread(cpu) * (1 + _TIE)
    return cpu if agree and noisier else wall


def _flat_bracket(wall: Fit) -> bool:
    """Whether wall time's bracket runs up from "1" only because the runs' spread could hide
    growth (no rise was seen): a 1 ms program on a busy machine waits up to 70 ms now and
    then, so its wall time reads "1 … n³" ("no growth detected, but the spread could
    hide…"), while its CPU time, precise to the µs, rules the growth out and settles "1".
    A program whose wall time rises while its CPU time does not (it sleeps, or waits for
    I/O) carries a "rising" doubt, or a settled class, and keeps wall time."""
    if not bracketed(wall) or wall.at_least != "1":
        return False
    checks = {d.check for d in wall.doubts}
    return bool(checks & {"hidden", "negligible"}) and "rising" not in checks


def _cpu_bracket_leads(wall: Fit, cpu: Fit) -> bool:
    """Whether CPU time's bracket says more than wall time's verdict, and nothing against it.

    Issue 25, measured on real programs with other tenants on 2 CPUs (BENCHMARKS §1,
    `bench/time_noise.py`): a run waits for a CPU as often as it is preempted, so its
    wall/CPU ratio ran from 1.0 for a 2 ms run to 2–13 for runs of 0.1–2 s. Wall time
    then gains growth the program does not have (mawk `s = s "x"` settled n³, k = 3.05,
    where CPU time read k = 2.72 [2.52, 2.91] and the truth is n²), and its per-size
    spread widens k's interval (C stpcpy: k = 1.59 [0.00, 4.00] on the clock, 1.00
    [0.22, 1.78] in CPU time). CPU time (user + sys: the scheduler's runtime, to the
    microsecond here) leads when both are brackets and CPU time's lies inside wall time's
    and is narrower, or when wall time settled a class that CPU time's bracket holds
    while wall time's k lies outside CPU time's interval (the two disagree by more
    than CPU time's noise: the difference is waiting). Either way the headline holds
    every class both allow, never one wall time excludes.
    """
    if not bracketed(cpu):
        return False
    order = REGISTRY.index
    lo, hi = order(cpu.at_least), order(cpu.at_most)
    if bracketed(wall):
        w_lo, w_hi = order(wall.at_least), order(wall.at_most)
        return w_lo <= lo and hi <= w_hi and hi - lo < w_hi - w_lo
    if not wall.confident or wall.cls not in REGISTRY or not lo <= order(wall.cls) <= hi:
        return False
    if wall.exponent is None or cpu.exponent_ci is None:
        return False
    c_lo, c_hi = cpu.exponent_ci
    return not c_lo <= wall.exponent <= c_hi


# CPU time surely grows when its k's 95% interval starts at least this far above 0 (the
# slack `verdict.EXPONENT_SLACK` allows a class's exponent outside k's interval).
_SURE_GROWTH_K = 0.3


def _surely_grows(cpu: Fit) -> bool:
    """CPU time grows beyond doubt: no "1" in its verdict and k's interval clear of 0.

    Every run's wall time holds its CPU time (one thread), so wall time grows at least
    by what CPU time grows; a wall time settled "1" beside it only says that waiting
    hid the growth. Measured (issue 25, `bench/time_noise.py`): C stpcpy at
    5000..80000 under `busy --cores 1 --memory 64` ran 0.8–5 ms of CPU and waited 0–70
    ms for a CPU, and wall time settled "1" in 1 of 6 sweeps, where CPU time read
    k = 0.87 [0.44, 1.30] (truth n).
    """
    if cpu.exponent_ci is None or trivial(cpu):
        return False
    lowest = cpu.cls if cpu.confident else cpu.at_least
    growth = REGISTRY.get(lowest)
    return growth is not None and growth.growing and cpu.exponent_ci[0] >= _SURE_GROWTH_K


def regime_text(fit: Fit, size_word: str = "n") -> str:
    """" above n ≈ 130,000 (below: n)", ", with a step near n ≈ 130,000", or "" with no change."""
    if fit.regime_n is None:
        return ""
    where = f"{size_word} ≈ {fit.regime_n:,}"
    if fit.regime_below and fit.regime_below in (fit.cls, fit.at_least, fit.at_most):
        return f", with a step near {where}"
    if fit.regime_below:
        below = label(fit.regime_below, size_word)
    elif fit.regime_k is not None:
        below = f"k ≈ {fit.regime_k[0]:.1f}"
    else:
        below = "not settled"
    return f" above {where} (below: {below})"


# A time class settled faster than this is confirmed by the work (`run.counting` counts it).
FASTEST_TRUSTED = "n^2"


def width(fit: Fit | None) -> int | None:
    """How many classes past the slowest a fit leaves open: 0 settled, 1 for two
    neighbours, ...; None when it names no bracket at all."""
    if fit is None:
        return None
    if fit.confident:
        return 0
    if not bracketed(fit):
        return None
    return REGISTRY.index(fit.at_most) - REGISTRY.index(fit.at_least)


def lead_fit(fits: Mapping[str, Fit], work: str | None = None) -> Fit | None:
    """The fit a verdict and a gate lead with: the work (`work`, an exactly counted
    metric) when its class is settled or bracketed, else the time (`time_fit`). The time
    leads beside a counted bracket only where it is narrower and trusted: a time class
    settled faster than FASTEST_TRUSTED is, over the short sweeps that reach it, more
    often the kernel, the caches or the allocator than the algorithm (mawk's `s = s "x"`:
    time settled n³ at 10k..60k, the work "n² or n³", the truth n²), so a counted work
    bracket leads it. A bracket from counts at too few sizes for an exact class (its
    "few_counts" doubt, `analysis.few_counts`) leads a time bracket only when narrower:
    its top is assumed, not measured (three counts fit any law), so on a tie the time's,
    read from every timed size, leads."""
    counted = fits.get(work) if work else None
    timed = time_fit(fits)
    w_work, w_time = width(counted), width(timed)
    if counted is None or w_work is None:
        return timed
    trusted = timed is not None and not (
        timed.confident and REGISTRY.index(timed.cls) > REGISTRY.index(FASTEST_TRUSTED))
    few = any(d.check == "few_counts" for d in counted.doubts)
    if w_work == 0 or w_time is None or not trusted:
        return counted
    if w_work < w_time or (w_work == w_time and not few):
        return counted
    return timed


def work_note(fits: Mapping[str, Fit], work: str | None) -> str:
    """The sentence under the headline about the work's terms: a settled exactly counted
    class whose fastest term is still a small part of the work at the largest size
    ("the n² term is 2% of the work at n = 64000 and dominates beyond n ≈ 3200000; ...",
    `analyse.exactfit`, its "work_terms" note); "" otherwise."""
    counted = fits.get(work) if work else None
    if counted is None or not counted.confident:
        return ""
    # How the work divides is said where the headline's k needs it ("a slower term beside").
    divides = _slower_term(counted)
    return "; ".join(doubt_text(d, REGISTRY) for d in counted.doubts
                     if d.check == "work_terms" and d.numbers.get("settled")
                     and (_share(d) < 0.5 or divides))


def _share(d: Doubt) -> float:
    share = d.numbers.get("share")
    return float(share) if isinstance(share, (int, float)) else 0.0


def _power_of(cls: str) -> float | None:
    """A pure power's exponent (2 for n², 0.5 for √n), which a + b·nᵖ reads as k whatever
    a is; None for a log factor (its k drifts with the sizes) and beyond every power."""
    growth = REGISTRY.get(cls)
    if growth is None or not growth.growing or growth.order[1] != 0:
        return None
    return growth.order[0] if growth.order[0] < float("inf") else None


def _work_k(fit: Fit, size_word: str) -> str:
    """The work's k: "k = 2.00 ± 0.01"; where a settled power's exponent lies outside k's
    interval (a slower term beside the fastest still does part of the work at these sizes,
    `analyse.exactfit`), "k = 1.77 at these sizes, a slower term beside n²", never a class
    that k's interval seems to exclude left unexplained."""
    k = _k(fit, fit.confident).removeprefix(" (").removesuffix(")")
    if not k or not _slower_term(fit) or fit.exponent is None:
        return k
    return (f"k = {fit.exponent:.2f} at these sizes, a slower term beside "
            f"{label(fit.cls, size_word)}")


def _slower_term(fit: Fit) -> bool:
    """A settled pure power whose exponent k's interval excludes: a slower term holds k."""
    slope = _power_of(fit.cls) if fit.confident else None
    ci = fit.exponent_ci
    return slope is not None and ci is not None and not ci[0] - 0.005 <= slope <= ci[1] + 0.005


def _work_clause(fit: Fit, size_word: str) -> str:
    """"quadratic: the work grows as n² (instructions, exact, k = 2.00 ± 0.01)"."""
    k = _work_k(fit, size_word)
    how = f" ({fit.metric}, exact{', ' + k if k else ''})"
    if trivial(fit) and fit.regime_n is None:
        return f"constant: the work does not grow with {size_word}{how}"
    if fit.confident:
        return (f"{REGISTRY[fit.cls].words}: the work grows as {label(fit.cls, size_word)}"
                f"{regime_text(fit, size_word)}{how}")
    return f"the work grows as {bracket_text(fit, size_word)}{_ruled_out(fit, size_word)}{how}"


def _ruled_out(fit: Fit, size_word: str) -> str:
    """" — not quadratic": what a bracket excludes."""
    hi, lo = REGISTRY.index(fit.at_most), REGISTRY.index(fit.at_least)
    if hi + 1 < len(REGISTRY):
        return f" — not {REGISTRY.classes[hi + 1].words}"
    if lo > 0:
        return f" — faster than {label(REGISTRY.classes[lo - 1].name, size_word)}"
    return " — nothing ruled out"


def _time_clause(fit: Fit, size_word: str, lead: bool = True) -> str:
    who = metric_words(fit.metric)
    if trivial(fit) and fit.regime_n is None:
        return f"constant: {who} does not grow with {size_word}" if lead else (
            f"{who} does not grow with {size_word}")
    if fit.confident:
        growth = REGISTRY[fit.cls]
        words = f"{growth.words}: " if lead else ""
        return (f"{words}{_grows(fit.metric)} as {label(fit.cls, size_word)}"
                f"{regime_text(fit, size_word)}{_k(fit, True)}")
    if bracketed(fit):
        return (f"{_grows(fit.metric)} as {bracket_text(fit, size_word)}"
                f"{regime_text(fit, size_word)}{_ruled_out(fit, size_word)}{_k(fit, False)}")
    return f"{who}: growth not settled yet: {fit.reason}" if fit.reason else (
        f"{who}: growth not settled yet")


def _alike(time: Fit, work: Fit) -> bool:
    """The time settled on the work's class, neither with a change of regime: "time too"."""
    return (time.confident and work.confident and time.cls == work.cls
            and time.regime_n is None and work.regime_n is None and not trivial(work))


def verdict_line(fits: Mapping[str, Fit], size_word: str = "n", n_max: float | None = None,
                 peaks: Mapping[str, float] | None = None, work: str | None = None) -> str:
    """One line: how the time grows, then any metric that grows faster or is a story on its own.

    `peaks` (each metric's largest measured value) lets a count that never
    exceeded 1 read as constant; growth immaterial at `n_max` never joins.
    `work` names a metric counted exactly (the meter's): when its fit is settled or
    bracketed the line leads with the work, the algorithm's class, and the time follows
    as what the machine pays ("quadratic: the work grows as n² (instructions, exact,
    k = 2.00 ± 0.01); wall time grows as 1 … n³ — not exponential (k = …)").
    """
    peaks = peaks or {}
    time = time_fit(fits)
    counted = fits.get(work) if work else None
    if counted is not None and not (counted.confident or bracketed(counted)):
        counted = None
    if time is None and counted is None:
        return "nothing could be fitted" if not fits else (
            "no time was measured: " + ", ".join(
                f"{f.metric} {class_text(f, size_word, peaks.get(f.metric))}"
                for f in fits.values()))
    parts = [_work_clause(counted, size_word)] if counted is not None else []
    if time is not None and counted is not None and _alike(time, counted):
        parts.append(f"{metric_words(time.metric)} too{_k(time, False)}")
    elif time is not None:
        parts.append(_time_clause(time, size_word, lead=counted is None))
    head = "; ".join(parts)
    lead = counted if counted is not None and counted.confident else time
    if lead is None or not (lead.confident or bracketed(lead)):
        return head  # nothing speaks over an unsettled verdict
    ceiling = _fastest(lead)
    joins = []
    for f in fits.values():
        known = metrics.find(f.metric)
        if (f.metric in (*TIME_METRICS, "user_s") or not f.confident
                or trivial(f, peaks.get(f.metric))):
            continue
        if known is not None and not known.leads:
            continue
        growth = REGISTRY[f.cls]
        if growth_fraction(f, n_max) < MATERIAL_GROWTH:
            continue
        # Only the kernel's and memory's metrics speak beside time: a context-switch or
        # cycle count that "outgrows" time is noise on a count, or time said again.
        if f.metric not in _JOINERS:
            continue
        faster = ceiling is not None and growth.order > ceiling.order
        story = f.metric in _STORIES and growth.superlinear
        if faster or story:
            joins.append(f"{_grows(f.metric)} as {label(f.cls, size_word)}"
                         f"{_k(f, True)}")
    return "; ".join([head, *joins])


__all__ = ["accumulated_total", "bracket_text", "class_text", "exponent_text", "growth_fraction", "label",
           "lead_fit", "metric_words", "regime_text", "time_fit", "trivial", "verdict_line",
           "work_note"]


def accumulated_total(fit: Fit, launches: int) -> str:
    """What K launches cost in total, from the fitted a + b·f(i) summed over i = 1..K.

    The total grows as the class's `total` (K² for a per-launch cost linear in
    i) only once the growing part outweighs the fixed cost a at the K measured;
    until then the honest sentence is "about K × a plus a part growing as …".
    Returns a clause such as "K launches cost about K × 1.02 ms plus a part
    growing as K² (0.61 s + 0.05 s over the 600 measured)".
    """
    import numpy as np

    from quadscope.units import fmt_value  # units is light, but only this needs it

    growth = REGISTRY.get(fit.cls if fit.confident else fit.best)
    a, b = fit.coefficients.get("a", 0.0), fit.coefficients.get("b", 0.0)
    i = np.arange(1, launches + 1, dtype=float)
    if growth is None or not growth.growing or b <= 0 or trivial(fit):
        # Flat, or a growth the fit could not place: each launch costs its mean fitted cost.
        fixed = float(np.mean(growth.evaluate(a, b, i))) if growth is not None else a
        return (f"K launches cost about K × {fmt_value(fit.metric, fixed)} "
                f"({fmt_value(fit.metric, fixed * launches)} over the {launches} measured)")
    with np.errstate(over="ignore", invalid="ignore"):
        grown = float(np.sum(growth.evaluate(0.0, b, i)))
        last = float(growth.evaluate(0.0, b, i[-1:])[-1])
    fixed_total = a * launches
    shape = growth.total or f"Σ {growth.named('i')}"
    both = (f"{fmt_value(fit.metric, fixed_total)} + {fmt_value(fit.metric, grown)} "
            f"over the {launches} measured")
    if fit.confident and last >= a:
        return (f"K launches cost about {shape} in total, the growing part outweighing the "
                f"fixed {fmt_value(fit.metric, a)} per launch by i = {launches} ({both})")
    grows = f"growing as {shape}" if fit.confident else "that grows, its class not settled"
    return (f"K launches cost about K × {fmt_value(fit.metric, a)} plus a part {grows} "
            f"({both})")
