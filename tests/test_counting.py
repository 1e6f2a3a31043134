"""The default meter counts the work only when time alone leaves the class open (run.counting)."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Sequence

from tests.conftest import measurement, size_of

from quadscope.analyse.analysis import analyse
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.meters import BatchCost, Cost, Measuring
from quadscope.model import Fit, Measurement, Run, Sweep
from quadscope.run import counting
from quadscope.run.counting import EXTEND, MAX_SIZES, Counting, pick_sizes
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import Store

SIZES = (1000, 2000, 4000, 8000, 16000, 32000)


def _timed(f: Callable[[int], float], noise: float,
           seed: int = 1) -> Callable[[Sequence[str]], Measurement]:
    """Wall time f(n) scattered by ±`noise` (relative), deterministic for a seed."""
    rng = random.Random(seed)

    def cost(argv: Sequence[str]) -> Measurement:
        wall = f(size_of(argv)) * (1 + noise * (2 * rng.random() - 1))
        return measurement(wall)
    return cost


def _counted(work: Callable[[int], int],
             count_s: float) -> Callable[[Sequence[str]], Measurement]:
    """A counted run: a real run's time plus the exact count; the counting costs count_s."""
    def cost(argv: Sequence[str]) -> Measurement:
        n = size_of(argv)
        m = measurement(count_s)
        return Measurement({**m.values, "instructions": work(n)}, exit_code=0)
    return cost


def _sweep(store: Store, timed: Callable[[Sequence[str]], Measurement],
           counted: Callable[[Sequence[str]], Measurement],
           ) -> tuple[Sweep, tuple[Run, ...], FakeExecutor]:
    clock = FakeClock(1000.0)
    counter = FakeExecutor(counted, clock)
    counting = Counting(lambda: Measuring(counter, "valgrind", "counted under a fake"), "instructions",
                        "instructions", Cost(slowdown=30.0, startup_s=0.3))
    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), sizes=SIZES, repeat=3, warmup=0),
                      executor=FakeExecutor(timed, clock), clock=clock, store=store,
                      counting=counting)
    return sweep, tuple(store.runs(sweep.id)), counter


def test_time_left_open_is_decided_by_the_counted_work(store: Store) -> None:
    """Wall time scattered ±60% leaves the class open; the count, 3·n² at every size,
    is taken once per size until it settles, and the sweep leads with the work: quadratic."""
    sweep, runs, counter = _sweep(store, _timed(lambda n: 1e-9 * n * n + 0.01, 0.6),
                                  _counted(lambda n: 3 * n * n, 0.05))
    assert sweep.meter == "instructions" and sweep.counters == "valgrind"
    assert "time alone left the class open" in sweep.counters_note
    # What was counted, how, and what it cost against the timed sweep (4 × 0.05 s).
    assert re.search(r"counted under Valgrind at 4 sizes \(200 ms, \d+% of the timed sweep's "
                     r"\d[.\d]* s\)$", sweep.counters_note), sweep.counters_note
    # One count per size: the three smallest, the largest, and then it has settled.
    assert [size_of(a) for a in counter.calls] == [1000, 2000, 4000, 32000]
    counted = [r for r in runs if r.value("instructions") is not None]
    assert len(counted) == 4 and all(r.measurement.ok for r in counted)
    a = analyse(sweep, runs)
    assert a.work_metric == "instructions"
    assert a.fits["A"]["instructions"].cls == "n^2"
    assert a.verdict.startswith("quadratic: the work grows as n²")


def test_the_report_says_once_what_was_counted_and_what_it_cost(store: Store) -> None:
    """The default report says the counting note once, under the headline; -v does not say it
    again as its "counters:" line; the time notes point at the count, not at its reason."""
    from quadscope.render import get_renderer

    sweep, runs, _ = _sweep(store, _timed(lambda n: 1e-9 * n * n + 0.01, 0.6),
                            _counted(lambda n: 3 * n * n, 0.05))
    a = analyse(sweep, runs)
    for verbose in (False, True):
        out = get_renderer("terminal", width=80, verbose=verbose).render(a)
        assert isinstance(out, bytes)
        flat = " ".join(out.decode().split())
        assert flat.count("so the work was counted under Valgrind at 4 sizes") == 1, flat
        assert ("counters:" in flat) is False
    out = get_renderer("terminal", width=80).render(a)
    assert isinstance(out, bytes)
    # Which times the compact report shows depends on the draw (user_s beside wall_s or not).
    assert re.search(r"wall_s(, user_s)?: not settled by time alone; the instructions counted "
                     r"decide the class", " ".join(out.decode().split()))


def test_time_that_settles_is_not_counted(store: Store) -> None:
    """A clean quadratic in time settles the class: nothing is counted, the meter stays auto."""
    sweep, runs, counter = _sweep(store, _timed(lambda n: 1e-8 * n * n, 0.001),
                                  _counted(lambda n: 3 * n * n, 0.05))
    assert counter.calls == ()
    assert sweep.meter == "auto" and sweep.counters_note == ""
    assert all(r.value("instructions") is None for r in runs)


def test_time_settled_above_quadratic_is_confirmed_by_the_work(store: Store) -> None:
    """Wall time growing cleanly as n³ settles cubic, which time alone is not trusted with:
    the work is counted, and the count (n², as a kernel cost on top would leave it) leads."""
    sweep, runs, counter = _sweep(store, _timed(lambda n: 1e-13 * n ** 3, 0.001),
                                  _counted(lambda n: 3 * n * n, 0.05))
    assert "above n² (n³)" in sweep.counters_note
    assert len(counter.calls) >= 3 and sweep.meter == "instructions"
    a = analyse(sweep, runs)
    assert a.fits["A"]["instructions"].cls == "n^2"


def test_time_settled_as_n_log_n_is_confirmed_by_the_work(store: Store) -> None:
    """Linear work whose time reads n log n (the caches): the work is counted and leads, n."""
    sweep, runs, counter = _sweep(store, _timed(lambda n: 1e-8 * n * math.log(n), 0.001),
                                  _counted(lambda n: 40 * n + 10**6, 0.05))
    assert "between n and n² (n log n)" in sweep.counters_note
    assert len(counter.calls) >= 3 and sweep.meter == "instructions"
    assert analyse(sweep, runs).fits["A"]["instructions"].cls == "n"


def test_counting_stops_within_the_timed_sweeps_own_cost(store: Store) -> None:
    """Each count costing 40 s where the whole timed sweep took a few seconds: the first
    count is priced by the meter's cost model and fits; the next is priced from what the
    first cost and does not, so counting stops, the sweep stays timed and says why."""
    sweep, _runs, counter = _sweep(store, _timed(lambda n: 1e-9 * n * n + 0.01, 0.6),
                                  _counted(lambda n: 3 * n * n, 40.0))
    assert len(counter.calls) <= 1
    assert sweep.meter == "auto"
    assert "did not fit in the sweep's own time" in sweep.counters_note
    assert "--meter instructions" in sweep.counters_note


def test_a_sweep_whose_budget_buys_three_counts_gets_a_fourth_from_the_spare(
        store: Store) -> None:
    """Counts of 4.5 s after a timed sweep of a second or two: the 15 s floor buys three,
    and `run_sweep` gives the plan its spare (`CountPlan.deadline_s`), which buys the fourth:
    four sizes counted, the work classed as n², within the floor and its spare."""
    sweep, runs, counter = _sweep(store, _timed(lambda n: 1e-9 * n * n + 0.01, 0.6),
                                  _counted(lambda n: 140_000_000 + 3 * n * n, 4.5))
    assert len(counter.calls) == counting.SETTLE_SIZES
    assert 4.5 * len(counter.calls) <= counting.FLOOR_S * (1 + counting.SPARE)
    assert sweep.meter == "instructions"
    assert analyse(sweep, runs).fits["A"]["instructions"].cls == "n^2"


def test_counted_sizes_are_few_spread_smallest_first_and_keep_the_largest() -> None:
    """At most MAX_SIZES sizes, spread in log n, the largest always counted."""
    sizes = [2 ** k for k in range(4, 20)]
    picked = pick_sizes(sizes)
    assert len(picked) == MAX_SIZES and picked[0] == 16 and picked[-1] == 2 ** 19
    assert list(picked) == sorted(picked)
    assert pick_sizes([5, 3, 3, 9]) == (3, 5, 9)


def _small_square(n: int) -> int:
    """Start-up, a linear part and a small n² term: a wide bracket over 1000..32000 (the n²
    term is 0.08% of the work at 32000), settled as n² once counted to 256000."""
    return 100_000_000 + 1000 * n + n * n // 10_000


def test_a_count_left_open_by_the_timed_sizes_doubles_beyond_them(store: Store) -> None:
    """A program's counts over the timed sizes do not settle; the plan counts one doubling
    above the largest at a time, up to EXTEND, and the n² term is found."""
    sweep, runs, counter = _sweep(store, _timed(lambda n: 1e-9 * n * n + 0.01, 0.6),
                                  _counted(_small_square, 0.05))
    counted = [size_of(a) for a in counter.calls]
    assert counted[:6] == [1000, 2000, 4000, 32000, 8000, 16000]
    assert counted[6:] == [64000, 128000, 256000][:len(counted) - 6] and len(counted) > 6
    assert max(counted) <= SIZES[-1] * 2 ** EXTEND
    a = analyse(sweep, runs)
    assert sweep.meter == "instructions" and a.fits["A"]["instructions"].cls == "n^2"


def test_a_doubling_the_budget_cannot_pay_for_is_not_started(store: Store) -> None:
    """Counting that costs 10 ns an instruction (1.0 s at 1000, 1.3 s at 32000): after the
    timed sizes and two doublings (about 11.6 s of the 15 s budget) the next, priced by the
    count's own growth at about 6 s, does not fit, so it is not started. (The timed runs grow
    as n, so the timed sizes are priced by about what they cost.)"""
    def counted(argv: Sequence[str]) -> Measurement:
        work = _small_square(size_of(argv))
        return Measurement({**measurement(work * 1e-8).values, "instructions": work},
                           exit_code=0)
    *_, counter = _sweep(store, _timed(lambda n: 1e-6 * n + 0.01, 0.6), counted)
    sizes = [size_of(a) for a in counter.calls]
    assert sizes[-2:] == [64000, 128000], sizes


def test_sizes_too_dear_to_count_give_way_to_halvings_below_them(store: Store) -> None:
    """Counting costs 0.5 s + 1 ms per unit of n: after 1000, 2000 and 4000 (8.5 s of the 15 s
    budget) no larger timed size fits, so the plan counts below the timed sizes, where it is
    cheapest, and 500..4000 settle the work as n²."""
    def counted(argv: Sequence[str]) -> Measurement:
        n = size_of(argv)
        return Measurement({**measurement(0.5 + 1e-3 * n).values, "instructions": 3 * n * n},
                           exit_code=0)
    sweep, runs, counter = _sweep(store, _timed(lambda n: 1e-5 * n, 0.2), counted)
    assert [size_of(a) for a in counter.calls] == [1000, 2000, 4000, 500]
    assert sweep.meter == "instructions"
    assert analyse(sweep, runs).fits["A"]["instructions"].cls == "n^2"


def _run(wall: float, cpu: float) -> Run:
    return Run(sweep_id=1, seq=0, variant="A", size_n=1000, repeat=0, warmup=False,
               started_at=0.0, measurement=measurement(wall, user_s=cpu))


def test_the_floor_stretches_with_the_contention_the_timed_runs_met() -> None:
    """Runs that waited 3 s on the clock per CPU second: the 15 s floor becomes 45 s; an idle
    machine (or a program using two cores) keeps it; the stretch is capped; a timed sweep
    that cost more than the floor is its own budget."""
    assert counting.contention([_run(3.0, 1.0)] * 5) == 3.0
    assert counting.budget_s(2.0, [_run(3.0, 1.0)] * 5) == 3 * counting.FLOOR_S
    assert counting.budget_s(2.0, [_run(1.0, 1.9)] * 5) == counting.FLOOR_S
    assert counting.contention([_run(60.0, 1.0)]) == counting.MAX_CONTENTION
    assert counting.budget_s(100.0, [_run(3.0, 1.0)]) == 100.0


def _exact_sweep(store: Store, counted: Callable[[Sequence[str]], Measurement],
                 budget_s: float = 60.0) -> tuple[Sweep, tuple[Run, ...], FakeExecutor]:
    """`--meter instructions --budget B --start 1000` on a fake counting executor."""
    clock = FakeClock(1000.0)
    executor = FakeExecutor(counted, clock)
    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), mode="adaptive", budget_s=budget_s,
                                start_n=1000, meter="instructions"),
                      executor=executor, clock=clock, store=store)
    return sweep, tuple(store.runs(sweep.id)), executor


def test_an_exact_adaptive_sweep_counts_once_per_size_from_its_start_until_settled(
        store: Store) -> None:
    """3·n² counted: four doublings from --start, one run each (a count repeats), then settled:
    no repeats, no warm-up, no size beyond what settles it."""
    sweep, runs, executor = _exact_sweep(store, _counted(lambda n: 3 * n * n, 0.05))
    assert [size_of(a) for a in executor.calls] == [1000, 2000, 4000, 8000]
    assert not any(r.warmup for r in runs)
    a = analyse(sweep, runs)
    assert a.work_metric == "instructions"
    assert a.fits["A"]["instructions"].cls == "n^2"


def test_an_exact_adaptive_sweep_doubles_on_while_the_counts_do_not_settle(
        store: Store) -> None:
    """A start-up of 10⁹ instructions hides n log n at the first four sizes: the plan doubles,
    one size at a time, past the four planned, and stops where the counts settle or the
    budget ends, never repeating a size."""
    _, _, executor = _exact_sweep(
        store, _counted(lambda n: 10**9 + int(20 * n * math.log(n)), 0.05))
    sizes = [size_of(a) for a in executor.calls]
    assert sizes[:4] == [1000, 2000, 4000, 8000] and len(sizes) > 4
    assert sizes == sorted(set(sizes)) and sizes[4:] == [8000 * 2**k for k in
                                                         range(1, len(sizes) - 3)]


def test_an_exact_adaptive_sweep_stops_at_the_count_its_budget_cannot_pay_for(
        store: Store) -> None:
    """Counts that cost 4 s each in a 10 s budget: the third is not started."""
    sweep, _, executor = _exact_sweep(store, _counted(lambda n: 3 * n * n, 4.0),
                                         budget_s=10.0)
    assert [size_of(a) for a in executor.calls] == [1000, 2000]
    assert sweep.status in ("complete", "interrupted")


def test_an_exact_adaptive_sweep_that_cannot_count_a_doubling_halves_below_its_start(
        store: Store) -> None:
    """An exponential program: the count at twice the start fails (a timeout), so no larger
    size is tried; the plan counts halvings below the start instead, where it is cheap."""
    def counted(argv: Sequence[str]) -> Measurement:
        n = size_of(argv)
        if n > 1000:
            return Measurement(wall_s=0.05, exit_code=-9, timed_out=True)
        return Measurement({**measurement(0.05).values, "instructions": 2 ** (n // 100)},
                           exit_code=0)

    _, _, executor = _exact_sweep(store, counted)
    sizes = [size_of(a) for a in executor.calls]
    assert sizes[:2] == [1000, 2000] and all(n < 1000 for n in sizes[2:])
    assert sizes[2:] == [500, 250, 125][:len(sizes) - 2] and len(sizes) > 2


def test_an_exact_adaptive_sweep_prices_a_doubling_by_the_counts_own_growth(
        store: Store) -> None:
    """Counts that grow 1024× over a doubling (2^(n/100)): the next doubling is priced at
    1024× the last count's cost, beyond a 30 s budget, so it is never started; halvings
    below the start follow instead."""
    _, _, executor = _exact_sweep(
        store, _counted(lambda n: 2 ** (n // 100), 0.05), budget_s=30.0)
    sizes = [size_of(a) for a in executor.calls]
    assert sizes[:2] == [1000, 2000] and 4000 not in sizes
    assert all(n < 1000 for n in sizes[2:]) and len(sizes) > 2


def test_counts_start_where_a_start_up_no_longer_hides_the_growth() -> None:
    """A Python's start-up dominates the small sizes: the cheap sizes counted first are the
    largest still timed at about the smallest's cost (the counts there hold the most growth),
    not the smallest (which count the start-up alone); the largest follows, then the rest."""
    sizes = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]
    timed = {1: 0.10, 4: 0.12, 16: 0.09, 64: 0.11, 256: 0.10, 1024: 0.11, 4096: 0.16,
             16384: 0.24, 65536: 2.0}
    assert counting.count_order(sizes, timed) == [256, 1024, 4096, 65536, 1, 4, 16, 64, 16384]
    # Time that grows from the smallest size on: the smallest first, as without medians.
    growing = {n: 1e-6 * n for n in sizes}
    assert counting.count_order(sizes, growing) == counting.count_order(sizes) == [
        1, 4, 16, 65536, 64, 256, 1024, 4096, 16384]


def test_counting_may_spend_what_the_users_budget_left() -> None:
    """An adaptive sweep that stopped early hands what its --budget left to counting."""
    assert counting.budget_s(40.0, ()) == 40.0  # the timed sweep's own cost
    assert counting.budget_s(2.0, ()) == counting.FLOOR_S  # at least the floor
    assert counting.budget_s(8.0, (), given_s=60.0) == 52.0  # what --budget 60 left
    assert counting.budget_s(50.0, (), given_s=60.0) == 50.0


def test_a_time_the_caches_may_account_for_is_left_open_and_counted() -> None:
    """The cache_step workload under busy: time settled "n²" at 4k..1M (k = 1.96) while its
    working set grew as n to 15 MiB past a 2 MiB L2; the analysis widens it by the caches'
    share, so it is open for counting too (it once went uncounted: a confidently wrong
    "n log n or n²" for linear work)."""
    from dataclasses import replace

    from tests.test_memory import CACHES, shaped, stepping

    from quadscope.measure.clock import FakeClock
    from quadscope.run.spec import new_sweep

    runs = shaped([4000 * 2**i for i in range(10)], stepping, 16)
    spec = SweepSpec(command=("prog", "{n}"), sizes=tuple(sorted({r.size_n for r in runs})))
    sweep = new_sweep(spec, clock=FakeClock(0.0), counters="", counters_note="", host=CACHES)
    assert "open" in counting.open_reason(replace(sweep, id=1), runs)
    no_caches = new_sweep(spec, clock=FakeClock(0.0), counters="", counters_note="",
                          host=replace(CACHES, l2_bytes=None, llc_bytes=None))
    assert counting.open_reason(replace(no_caches, id=1), runs) == ""


def test_the_default_report_says_why_counting_did_not_class_the_work(store: Store) -> None:
    """A count `auto` began and could not finish within the sweep's own time: the default
    report (not only -v) says so, with what was counted and what it cost, beside advice
    that names the meter."""
    from quadscope.render.terminal import TerminalRenderer

    sweep, runs, counter = _sweep(store, _timed(lambda n: 1e-9 * n * n + 0.01, 0.6),
                                  _counted(lambda n: 3 * n * n, 6.0))
    assert sweep.meter == "auto" and 1 <= len(counter.calls) < 3, counter.calls
    assert re.search(r"; [12] counted in", sweep.counters_note), sweep.counters_note
    text = TerminalRenderer(width=200).render(analyse(sweep, runs)).decode()
    assert re.search(r"did not fit in the sweep's own time; [12] counted in", text), text
    verbose = TerminalRenderer(width=200, verbose=True).render(analyse(sweep, runs)).decode()
    assert verbose.count("did not fit in the sweep's own time") == 1  # said once


def _drive(timed_s: Callable[[int], float], count_s: Callable[[int], float],
           work: Callable[[int], int], budget_s: float = counting.FLOOR_S,
           sizes: Sequence[int] = SIZES, startup: bool = False, spare: bool = False) -> list[int]:
    """The sizes a CountPlan counts after a timed sweep over `sizes` (and its start-up run at
    n = 1 with `startup`), each count costing `count_s(n)` of a `budget_s` budget, as the
    runner reports it (no clock, no runner); a counted run is a plain run plus its count.
    With `spare` the runner's deadline is the plan's `deadline_s`, as `run_sweep` gives it."""
    timed_n = [1, *sizes] if startup else list(sizes)
    history = [Run(sweep_id=1, seq=i, variant="A", size_n=n, repeat=r, warmup=False,
                   started_at=0.0, measurement=measurement(timed_s(n)))
               for i, (n, r) in enumerate((n, r) for n in timed_n for r in range(3))]
    timed = {n: timed_s(n) for n in sizes}
    jobs = [counting.PlannedRun("A", n, 3) for n in counting.count_order(sizes, timed)]
    plan = counting.CountPlan(jobs, metric="instructions", cost=Cost(slowdown=30.0, startup_s=0.3),
                              timeout_s=None)
    remaining, counted = (plan.deadline_s(budget_s) if spare else budget_s), []
    while (batch := plan.next_batch(history, remaining)) is not None:
        (scheduled,) = batch
        n = scheduled.run.size_n
        assert count_s(n) <= remaining, (n, remaining)  # never started beyond the budget
        remaining -= count_s(n)
        counted.append(n)
        history.append(Run(sweep_id=1, seq=len(history), variant="A", size_n=n, repeat=3,
                           warmup=False, started_at=0.0, measurement=Measurement(
                               {**measurement(timed_s(n)).values, "instructions": work(n)},
                               exit_code=0)))
    return counted


def test_a_start_up_that_dominates_the_counts_leaves_room_for_four_sizes() -> None:
    """A Python under Valgrind: every count costs a 3 s start-up plus 0.1 ms a unit of n, and
    the 15 s floor buys four. Counting the three largest cheap sizes first (4000, 8000,
    16000: 11.8 s) would leave too little for a fourth; the plan keeps enough for four at
    the cheapest count's price, so it counts below them before the dearest."""
    counted = _drive(lambda n: 0.02 + 1e-6 * n, lambda n: 3.0 + 1e-4 * n,
                     lambda n: 140_000_000 + 1000 * n)
    assert len(counted) >= counting.SETTLE_SIZES, counted
    assert max(counted) >= counting.SETTLE_SPAN * min(counted)
    assert sum(3.0 + 1e-4 * n for n in counted) <= counting.FLOOR_S


def test_a_larger_size_is_priced_by_what_its_work_adds_to_the_start_up() -> None:
    """Counts of 3.6 s that barely grow: the plain run at 32000 is twice as long as at 4000
    (its 20 ms start-up is half of it), but the count adds only the meter's slowdown times
    the 32 ms of work, so the four counts reach the largest size (scaled by the plain runs'
    ratio it looked twice as dear, and the plan stepped down instead)."""
    counted = _drive(lambda n: 0.02 + 1e-6 * n, lambda n: 3.6 + 1e-6 * n,
                     lambda n: 140_000_000 + 1000 * n)
    assert counted == [4000, 8000, 16000, 32000]


def test_a_budget_too_small_for_four_counts_still_buys_three() -> None:
    """Counts of 4.5 s each against the 15 s floor: four cannot be afforded at any size, so
    the plan counts what fits as before (three sizes class the work as a bracket)."""
    counted = _drive(lambda n: 0.02 + 1e-6 * n, lambda n: 4.5 + 1e-6 * n,
                     lambda n: 140_000_000 + 1000 * n)
    assert len(counted) == 3 and counted[0] == 4000, counted


def test_the_spare_buys_the_fourth_count_where_the_budget_bought_three() -> None:
    """Counts of 4.5 s against the 15 s floor buy three (13.5 s); three exact counts fit any
    law of three coefficients, so the plan's spare (a third of the budget, 5 s) pays for a
    fourth at the cheapest price, a halving below the counted sizes: four sizes, 18 s."""
    def count_s(n: int) -> float:
        return 4.5 + 1e-6 * n
    counted = _drive(lambda n: 0.02 + 1e-6 * n, count_s, lambda n: 140_000_000 + 1000 * n,
                     spare=True)
    assert len(counted) == counting.SETTLE_SIZES, counted
    assert counted[:3] == _drive(lambda n: 0.02 + 1e-6 * n, count_s,
                                 lambda n: 140_000_000 + 1000 * n)
    assert counted[3] < min(counted[:3])  # the cheapest: below the counted sizes
    assert sum(map(count_s, counted)) <= counting.FLOOR_S * (1 + counting.SPARE)


def test_the_spare_never_buys_a_third_count_nor_a_fifth() -> None:
    """Counts of 6 s: the 15 s floor buys two, and the spare is not spent on a third (three
    counts class nothing either); counts of 3.6 s buy four within the budget, and the spare
    leaves them as they are."""
    two = _drive(lambda n: 0.02 + 1e-6 * n, lambda n: 6.0 + 1e-6 * n,
                 lambda n: 140_000_000 + 1000 * n, spare=True)
    assert len(two) == 2, two
    four = _drive(lambda n: 0.02 + 1e-6 * n, lambda n: 3.6 + 1e-6 * n,
                  lambda n: 140_000_000 + 1000 * n, spare=True)
    assert four == [4000, 8000, 16000, 32000]


def test_a_halving_in_phase_is_counted_before_a_size_between_the_doublings() -> None:
    """An adaptive sweep timed at 62.5k, 125k, 177k, 250k, 500k, each count ~13 s of a 40 s
    budget: after 62.5k and 125k, 250k and 500k do not fit, 177k (√2 above 125k) and the
    halving 31250 do; the halving is counted, in phase with the others (CPython `sorted`
    counted at 62.5k..250k with 177k read ĉ = 66, "n … n²"; 31.25k..250k reads n log n)."""
    counted = _drive(lambda n: 0.02 + 1e-6 * n, lambda n: 12.5 + 2e-6 * n,
                     lambda n: 143_000_000 + 1200 * n, budget_s=40.0,
                     sizes=[62500, 125000, 176777, 250000, 500000])
    assert counted == [62500, 125000, 31250]


def test_no_halving_whose_count_would_hide_in_the_jitter() -> None:
    """Counting at the timed sizes grows too dear after 1000 and 2000, so the plan would halve
    below them; it does where the counts' increment predicts a step far above an exact count's
    jitter (3n² beside a 140M start-up: 2.25M instructions to 500, 160 σ), and not where the
    step would be 10 instructions a unit of n (2.5k at 500: under 1 σ, a fit of bookkeeping)."""
    def dear(n: int) -> float:
        return 3.5 + 1e-3 * n

    def timed(n: int) -> float:
        return 1e-5 * n
    assert _drive(timed, dear, lambda n: 140_000_000 + 3 * n * n) == [1000, 2000, 500]
    assert _drive(timed, dear, lambda n: 140_000_000 + 10 * n) == [1000, 2000]


def test_below_the_counted_sizes_a_count_is_priced_by_the_work_it_skips() -> None:
    """A Python set's membership test: a 3.2 s Valgrind start, 0.2 µs of plain run a unit of n
    (30× under Valgrind), timed at 125000..2000000 beside its 20 ms start-up at n = 1. After
    the count at 125000 (3.95 s), 250000 and 500000 (4.7 and 6.2 s) would leave no fourth
    count in the 15 s floor; the halvings below, priced by the plain run interpolated down
    to the start-up's (3.6, 3.4 and 3.3 s), leave four: the plan counts them instead."""
    def plain(n: int) -> float:
        return 0.02 + 2e-7 * n if n > 1 else 0.02
    counted = _drive(plain, lambda n: 3.2 + 30 * 2e-7 * n, lambda n: 143_000_000 + 1000 * n,
                     sizes=[125000 * 2 ** k for k in range(5)], startup=True)
    assert counted == [125000, 62500, 31250, 15625]


def test_sizes_a_power_of_two_apart_are_counted_before_those_between() -> None:
    """A hash table's rehashing makes counts a staircase in n: sizes 2^j apart see the same
    share of it, so they are counted first (the adaptive sweep's √2 steps last)."""
    sizes = [125000, 250000, 353553, 500000, 1000000, 2000000, 4000000]
    assert counting.in_phase(sizes) == frozenset(sizes) - {353553}
    timed = {125000: 0.2, 250000: 0.3, 353553: 0.35, 500000: 0.4, 1000000: 0.8,
             2000000: 1.6, 4000000: 3.0}
    order = counting.count_order(sizes, timed)
    assert order[:4] == [125000, 250000, 500000, 4000000] and order[-1] == 353553
    assert counting.count_order([1000, 1414, 2000, 2828, 4000]) == [1000, 2000, 4000, 1414, 2828]
    # Fewer than three in phase: the order without phases.
    assert counting.count_order([3, 5, 9]) == [3, 5, 9]
    assert counting.in_phase([3, 5, 9]) in ({3}, {5}, {9})


# A Python function's sizes counted under one start (`CountPlan.batched`): the meter's
# `BatchCost` prices each start, a start cut short at its timeouts keeps what it counted.
MANY = BatchCost(startup_s=1.0, per_call_s=0.5, slowdown=80.0)


def _drive_many(timed_s: Callable[[int], float], work: Callable[[int], int], *,
                true_cost: BatchCost = MANY, budget_s: float = counting.FLOOR_S,
                sizes: Sequence[int] = (1000, 2000, 4000, 8000, 16000),
                ) -> tuple[list[list[int]], list[int], float]:
    """A batched CountPlan after a timed sweep over `sizes` (plain call `timed_s(n)`), each
    start really costing `true_cost` (its model is MANY) and cut short where its jobs'
    timeouts run out, as `InstructionMeter.execute_many` is: (each batch's sizes in the
    order counted, the sizes counted, the seconds spent)."""
    history = [Run(sweep_id=1, seq=i, variant="A", size_n=n, repeat=r, warmup=False,
                   started_at=0.0, measurement=measurement(timed_s(n)))
               for i, (n, r) in enumerate((n, r) for n in sizes for r in range(3))]
    timed = {n: timed_s(n) for n in sizes}
    jobs = [counting.PlannedRun("A", n, 3) for n in counting.count_order(sizes, timed)]
    plan = counting.CountPlan(jobs, metric="instructions", timeout_s=None,
                              cost=Cost(slowdown=30.0, startup_s=0.3, batch=MANY))
    plan.batched = True
    remaining, batches, counted = budget_s, [], []
    while remaining > 0 and (batch := plan.next_batch(history, remaining)) is not None:
        limits = [s.timeout_s for s in batch]
        assert all(t is not None for t in limits)
        limit = sum(t for t in limits if t is not None)
        assert limit <= remaining + 1e-9, (limit, remaining)  # never beyond the budget
        batches.append([s.run.size_n for s in batch])
        spent, done = true_cost.startup_s, set()
        for s in batch:
            spent += true_cost.call_s(timed_s(s.run.size_n))
            if spent > limit:  # cut short: the calls counted before are kept
                spent = limit
                break
            done.add(s.run.size_n)
        remaining -= spent
        counted += [n for n in batches[-1] if n in done]
        history += [Run(sweep_id=1, seq=len(history) + k, variant="A", size_n=s.run.size_n,
                        repeat=3, warmup=False, started_at=0.0, measurement=Measurement(
                            {**measurement(timed_s(s.run.size_n)).values,
                             "instructions": work(s.run.size_n) if s.run.size_n in done
                             else None}, exit_code=0))
                    for k, s in enumerate(batch)]
    return batches, counted, budget_s - remaining


def _list_dedup(n: int) -> float:
    """The gate's list dedup: a quadratic call, 65 ms at n = 4000, 1 s at 16000."""
    return 0.004 * (n / 1000) ** 2


def test_a_batch_holds_the_cheapest_sizes_that_fit_and_halves_below_for_the_span() -> None:
    """The list dedup counted under one Valgrind start would cost 1 + 5 × 0.5 + 80 × 1.36 s,
    7x the 15 s floor. Only three timed sizes fit (1000..4000; 8000 would add 14 s), too
    few to settle on, so the start also holds the halvings below them, cheap; cheapest
    first, all six fit, and the work is counted over a span of 32 within the budget."""
    batches, counted, spent = _drive_many(_list_dedup, lambda n: 30 * n * n)
    assert batches == [[125, 250, 500, 1000, 2000, 4000]], batches
    assert counted == batches[0]
    assert spent <= counting.FLOOR_S


def test_a_batch_dearer_than_priced_is_cut_at_the_budget_keeping_what_it_counted() -> None:
    """A call 4x slower under Valgrind than the model says: the start runs out of its
    timeouts, which share what is left, during its dearest size; the sizes counted before
    are kept, and the whole stays within the budget."""
    batches, counted, spent = _drive_many(_list_dedup, lambda n: 30 * n * n,
                                          true_cost=BatchCost(1.0, 0.5, 320.0))
    assert batches == [[125, 250, 500, 1000, 2000, 4000]], batches
    assert counted == [125, 250, 500, 1000, 2000]
    assert spent <= counting.FLOOR_S + 1e-9


def _set_dedup(n: int) -> int:
    """The gate's set dedup counted: 1000..16000 as measured (its hash set's resizes make
    them settle on nothing), linear beyond."""
    seen = {1000: 560731, 2000: 1083040, 4000: 2277969, 8000: 4400872, 16000: 9151557}
    return seen.get(n, 572 * n)


def test_a_start_dearer_than_priced_prices_the_next_as_dear() -> None:
    """A Valgrind start 5x dearer than the model (a loaded machine): the timed sizes cost
    2x their price, so the doublings above are priced 2x too and two are started, all
    counted, where the model alone would have started three, which cost more than is
    left (the third cut short)."""
    batches, counted, spent = _drive_many(lambda n: 1e-7 * n, _set_dedup,
                                          true_cost=BatchCost(5.0, 0.5, 80.0))
    assert batches == [[1000, 2000, 4000, 8000, 16000], [32000, 64000]], batches
    assert counted == [*batches[0], *batches[1]]
    assert spent <= counting.FLOOR_S


def test_the_extension_is_priced_by_the_counts_own_growth() -> None:
    """The set dedup: linear, 0.1 µs a unit of n, its counts at 1000..16000 (those of the
    gate's, its hash set's resizes included) not settled. Every timed size fits in one
    start; the doublings above are priced by the count's growth (about 2x a doubling, not
    the n² a cheap sweep could hide, which would afford two) and all three fit. With calls
    5x longer the same growth affords two."""
    batches, _, _ = _drive_many(lambda n: 1e-7 * n, _set_dedup)
    assert batches[0] == [1000, 2000, 4000, 8000, 16000]
    assert batches[1] == [32000, 64000, 128000], batches
    batches, _, spent = _drive_many(lambda n: 5e-7 * n, _set_dedup)
    assert batches[1] == [32000, 64000], batches
    assert spent <= counting.FLOOR_S


def test_a_class_settled_as_the_simpler_of_two_its_interval_holds_is_counted() -> None:
    """CPython `sorted` read "linear: CPU time grows as n (k = 0.94 ± 0.15)" at 62.5k..4M: k's
    interval holds n log n's exponent there (about 1.07), so the work must confirm it; an
    interval that excludes it, or a class beyond the trusted ones, is left alone."""
    def fit(cls: str, ci: tuple[float, float]) -> Fit:
        return Fit(metric="cpu_s", cls=cls, exponent=sum(ci) / 2, exponent_ci=ci,
                   coefficients={}, r2=0.99, candidates=(), n_points=6, at_least=cls,
                   at_most=cls)
    sizes = [62500, 4000000]
    assert counting.next_held(fit("n", (0.79, 1.10)), sizes) == "n log n"
    assert counting.next_held(fit("n", (0.97, 1.03)), sizes) == ""
    assert counting.next_held(fit("log n", (0.0, 0.6)), [1000, 4000000]) == "sqrt n"
    assert counting.next_held(fit("n^2", (1.5, 3.2)), sizes) == ""  # n³ is the caches' to say
    assert counting.next_held(fit("1", (0.0, 0.2)), sizes) == ""  # flat has rules of its own
