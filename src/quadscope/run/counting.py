"""Counting the work after a timed sweep left its time verdict open (`--meter auto`, the default).

Contract: a meter whose `counts_with` names an exact meter (`meters.auto`)
times every run as the time meter does; when the timed plan ends,
`Counting.plan(sweep, runs, budget_s)` asks whether time alone settled the
class (`open_reason`: the headline time fit of every variant, as the verdict
reads it, is a bracket, carries a doubt such as the cache or load caveat, or
settles faster than n², which over a short range is more often the kernel or
the caches than the algorithm, or between n and n², or on a class whose k
interval also holds the next faster class's exponent over the sizes, chosen as
the simpler of the two, not by k: `next_held`).
If it did, nothing more runs. If not, a `CountPlan` hands the runner one job
at a time under the exact meter's executor (`Counting.measuring`: perf's
counter where the CPU has one, else Valgrind, `meters.instructions`): each
job is a real timed run plus its count, so the time data only gain a repeat.

Which sizes: the timed sweep's own, at most `MAX_SIZES` of them spread evenly
in log n over the range (`pick_sizes`), each variant's in turn: `SETTLE_SIZES`
- 1 cheap ones first (`count_order`: the largest sizes still timed at about the
smallest one's cost, where a start-up dominates; else the smallest), then the
largest (the span to settle on, and where a second term shows most), then the
rest, smallest first; sizes a power of two apart (`in_phase`) before the sizes
between them, where three or more are: a container that grows by doubling makes the
count a staircase whose steps only sizes 2^j apart see alike; for the same reason a
size between the counted sizes' doublings is counted only once no size in phase and no
halving below them (in phase too) fits (`CountPlan._phased`). One count per size:
an exact count repeats.

What it may spend: `budget_s`, what the timed sweep itself cost
(`max(spent, FLOOR_S)`), so counting at most doubles a sweep that took FLOOR_S or
more (a cheaper one could not afford three counts of a Python under Valgrind),
or what an adaptive sweep's `--budget` left unspent, if more.
Beyond it the runner gives the plan a SPARE third of it (`CountPlan.deadline_s`), spent
only on a variant's fourth count where the budget bought three (`_spare`): three exact
counts fit any law of three coefficients and bracket the work as "n … cⁿ".
The floor is stretched by the contention the timed runs met (`contention`: the
median wall/CPU ratio of the timed runs, at most MAX_CONTENTION): with the cores
shared three ways each Valgrind start takes three times as long, and a floor in
seconds of the clock would then buy one count of a Python, never three. Before each job
the plan prices it from the last counted job's cost (the budget the runner
reports before and after it) plus the meter's slowdown times how much longer the
plain timed run is at the next size (`_price`; the slowdown raised to what two
counts showed, and never above the last cost scaled by the plain runs' ratio):
Valgrind's start of a Python costs seconds whatever n, so scaling the whole
cost by the plain runs' ratio overpriced every larger size. The first job is
priced by the exact meter's `Cost` model.
A size below the counted ones is priced as the smallest count's cost less the
slowdown times the plain run it skips (`_below_price`; a halving not timed has
its plain run drawn on the line in n down to the nearest size timed below it,
a sweep's start-up run at n = 1), never under the meter's start-up.
A job is handed out first only if what it costs leaves enough to count every
variant at SETTLE_SIZES sizes, priced over the sizes really left (the halvings
within EXTEND at the cheapest price, the other jobs at theirs; `_reserving`,
`_reserve_s`): where a start-up dominates, three counts at n/2..2n could spend
what four at n/8..n cost, and three exact counts only bracket the class. When
no job and no halving keeps four affordable, the plan counts what fits, as
many as three, as before. No count is placed below the counted sizes where its
increment over the smallest count, predicted as if the work grew as n²
(`_far_from_jitter`: from the two smallest counts, or with one count from the
plain runs), would be under `exactfit.MIN_SHARE` of the count, 50 σ of an exact
count's jitter: a step that small fits the bookkeeping, not the program.
Where the executor counts a whole batch under one start (a Python function:
`exact.InstructionMeter.counts_many`), the same budget holds (`CountPlan._many`):
each start is priced before it begins by the meter's `BatchCost` (Valgrind's
and the child Python's start, each call's fork and setup, ~80x each plain
call), scaled up by what earlier starts cost against their price, and holds
the cheapest sizes that fit what is left (`_affordable`: a quadratic's largest
sizes, which cost the most under Valgrind, are skipped); its jobs' timeouts
share what is left, so a start dearer than priced is cut short at the budget,
keeping every size counted by then (each call's count is a dump of its own).
The timed sizes first; if their counts do not settle the work, up to `EXTEND`
doublings above the largest follow in one more start (each also a real timed
run, so the time data gain a size; priced by the count's own growth over its
last doubling): a wider span is what separates n from n log n; then once the
halvings below the counted sizes (`_halvings`, as for a program), cheap and a
span the budget could not buy above.
For a program (each size a Valgrind start of its own) the same doublings
follow one at a time, each priced by what the last count cost times how much
the count itself grew over the last doubling (Valgrind's time follows the
instructions it runs), so no size is started that the budget cannot pay for.
When no timed size left is affordable and the counts have not settled, the
plan halves below the smallest counted size instead (up to EXTEND halvings
below the timed sizes), each priced at the cheapest count so far: an exact
count needs no large n to beat noise, only a span of sizes, and the smallest
sizes are the cheapest to count (a Python program under Valgrind at the timed
sizes often costs more than the whole timed sweep).
A job that would not fit is not started (the next cheaper one may be);
the plan ends when none fits, or when the counts settle the class: at least `SETTLE_SIZES` sizes spanning a
factor `SETTLE_SPAN`, with a confident fit of the count.

When the exact meter cannot count this target at all (`Counting.measuring`
returns `Refused`: a Python function whose closure holds a lock, which cannot
be sent to the counting process, `measure.pycount`), the sweep stays timed
and `Counting.refused` puts the one sentence saying why in its counters note
("cannot count `f`: …; time alone decides"), which `-v`, the reports and an
undecided `assert_scales` show.

`Counting.mark(sweep, runs)` is the sweep as stored after it: when at least
`MIN_COUNTED` sizes were counted for every variant, the sweep's meter becomes
the exact one (the analysis then leads with the work); otherwise it stays
timed, and `counters_note` says what counting would have cost, so the output
can name the meter that decides instead of a size nobody can run.

An exact meter's adaptive sweep (`--meter instructions` with `--budget`) is
a `CountPlan` from the start: `exact_plan` counts SETTLE_SIZES doublings
from `--start`, one count per size, then doubles one size at a time while
the budget pays for it, until the counts settle (no timed sweep first, no
repeats: the time meter's adaptive plan grows n and repeats to beat noise
an exact count does not have). Where the executor counts several at once
(`workers`: one per CPU, `meters.instructions.count_jobs`), the planned
sizes above a job are handed out with it (`CountPlan._together`): the four
first counts in two rounds on two cores, each size above capped as a count
alone is, at GROWTH_CAP times the price of the size below it.

Accumulate mode's launches are counted during the sequence instead, in place
of every 2^k-th timed launch (`run.accumulate`; `plan` returns None for them).
A sweep over several sizes (`sweep.axes`) is planned and marked by
`run.multicount` instead: counts at points that span every axis, exact once
`design.MIN_POINTS` points were counted.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from quadscope.analyse.text import REFUSED_TAIL, counting_cost, work_counted
from quadscope.errors import ProgramError
from quadscope.meters.base import BatchCost, Cost, Measuring
from quadscope.model import Fit, Run, Sweep
from quadscope.run.multicount import PointCountPlan
from quadscope.run.plan import Batch, PlannedRun, Scheduled

MAX_SIZES = 8  # counts at more sizes than this add cost, not evidence
MIN_COUNTED = 3  # fewer counted sizes than this cannot class the work
SETTLE_SIZES = 4
SETTLE_SPAN = 4.0
CHEAP = 2.0  # a timed run this many times the smallest size's still counts at start-up's cost
EXTEND = 3  # doublings above the timed sizes a batched count may add to settle the work
FLOOR_S = 15.0  # counting may spend this much after a cheaper sweep: 3-4 Valgrind starts of Python
MAX_CONTENTION = 4.0  # the most the floor stretches on a machine busy with other work
PHASE_TOL = 0.02  # log2 of a ratio this close to a whole number: sizes rounded to integers
# The share of counting's budget kept beyond it for a variant's SETTLE_SIZES-th count
# where the budget bought MIN_COUNTED (`CountPlan._spare`): a fourth count costs what the
# cheapest of three did, at most a third of what they cost together.
SPARE = 1.0 / MIN_COUNTED
GROWTH_CAP = 16.0  # a count may cost this many times the last one (n⁴ over a doubling)
EXACT_EXTEND = 40  # an exact meter's adaptive sweep: doublings until settled or out of budget
# A count below the counted sizes must differ from the smallest by `exactfit.MIN_SHARE` of
# the count (50 σ of an exact count's JITTER: a term that small is not settled on anyway),
# its increment predicted as if the work grew as n^STEP_K (faster than most programs, so
# the prediction errs small): a CPython loop of 30 instructions a step beside a 140M
# start-up is not halved below n ≈ 50k. The bookkeeping moves a count by parts in 10⁵, and
# counts that differ by little more than that fit the bookkeeping.
STEP_K = 2.0


def _measured(runs: Sequence[Run], variant: str, startup_n: int | None = None) -> list[Run]:
    """A variant's runs that measured its cost at a size (the start-up runs at `startup_n`
    measured its start-up: never a size to count at)."""
    return [r for r in runs if r.variant == variant and not r.warmup and r.measurement.ok
            and r.size_n != startup_n]


def open_reason(sweep: Sweep, runs: Sequence[Run], *, pooled: bool = False) -> str:
    """Why time alone left the class open ("" when it settled it): the headline time fit's
    bracket or doubt, for the first variant that has one. `pooled`: the runs are accumulate
    mode's launches, fitted pooled as the analysis fits them (`analyse.launches`)."""
    from quadscope.analyse.analysis import fit_runs, startup_runs
    from quadscope.analyse.headline import FASTEST_TRUSTED, time_fit
    from quadscope.analyse.kernel import kernel_bound
    from quadscope.analyse.launches import pool_launches
    from quadscope.analyse.memory import memory_bound
    from quadscope.analyse.parallel import parallel_bound
    from quadscope.analyse.waiting import wait_bound
    from quadscope.classes import REGISTRY

    variants = sorted({r.variant for r in runs})
    starts, _ = startup_runs(runs, sweep.startup_n, variants)
    for variant in variants:
        whose = "the" if len(variants) == 1 else f"{variant}'s"  # name B only beside A
        measured = _measured(runs, variant, sweep.startup_n)
        if pooled:
            measured = list(pool_launches(measured))
        if len({r.size_n for r in measured}) < 3:
            continue  # too little to fit: not a question counting answers
        fits, _ = fit_runs([*starts[variant], *measured],
                           metrics=("wall_s", "cpu_s", "user_s", "max_rss_bytes"),
                           seed=sweep.seed, pooled=pooled,
                           startup_n=sweep.startup_n if starts[variant] else None)
        # The caveats the analysis applies: a time the caches or the kernel may account for
        # is open too (a cache step settled "n²" at 4k..1M under busy and went uncounted).
        fits, _ = memory_bound(fits, measured, sweep.host)
        fits, _ = kernel_bound(fits, measured)
        fits, _ = wait_bound(fits, measured)
        fits, _ = parallel_bound(fits, measured)
        fit = time_fit(fits)
        if fit is None:
            continue
        wall = fits.get("wall_s")
        if wall is not None and any(d.check == "parallel" for d in wall.doubts):
            return (f"time alone could not settle {whose} class: wall time lagged the work "
                    "as the program kept more CPUs busy at larger n")
        if not fit.confident:
            return f"time alone left {whose} class open"
        if fit.doubts:
            return f"time alone settled {whose} class only with a caveat ({fit.doubts[0].check})"
        if REGISTRY.index(fit.cls) > REGISTRY.index(FASTEST_TRUSTED):
            # Faster than n² is rare in an algorithm and common in what the machine adds
            # over a short range (the kernel, the caches, the allocator): the work decides.
            return (f"time alone settled {whose} class above n² "
                    f"({REGISTRY[fit.cls].label}), which the work must confirm")
        if not REGISTRY[fit.cls].linear_or_slower and \
                REGISTRY.index(fit.cls) < REGISTRY.index(FASTEST_TRUSTED):
            # Between n and n²: the factor log n is what the caches add to linear work once
            # its data outgrow them (a dict of n ints built in a Python closure read n log n
            # in time and failed at_most="n"): the work decides.
            return (f"time alone settled {whose} class between n and n² "
                    f"({REGISTRY[fit.cls].label}), as the caches also make linear work "
                    f"read; the work must confirm it")
        held = next_held(fit, [r.size_n for r in measured])
        if held:
            return (f"time alone settled {whose} class as {REGISTRY[fit.cls].label} though "
                    f"k's interval holds {REGISTRY[held].label} too; the work must confirm it")
    return ""


def next_held(fit: Fit, sizes: Sequence[int]) -> str:
    """The next faster class when a settled growing class no faster than n² was chosen as
    the simpler of two its k interval both holds ("" otherwise): the effective exponent of
    that class over the sizes (`multiclass.effective_exponent`, its log-log slope) lies in
    k's 95% interval. Time settled on preference, not on k, is no verdict a gate may pass
    on: CPython `sorted` (n log n, its linear list-building beside it) read "linear: CPU
    time grows as n (k = 0.94 ± 0.15)" at 62.5k..4M, went uncounted, and would have passed
    `--fail-above n`."""
    from quadscope.analyse.headline import FASTEST_TRUSTED
    from quadscope.analyse.multiclass import effective_exponent  # numpy: not at the CLI's start
    from quadscope.classes import REGISTRY

    if (not fit.confident or fit.exponent_ci is None or fit.cls not in REGISTRY
            or not REGISTRY[fit.cls].growing
            or REGISTRY.index(fit.cls) >= REGISTRY.index(FASTEST_TRUSTED)
            or len({n for n in sizes if n >= 2}) < 2):
        return ""
    ahead = REGISTRY.classes[REGISTRY.index(fit.cls) + 1]
    k = effective_exponent(ahead, [n for n in sizes if n >= 2])
    return ahead.name if fit.exponent_ci[0] <= k <= fit.exponent_ci[1] else ""


def contention(runs: Sequence[Run]) -> float:
    """How much longer the timed runs took on the clock than on the CPU: the median of
    wall_s / cpu_s over them, from 1 (an idle core each) to MAX_CONTENTION. A program
    competing with other work for the cores waits about this factor longer for each CPU
    second, counting under Valgrind included."""
    ratios = [r.measurement.wall_s / cpu for r in runs if not r.warmup and r.measurement.ok
              and (cpu := r.value("cpu_s")) is not None and cpu > 0]
    if not ratios:
        return 1.0
    return min(max(statistics.median(ratios), 1.0), MAX_CONTENTION)


def budget_s(spent_s: float, runs: Sequence[Run], given_s: float | None = None) -> float:
    """What counting may spend: the timed sweep's own cost, or FLOOR_S if that was less,
    stretched by the `contention` the timed runs met (the floor is meant as three or four
    Valgrind starts of Python, and on a machine busy with other work each takes longer);
    at least what the user's `--budget` (`given_s`) left unspent: an adaptive sweep that
    stopped early (a flat time, or a bracket no affordable size decides) hands the rest
    of the time the user gave it to the count that decides instead."""
    return max(spent_s, FLOOR_S * contention(runs), (given_s or 0.0) - spent_s)


def pick_sizes(sizes: Sequence[int], most: int = MAX_SIZES) -> tuple[int, ...]:
    """At most `most` of `sizes`, smallest first, spread evenly in log n, the largest included."""
    ordered = sorted(set(sizes))
    if len(ordered) <= most:
        return tuple(ordered)
    lo, hi = math.log(max(ordered[0], 1)), math.log(max(ordered[-1], 1))
    picked: list[int] = []
    for k in range(most):
        target = lo + (hi - lo) * k / (most - 1)
        best = min(ordered, key=lambda n: abs(math.log(max(n, 1)) - target))
        if best not in picked:
            picked.append(best)
    return tuple(sorted(picked))


def in_phase(sizes: Sequence[int]) -> frozenset[int]:
    """The longest chain of `sizes` whose ratios are powers of two (ties: the chain holding the
    larger sizes). Containers that grow by doubling (hash tables, vectors) make a count a
    staircase in n whose steps fall at the same place in every doubling, so counts at sizes
    2^j apart see the same share of the rehashing and lie on one curve, while a count at
    √2·n sees another share: measured, CPython set membership counted at 125k, 250k, 354k,
    500k added 1024, 1211 and 897 instructions an element between them, and k's interval
    came out [0.52, 1.30] from exact counts; at 125k, 250k, 500k it adds 1024 and 1028."""
    ordered = sorted({n for n in sizes if n > 0})
    best: frozenset[int] = frozenset()
    for anchor in ordered:
        chain = frozenset(n for n in ordered
                          if abs((x := math.log2(anchor / n)) - round(x)) < PHASE_TOL)
        if len(chain) >= len(best):
            best = chain
    return best


def count_order(sizes: Sequence[int], timed_s: Mapping[int, float] | None = None) -> list[int]:
    """The order sizes are counted in: SETTLE_SIZES - 1 cheap ones, then the largest (a span
    to settle on, and where a second term shows most), then the rest, smallest first; sizes
    `in_phase` with each other go before those between them, wherever they hold enough.

    The cheap ones are the largest sizes whose timed run (`timed_s`, the median by size)
    took at most CHEAP times the smallest size's: where a fixed start-up dominates (a
    Python, 0.1 s before the first line; 140M instructions under Valgrind), a count there
    costs about what one at the smallest size does and holds the most growth, while the
    smallest sizes count the start-up alone. Without such sizes (time grows from the
    smallest size on), the smallest SETTLE_SIZES - 1."""
    ordered = sorted(set(sizes))
    phase = in_phase(ordered)
    first = sorted(phase) if len(phase) >= MIN_COUNTED else ordered
    floor = (timed_s or {}).get(ordered[0]) if ordered else None
    cheap = [n for n in first if floor and (t := (timed_s or {}).get(n)) is not None
             and t <= CHEAP * floor]
    head = cheap[-(SETTLE_SIZES - 1):] if len(cheap) >= SETTLE_SIZES - 1 else first[:SETTLE_SIZES - 1]
    head += [n for n in first[-1:] if n not in head]
    return head + [n for n in first if n not in head] + [n for n in ordered if n not in first]


def _timed_median(runs: Sequence[Run], variant: str, size_n: int) -> float | None:
    walls = [r.measurement.wall_s for r in _measured(runs, variant) if r.size_n == size_n]
    return statistics.median(walls) if walls else None


class CountPlan:
    """One counted job at a time (an exact sweep's first sizes several at once, `_together`),
    within the budget (see the module docstring).

    Like `AdaptivePlan` it keeps one thing between calls: the budget left when it
    handed out its last job, from which the next call reads what that job cost.
    """

    def __init__(self, jobs: Sequence[PlannedRun], *, metric: str, cost: Cost,
                 timeout_s: float | None, reason: str = "time alone left the class open",
                 extend: int = EXTEND, cap_growth: bool = False) -> None:
        self.jobs = tuple(jobs)
        self.cap_growth = cap_growth  # each job's timeout at GROWTH_CAP × the last count's cost
        self.extend = extend  # doublings above the planned sizes it may add (halvings: EXTEND)
        self.reason = reason  # why the work is counted (`open_reason`), for the sweep's note
        self.metric = metric
        self.cost = cost
        self.timeout_s = timeout_s
        self.batched = False  # the executor counts a whole batch under one start
        self._extended = False  # whether sizes beyond the timed ones were handed out
        self._before_s: float | None = None  # the budget left before the last job
        self._last: PlannedRun | None = None  # the last job handed out one at a time
        self._costs: dict[int, float] = {}  # what counting each size cost, by size
        self._tried: set[tuple[str, int]] = set()  # (variant, size) handed out one at a time
        self._batch_price: float | None = None  # what the last batch was priced at (batched)
        self._scale = 1.0  # what batches cost against their price, at least 1 (batched)
        self._halved_once = False  # whether the halvings below were offered (batched)
        self.workers = 1  # counts the executor runs at once (`_together`; an exact sweep)
        self._round: tuple[PlannedRun, ...] = ()  # the last jobs handed out together
        self._provisional: dict[tuple[str, int], float] = {}  # sizes counted at once: caps
        self._retry: set[tuple[str, int]] = set()  # cut short together, counted again alone
        self.spare_s = 0.0  # seconds beyond the budget kept for a variant's fourth count

    @property
    def total_runs(self) -> int:
        return len(self.jobs)

    def deadline_s(self, budget_s: float) -> float:
        """The seconds the runner may give this plan for `budget_s` of counting: the budget
        plus its SPARE share (`spare_s`), kept for the count that makes SETTLE_SIZES of a
        variant's (`_spare`); no spare where one start counts a batch."""
        self.spare_s = 0.0 if self.batched else SPARE * budget_s
        return budget_s + self.spare_s

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        nominal = None if remaining_s is None else remaining_s - self.spare_s
        batch = self._next(history, nominal)
        if batch is None and remaining_s is not None and self.spare_s > 0:
            return self._spare(history, nominal, remaining_s)
        return batch

    def _next(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        counted = {(r.variant, r.size_n) for r in history
                   if r.measurement.ok and r.value(self.metric) is not None}
        self._recall(history)
        todo = [j for j in self.jobs if (j.variant, j.size_n) not in counted
                and ((j.variant, j.size_n) in self._retry
                     or not any(_same_job(r, j) for r in history))]
        if self._settled(history):
            return None
        if self.batched:
            return self._many(history, todo, remaining_s)
        failed = self._failed(history)
        todo = [j for j in todo if j.size_n < failed.get(j.variant, j.size_n + 1)]
        if not todo:
            self._note_cost(remaining_s, history)
            return self._doubling(history, remaining_s) or (
                self._halving(history, remaining_s) if failed else None)
        self._note_cost(remaining_s, history)
        before = self._before_s  # the last job's start, which handing out the next one moves
        return self._together(history, self._one(history, todo, remaining_s), todo,
                              remaining_s, before)

    def _one(self, history: Sequence[Run], todo: Sequence[PlannedRun],
             remaining_s: float | None) -> Batch | None:
        """The next job of `todo` (or a halving below) to count, alone."""
        # Sizes between the counted ones' doublings (`_phased`) only once no size in phase
        # and no halving below (in phase too) fits: a staircase of containers that double
        # puts them on another curve (CPython `sorted` counted at 62.5k, 125k, 177k, 250k:
        # ĉ = 66, "n … n²"; the halving 31250 was affordable instead of 177k).
        phased = [j for j in todo if self._phased(history, j)]
        if remaining_s is not None:  # first the jobs that leave SETTLE_SIZES counts affordable
            kept = self._reserving(history, todo, remaining_s, phased)
            if kept is not None:
                return kept
        between = [j for j in todo if j not in phased]
        return (self._first_fitting(history, phased, remaining_s)
                or self._halving(history, remaining_s)  # in phase too, before the sizes between
                or self._first_fitting(history, between, remaining_s))

    def _together(self, history: Sequence[Run], batch: Batch | None,
                  todo: Sequence[PlannedRun], remaining_s: float | None,
                  before_s: float | None) -> Batch | None:
        """An exact sweep's job (`cap_growth`) with the planned sizes above it, up to
        `workers` in all, counted at once (`measure.exact`: the executor runs a batch's
        counts together, then its timed runs alone): the first SETTLE_SIZES counts in two
        rounds, not four, on two cores. Each size above is priced as the job's price grown
        by the count's growth per doubling so far (none before two counts: a start-up
        dominates small sizes) and all must fit what is left; each is capped, as the
        sequential plan caps a count, at GROWTH_CAP times the price of the size below it
        (at least the meter's start-up): an exponential's next n is cut short as soon, on
        another core. One so cut where a plain run then showed its predecessor dearer than
        priced is counted again under the cap a count alone would have had (`_recall`)."""
        if batch is None or self.workers < 2 or not self.cap_growth or len(batch) != 1 \
                or batch[0].run not in todo:
            return batch
        first = batch[0].run
        above = sorted((j for j in todo if j.variant == first.variant
                        and j.size_n > first.size_n and (j.variant, j.size_n) not in self._retry
                        and self._phased(history, j)),
                       key=lambda j: j.size_n)[:self.workers - 1]
        if not above:
            return batch
        price = self.cost.startup_s if remaining_s is None else self._priced_before(
            history, first, remaining_s, before_s)
        growth = self._per_doubling(history, first.variant)
        out, total, below = [batch[0]], price, price
        for job in above:
            cost = price * growth ** math.log2(job.size_n / first.size_n)
            if remaining_s is not None and total + cost > remaining_s:
                break
            cap = GROWTH_CAP * max(below, self.cost.startup_s)
            limits = [t for t in (self.timeout_s, remaining_s, cap) if t is not None]
            out.append(Scheduled(job, min(limits)))
            self._provisional[(job.variant, job.size_n)] = cap
            self._tried.add((job.variant, job.size_n))
            total, below = total + cost, cost
        if len(out) > 1:
            self._round = tuple(s.run for s in out)
            self._last = out[-1].run
        return tuple(out)

    def _priced_before(self, history: Sequence[Run], job: PlannedRun, remaining_s: float,
                       before_s: float | None) -> float:
        """`_price` of `job` as it was before `job` was handed out (`before_s`: the budget
        left before the job handed out last)."""
        handed, self._before_s = self._before_s, before_s
        try:
            return self._price(history, job, remaining_s)
        finally:
            self._before_s = handed

    def _per_doubling(self, history: Sequence[Run], variant: str) -> float:
        """How much `variant`'s count grew per doubling between its two largest counted
        sizes, at least 1; 1 with fewer than two."""
        points = self._points(history, variant)
        if len(points) < 2:
            return 1.0
        lo, hi = sorted(points)[-2:]
        if points[lo] <= 0 or points[hi] <= 0:
            return 1.0
        return max((points[hi] / points[lo]) ** (math.log(2) / math.log(hi / lo)), 1.0)

    def _recall(self, history: Sequence[Run]) -> None:
        """A size counted at once with the one below it (`_together`) and cut short at its
        cap, where the cap was less than half what GROWTH_CAP times the size below cost
        by the meter's model on its plain run: counted again, once, capped as a count handed
        out alone is (`_retry`)."""
        for key, cap in list(self._provisional.items()):
            run = next((r for r in history if (r.variant, r.size_n) == key), None)
            if run is None:
                continue
            del self._provisional[key]
            if not run.measurement.timed_out or key[1] in self._points(history, key[0]):
                continue
            below = [n for n in self._points(history, key[0]) if n < key[1]]
            plain = _timed_median(history, key[0], max(below)) if below else None
            if plain is not None and GROWTH_CAP * self.cost.run_s(plain) > 2 * cap:
                self._retry.add(key)
                self._tried.discard(key)

    def _first_fitting(self, history: Sequence[Run], jobs: Sequence[PlannedRun],
                       remaining_s: float | None) -> Batch | None:
        """The first of `jobs` whose price fits what is left (later ones cost more)."""
        for job in jobs:
            if remaining_s is None or self._price(history, job, remaining_s) <= remaining_s:
                return self._hand_out(job, remaining_s)
        return None

    def _phased(self, history: Sequence[Run], job: PlannedRun) -> bool:
        """Whether `job`'s size lengthens the chain of its variant's counted sizes a power of
        two apart (`in_phase`); any size does before the first count."""
        points = list(self._points(history, job.variant))
        if not points:
            return True
        chain = in_phase([*points, job.size_n])
        return job.size_n in chain and len(chain) > len(in_phase(points))

    def _reserving(self, history: Sequence[Run], todo: Sequence[PlannedRun],
                   remaining_s: float, offered: Sequence[PlannedRun] | None = None,
                   ) -> Batch | None:
        """The first job of `offered` (`todo` when None; in `count_order`), then a halving,
        whose price leaves enough to count every variant at SETTLE_SIZES sizes at the
        cheapest price (`_reserve_s`); None when
        none does, and the plan then counts what fits as before (three sizes still class
        the work as a bracket). Where a start-up dominates the count (a Python under
        Valgrind: ~140M instructions and seconds before the first line) every count costs
        about the start-up, so three at the largest cheap sizes may spend what four at
        smaller ones would have cost: a count needs a span of sizes, not a large n."""
        for job in todo if offered is None else offered:
            price = self._price(history, job, remaining_s)
            low = self._low_price(history, job.variant)
            reserve = self._reserve_s(history, job.variant, low, todo, remaining_s, job.size_n)
            if price + reserve <= remaining_s \
                    and self._far_from_jitter(history, job) is not False:
                return self._hand_out(job, remaining_s)
        halving = self._halved(history)
        if halving is None or not self._far_from_jitter(history, halving):
            return None  # below the counted sizes only with an increment to judge it by
        below = self._below_price(history, halving.variant, halving.size_n)
        low = self._low_price(history, halving.variant) if below is None else below
        if low + self._reserve_s(history, halving.variant, low, todo, remaining_s) > remaining_s:
            return None
        return self._hand_out(halving, remaining_s)

    def _spare(self, history: Sequence[Run], nominal_s: float | None,
               remaining_s: float) -> Batch | None:
        """Once the budget buys nothing more: the cheapest count (a job not yet counted, or
        the halving below, `_halved`) of the first variant with MIN_COUNTED sizes counted
        but fewer than SETTLE_SIZES, if its price fits what is left with the spare; None
        otherwise. Three exact counts fit any law of three coefficients (a + b·f(n) +
        c·h(n)), so they bracket the work as "n … cⁿ", and the fourth is what the first
        three were bought for: CPython under Valgrind costs 3-4 s a count whatever n, and a
        15 s budget bought three of set membership (62.5k..250k, "n … cⁿ") where a fourth
        reads "n" or "n … n log n". Priced as the budget's own jobs are, with the spare's
        seconds `nominal_s` (what is left of the budget, negative once it is spent) left
        out of `_price`'s notion of what the last job cost."""
        for variant in sorted({j.variant for j in self.jobs}):
            points = self._points(history, variant)
            if not MIN_COUNTED <= len(points) < SETTLE_SIZES or self._variant_settled(points):
                continue
            tried = {size for v, size in self._tried if v == variant}
            offered = [j for j in self.jobs if j.variant == variant
                       and j.size_n not in points and j.size_n not in tried]
            halving = self._halved(history)
            if halving is not None and halving.variant == variant:
                offered.append(halving)
            left = remaining_s if nominal_s is None else nominal_s
            priced = sorted(((self._price(history, j, left), j.size_n), j) for j in offered)
            if priced and priced[0][0][0] <= remaining_s:
                return self._hand_out(priced[0][1], nominal_s, timeout_left_s=remaining_s)
        return None

    def _low_price(self, history: Sequence[Run], variant: str) -> float:
        """The cheapest a count should cost: the cheapest counted so far, or less below the
        counted sizes (`_below_price` at half the smallest), or the meter's cost model on
        the variant's smallest timed run before the first count."""
        smallest = min(j.size_n for j in self.jobs if j.variant == variant)
        counted = min(self._costs.values(), default=self.cost.run_s(
            _timed_median(history, variant, smallest) or 0.0))
        points = self._points(history, variant)
        below = self._below_price(history, variant, min(points) // 2) if points else None
        return counted if below is None else min(counted, below)

    def _below_price(self, history: Sequence[Run], variant: str, size: int) -> float | None:
        """What counting `variant` at `size`, below its smallest counted size, should cost:
        that count's cost less the meter's slowdown times how much shorter the plain run is
        there (`_plain_below`), never less than the meter's start-up; None without a plain
        run to judge by. A Python's count costs its Valgrind start (seconds) whatever n, so
        the counts below cost about what the smallest did, minus the work they skip."""
        points = self._points(history, variant)
        counted = [n for n in points if n in self._costs]
        if not counted or size >= min(counted) or size < 1:
            return None
        ref = min(counted)
        t_ref = _timed_median(history, variant, ref)
        plain = self._plain_below(history, variant, size, ref)
        if t_ref is None or plain is None:
            return None
        return max(self._costs[ref] - self.cost.slowdown * max(t_ref - plain, 0.0),
                   self.cost.startup_s)

    def _plain_below(self, history: Sequence[Run], variant: str, size: int,
                     ref: int) -> float | None:
        """The plain run's seconds at `size` below `ref`: its timed median, or, for a size not
        timed, the line in n between the nearest size timed below it (a sweep's start-up
        run at n = 1) and `ref`'s median; None with no size timed below."""
        timed = _timed_median(history, variant, size)
        if timed is not None:
            return timed
        below = [r.size_n for r in _measured(history, variant) if r.size_n < size]
        t_ref = _timed_median(history, variant, ref)
        if not below or t_ref is None:
            return None
        n0 = max(below)
        t0 = _timed_median(history, variant, n0) or 0.0
        return t0 + (t_ref - t0) * (size - n0) / (ref - n0)

    def _reserve_s(self, history: Sequence[Run], variant: str, low_s: float,
                   todo: Sequence[PlannedRun] = (), remaining_s: float = 0.0,
                   taken: int | None = None) -> float:
        """What the counts still needed after one more of `variant` (the job at `taken`, a
        size, or a halving) should cost: every variant up to SETTLE_SIZES sizes (a settled
        variant needs none), each at the cheapest of what is left to count, the halvings
        below its counted sizes (`_halvings_left`, each at `low_s`) and its other jobs;
        infinite when too few sizes are left."""
        total = 0.0
        for v in sorted({j.variant for j in self.jobs}):
            points = self._points(history, v)
            if self._variant_settled(points):
                continue
            needed = max(SETTLE_SIZES - len(points) - (1 if v == variant else 0), 0)
            if not needed:
                continue
            halvings = self._halvings_left(history, v) - (1 if v == variant and taken is None
                                                          else 0)
            prices = sorted([low_s] * max(halvings, 0) + [
                self._price(history, j, remaining_s) for j in todo
                if j.variant == v and not (v == variant and j.size_n == taken)])
            if len(prices) < needed:
                return math.inf
            total += sum(prices[:needed])
        return total

    def _halvings_left(self, history: Sequence[Run], variant: str) -> int:
        """How many halvings below the smallest counted or timed size `_halved` may still
        count for `variant` (EXTEND below its timed sizes at most)."""
        timed = [j.size_n for j in self.jobs if j.variant == variant]
        smallest = min([*timed, *(r.size_n for r in history if r.variant == variant
                                  and r.size_n * 2 ** EXTEND >= min(timed))])
        left = 0
        while (smallest := smallest // 2) >= 1 and smallest * 2 ** EXTEND >= min(timed):
            left += 1
        return left

    def _far_from_jitter(self, history: Sequence[Run], job: PlannedRun) -> bool | None:
        """Whether a count below the smallest counted size should differ from it by at least
        `exactfit.MIN_SHARE` of the count (50 σ of its JITTER), as if the work grew as
        n^STEP_K (faster than most programs do, so the prediction errs small): from the two
        smallest counts' increment, or with one count from the plain runs (the work the
        smallest counted size's run adds to the nearest size timed below, a share of its
        time as of its count). A count whose increment hides in the bookkeeping's jitter
        adds a size but no evidence. True for sizes above the counted ones; None with
        nothing to judge by."""
        from quadscope.analyse.exactfit import MIN_SHARE  # here: exactfit loads scipy

        points = self._points(history, job.variant)
        sizes = sorted(points)
        if not sizes or job.size_n >= sizes[0]:
            return True if sizes else None
        s1 = sizes[0]
        shrink_to = (job.size_n / s1) ** STEP_K
        if len(sizes) >= 2:
            s2 = sizes[1]
            step = points[s2] - points[s1]
            shrink = (s1 ** STEP_K - job.size_n ** STEP_K) / (s2 ** STEP_K - s1 ** STEP_K)
            return step * shrink >= MIN_SHARE * points[s1]
        t1 = _timed_median(history, job.variant, s1)
        below = [r.size_n for r in _measured(history, job.variant) if r.size_n < job.size_n]
        if t1 is None or not below:
            return None
        t0 = _timed_median(history, job.variant, max(below)) or 0.0
        return (t1 - t0) * (1 - shrink_to) >= MIN_SHARE * t1

    def _hand_out(self, job: PlannedRun, remaining_s: float | None,
                  timeout_left_s: float | None = None) -> Batch:
        """One job, its timeout within what is left (`timeout_left_s`, the spare included,
        where it differs from `remaining_s`); with `cap_growth` (an exact sweep,
        whose sizes double) at most GROWTH_CAP times what the last count cost: a size whose
        count grows faster than that over a doubling (an exponential program's n doubled)
        is cut short, not left to spend the budget."""
        left = remaining_s if timeout_left_s is None else timeout_left_s
        limits = [t for t in (self.timeout_s, left) if t is not None]
        if self.cap_growth and self._costs:
            last = self._costs.get(self._last.size_n) if self._last is not None else None
            spent = last if last is not None else max(self._costs.values())
            limits.append(GROWTH_CAP * max(spent, self.cost.startup_s))
        self._before_s = remaining_s
        self._last = job
        self._tried.add((job.variant, job.size_n))
        self._retry.discard((job.variant, job.size_n))
        return (Scheduled(job, min(limits) if limits else None),)

    def _failed(self, history: Sequence[Run]) -> dict[str, int]:
        """The smallest size of each variant whose count, handed out here, failed or was cut
        short: larger sizes cost more, so none is counted."""
        out: dict[str, int] = {}
        for variant, size in self._tried:
            if size not in self._points(history, variant) and any(
                    r.variant == variant and r.size_n == size for r in history):
                out[variant] = min(size, out.get(variant, size))
        return out

    def _note_cost(self, remaining_s: float | None, history: Sequence[Run] = ()) -> None:
        """Keep what the last job handed out cost (the budget it took); of jobs handed out
        together (`_together`), the largest count the whole round's seconds and each other
        its share by its count (a count's time follows the instructions it runs), at
        least the meter's start-up."""
        if self._last is None or self._before_s is None or remaining_s is None:
            return
        spent = max(self._before_s - remaining_s, 0.0)
        self._costs[self._last.size_n] = spent
        if self._round:
            counts = {j.size_n: c for j in self._round
                      if (c := self._points(history, j.variant).get(j.size_n))}
            top = max(counts.values(), default=0.0)
            start = self.cost.startup_s
            for size, c in counts.items():
                if size != self._last.size_n:
                    self._costs[size] = max(start + (spent - start) * c / top, start)
            self._round = ()

    def _halving(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        """Where no timed size left is affordable to count and the counts have not settled:
        halve below the smallest counted size (`_halved`), where counting is cheapest; an
        exact count needs no large n to beat noise, only a span. Priced at the cheapest
        count so far (a smaller n costs no more), or by the meter's cost model on the
        smallest timed run when nothing was counted yet (`_low_price`)."""
        job = self._halved(history)
        if job is None:
            return None
        price = self._below_price(history, job.variant, job.size_n)
        price = self._low_price(history, job.variant) if price is None else price
        if remaining_s is not None and price > remaining_s:
            return None
        return self._hand_out(job, remaining_s)

    def _halved(self, history: Sequence[Run]) -> PlannedRun | None:
        """Half the smallest counted (or timed) size of the first variant whose counts have
        not settled, up to EXTEND halvings below its timed sizes, while the count there
        should still differ from the smallest count by far more than its jitter
        (`_far_from_jitter`); None when no variant has such a size left."""
        for variant in sorted({j.variant for j in self.jobs}):
            if self._variant_settled(self._points(history, variant)):
                continue
            timed = [j.size_n for j in self.jobs if j.variant == variant]
            # Sizes this plan may have counted: a timed sweep's start-up size lies further
            # below the timed sizes than any halving (run.spec.startup_size).
            smallest = min([*timed, *(r.size_n for r in history if r.variant == variant
                                      and r.size_n * 2 ** EXTEND >= min(timed))])
            size = smallest // 2
            if size < 1 or size * 2 ** EXTEND < min(timed):
                continue
            job = PlannedRun(variant, size, max(j.repeat for j in self.jobs))
            if self._far_from_jitter(history, job) is not False:
                return job
        return None

    def _many(self, history: Sequence[Run], todo: Sequence[PlannedRun],
              remaining_s: float | None) -> Batch | None:
        """Where one start counts many calls (a Python function): the timed sizes not yet
        counted (with the `_halvings` below them where fewer than SETTLE_SIZES of a
        variant's would fit: a span the budget cannot buy above), then once the
        `_extension` above them, then once the `_halvings` below, each batch the cheapest
        of them that fit in what is left (`_affordable`)."""
        self._learn(remaining_s)
        if todo:
            offered = [(j, _timed_median(history, j.variant, j.size_n) or 0.0) for j in todo]
            fit = [j for j, _ in self._pick(offered, remaining_s)[0]]
            if any(len(self._points(history, v)) + sum(j.variant == v for j in fit)
                   < SETTLE_SIZES for v in {j.variant for j in todo}):
                offered += self._halvings(history)
        elif not self._extended:
            self._extended = True
            offered = self._extension(history)
        else:
            offered = []
        batch = self._affordable(offered, remaining_s)
        if batch is None and not self._halved_once:
            self._halved_once = True
            batch = self._affordable(self._halvings(history), remaining_s)
        return batch

    def _batch_cost(self) -> BatchCost:
        """What a start counting many calls costs: the meter's model of it, or its cost of
        one run when it has none (a start each, no call's own overhead)."""
        return self.cost.batch or BatchCost(startup_s=self.cost.startup_s, per_call_s=0.0,
                                            slowdown=self.cost.slowdown)

    def _learn(self, remaining_s: float | None) -> None:
        """After a batch: raise the scale of every later batch's price to what this one cost
        against its price (never lower: a batch cut short at the budget under-reports it)."""
        if self._batch_price and self._before_s is not None and remaining_s is not None:
            spent = max(self._before_s - remaining_s, 0.0)
            self._scale = max(self._scale, spent / self._batch_price)
        self._batch_price = None

    def _affordable(self, offered: Sequence[tuple[PlannedRun, float]],
                    remaining_s: float | None) -> Batch | None:
        """The jobs of `offered` (each with its plain call's seconds) one start counts within
        `remaining_s`, cheapest first: the meter's `BatchCost` (its start, then each call's
        overhead and slowdown, plus the call's timed run), scaled by what earlier batches
        cost against their price (`_learn`); a job that does not fit ends the batch (the
        rest cost more). Their timeouts share what is left in proportion to their prices,
        so the start is cut short at the budget, and the calls counted by then are kept
        (`measure.exact.InstructionMeter.count_many`). None when not one job fits."""
        picked, price = self._pick(offered, remaining_s)
        if not picked:
            return None
        self._before_s, self._batch_price = remaining_s, price
        return tuple(Scheduled(job, self._share(added + (price - sum(a for _, a in picked))
                                                / len(picked), price, remaining_s))
                     for job, added in picked)

    def _pick(self, offered: Sequence[tuple[PlannedRun, float]], remaining_s: float | None,
              ) -> tuple[list[tuple[PlannedRun, float]], float]:
        """`_affordable`'s choice: the jobs that fit, cheapest first, each with what it adds
        to the start's price, and the start's whole price."""
        cost = self._batch_cost()
        price = cost.startup_s * self._scale
        picked: list[tuple[PlannedRun, float]] = []
        for job, plain in sorted(offered, key=lambda o: (o[1], o[0].size_n, o[0].variant)):
            added = (cost.call_s(plain) + plain) * self._scale
            if remaining_s is not None and price + added > remaining_s:
                break
            picked.append((job, added))
            price += added
        return picked, price

    def _share(self, price_s: float, total_s: float, remaining_s: float | None) -> float | None:
        """A batched job's timeout: its part (`price_s` of the batch's `total_s`) of what is
        left, within the sweep's own timeout; the sweep's timeout without a budget."""
        if remaining_s is None:
            return self.timeout_s
        share = remaining_s * price_s / total_s if total_s > 0 else remaining_s
        return share if self.timeout_s is None else min(share, self.timeout_s)

    def _extension(self, history: Sequence[Run]) -> list[tuple[PlannedRun, float]]:
        """Where the timed sizes did not settle the work: up to `extend` doublings above
        each variant's largest, each with its plain call's seconds predicted from the
        largest timed one grown as the count itself grew over its last doubling (the
        counted call's time follows its instructions; n², 4x, without two counts)."""
        out: list[tuple[PlannedRun, float]] = []
        repeat = max(j.repeat for j in self.jobs)
        for variant in sorted({j.variant for j in self.jobs}):
            top = max(j.size_n for j in self.jobs if j.variant == variant)
            plain = _timed_median(history, variant, top) or 0.0
            growth = self._growth(self._points(history, variant))
            out += [(PlannedRun(variant, top * 2 ** k, repeat), plain * growth ** k)
                    for k in range(1, self.extend + 1)]
        return out

    @staticmethod
    def _growth(points: Mapping[int, float]) -> float:
        """How much the count grew over one doubling at its two largest sizes (1 to
        GROWTH_CAP); 4 (n²) with fewer than two counts."""
        sizes = sorted(points)
        if len(sizes) < 2 or points[sizes[-2]] <= 0 or points[sizes[-1]] <= 0:
            return 4.0
        lo, hi = sizes[-2], sizes[-1]
        grown = (points[hi] / points[lo]) ** (math.log(2) / math.log(hi / lo))
        return min(max(grown, 1.0), GROWTH_CAP)

    def _halvings(self, history: Sequence[Run]) -> list[tuple[PlannedRun, float]]:
        """Below each unsettled variant's smallest counted (or timed) size, up to EXTEND
        halvings under its timed sizes not yet run, unless the count there should differ
        from the smallest count by less than its jitter (`_far_from_jitter`; a call counted
        alone has no start-up to hide in, so without counts it is not judged), each with
        its plain call's seconds on the line in n to the smallest size's (`_plain_below`;
        in proportion to n with no size timed below it): the sizes cheapest to count, for
        a span the budget could not buy above."""
        out: list[tuple[PlannedRun, float]] = []
        repeat = max(j.repeat for j in self.jobs)
        for variant in sorted({j.variant for j in self.jobs}):
            points = self._points(history, variant)
            if self._variant_settled(points):
                continue
            timed_min = min(j.size_n for j in self.jobs if j.variant == variant)
            ref = min([*points, timed_min])
            t_ref = _timed_median(history, variant, ref) or 0.0
            ran = {r.size_n for r in history if r.variant == variant}
            size = ref // 2
            while size >= 1 and size * 2 ** EXTEND >= timed_min:
                job = PlannedRun(variant, size, repeat)
                if size not in ran and self._far_from_jitter(history, job) is not False:
                    plain = self._plain_below(history, variant, size, ref)
                    out.append((job, t_ref * size / ref if plain is None else plain))
                size //= 2
        return out

    def _doubling(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        """Where each size is a start of its own (a program) and the timed sizes did not
        settle the work: one doubling above the largest counted size at a time, up to EXTEND
        above the timed sizes, for the first variant whose count has not settled. Priced by
        the last job's cost times the count's own growth over one doubling (`_grown`)."""
        for variant in sorted({j.variant for j in self.jobs}):
            points = self._points(history, variant)
            if len(points) < MIN_COUNTED or self._variant_settled(points):
                continue
            top = max(j.size_n for j in self.jobs if j.variant == variant)
            largest = max(points)
            if largest >= top * 2 ** self.extend or (variant, largest * 2) in self._tried:
                continue
            price = self._grown(history, points, remaining_s)
            if remaining_s is not None and price > remaining_s:
                return None
            repeat = max(j.repeat for j in self.jobs)
            return self._hand_out(PlannedRun(variant, largest * 2, repeat), remaining_s)
        return None

    def _grown(self, history: Sequence[Run], points: dict[int, float],
               remaining_s: float | None) -> float:
        """What counting at twice the largest counted size should cost: what the last job
        cost, times how much the count grew over the last doubling (Valgrind's time is its
        start-up plus time per instruction, so the count is its cost's own proxy; the
        start-up scaled too makes the price an upper bound). Without a measured last job
        (a resumed plan), the meter's cost model on the plain run grown as n²."""
        sizes = sorted(points)
        lo, hi = sizes[-2], sizes[-1]
        per_doubling = (points[hi] / points[lo]) ** (math.log(2) / math.log(hi / lo)) \
            if points[lo] > 0 and points[hi] > 0 else 4.0
        before = self._before_s
        if before is None or remaining_s is None:
            variant = next(r.variant for r in history if r.size_n == hi)
            return self.cost.run_s(4 * (_timed_median(history, variant, hi) or 0.0))
        return max(before - remaining_s, 0.0) * max(per_doubling, 1.0)

    def _points(self, history: Sequence[Run], variant: str) -> dict[int, float]:
        """The count at each counted size of `variant` (one count per size: they repeat)."""
        return {r.size_n: float(v) for r in history if r.variant == variant
                and r.measurement.ok and (v := r.value(self.metric)) is not None}

    def _variant_settled(self, points: dict[int, float]) -> bool:
        """Whether these counts settle the class as the analysis will fit them: as a sum of
        growth terms (`exactfit`), or as any metric where they follow no such law."""
        from quadscope.analyse.exactfit import MIN_SIZES, fit_exact
        from quadscope.analyse.fitting import fit_metric

        sizes = sorted(points)
        if len(sizes) < SETTLE_SIZES or sizes[-1] < SETTLE_SPAN * max(sizes[0], 1):
            return False
        values = [points[n] for n in sizes]
        fit = fit_exact(self.metric, sizes, values) or fit_metric(
            self.metric, sizes, values, strict=len(sizes) >= MIN_SIZES)
        return fit.confident

    def _price(self, history: Sequence[Run], job: PlannedRun, remaining_s: float) -> float:
        """What counting `job` should cost: the last counted job's cost plus the meter's
        slowdown (`_slowdown`) times how much longer the plain run is at this size, at most
        the last cost scaled by the plain runs' ratio; the meter's cost model for the first.
        Valgrind's start (3 s for a Python, most of the count where the plain run is 20 ms of
        start-up and a little work) does not grow with n: scaled, it made every larger size
        look dearer than it was, and the counts stopped at three."""
        plain = _timed_median(history, job.variant, job.size_n) or 0.0
        before = self._before_s
        last = next((r for r in reversed(history) if r.value(self.metric) is not None), None)
        if before is None or last is None:
            return self.cost.run_s(plain)
        points = self._points(history, job.variant)
        if not plain and len(points) >= 2 and job.size_n > max(points):
            # Not timed yet (an exact sweep's next doubling): priced by the count's own
            # growth over the last doubling, so an exponential's next n is never started.
            return self._grown(history, points, remaining_s)
        spent = max(before - remaining_s, 0.0)
        below = self._below_price(history, job.variant, job.size_n)
        if below is not None:
            return below
        last_plain = _timed_median(history, last.variant, last.size_n) or 0.0
        scale = plain / last_plain if last_plain > 0 else 1.0
        added = spent + self._slowdown(history, job.variant) * max(plain - last_plain, 0.0)
        return min(spent * max(scale, 1.0), added)

    def _slowdown(self, history: Sequence[Run], variant: str) -> float:
        """How many seconds of counting a second of the plain run adds: the meter's model
        (`Cost.slowdown`), or more where two counts of `variant` differ by more than that
        times their plain runs' difference (a tight C loop under Valgrind; noisy medians of
        a start-up-dominated run can only raise it, back towards the scaled price)."""
        plain = {n: t for n in self._points(history, variant) if n in self._costs
                 and (t := _timed_median(history, variant, n)) is not None}
        if len(plain) < 2:
            return self.cost.slowdown
        lo, hi = min(plain, key=plain.__getitem__), max(plain, key=plain.__getitem__)
        gap = plain[hi] - plain[lo]
        seen = (self._costs[hi] - self._costs[lo]) / gap if gap > 0 else 0.0
        return max(self.cost.slowdown, seen)

    def _settled(self, history: Sequence[Run]) -> bool:
        return all(self._variant_settled(self._points(history, variant))
                   for variant in sorted({j.variant for j in self.jobs}))


def exact_plan(variants: Sequence[str], start_n: int, *, metric: str, cost: Cost,
               timeout_s: float | None) -> CountPlan:
    """An exact meter's adaptive sweep (`--meter instructions --budget S`): the work counted
    once per size from `start_n`, doubling, SETTLE_SIZES sizes first (a span of
    2^(SETTLE_SIZES-1)), then one doubling at a time, each priced from the last count's cost,
    until the counts settle the class or the budget cannot pay for the next size. A count
    that fails or is cut short (each may cost at most GROWTH_CAP times the last: an
    exponential program's n doubled is not left to spend the budget) stops the climb; the
    plan then halves below the start, where counting is cheapest.

    Not the time meter's `AdaptivePlan`: a count repeats exactly, so repeats buy nothing,
    and it needs no large n to beat noise, only a span of sizes; the smallest sizes are
    the cheapest to count (a count's cost is Valgrind's start plus its slowdown times the
    run's)."""
    start = max(start_n, 1)
    jobs = [PlannedRun(v, start * 2 ** k, 0) for k in range(SETTLE_SIZES) for v in variants]
    return CountPlan(jobs, metric=metric, cost=cost, timeout_s=timeout_s,
                     reason="the meter counts the work", extend=EXACT_EXTEND, cap_growth=True)


def _same_job(run: Run, job: PlannedRun) -> bool:
    return (run.variant, run.size_n, run.repeat, run.warmup) == (
        job.variant, job.size_n, job.repeat, job.warmup)


@dataclass(frozen=True, slots=True)
class Refused:
    """Why the exact meter cannot count this target: one sentence."""

    why: str


@dataclass(frozen=True, slots=True)
class Counting:
    """The exact meter a timed sweep falls back on, and how (see the module docstring)."""

    make: Callable[[], Measuring]  # the exact meter's executor, built when counting starts
    meter: str  # the exact meter's name, e.g. "instructions"
    metric: str  # the metric it counts
    cost: Cost

    def plan(self, sweep: Sweep, runs: Sequence[Run]) -> CountPlan | PointCountPlan | None:
        """The counting the timed runs call for; None when time alone settled the class.
        A sweep over several sizes counts at points (`run.multicount`)."""
        if sweep.axes:
            from quadscope.run import multicount

            return multicount.plan(sweep, runs, metric=self.metric, cost=self.cost)
        reason = "" if sweep.mode == "accumulate" else open_reason(sweep, runs)
        if not reason:
            return None
        measured = {v: {r.size_n for r in _measured(runs, v, sweep.startup_n)}
                    for v in {r.variant for r in runs}}
        repeat = 1 + max((r.repeat for r in runs), default=0)  # a repeat no timed run has
        sizes = pick_sizes(sorted(set().union(*measured.values())))
        timed = {n: max(t for v in measured if (t := _timed_median(runs, v, n)) is not None)
                 for n in sizes if any(n in measured[v] for v in measured)}
        jobs = [PlannedRun(v, n, repeat) for n in count_order(sizes, timed)
                for v in sorted(measured) if n in measured[v]]
        return (CountPlan(jobs, metric=self.metric, cost=self.cost, timeout_s=sweep.timeout_s,
                          reason=reason) if jobs else None)

    def measuring(self) -> Measuring | Refused:
        """The exact meter's executor for this target; `Refused` when it cannot count it (a
        function that cannot be sent to the counting child Python, `measure.pycount`)."""
        try:
            return self.make()
        except ProgramError as exc:
            return Refused(str(exc).rstrip("."))

    @staticmethod
    def refused(sweep: Sweep, refusal: Refused) -> Sweep:
        """The sweep when counting was refused: still timed, its note saying why."""
        return dataclasses.replace(sweep, counters_note=f"{refusal.why}{REFUSED_TAIL}")

    def mark(self, sweep: Sweep, runs: Sequence[Run], plan: CountPlan | PointCountPlan,
             measuring: Measuring, spent_s: tuple[float, float] = (0.0, 0.0)) -> Sweep:
        """The sweep after counting: the exact meter's when the work was counted at enough
        sizes, else still timed, with a note on what counting would cost. `spent_s` is
        (the timed sweep's seconds, counting's), said in the note."""
        if sweep.axes:
            return self._mark_points(sweep, runs, plan, measuring, spent_s)
        variants = {j.variant for j in plan.jobs}
        counted = {v: {r.size_n for r in _measured(runs, v, sweep.startup_n)
                       if r.value(self.metric) is not None}
                   for v in variants}
        if all(len(sizes) >= MIN_COUNTED for sizes in counted.values()):
            return dataclasses.replace(
                sweep, meter=self.meter, counters=measuring.counted(),
                counters_note=work_counted(plan.reason, measuring.counted(),
                                           f"{min(len(s) for s in counted.values())} sizes",
                                           spent_s))
        least = min(len(s) for s in counted.values())
        done = f"; {least} counted in {counting_cost(spent_s)}" if least else ""
        return dataclasses.replace(sweep, counters_note=(
            f"{plan.reason}, and counting the work ({measuring.counted()}) "
            f"at {MIN_COUNTED} sizes did not fit in the sweep's own time{done}: "
            f"`--meter {self.meter}` counts it whatever it costs"))

    def _mark_points(self, sweep: Sweep, runs: Sequence[Run], plan: CountPlan | PointCountPlan,
                     measuring: Measuring, spent_s: tuple[float, float]) -> Sweep:
        """`mark` for a sweep over several sizes: exact once MIN_POINTS points were counted."""
        from quadscope.run.design import MIN_POINTS
        from quadscope.run.multicount import counted_points

        counted = counted_points(runs, self.metric)
        if counted >= MIN_POINTS:
            return dataclasses.replace(
                sweep, meter=self.meter, counters=measuring.counted(),
                counters_note=work_counted(plan.reason, measuring.counted(),
                                           f"{counted} points", spent_s))
        return dataclasses.replace(sweep, counters_note=(
            f"{plan.reason}, and counting the work ({measuring.counted()}) at the "
            f"{MIN_POINTS} points a fit needs did not fit in the sweep's own time "
            f"({counted} counted): `--meter {self.meter}` counts it whatever it costs"))
