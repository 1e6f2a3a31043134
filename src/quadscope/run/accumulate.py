"""Counting the work of accumulate mode's launches in place (`--accumulate` under `--meter auto`
or `--meter instructions`).

Contract: `InPlacePlan(planned, metric=, cost=, timeout_s=, budgeted=)` serves
`plan_accumulate`'s launches in their order (launch i follows launch i-1, each
variant's block in turn) and hands out every `2^k`-th launch (`counted_launches`:
2, 4, 8, … up to the last) counted *in place of* its timed run: the launch runs
once, under the exact meter alone (`measure.exact.counted_alone`), so the state
it leaves (a file named app.i.dat) builds up in order as with the others. Its
`counting` flag says whether the batch it last handed out is to be counted; the
runner routes that batch to the counting executor (`Runner.run(route=)`), every
other to the timed one. A counted launch's times are the counting run's, not
the program's: the analysis fits the time on the other launches and the count
on these (`analyse.launches.counted_apart`).

Why: a launch is mostly process start-up (about 1 ms), and the growth a state
adds per launch (10 µs per probed name) is a few percent of it: on a busy
machine the time per launch reads a bracket ("√i … i log i" for the probing
logger, "log i … i²" for the fixed one), and no number of launches fixes
noise that is larger than the signal. The count of the launch's instructions
is the same on every run: a logger probing i names executes a few hundred
instructions more per name, the fixed one the same number at every i, so a
handful of counts spread in log i (`analyse.exactfit`) decides what time cannot.
A launch cannot be counted alone afterwards, as sizes can (`run.counting`):
its state is gone, so the counts are taken during the sequence.

What it may spend (`budgeted`, `--meter auto`): priced before any count is
taken, once each variant's first launch was timed, at the exact meter's `Cost`
on that launch's time, within `budget_s`: the timed launches' own cost
(launches × the first one's time) or `counting.FLOOR_S` stretched by the
contention the launches met (`counting.contention`, the timed ones' or the
counted ones', whichever is more: the first launches are too short to show it,
and a count's own wall/CPU ratio is what the budget pays), whichever is more,
shared among the variants in their order: each may spend what the ones before
it left, less RESERVE counts for each one after it (a flat cost needs four
counts to class; a growing one, more). Where fewer than all the counts fit, the
affordable number is spread in log i with the last included
(`counting.pick_sizes`); fewer than `counting.MIN_COUNTED` are not taken (the
note says what they would cost). Before each count the plan prices the
dearest count still ahead again: the dearest count so far (the counting run's
wall time, mostly Valgrind's start-up) plus the instructions the count should
add by then (its growth per doubling of i) at S_PER_INSTRUCTION; where the
counts still ahead no longer all fit, as many as fit are chosen again, spread in
log i with the last kept, and the others run timed. Unbudgeted (`--meter
instructions`): every 2^k-th launch is counted, whatever it costs.

`mark(sweep, runs, plan, counters=, note=, meter=, reason=, spent_s=)` is the sweep as
stored after: the exact meter's when at least `MIN_COUNTED` launches of every
variant were counted and either the meter was exact already or `reason` (why
time alone left the class open, `counting.open_reason` on the pooled timed
launches) is not empty; the note says which launches were counted, what it
cost and why.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from quadscope.analyse.launches import launch_list
from quadscope.analyse.text import counted_how, counting_cost
from quadscope.meters.base import Cost
from quadscope.model import Run, Sweep
from quadscope.run.counting import FLOOR_S, MIN_COUNTED, contention, pick_sizes
from quadscope.run.plan import Batch, PlannedRun, Scheduled

COUNT_FROM = 2  # launch 1 stays timed: its time prices the counts
# What one more counted instruction costs under Valgrind at most: ~1 ns a plain instruction
# times the meter's ~30-50x (`meters.instructions`). A launch is mostly Valgrind's start-up
# (3.5-6 s a count on the busy 2-core VM, for 140k-725k instructions), so a count's price is
# the dearest count so far plus its growth at this rate, not the last cost scaled by it.
S_PER_INSTRUCTION = 5e-8
# Counts kept back for each variant still to come when one variant is counted: enough
# to class a flat cost (`counting.SETTLE_SIZES`); the first variant may spend the rest.
RESERVE = 4


def counted_launches(runs: int) -> tuple[int, ...]:
    """The launches counted of `runs`: COUNT_FROM, twice that, … up to `runs`."""
    out: list[int] = []
    i = COUNT_FROM
    while i <= runs:
        out.append(i)
        i *= 2
    return tuple(out)


def _key(p: PlannedRun | Run) -> tuple[str, int]:
    return (p.variant, p.size_n)


def _timed(history: Sequence[Run], variant: str, metric: str) -> list[Run]:
    return [r for r in history if r.variant == variant and r.measurement.ok
            and r.value(metric) is None]


def _counted(history: Sequence[Run], variant: str, metric: str) -> list[Run]:
    return [r for r in history if r.variant == variant and r.measurement.ok
            and r.value(metric) is not None]


class InPlacePlan:
    """Accumulate mode's launches with every 2^k-th counted in place (module docstring).

    Keeps between calls the launches chosen for counting per variant (fixed once
    priced), the price said, and why counts were left out.
    """

    def __init__(self, planned: Sequence[PlannedRun], *, metric: str, cost: Cost,
                 timeout_s: float | None, budgeted: bool = True) -> None:
        self.planned = tuple(planned)
        self.metric = metric
        self.cost = cost
        self.timeout_s = timeout_s
        self.budgeted = budgeted
        self.counting = False  # whether the batch last handed out is counted
        self.chosen: dict[str, tuple[int, ...]] = {}  # the launches to count, per variant
        self.price_s: dict[str, float] = {}  # what counting them was priced at, per variant
        self.budget_s: float | None = None  # what counting may spend in all (None: unbudgeted)
        self.left_out: list[str] = []  # sentences: counts not taken, and why

    @property
    def total_runs(self) -> int:
        return len(self.planned)

    @property
    def variants(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.variant for p in self.planned))

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        done = {_key(r) for r in history}
        todo = [p for p in self.planned if _key(p) not in done]
        self.counting = False
        if not todo:
            return None
        first = todo[0]
        if not _timed(history, first.variant, self.metric):  # nothing to price by yet
            return (Scheduled(first, self.timeout_s),)
        chosen = self._choose(first.variant, history)
        if first.size_n in chosen and self._affordable(first, history):
            self.counting = True
            return (Scheduled(first, self.timeout_s),)
        batch = [first]
        for p in todo[1:]:
            if p.variant != first.variant or p.size_n in chosen:
                break
            batch.append(p)
        return tuple(Scheduled(p, self.timeout_s) for p in batch)

    def _share_s(self, history: Sequence[Run], variant: str, each_s: float) -> float:
        """What counting `variant`'s launches may spend (see the module docstring): the
        budget, less what the variants before it spent counting, less `RESERVE` counts at
        `each_s` for each variant after it. Read again before each count, as the contention
        of the timed launches is better known."""
        timed = [r for r in history if r.value(self.metric) is None]
        counts = [r for r in history if r.value(self.metric) is not None]
        plain = min((r.measurement.wall_s for r in timed if r.measurement.ok), default=0.0)
        stretch = max(contention(timed), contention(counts))
        budget = max(len(self.planned) * plain, FLOOR_S * stretch)
        self.budget_s = max(budget, self.budget_s or 0.0)
        order = self.variants
        before = set(order[:order.index(variant)])
        spent = sum(r.measurement.wall_s for r in history if r.variant in before
                    and r.measurement.ok and r.value(self.metric) is not None)
        later = len(order) - order.index(variant) - 1
        return self.budget_s - spent - later * RESERVE * each_s

    def _choose(self, variant: str, history: Sequence[Run]) -> tuple[int, ...]:
        """The launches of `variant` to count, priced once its first launch was timed."""
        if variant in self.chosen:
            return self.chosen[variant]
        launches = max(p.size_n for p in self.planned if p.variant == variant)
        wanted = counted_launches(launches)
        plain = min(r.measurement.wall_s for r in _timed(history, variant, self.metric))
        each = self.cost.run_s(plain)
        chosen = wanted
        if self.budgeted:
            share = self._share_s(history, variant, each)
            most = int(share // each) if each > 0 else len(wanted)
            if most < MIN_COUNTED:
                self.left_out.append(
                    f"counting {variant}'s launches {launch_list(wanted)} was priced at "
                    f"{len(wanted) * each:.1f} s, over its {max(share, 0):.1f} s share of "
                    "the budget")
                chosen = ()
            elif most < len(wanted):
                chosen = _spread(wanted, most)
        self.chosen[variant] = chosen
        self.price_s[variant] = len(chosen) * each
        return chosen

    def _affordable(self, job: PlannedRun, history: Sequence[Run]) -> bool:
        """Whether to count `job`: priced by the last count's cost times the count's growth
        per doubling of i (module docstring); where the launches still chosen no longer all
        fit the variant's share, as many as fit are chosen again, spread in log i with the
        last kept, and `job` is counted only if it is among them."""
        if not self.budgeted:
            return True
        counted = sorted(_counted(history, job.variant, self.metric), key=lambda r: r.size_n)
        spent = sum(r.measurement.wall_s for r in counted)
        ahead = [i for i in self.chosen[job.variant] if i >= job.size_n]
        if not counted:
            price = self.price_s[job.variant] / max(len(self.chosen[job.variant]), 1)
        else:  # the dearest of those ahead: the last, its count grown from the last one's
            last = counted[-1]
            grown = float(last.value(self.metric) or 0) * (
                _per_doubling(counted, self.metric) ** math.log2(ahead[-1] / last.size_n) - 1)
            price = (max(r.measurement.wall_s for r in counted)
                     + grown * S_PER_INSTRUCTION * contention(history))
        share = self._share_s(history, job.variant, price)
        most = int((share - spent) // price) if price > 0 else len(ahead)
        if most >= len(ahead):
            return True
        kept = _spread(ahead, most)
        dropped = [i for i in ahead if i not in kept]
        self.chosen[job.variant] = tuple(i for i in self.chosen[job.variant]
                                         if i < job.size_n or i in kept)
        self.left_out.append(f"{job.variant}'s launches {launch_list(dropped)} were timed, "
                             f"not counted: each count cost about {price:.1f} s, more than "
                             f"what was left of the variant's {max(share, 0):.1f} s share "
                             "allowed")
        return job.size_n in kept


def _spread(launches: Sequence[int], most: int) -> tuple[int, ...]:
    """At most `most` of `launches`, spread in log i, the last kept (`counting.pick_sizes`)."""
    if most <= 0:
        return ()
    if most == 1:
        return (launches[-1],)
    return pick_sizes(launches, most=most)


def _per_doubling(counted: Sequence[Run], metric: str) -> float:
    """How much the count grew per doubling of i over the last two counts (at least 1)."""
    if len(counted) < 2:
        return 1.0
    lo, hi = counted[-2], counted[-1]
    a, b = float(lo.value(metric) or 0), float(hi.value(metric) or 0)
    if a <= 0 or b <= 0 or hi.size_n <= lo.size_n:
        return 1.0
    return max((b / a) ** (math.log(2) / math.log(hi.size_n / lo.size_n)), 1.0)


def mark(sweep: Sweep, runs: Sequence[Run], plan: InPlacePlan, *, meter: str, counters: str,
         note: str, reason: str, spent_s: tuple[float, float]) -> Sweep:
    """The sweep after its launches ran (see the module docstring). `spent_s` is (the timed
    launches' seconds, the counts'), said in the note."""
    counted = {v: sorted(r.size_n for r in _counted(runs, v, plan.metric))
               for v in plan.variants}
    enough = all(len(c) >= MIN_COUNTED for c in counted.values())
    launches = min(counted.values(), key=len) if counted else []
    # "launches 2, 4, …, 512 were counted under Valgrind in place of their timed runs
    # (13.4 s, 4.5× the timed launches' 3.0 s)": no nested note (`text.counting_cost`).
    how = counted_how(counters)
    where = (f"launches {launch_list(launches)} were counted{' ' + how if how else ''} in "
             f"place of their timed runs ({counting_cost(spent_s, 'the timed launches')})")
    left = "; ".join(plan.left_out)
    if enough and (reason or not plan.budgeted):
        why = f"{reason}, so " if reason else ""
        said = f"{why}the work was counted: {where}"
        return dataclasses.replace(sweep, meter=meter, counters=counters,
                                   counters_note=said + (f"; {left}" if left else ""))
    if enough:
        said = f"time alone settled the class; the counts of the work were kept beside it: {where}"
        return dataclasses.replace(sweep, counters_note=said + (f"; {left}" if left else ""))
    said = (f"{reason or 'time alone settled the class'}; counting the work ({counters}) "
            f"at {MIN_COUNTED} launches of each variant did not fit in the sweep's budget"
            + (f" ({left})" if left else "")
            + f": `--meter {meter}` counts them whatever it costs")
    return dataclasses.replace(sweep, counters_note=said)


__all__ = ["COUNT_FROM", "InPlacePlan", "counted_launches", "mark"]
