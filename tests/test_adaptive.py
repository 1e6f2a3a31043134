"""Adaptive sweeps on a fake clock: the budget is a hard limit, confidence ends the sweep early.

The plan itself is also asked directly: it sees only the runs and budget it is told."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest
from tests.conftest import fake_executor

from quadscope.measure.clock import FakeClock
from quadscope.model import Run
from quadscope.run.adaptive import AdaptivePlan, _level, estimate_wall_s
from quadscope.run.plan import PlannedRun, Scheduled
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import Store


def spent(store: Store, sweep_id: int) -> float:
    return sum(r.measurement.wall_s for r in store.runs(sweep_id))


def test_budget_is_never_exceeded(store: Store, clock: FakeClock) -> None:
    """A cubic workload with a tiny budget: the clock moves by no more than the budget."""
    ex = fake_executor(lambda n: 1e-3 + 1e-9 * n**3, clock)
    t0 = clock.monotonic()
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=5.0, start_n=1,
                     until=("wall_s",))
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    assert clock.monotonic() - t0 <= 5.0
    assert spent(store, sweep.id) <= 5.0
    assert store.get_sweep(sweep.id).status == "complete"


def test_clean_quadratic_stops_confident_well_before_the_budget(store: Store,
                                                               clock: FakeClock) -> None:
    """Noise-free n^2 cost: growth stops once the verdict is confident, far under the budget."""
    ex = fake_executor(lambda n: 2e-3 + 1e-8 * n**2, clock)
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=600.0, start_n=16,
                     until=("wall_s",))
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    from quadscope.analyse.analysis import analyse

    analysis = analyse(store.get_sweep(sweep.id), store.runs(sweep.id))
    assert analysis.fits["A"]["wall_s"].cls == "n^2"
    assert spent(store, sweep.id) < 60.0
    sizes = sorted({r.size_n for r in store.runs(sweep.id)})
    assert len(sizes) >= 4
    assert store.get_sweep(sweep.id).sizes == tuple(sizes)


def test_a_size_that_times_out_ends_growth(store: Store, clock: FakeClock) -> None:
    """Once runs hit --timeout, no larger size is tried; smaller ones between may be."""
    calls = {"k": 0}

    def noisy_linear(n: int) -> float:
        # ±50% jitter keeps the verdict open, so only the timeout can end growth.
        calls["k"] += 1
        return 1e-4 * n * (1.5 if calls["k"] % 2 else 0.5)

    ex = fake_executor(noisy_linear, clock)
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=200.0, start_n=1,
                     timeout_s=1.0, until=("wall_s",))
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    runs = store.runs(sweep.id)
    timed_out = [r.size_n for r in runs if r.measurement.timed_out]
    assert timed_out, "the sweep should have reached a size slower than the timeout"
    first = next(i for i, r in enumerate(runs) if r.measurement.timed_out)
    assert all(r.size_n <= runs[first].size_n for r in runs[first:])


def test_every_run_failing_stops_after_four_sizes(store: Store, clock: FakeClock) -> None:
    """A command that always fails does not burn the whole budget growing n."""
    from tests.conftest import measurement

    from quadscope.measure.launcher import FakeExecutor

    ex = FakeExecutor(lambda argv: measurement(0.01, exit_code=1), clock)
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=100.0, warmup=0)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    assert len({r.size_n for r in store.runs(sweep.id)}) == 4
    assert spent(store, sweep.id) < 1.0


def test_wide_spread_gets_more_repeats(store: Store, clock: FakeClock) -> None:
    """Where repeats disagree and no size settles the class, the sweep adds runs beyond --repeat.

    The cost grows as n^1.5, between two classes: no bracket of neighbours
    ends the sweep early, as a linear cost now would ("n or n log n").
    """
    calls = {"k": 0}

    def noisy(n: int) -> float:
        calls["k"] += 1
        jitter = 1.0 + (0.6 if calls["k"] % 3 == 0 else -0.3 if calls["k"] % 3 == 1 else 0.0)
        return (1e-3 + 1e-6 * n**1.5) * jitter

    ex = fake_executor(noisy, clock)
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=30.0, start_n=64,
                     repeat=3, until=("wall_s",))
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    counts: dict[int, int] = {}
    for r in store.runs(sweep.id):
        if not r.warmup:
            counts[r.size_n] = counts.get(r.size_n, 0) + 1
    assert max(counts.values()) > 3


def _plan(timeout_s: float | None) -> AdaptivePlan:
    return AdaptivePlan(variants=("A", "B"), repeat=3, warmup=2, timeout_s=timeout_s, seed=0,
                        start_n=8)


def test_plan_asks_nothing_when_no_budget_is_left() -> None:
    """Told that nothing is left of the budget, the plan is done before any run."""
    assert _plan(1.0).next_batch((), 0.0) is None


def test_without_timeout_each_run_goes_alone_capped_by_the_budget_told() -> None:
    """With no --timeout, a run's limit is what is left of the budget, so runs go one at a time."""
    assert _plan(None).next_batch((), 7.5) == (Scheduled(PlannedRun("A", 8, 0, warmup=True), 7.5),)


def test_a_step_goes_in_one_batch_only_when_the_budget_cannot_bind() -> None:
    """Four warm-ups at --timeout 1 s go together with 5 s left, but one by one with 4.9 s left."""
    warmups = [PlannedRun(v, 8, 0, warmup=True) for v in ("A", "B", "A", "B")]
    assert _plan(1.0).next_batch((), 5.0) == tuple(Scheduled(p, 1.0) for p in warmups)
    assert _plan(1.0).next_batch((), 4.9) == (Scheduled(warmups[0], 1.0),)
    assert _plan(2.0).next_batch((), 1.5) == (Scheduled(warmups[0], 1.5),)


def _history(cost: Callable[[int], float], sizes: Sequence[int]) -> list[Run]:
    from tests.conftest import measurement

    jitter = (1.0, 1.02, 0.98)
    return [Run(1, i, "A", n, rep, False, 0.0, measurement(cost(n) * jitter[rep]))
            for i, (n, rep) in enumerate((n, rep) for n in sizes for rep in range(3))]


def test_a_verdict_must_hold_at_two_checks_in_a_row() -> None:
    """A clean n² is not final at its first check, only when the next check agrees."""
    plan = AdaptivePlan(variants=("A",), repeat=3, warmup=0, timeout_s=None, seed=0)
    runs = _history(lambda n: 1e-3 + 1e-8 * n**2, [1000, 2000, 4000, 8000, 16000, 32000])
    plan.history, plan.remaining_s = runs, 100.0
    assert plan.verdicts_confident(growing=False) == (False, None)
    assert plan.verdicts_confident(growing=False) == (True, None)


def test_only_the_time_is_waited_for_by_default() -> None:
    """An unsettled peak memory does not keep the sweep going once wall time is settled."""
    plan = AdaptivePlan(variants=("A",), repeat=3, warmup=0, timeout_s=None, seed=0)
    runs = _history(lambda n: 1e-3 + 1e-8 * n**2, [1000, 2000, 4000, 8000, 16000, 32000])
    noisy_rss = [replace(r, measurement=replace(r.measurement, max_rss_bytes=(4 << 20) * (1 + r.seq % 5)))
                 for r in runs]
    plan.history, plan.remaining_s = noisy_rss, 100.0
    plan.verdicts_confident(growing=False)
    assert plan.verdicts_confident(growing=False)[0]


def test_the_next_size_is_priced_from_the_fit_so_far() -> None:
    """A cost that steepens (×1.6 per step) is priced as exponential, not as a power law."""
    runs = _history(lambda n: 1e-6 * 1.6**n, [20, 22, 24, 26])
    assert estimate_wall_s(runs, 30) == pytest.approx(1e-6 * 1.6**30, rel=0.05)
    quadratic = _history(lambda n: 1e-8 * n**2, [1000, 2000, 4000])
    assert estimate_wall_s(quadratic, 8000) == pytest.approx(1e-8 * 8000**2, rel=0.05)


def test_a_constant_program_never_grows_n_past_the_largest_exact_size(store: Store,
                                                                         clock: FakeClock) -> None:
    """A flat, cheap program tempts adaptive mode to grow n forever: it stops at 2^53."""
    from tests.conftest import measurement

    from quadscope.measure.launcher import FakeExecutor
    from quadscope.run.sizes import MAX_EXACT_SIZE

    ex = FakeExecutor(lambda argv: measurement(1e-3), clock)
    spec = SweepSpec(command=("prog", "{n}"), mode="adaptive", budget_s=60.0, start_n=2**50)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    sizes = {r.size_n for r in store.runs(sweep.id)}
    assert max(sizes) <= MAX_EXACT_SIZE
    assert sweep.status == "complete"


def test_growth_hidden_under_a_start_up_cost_is_found_by_growing_on(store: Store,
                                                                   clock: FakeClock) -> None:
    """1 ms of start-up and 0.2 ns per element: flat up to n ≈ 10^5; n grows until the
    linear part shows, and the verdict holds n (it stopped at n = 4k, "1 … n³", before)."""
    from quadscope.analyse.analysis import analyse

    ex = fake_executor(lambda n: 1e-3 + 2e-10 * n, clock)
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=30.0, start_n=1)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    fit = analyse(store.get_sweep(sweep.id), store.runs(sweep.id)).fits["A"]["wall_s"]
    assert max(r.size_n for r in store.runs(sweep.id)) >= 10**6
    assert fit.cls == "n" or (fit.at_least, fit.at_most) in {("1", "n"), ("n", "n log n")}


def test_a_flat_program_grows_n_while_it_is_cheap(store: Store, clock: FakeClock) -> None:
    """A flat cost is the same at every size: n grows over FLAT_SPAN within a quarter of
    the budget rather than stopping once the constant's settling span is covered."""
    from tests.conftest import measurement

    from quadscope.measure.launcher import FakeExecutor
    from quadscope.run.adaptive import FLAT_SPAN, FLAT_SPEND

    ex = FakeExecutor(lambda argv: measurement(0.1), clock)
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=60.0, start_n=1)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    largest = max(r.size_n for r in store.runs(sweep.id))
    # n stops past FLAT_SPAN, or once a quarter of the budget is spent (by a step at most).
    assert FLAT_SPAN <= largest < 4 * FLAT_SPAN
    assert spent(store, sweep.id) <= FLAT_SPEND * 60.0 + 0.5


def test_a_size_the_program_refuses_ends_growth_there(store: Store, clock: FakeClock) -> None:
    """A program that exits 1 above n = 10^5 makes that size a ceiling: nothing larger is
    tried, and the sweep ends on the sizes below it."""
    from tests.conftest import measurement

    from quadscope.measure.launcher import FakeExecutor

    def cost(argv: Sequence[str]) -> object:
        return measurement(1e-3, exit_code=1 if int(argv[-1]) > 10**5 else 0)

    ex = FakeExecutor(cost, clock)  # type: ignore[arg-type]
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=60.0, start_n=1)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    runs = store.runs(sweep.id)
    refused = sorted({r.size_n for r in runs if not r.measurement.ok})
    assert len(refused) == 1 and all(r.size_n <= refused[0] for r in runs)
    assert sweep.status == "complete"


def test_level_shrugs_off_one_odd_size_but_not_log_n_growth() -> None:
    """Flat medians with one slow size count as level; a log n rise over 3 decades does not."""
    sizes = [1000 * 4**i for i in range(6)]
    odd = {sizes[2]: 1.5}
    assert _level(_history(lambda n: 0.001 * odd.get(n, 1.0), sizes), "wall_s")
    assert not _level(_history(lambda n: 0.001 * (1 + 0.1 * math.log(n)), sizes), "wall_s")


def test_a_price_at_no_size_is_nothing() -> None:
    """estimate_wall_s(runs, 0) is 0, not log(0): a regime that wants larger sizes without
    naming one asked for it (the calibration run died of 'math domain error')."""
    from tests.conftest import measurement

    runs = [Run(sweep_id=1, seq=i, variant="A", size_n=n, repeat=0, warmup=False,
                started_at=0.0, measurement=measurement(1e-3 * n))
            for i, n in enumerate((10, 20, 40))]
    assert estimate_wall_s(runs, 0) == 0.0
    assert estimate_wall_s(runs, 80) > 0
