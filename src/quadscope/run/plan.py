"""Plans: policies that hand the runner batches of runs, and the fixed run orders.

Contract: a `Plan` answers `next_batch(history, remaining_s) -> Batch | None`.
`history` is every run of the sweep stored so far, in order (earlier sessions'
first, on resume); `remaining_s` is what is left of the budget (None: no
budget). A `Batch` is a tuple of `Scheduled` runs, each a `PlannedRun` with the
timeout the plan allows it; the runner executes them in that order and stores
one run per scheduled run before it asks again. None means the plan is done.
A plan reads nothing else: no clock, no store, no executor, so it decides the
same wherever the runs execute. `total_runs` is the plan's size when known
up front (for progress), else None.

`plan_runs` is a pure function of its arguments and the seed. Runs go in
rounds: round r holds repeat r of every size, in a fresh random order, so each
size's repeats are spread over the whole sweep and slow drift in the machine
(thermal, other tenants) cannot masquerade as growth (the interleaving
hyperfine and pyperf recommend against ordering effects). With a second
variant, A and B alternate run by run, in the same order of sizes. Warm-up runs
come first, one per variant and size cycling from the smallest, and are never
fitted. `plan_accumulate` is inherently ordered: launch i follows launch i-1,
so it has no shuffling and no warm-up. Its variants run one after the other,
each as a block of launches: interleaved, the kernel and cache work one
variant leaves behind lands in the other's next launch, and it grows as the
first one's does (measured: the fixed logger of `quadscope demo` rose from 0.66
to 1.03 ms per launch over 600 launches alternating with the probing one's,
and stayed flat on its own).

`FixedPlan` serves such a list: its one batch is every planned run the history
lacks, in plan order, so a fresh sweep gets the whole order and a resumed one
exactly what is missing, its interleaving intact; then it is done.

`AgreeingPlan` serves an exact meter's list (`--meter instructions`, or any
meter the registry calls exact, `quadscope.meters`): first
the warm-ups and the first two rounds, then only the further repeats of the
sizes whose two counts of `metric` disagree by more than `AGREE_REL` of the
larger (or are missing). An exact count repeated is the same number, so a
third run would add cost and no information; a count that moves (a program
reading the clock or /dev/urandom) keeps every planned repeat. The tolerance
is for CPython: one function call counted under Callgrind in two processes
differed by 78 instructions in 251,108 (3e-4); the C workloads repeat to the
instruction.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from quadscope.model import Run

AGREE_REL = 1e-3  # two counts this close agree (see the module docstring)


@dataclass(frozen=True, slots=True)
class PlannedRun:
    variant: str
    size_n: int
    repeat: int
    warmup: bool = False
    axes: tuple[tuple[str, int], ...] = ()  # the other axes' sizes (several sizes), as Run's


@dataclass(frozen=True, slots=True)
class Scheduled:
    """A planned run with the timeout its plan allows (None: no limit)."""

    run: PlannedRun
    timeout_s: float | None


Batch = tuple[Scheduled, ...]


class Plan(Protocol):
    @property
    def total_runs(self) -> int | None: ...

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None: ...


def plan_runs(
    sizes: Sequence[int],
    *,
    repeat: int,
    warmup: int,
    seed: int,
    variants: Sequence[str] = ("A",),
    startup_n: int | None = None,
) -> list[PlannedRun]:
    """Rounds of every size in a fresh random order, warm-ups first (module docstring):
    `plan_points` over one axis. `startup_n` (the start-up size, `run.spec.startup_size`)
    is one more size of every round, repeated as the others; the warm-ups stay on `sizes`."""
    if startup_n is None or startup_n in sizes:
        return plan_points(("n",), [(n,) for n in sizes], repeat=repeat, warmup=warmup,
                           seed=seed, variants=variants)
    warm = plan_points(("n",), [(n,) for n in sizes], repeat=0, warmup=warmup, seed=seed,
                       variants=variants)
    return warm + plan_points(("n",), [(n,) for n in (startup_n, *sizes)], repeat=repeat,
                              warmup=0, seed=seed, variants=variants)


def plan_points(
    names: Sequence[str],
    points: Sequence[tuple[int, ...]],
    *,
    repeat: int,
    warmup: int,
    seed: int,
    variants: Sequence[str] = ("A",),
) -> list[PlannedRun]:
    """`plan_runs` over the points of a sweep in several sizes (each a tuple in axis order):
    rounds of every point in a fresh random order, warm-ups first from the smallest."""
    rng = random.Random(seed)
    ordered = sorted(points)

    def planned(v: str, p: tuple[int, ...], r: int, warm: bool = False) -> PlannedRun:
        return PlannedRun(v, p[0], r, warm, tuple(zip(names[1:], p[1:], strict=True)))

    plan: list[PlannedRun] = []
    for w in range(warmup):
        p = ordered[w % len(ordered)]
        plan.extend(planned(v, p, w, True) for v in variants)
    for r in range(repeat):
        round_points = list(ordered)
        rng.shuffle(round_points)
        for p in round_points:
            plan.extend(planned(v, p, r) for v in variants)
    return plan


def plan_accumulate(runs: int, *, variants: Sequence[str] = ("A",)) -> list[PlannedRun]:
    """Launch i = 1..runs of each variant, all of A's launches first (see the module)."""
    return [PlannedRun(v, i, 0) for v in variants for i in range(1, runs + 1)]


def _key(p: PlannedRun | Run) -> tuple[str, int, int, bool, tuple[tuple[str, int], ...]]:
    return (p.variant, p.size_n, p.repeat, p.warmup, p.axes)


@dataclass(frozen=True, slots=True)
class FixedPlan:
    """A run order known up front, each run allowed `timeout_s`; see the module docstring."""

    runs: tuple[PlannedRun, ...]
    timeout_s: float | None

    @property
    def total_runs(self) -> int:
        return len(self.runs)

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        done = {_key(r) for r in history}
        todo = tuple(Scheduled(p, self.timeout_s) for p in self.runs if _key(p) not in done)
        return todo or None


@dataclass(frozen=True, slots=True)
class AgreeingPlan:
    """A run order whose repeats stop where two runs agree on `metric` (module docstring)."""

    runs: tuple[PlannedRun, ...]
    timeout_s: float | None
    metric: str  # the exact meter's (`Meter.agrees_on`)

    @property
    def total_runs(self) -> int:
        """At most this many: the progress bar ends early when counts agree."""
        return len(self.runs)

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        done = {_key(r) for r in history}
        todo = [p for p in self.runs if _key(p) not in done]
        first = [p for p in todo if p.warmup or p.repeat < 2]
        if not first:
            settled = _agreeing(history, self.metric)
            first = [p for p in todo if (p.variant, p.size_n, p.axes) not in settled]
        return tuple(Scheduled(p, self.timeout_s) for p in first) or None


def _agreeing(history: Sequence[Run], metric: str) -> set[tuple[str, int, tuple[tuple[str, int], ...]]]:
    """(variant, size, other axes) whose first two measured runs give the same `metric`."""
    seen: dict[tuple[str, int, tuple[tuple[str, int], ...]], list[float | None]] = {}
    for r in history:
        if not r.warmup and r.repeat < 2:
            seen.setdefault((r.variant, r.size_n, r.axes), []).append(
                r.value(metric) if r.measurement.ok else None)
    agreeing = set()
    for key, counts in seen.items():
        if len(counts) == 2 and None not in counts:
            a, b = float(counts[0] or 0), float(counts[1] or 0)
            if abs(a - b) <= AGREE_REL * max(a, b):
                agreeing.add(key)
    return agreeing
