"""Time that outgrows the memory a program touches, while that memory leaves the caches.

Contract: `memory_bound(fits, runs, host)` is pure: given one variant's fits,
its measured runs and the sweep's host facts (`llc_bytes`, the last-level
cache, from `measure.host`), it returns the fits with each time metric's
verdict widened where the memory hierarchy may account for its growth, and
a note for each. A time metric (TIME_METRICS) is widened when all of these
hold:

* the working set, the median peak RSS at the largest size less that at the
  smallest, reaches LLC_SHARE of the last-level cache;
* peak RSS grows (its fit's fastest class is above "1") and time's slowest
  class is faster than memory's fastest, by at most up to n² (no cache makes
  n³ of n, nor an exponential);

then its verdict becomes a bracket from memory's class up to time's, with no
size named to decide it. Without `llc_bytes` (a sweep stored before it was
recorded) or peak RSS, nothing changes.

Why: once the data a program walks outgrow the caches, each access costs
more as n grows (cache misses, then TLB misses and page walks), so the time
per element rises over a wide span of n and wall time reads faster than the
algorithm: a random walk over n slots measured from 64k to 4M elements read
n^1.84 in user time and was called n²; heap sort over 30k–1M read n^1.7.
Within such a span no amount of repetition separates the algorithm's class
from the memory's effect: only counting the work does (`--meter
instructions`), and the note says so. The memory's own growth class is the
floor: a program that touches n bytes does at least that much work.
Quadratic code whose working set stays within the caches (most of it, at
the sizes a budget reaches) is unaffected.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Fit, Run
from quadscope.units import fmt_bytes

TIME_METRICS = ("wall_s", "user_s", "cpu_s")
# The working set at the largest size, as a share of the last-level cache, from which
# the caches may shape the time: the cache is shared with the program's other data,
# other processes and, on a VM, other tenants.
LLC_SHARE = 0.25
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
    llc = int(host.get("llc_bytes", "0") or 0)
    rss = fits.get("max_rss_bytes")
    span = _rss_span(runs)
    if llc <= 0 or rss is None or span is None or span[0] < LLC_SHARE * llc:
        return out, []
    memory = _fastest(rss)
    if memory not in REGISTRY or REGISTRY.index(memory) == 0:
        return out, []
    notes = []
    for metric in TIME_METRICS:
        fit = fits.get(metric)
        if fit is None:
            continue
        slowest = _slowest(fit)
        if (slowest not in REGISTRY or REGISTRY.index(slowest) <= REGISTRY.index(memory)
                or REGISTRY.index(slowest) > REGISTRY.index(CEILING)):
            continue
        fastest = _fastest(fit) or slowest
        why = (f"its working set grows as {memory} to {fmt_bytes(span[0])}, past "
               f"{LLC_SHARE:.0%} of the {fmt_bytes(llc)} last-level cache")
        out[metric] = replace(fit, cls=INCONCLUSIVE, best=fit.best or fit.cls,
                              at_least=memory, at_most=fastest, decide_n=None,
                              reason=f"{why}: the caches may account for growth beyond {memory}")
        notes.append(f"{metric} grows as {slowest if slowest == fastest else f'{slowest} … {fastest}'} "
                     f"over these sizes, but {why}: each access costs more as the data leave "
                     "the caches (cache and TLB misses), so part of that growth may be the "
                     f"memory's rather than the algorithm's, which grows at least as {memory}; "
                     "`--meter instructions` counts the work itself")
    return out, notes
