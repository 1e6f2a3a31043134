"""Accumulate mode's launches pooled into sizes: what the fit sees of K single runs.

Contract: `pool_launches(runs)` takes one variant's measured launches (one run
per launch index i) and returns the same runs with `size_n` replaced by the
median index of their pool, or the runs unchanged when there are fewer than
`MIN_LAUNCHES`. Pure; nothing but `size_n` changes.

Why: a launch is measured once, and a shared machine's launch times have
heavy tails (a 4 ms run among 1 ms ones). Fitted one by one, 600 such points
let a burst of load read as a change of regime or a class (seen: `make demo`'s
probing logger, linear, read "i … i², a change of regime near i = 160"; pooled,
"i or i log i"). Pooled, each size is the median of its launches: one burst
moves it little. Pools are consecutive launches whose indices span at most a
factor POOL_RATIO (at least MIN_POOL launches), so across a pool a cost
growing as i moves by about ±11% around its median, and one growing as i²
by about ±22%.

The pooled runs are consecutive in time, so their order within a pool is not
a drift of the machine, and they share the machine's state of the moment (a
shared VM's speed moves in phases, seen as 1.0 against 1.3 ms per launch for
a hundred launches at a time), so a pool's spread understates the noise
between pools: the caller fits them with `fit_metric(pooled=True)`, which
takes each pool's median as one observation (as with one run per size) and
takes no drift out.

`counted_apart(runs, metric)` splits launches counted in place of their timed
run (`run.accumulate`: every 2^k-th launch run once under Valgrind, its times
the counting run's) from the timed ones: (timed, counted). When every launch
carries the count (a CPU counter counting each run as it goes), none is apart.
The timed ones are pooled and fitted for time; the counted ones are fitted
one launch each for the work (`analyse.exactfit`): a count repeats, so there is
nothing to pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from quadscope.model import Run

MIN_POOL = 5
POOL_RATIO = 1.25
# Below this many launches pooling would leave too few sizes to fit: they stay single.
MIN_LAUNCHES = 40


def pools(indices: Sequence[int]) -> list[tuple[int, int]]:
    """[lo, hi) slices of sorted launch `indices`, each one pool (see the module)."""
    out: list[tuple[int, int]] = []
    lo, count = 0, len(indices)
    while lo < count:
        width = max(MIN_POOL, round(max(indices[lo], 1) * (POOL_RATIO - 1)))
        hi = min(count, lo + width)
        if count - hi < MIN_POOL:  # a short tail joins the last pool
            hi = count
        out.append((lo, hi))
        lo = hi
    return out


def pool_launches(runs: Sequence[Run]) -> tuple[Run, ...]:
    """`runs` with each launch's `size_n` set to its pool's median index (see the module)."""
    ordered = sorted(runs, key=lambda r: (r.size_n, r.seq))
    if len(ordered) < MIN_LAUNCHES:
        return tuple(ordered)
    indices = [r.size_n for r in ordered]
    out: list[Run] = []
    for lo, hi in pools(indices):
        centre = indices[(lo + hi - 1) // 2]
        out.extend(replace(r, size_n=centre) for r in ordered[lo:hi])
    return tuple(sorted(out, key=lambda r: r.seq))


def counted_apart(runs: Sequence[Run], metric: str | None) -> tuple[tuple[Run, ...], tuple[Run, ...]]:
    """(timed, counted): the launches without `metric` and those counted in place (module)."""
    if metric is None:
        return tuple(runs), ()
    counted = tuple(r for r in runs if r.value(metric) is not None)
    if len(counted) == len(runs):
        return tuple(runs), ()
    return tuple(r for r in runs if r.value(metric) is None), counted


def launch_list(launches: Sequence[int]) -> str:
    """"2, 4, 8" in full up to four launches, else "2, 4, …, 512" (in the order given)."""
    shown = [str(i) for i in launches]
    return ", ".join(shown) if len(shown) <= 4 else f"{shown[0]}, {shown[1]}, …, {shown[-1]}"


def counted_text(runs: Sequence[Run], metric: str | None) -> str:
    """One sentence naming the launches counted in place, per variant ("" when none were):
    "the work was counted at launches 2, 4, …, 512 (A) and 2, 4, …, 256 (B), each in place
    of its timed run", "… 2, 4, …, 512 (A and B) …" where both sides' are the same."""
    by_variant: dict[str, list[int]] = {}
    for r in runs:
        if metric is not None and r.measurement.ok and r.value(metric) is not None:
            by_variant.setdefault(r.variant, []).append(r.size_n)
    if not by_variant or len(by_variant.get("A", [])) == len(
            [r for r in runs if r.variant == "A" and r.measurement.ok]):
        return ""  # nothing counted, or every launch counted as it ran

    lists = {name: launch_list(sorted(v)) for name, v in sorted(by_variant.items())}
    if len(set(lists.values())) == 1 and len(lists) > 1:  # "2, 4, …, 512 (A and B)", said once
        lists = {" and ".join(lists): next(iter(lists.values()))}
    parts = [f"{said}{f' ({name})' if len(by_variant) > 1 else ''}"
             for name, said in lists.items()]
    return (f"the work was counted at launches {' and '.join(parts)}, each in place of its "
            "timed run (-v: why, and what it cost)")


__all__ = ["MIN_LAUNCHES", "MIN_POOL", "POOL_RATIO", "counted_apart", "counted_text",
           "launch_list", "pool_launches", "pools"]
