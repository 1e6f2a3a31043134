"""The order in which (variant, size, repeat) runs execute.

Contract: `plan_runs` is a pure function of its arguments and the seed. Runs go
in rounds: round r holds repeat r of every size, in a fresh random order, so
each size's repeats are spread over the whole sweep and slow drift in the
machine (thermal, other tenants) cannot masquerade as growth (the interleaving
hyperfine and pyperf recommend against ordering effects). With a second
variant, A and B alternate run by run, in the same order of sizes. Warm-up
runs come first, one per variant and size cycling from the smallest, and are
never fitted. Accumulate mode is inherently ordered: launch i follows launch
i-1, so it has no shuffling and no warm-up.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PlannedRun:
    variant: str
    size_n: int
    repeat: int
    warmup: bool = False


def plan_runs(
    sizes: Sequence[int],
    *,
    repeat: int,
    warmup: int,
    seed: int,
    variants: Sequence[str] = ("A",),
) -> list[PlannedRun]:
    rng = random.Random(seed)
    ordered = sorted(sizes)
    plan: list[PlannedRun] = []
    for w in range(warmup):
        n = ordered[w % len(ordered)]
        plan.extend(PlannedRun(v, n, w, warmup=True) for v in variants)
    for r in range(repeat):
        round_sizes = list(ordered)
        rng.shuffle(round_sizes)
        for n in round_sizes:
            plan.extend(PlannedRun(v, n, r) for v in variants)
    return plan


def plan_accumulate(runs: int, *, variants: Sequence[str] = ("A",)) -> list[PlannedRun]:
    """Launch i = 1..runs of each variant, A and B alternating."""
    return [PlannedRun(v, i, 0) for i in range(1, runs + 1) for v in variants]
