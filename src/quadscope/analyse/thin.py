"""Which sizes a very wide sweep is fitted on: at most MAX_FIT_SIZES, evenly spread in log n.

Contract: `fit_sizes(sizes, limit=MAX_FIT_SIZES)` returns the distinct sizes
to fit on, ascending: all of them when there are at most `limit`, else
`limit` of them, the smallest and the largest always among them, the rest the
sizes nearest to a grid evenly spaced in log n (where the sizes are denser
than that grid in log n, as 1, 2, 3 … are, every one of them is kept and the
grid's remaining points spread over the rest). `thinned(runs_by_variant,
limit)` keeps, in each variant, the runs at those sizes (taken over every
variant's sizes, so that A and B are fitted on the same ones), and says in one
sentence what was left out, or "" when nothing was. Size 0 is never fitted (its
runs stay stored and shown): the fits, the search for a change of regime and
the sentences read sizes in log n, and an imported n = 0 once ended `import`
and `show` with exit 70 (`log10(hi / 0)`). Past MAX_FIT_RUNS runs in all, each
size keeps an evenly spaced share of its runs (at least MIN_RUNS_A_SIZE), and the
note says so. Pure; standard library only.

Why: fitting costs time in proportion to the number of sizes (each class and
each bootstrap replicate is fitted to every size's median, and the search for
a change of regime tries three breakpoints in every gap between sizes):
10,000 sizes took minutes. A growth class is told by how the medians change
with log n, so sizes spread evenly in log n carry that information (the
log-uniform design of power-law and dose-response experiments; Atkinson,
Donev & Tobias, Optimum Experimental Designs, with SAS, 2007, §6.5 and ch. 17):
100 of them, each with its repeats, pin a class far beyond what the runs'
noise allows, and a dense run of sizes beyond that mostly repeats what its
neighbours said. Every run stays stored and exported; the note says so.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from typing import TypeVar

from quadscope.model import Run

MAX_FIT_SIZES = 100
# Runs fitted in all, at most; each size keeps at least MIN_RUNS_A_SIZE. A 30,001-run sweep
# (§8's 10,000 sizes, thinned to 100) stays whole; an imported hyperfine file of 500,000
# runs (5,000 a size) spent minutes reading every run's metrics before a fit began.
MAX_FIT_RUNS = 50_000
MIN_RUNS_A_SIZE = 100

R = TypeVar("R", bound=Run)


def fit_sizes(sizes: Sequence[int], limit: int = MAX_FIT_SIZES) -> tuple[int, ...]:
    """The sizes to fit on (see the module docstring)."""
    s = sorted(set(sizes))
    if len(s) <= limit or limit < 2:
        return tuple(s)
    logs = [math.log(max(n, 1)) for n in s]
    kept: list[int] = []
    i = 0
    while True:
        left = limit - len(kept)
        if len(s) - i <= left:
            kept.extend(s[i:])  # a dense stretch: every size left is kept
            break
        if left == 1:
            kept.append(s[-1])
            break
        kept.append(s[i])
        # The next point of a grid even in log n from here to the largest size over the
        # points left: the size nearest to it (past this one), leaving one for every point.
        target = logs[i] + (logs[-1] - logs[i]) / (left - 1)
        j = bisect.bisect_left(logs, target, lo=i + 1)
        if j > i + 1 and (j == len(s) or target - logs[j - 1] < logs[j] - target):
            j -= 1
        i = min(j, len(s) - left + 1)
    return tuple(kept)


def thinned(runs_by_variant: Mapping[str, Sequence[R]],
            limit: int = MAX_FIT_SIZES) -> tuple[dict[str, list[R]], str]:
    """Each variant's runs at the sizes to fit on, and the note on what was left out."""
    every = sorted({r.size_n for runs in runs_by_variant.values() for r in runs})
    notes = [ZERO_NOTE] if every and every[0] < 1 else []
    every = [n for n in every if n >= 1]
    keep = set(fit_sizes(every, limit))
    if len(keep) < len(every):
        notes.append(f"fitted on {len(keep):,} of the {len(every):,} sizes, spread evenly in "
                     f"log n (the smallest and largest among them): fitting every size would "
                     f"take minutes and tell no more; every run is stored and exported")
    kept = {v: [r for r in runs if r.size_n in keep] for v, runs in runs_by_variant.items()}
    total = sum(len(runs) for runs in kept.values())
    groups = len({(v, r.size_n) for v, runs in kept.items() for r in runs})
    if total > MAX_FIT_RUNS and groups:
        per_size = max(MIN_RUNS_A_SIZE, MAX_FIT_RUNS // groups)
        kept = {v: _spread_runs(runs, per_size) for v, runs in kept.items()}
        notes.append(f"fitted on at most {per_size:,} runs a size (of {total:,} runs), spread "
                     f"evenly over each size's runs: fitting every run would take many minutes "
                     f"and tell no more; every run is stored and exported")
    return kept, "; ".join(notes)


def _spread_runs(runs: Sequence[R], per_size: int) -> list[R]:
    """At most `per_size` of each size's runs, evenly spaced in the order they were taken."""
    by_size: dict[int, list[R]] = {}
    for r in runs:
        by_size.setdefault(r.size_n, []).append(r)
    out: list[R] = []
    for group in by_size.values():
        if len(group) <= per_size:
            out.extend(group)
            continue
        step = len(group) / per_size
        out.extend(group[int(i * step)] for i in range(per_size))
    return sorted(out, key=lambda r: r.seq)


ZERO_NOTE = ("size 0 is not fitted (its runs are stored and shown): a growth class is read "
             "from how the cost changes with log n")


__all__ = ["MAX_FIT_RUNS", "MAX_FIT_SIZES", "ZERO_NOTE", "fit_sizes", "thinned"]
