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
* the growth beyond memory's is where the caches can make it: measured on the
  per-size medians, time outgrows n^k_memory by at most IN_CACHE_EXCESS over
  the sizes whose working set fits in the cache (growth there is the
  algorithm's, not the caches'), and by at most MEMORY_PENALTY from the first
  size whose working set does not fit to the largest;

then its verdict becomes a bracket from memory's class up to time's, with no
size named to decide it: a "memory" `Doubt` whose meter, instructions, would
(its sentences are `analyse.text`'s). Without the cache sizes (a sweep stored
before they were recorded) or peak RSS, nothing changes.

Why: once the data a program walks outgrow a cache, each access costs more as
n grows (misses in L2, then the last-level cache, the TLB and page walks), so
the time per element rises over a wide span of n and wall time reads faster
than the algorithm: a random walk over n slots read n log n over 4k–512k
elements (the cost per element up 1.5x), n^1.84 in user time over 64k–4M (11x),
and heap sort n^1.7 over 30k–1M (about 12x). Within such a span repetition does
not separate the algorithm's class from the memory's effect: counting the work
does (`--meter instructions`), and the note says so. The memory's own class is
the floor: a program that touches n bytes does at least that much work. The
bounds keep what caches cannot make: a per-access cost rises from an L2 hit
to a DRAM access with a TLB miss by about 20x on current x86 (~14 cycles
against ~100 ns), and not at all while the data fit. So a quadratic over a
working set of 2 MiB, whose time per element rises 16x from 1k to 16k while
its data fit in L2, stays quadratic; and cache_step's pointer chase, whose
time per element rose 6x over 64k–2M elements once out of L2 after growing
slower than n before (start-up), reads "n … n²" (measured over the sizes
that matter: over 4k–2M its exponent alone implied 80x, beyond the bound).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from quadscope.analyse import text
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.host import Host
from quadscope.model import Doubt, Fit, Run

TIME_METRICS = ("wall_s", "user_s", "cpu_s")
# Without the L2's size: the working set at the largest size, as a share of the
# last-level cache, from which the caches may shape the time.
LLC_SHARE = 0.25
# The most the memory hierarchy multiplies the time per element by over a sweep (see the
# module docstring).
MEMORY_PENALTY = 20.0
# The most time may outgrow memory's class while the data still fit in the cache.
IN_CACHE_EXCESS = 2.0
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


def _excess(time: Mapping[int, float], lo: int, hi: int, k_memory: float) -> float:
    """How much more than n^k_memory the time grows from size lo to size hi."""
    if time[lo] <= 0:
        return math.inf
    return (time[hi] / time[lo]) / (hi / lo) ** k_memory


def _caches_may_explain(time: Mapping[int, float], rss: Mapping[int, float], cache: float,
                        k_memory: float) -> bool:
    """The module docstring's bounds, on the medians of one time metric."""
    sizes = [n for n in time if n in rss]
    if len(sizes) < 2:
        return False
    base = rss[sizes[0]]
    fits = [n for n in sizes if rss[n] - base < cache]
    out = [n for n in sizes if rss[n] - base >= cache]
    if not out:
        return False
    if len(fits) >= 2 and _excess(time, fits[0], fits[-1], k_memory) > IN_CACHE_EXCESS:
        return False  # it outgrew memory while the data fit: that is the algorithm
    return _excess(time, out[0], out[-1], k_memory) <= MEMORY_PENALTY


def _slowest(fit: Fit) -> str:
    return fit.at_least or (fit.cls if fit.confident else "")


def _fastest(fit: Fit) -> str:
    return fit.at_most or (fit.cls if fit.confident else "")


def memory_bound(fits: Mapping[str, Fit], runs: Sequence[Run],
                 host: Host) -> tuple[dict[str, Fit], list[str]]:
    """The fits with time verdicts the caches may explain widened, and a note for each."""
    out = dict(fits)
    l2, llc = host.l2_bytes or 0, host.llc_bytes or 0
    cache, name = (l2, "L2 cache") if l2 > 0 else (LLC_SHARE * llc, "last-level cache")
    rss = fits.get("max_rss_bytes")
    rss_at = _medians(runs, "max_rss_bytes")
    span = _rss_span(rss_at)
    if cache <= 0 or rss is None or span is None or span[0] < cache:
        return out, []
    memory = _slowest(rss)  # what the memory surely grows as: the floor
    if (memory not in REGISTRY or REGISTRY.index(memory) == 0 or rss.exponent is None
            or not math.isfinite(rss.exponent)):
        return out, []
    notes = []
    for metric in TIME_METRICS:
        fit = fits.get(metric)
        if fit is None or not fit.confident:
            continue
        slowest = _slowest(fit)
        if (slowest not in REGISTRY or REGISTRY.index(slowest) <= REGISTRY.index(memory)
                or REGISTRY.index(slowest) > REGISTRY.index(CEILING)):
            continue
        if not _caches_may_explain(_medians(runs, metric), rss_at, cache, rss.exponent):
            continue  # more than the caches can make of memory's growth
        fastest = _fastest(fit) or slowest
        doubt = Doubt("memory", memory, fastest, None, meter="instructions", numbers={
            "memory": memory, "slowest": slowest, "working_set_bytes": span[0],
            "cache_bytes": l2 or llc, "cache": name})
        out[metric] = replace(fit, cls=INCONCLUSIVE, best=fit.best or fit.cls,
                              at_least=memory, at_most=fastest, decide_n=None,
                              reason=text.doubt_text(doubt, REGISTRY),
                              doubts=(*fit.doubts, doubt))
        notes.append(text.memory_note(metric, doubt))
    return out, notes
