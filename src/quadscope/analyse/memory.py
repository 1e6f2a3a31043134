"""Time that outgrows the memory a program touches, while that memory leaves the caches.

Contract: `memory_bound(fits, runs, host)` is pure: given one variant's fits,
its measured runs and the sweep's host facts (`l2_bytes`, `llc_bytes`, from
`measure.host`), it returns the fits with each time metric's verdict widened
where the memory hierarchy may account for its growth, and a note for each.
A time metric (TIME_METRICS) whose class is settled is widened when all of
these hold (an unsettled one already says it is unsure, and its bracket
stands):

* the working set, the median peak RSS at the largest size less that at the
  smallest, outgrows the L2 cache (or LLC_SHARE of the last-level cache when
  the L2's size is not recorded);
* peak RSS surely grows (its fit's slowest class is above "1") and time's
  slowest class is faster than that, by at most up to n² (no cache makes n³
  of n, nor an exponential);
* the excess it implies is one the caches can make: over the sizes, time's
  lowest exponent (its 95% interval's low end) outgrows memory's by a factor
  (n_max/n_min)^(k_time - k_memory) of at most MEMORY_PENALTY;

then its verdict becomes a bracket from memory's class up to time's, with no
size named to decide it. Without the cache sizes (a sweep stored before they
were recorded) or peak RSS, nothing changes.

Why: once the data a program walks outgrow a cache, each access costs more as
n grows (misses in L2, then the last-level cache, the TLB and page walks), so
the time per element rises over a wide span of n and wall time reads faster
than the algorithm: a random walk over n slots read n log n over 4k–512k
elements (the cost per element up 1.5x), n^1.84 in user time over 64k–4M (11x),
and heap sort n^1.7 over 30k–1M (about 12x). Within such a span repetition does
not separate the algorithm's class from the memory's effect: counting the work
does (`--meter instructions`), and the note says so. The memory's own class is
the floor: a program that touches n bytes does at least that much work. The
penalty bound keeps what caches cannot make: a per-access cost rises from an
L2 hit to a DRAM access with a TLB miss by about 20x on current x86 (~14 cycles
against ~100 ns), so a quadratic over a working set of 2 MiB, whose time per
element rises 64x from 1k to 64k, stays quadratic.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Fit, Run
from quadscope.units import fmt_bytes

TIME_METRICS = ("wall_s", "user_s", "cpu_s")
# Without the L2's size: the working set at the largest size, as a share of the
# last-level cache, from which the caches may shape the time.
LLC_SHARE = 0.25
# The most the memory hierarchy multiplies the time per element by over a sweep (see the
# module docstring).
MEMORY_PENALTY = 20.0
# The fastest time class a cache effect is taken to explain (over a memory class below).
CEILING = "n^2"


def _rss_span(runs: Sequence[Run]) -> tuple[float, float] | None:
    """(working set at the largest size, its peak RSS) from the per-size medians."""
    at: dict[int, list[float]] = {}
    for r in runs:
        v = r.measurement.max_rss_bytes
        if v is not None:
            at.setdefault(r.size_n, []).append(float(v))
    if len(at) < 2:
        return None
    low, top = statistics.median(at[min(at)]), statistics.median(at[max(at)])
    return top - low, top


def _slowest(fit: Fit) -> str:
    return fit.at_least or (fit.cls if fit.confident else "")


def _fastest(fit: Fit) -> str:
    return fit.at_most or (fit.cls if fit.confident else "")


def memory_bound(fits: Mapping[str, Fit], runs: Sequence[Run],
                 host: Mapping[str, str]) -> tuple[dict[str, Fit], list[str]]:
    """The fits with time verdicts the caches may explain widened, and a note for each."""
    out = dict(fits)
    l2, llc = (int(host.get(k, "0") or 0) for k in ("l2_bytes", "llc_bytes"))
    cache, name = (l2, "L2 cache") if l2 > 0 else (LLC_SHARE * llc, "last-level cache")
    rss = fits.get("max_rss_bytes")
    span = _rss_span(runs)
    if cache <= 0 or rss is None or span is None or span[0] < cache:
        return out, []
    memory = _slowest(rss)  # what the memory surely grows as: the floor
    if (memory not in REGISTRY or REGISTRY.index(memory) == 0 or rss.exponent is None
            or not math.isfinite(rss.exponent)):
        return out, []
    sizes = [r.size_n for r in runs]
    widest = max(sizes) / max(min(sizes), 1)
    notes = []
    for metric in TIME_METRICS:
        fit = fits.get(metric)
        if fit is None or not fit.confident:
            continue
        slowest = _slowest(fit)
        if (slowest not in REGISTRY or REGISTRY.index(slowest) <= REGISTRY.index(memory)
                or REGISTRY.index(slowest) > REGISTRY.index(CEILING)
                or fit.exponent_ci is None or not math.isfinite(fit.exponent_ci[0])):
            continue
        if widest ** max(fit.exponent_ci[0] - rss.exponent, 0.0) > MEMORY_PENALTY:
            continue  # more than the caches can make of memory's growth
        fastest = _fastest(fit) or slowest
        why = (f"its working set grows as {memory} to {fmt_bytes(span[0])}, out of the "
               f"{fmt_bytes(l2 or llc)} {name}")
        out[metric] = replace(fit, cls=INCONCLUSIVE, best=fit.best or fit.cls,
                              at_least=memory, at_most=fastest, decide_n=None,
                              reason=f"{why}: the caches may account for growth beyond {memory}")
        notes.append(f"{metric} grows as {slowest if slowest == fastest else f'{slowest} … {fastest}'} "
                     f"over these sizes, but {why}: each access costs more as the data leave "
                     "the caches (cache and TLB misses), so part of that growth may be the "
                     f"memory's rather than the algorithm's, which grows at least as {memory}; "
                     "`--meter instructions` counts the work itself")
    return out, notes
