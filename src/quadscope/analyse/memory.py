"""Time that outgrows the memory a program touches, while that memory leaves the caches.

Contract: `memory_bound(fits, runs, host, work=None)` is pure: given one
variant's fits, its measured runs, the sweep's host facts (`l2_bytes`,
`llc_bytes`, from `measure.host`) and the metric counting the work exactly
(`work`, an exact meter's; None for a timed sweep), it returns the fits with
each time metric's verdict widened where the memory hierarchy accounts for
part of its growth, and a note for each. Only a settled time class
(TIME_METRICS) is touched (an unsettled one already says it is unsure), and
only when:

* the working set, the median peak RSS at the largest size less that at the
  smallest, outgrows the L2 cache (or LLC_SHARE of the last-level cache when
  the L2's size is not recorded);
* peak RSS surely grows (its fit's slowest class is above "1") and time's
  class is faster than that, by at most up to n² (no cache makes n³ of n).

How far the verdict may widen is measured in the data, never assumed (issue
25: a quadratic whose working set grew as √n out of L2 once read "√n … n²"
beside k = 1.96 [1.92, 1.99]). The sizes split at the transition: those whose
working set fits in the cache (at least MIN_SIDE of them, spanning ×2) and
those beyond it (at least MIN_SIDE). Below the transition the time grows as
n^k_in, the algorithm's growth while the data fit (the time less the fitted
offset, start-up that no cache scales); the cache's excess is how
much more than n^k_in the time grew from the last size that fits to the
largest, capped at MEMORY_PENALTY. Spread over the span of sizes the verdict's
k was fitted on (above a change of regime, when there is one), that excess is
the exponent e the caches can explain; the bracket reaches down from time's
class to the fastest class whose exponent is at most k_lo − e, and never below
memory's class (a program that touches n bytes does at least that much work).
When that is time's class, or the excess is under MIN_EXCESS, nothing changes.
Without sizes on both sides of the transition nothing is measured, so nothing
widens. With the work counted (`--meter instructions`), the cost per unit of
work is measured directly, below the transition and at the largest size, and
the caveat is a note giving that rise, never a bracket: the work's own class
is the algorithm's.

Why: once the data a program walks outgrow a cache, each access costs more as
n grows (misses in L2, then the last-level cache, the TLB and page walks), so
the time per element rises over a wide span of n and wall time reads faster
than the algorithm: a random walk over n slots read n log n over 4k–512k
elements (the cost per element up 1.5x), n^1.84 in user time over 64k–4M (11x),
and heap sort n^1.7 over 30k–1M (about 12x). A per-access cost rises from an L2
hit to a DRAM access with a TLB miss by about 20x on current x86 (~14 cycles
against ~100 ns), and not at all while the data fit, hence the cap.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from quadscope.analyse import text
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.host import Host
from quadscope.model import Doubt, DoubtValue, Fit, Run

TIME_METRICS = ("wall_s", "user_s", "cpu_s")
# Without the L2's size: the working set at the largest size, as a share of the
# last-level cache, from which the caches may shape the time.
LLC_SHARE = 0.25
# The most the memory hierarchy multiplies the time per element by over a sweep (see the
# module docstring).
MEMORY_PENALTY = 20.0
# Sizes needed on each side of the transition to measure the cost below and above it.
MIN_SIDE = 2
# A rise past the cache smaller than this (×) is noise, not the caches' doing.
MIN_EXCESS = 1.25
# The fastest time class a cache effect is taken to explain (over a memory class below).
CEILING = "n^2"


def _medians(runs: Sequence[Run], metric: str) -> dict[int, float]:
    at: dict[int, list[float]] = {}
    for r in runs:
        v = r.value(metric)
        if v is not None:
            at.setdefault(r.size_n, []).append(v)
    return {n: statistics.median(vs) for n, vs in sorted(at.items())}


def _rss_span(rss: Mapping[int, float]) -> tuple[float, float] | None:
    """(working set at the largest size, its peak RSS) from the per-size medians."""
    if len(rss) < 2:
        return None
    low, top = rss[min(rss)], rss[max(rss)]
    return top - low, top


def _slope(time: Mapping[int, float], lo: int, hi: int) -> float:
    """The log-log slope of the median time from size lo to size hi."""
    return math.log(time[hi] / time[lo]) / math.log(hi / lo)


def _sides(sizes: Sequence[int], rss: Mapping[int, float], cache: float) -> tuple[list[int], list[int]]:
    """(sizes whose working set fits in `cache`, sizes beyond it)."""
    base = rss[sizes[0]]
    inside = [n for n in sizes if rss[n] - base < cache]
    return inside, [n for n in sizes if rss[n] - base >= cache and n > inside[-1]]


def _measurable(inside: Sequence[int], out: Sequence[int]) -> bool:
    return len(inside) >= MIN_SIDE and inside[-1] >= 2 * inside[0] and len(out) >= MIN_SIDE


def cache_excess(time: Mapping[int, float], rss: Mapping[int, float], cache: float,
                 work: Mapping[int, float] | None = None) -> float | None:
    """How many times more the time grew past the cache than below it (None: not measurable).

    Without `work`: the time at the largest size over the time at the last size
    that fits, divided by what n^k_in (the slope while the data fit) predicts.
    With `work` (an exact count per size): the time per unit of work at the
    largest size over that at the last size that fits.
    """
    sizes = [n for n in time if n in rss and time[n] > 0 and (work is None or work.get(n, 0) > 0)]
    if len(sizes) < 2 * MIN_SIDE:
        return None
    inside, out = _sides(sizes, rss, cache)
    if not _measurable(inside, out):
        return None
    last, top = inside[-1], out[-1]
    if work is not None:
        return (time[top] / work[top]) / (time[last] / work[last])
    k_in = _slope(time, inside[0], last)
    return (time[top] / time[last]) / (top / last) ** k_in


def _growing_part(time: Mapping[int, float], fit: Fit) -> dict[int, float]:
    """The median times less the fit's offset a (start-up, which no cache scales), or the
    times as they are where that leaves one not positive, or where the fit is of the sizes
    above a change of regime (its offset is not that of the sizes below)."""
    a = fit.coefficients.get("a", 0.0) if fit.regime_n is None else 0.0
    less = {n: t - a for n, t in time.items()}
    return less if a > 0 and all(t > 0 for t in less.values()) else dict(time)


def _exponent(cls: str, lo: float, hi: float) -> float:
    """A class's log-log slope from size lo to size hi (its shape alone)."""
    if not REGISTRY[cls].growing:
        return 0.0
    f = REGISTRY[cls].evaluate(0.0, 1.0, [lo, hi])
    if not f[0] > 0:  # log n from n = 1: a rise from nothing is no finite slope
        return math.inf
    return math.log(f[1] / f[0]) / math.log(hi / lo)


def _floor(fit: Fit, memory: str, excess: float, lo: float, hi: float) -> str:
    """The slowest class the caches leave time's growth: k_lo less what `excess` explains."""
    k_lo = fit.exponent_ci[0] if fit.exponent_ci is not None else fit.exponent or 0.0
    reach = k_lo - math.log(min(excess, MEMORY_PENALTY)) / math.log(hi / lo)
    order = REGISTRY.index
    below = [g.name for g in REGISTRY if g.growing and not g.outgrows_powers
             and _exponent(g.name, lo, hi) <= reach + 1e-9]
    floor = max(below, key=order, default=memory)
    return max(floor, memory, key=order)


def _slowest(fit: Fit) -> str:
    return fit.at_least or (fit.cls if fit.confident else "")


def _fastest(fit: Fit) -> str:
    return fit.at_most or (fit.cls if fit.confident else "")


def memory_bound(fits: Mapping[str, Fit], runs: Sequence[Run], host: Host,
                 work: str | None = None) -> tuple[dict[str, Fit], list[str]]:
    """The fits with time verdicts the caches explain widened, and a note for each."""
    out = dict(fits)
    l2, llc = host.l2_bytes or 0, host.llc_bytes or 0
    cache, name = (l2, "L2 cache") if l2 > 0 else (LLC_SHARE * llc, "last-level cache")
    rss = fits.get("max_rss_bytes")
    rss_at = _medians(runs, "max_rss_bytes")
    span = _rss_span(rss_at)
    if cache <= 0 or rss is None or span is None or span[0] < cache:
        return out, []
    memory = _slowest(rss)  # what the memory surely grows as: the floor
    if memory not in REGISTRY or REGISTRY.index(memory) == 0:
        return out, []
    counted = _medians(runs, work) if work else None
    notes = []
    for metric in TIME_METRICS:
        fit = fits.get(metric)
        if fit is None or not fit.confident:
            continue
        slowest = _slowest(fit)
        if (slowest not in REGISTRY or REGISTRY.index(slowest) <= REGISTRY.index(memory)
                or REGISTRY.index(slowest) > REGISTRY.index(CEILING)):
            continue
        time = _growing_part(_medians(runs, metric), fit)
        excess = cache_excess(time, rss_at, cache, counted or None)
        if excess is None or excess < MIN_EXCESS:
            continue  # nothing measured, or nothing for the caches to explain
        numbers: dict[str, DoubtValue] = {
            "memory": memory, "slowest": slowest, "working_set_bytes": span[0],
            "cache_bytes": l2 or llc, "cache": name, "excess": min(excess, MEMORY_PENALTY)}
        if counted:  # the work is counted: its class is the algorithm's; the time's rise a note
            notes.append(text.memory_note(metric, Doubt("memory", slowest, slowest, None,
                                                          numbers={**numbers, "per_work": 1})))
            continue
        sizes = [n for n in time if fit.regime_n is None or n > fit.regime_n]
        floor = _floor(fit, memory, excess, float(min(sizes)), float(max(sizes)))
        if REGISTRY.index(floor) >= REGISTRY.index(slowest):
            continue  # the caches explain less than one class of growth
        doubt = Doubt("memory", floor, _fastest(fit) or slowest, None, meter="instructions",
                      numbers=numbers)
        out[metric] = replace(fit, cls=INCONCLUSIVE, best=fit.best or fit.cls,
                              at_least=floor, at_most=doubt.at_most, decide_n=None,
                              reason=text.doubt_text(doubt, REGISTRY),
                              doubts=(*fit.doubts, doubt))
        notes.append(text.memory_note(metric, doubt))
    return out, notes
