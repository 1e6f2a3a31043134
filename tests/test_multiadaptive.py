"""Adaptive mode over several sizes, end to end on fakes (run.multiadaptive through run_sweep):
a known cost law a + b·rows^p·cols^q with noise, the fake clock moved by each run's time."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import pytest
from tests.conftest import measurement

from quadscope.analyse.multi_sweep import analyse_multi
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.meters import Cost, Measuring
from quadscope.model import Measurement, Run, Sweep
from quadscope.run.counting import Counting
from quadscope.run.runner import resume_sweep, run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import Store

START = 1000.0


def _cost(law: Callable[[int, int], float], noise: float, seed: int = 3,
          fails: Callable[[int, int], bool] = lambda r, c: False,
          ) -> Callable[[Sequence[str]], Measurement]:
    rng = random.Random(seed)

    def cost(argv: Sequence[str]) -> Measurement:
        r, c = int(argv[-2]), int(argv[-1])
        if fails(r, c):
            return measurement(0.001, exit_code=1)
        return measurement(law(r, c) * (1 + noise * (2 * rng.random() - 1)))
    return cost


def _spec(budget_s: float = 30.0) -> SweepSpec:
    return SweepSpec(command=("prog", "{rows}", "{cols}"), mode="adaptive", budget_s=budget_s,
                     repeat=3, warmup=1, sizes=(100,), start_n=100,
                     axes=(("rows", (100,)), ("cols", (4,))))


def _run(store: Store, cost: Callable[[Sequence[str]], Measurement], budget_s: float = 30.0,
         counting: Counting | None = None) -> tuple[Sweep, list[Run], FakeClock]:
    clock = FakeClock(START)
    sweep = run_sweep(_spec(budget_s), executor=FakeExecutor(cost, clock), clock=clock,
                      store=store, counting=counting)
    return sweep, store.runs(sweep.id), clock


def _classes(sweep: Sweep, runs: Sequence[Run]) -> dict[str, str | None]:
    report = analyse_multi(sweep, runs)
    assert report.verdict is not None
    return {a.axis: a.growth.name for a in report.verdict.axes}


def test_a_product_law_settles_both_exponents_within_the_budget(store: Store) -> None:
    """rows²·cols scattered ±5%: both classes settled, the base grid and its confirmation
    stored as a sweep over several sizes (sizes and points), inside the 30 s budget."""
    sweep, runs, clock = _run(store, _cost(lambda r, c: 1e-7 * r * r * c + 0.001, 0.05))
    assert _classes(sweep, runs) == {"rows": "n^2", "cols": "n"}
    assert sweep.status == "complete" and sweep.mode == "adaptive"
    assert dict(sweep.axes)["rows"][:3] == (100, 200, 400)
    assert dict(sweep.axes)["cols"][:3] == (4, 8, 16)
    measured = {(r.size_n, *dict(r.axes).values()) for r in runs if not r.warmup}
    assert set(sweep.points) == measured and len(measured) >= 9
    assert sweep.sizes == dict(sweep.axes)["rows"]
    assert clock.monotonic() - START <= 30.0
    stored = store.get_sweep(str(sweep.id))
    assert stored.points == sweep.points and stored.axes == sweep.axes


def test_the_axis_that_needs_it_gets_the_sizes(store: Store) -> None:
    """rows² + 2e-6·cols: at the base grid the cols term is under 1% of the cost and reads as
    flat, so the sweep doubles cols (cheap: it barely moves the cost) until its term shows,
    and leaves rows, settled at once, alone."""
    sweep, runs, _ = _run(store, _cost(lambda r, c: 1e-7 * r * r + 2e-6 * c + 0.001, 0.02))
    sizes = dict(sweep.axes)
    assert len(sizes["cols"]) >= len(sizes["rows"]) + 3
    assert _classes(sweep, runs) == {"rows": "n^2", "cols": "n"}


def test_a_steeper_axis_is_grown_in_smaller_steps_of_cost(store: Store) -> None:
    """rows·cols² scattered ±10%: both settle, and no extension took more than half the budget
    left when it started (the far corner's cost is predicted from the fit)."""
    sweep, runs, clock = _run(store, _cost(lambda r, c: 1e-6 * r * c * c + 0.002, 0.1, seed=5))
    assert _classes(sweep, runs) == {"rows": "n", "cols": "n^2"}
    assert clock.monotonic() - START <= 30.0


def test_a_size_where_the_program_fails_ends_that_axis(store: Store) -> None:
    """Every run with rows ≥ 800 exits 1: rows stops at 400 plus the failed size, and the verdict
    stands on the points that ran."""
    sweep, runs, _ = _run(store, _cost(lambda r, c: 1e-6 * r * c + 0.001, 0.05,
                                       fails=lambda r, c: r >= 800))
    assert max(dict(sweep.axes)["rows"]) <= 800
    assert sum(1 for r in runs if r.size_n >= 800) <= 2 * 3  # one extension's runs, no more
    assert analyse_multi(sweep, runs).verdict is not None


def test_a_resumed_sweep_goes_on_from_what_it_measured(store: Store) -> None:
    """Stopped after 12 runs (the base design half done), resumed: the base is completed without
    measuring a point twice over, and the verdict is reached."""
    clock = FakeClock(START)
    law = _cost(lambda r, c: 1e-7 * r * r * c + 0.001, 0.05)
    calls = 0

    def stopping(argv: Sequence[str]) -> Measurement:
        nonlocal calls
        calls += 1
        if calls > 12:
            raise KeyboardInterrupt
        return law(argv)

    with pytest.raises(KeyboardInterrupt):
        run_sweep(_spec(), executor=FakeExecutor(stopping, clock), clock=clock, store=store)
    sweep = store.get_sweep("last")
    assert sweep.status == "interrupted" and len(store.runs(sweep.id)) == 12
    sweep = resume_sweep(sweep, executor=FakeExecutor(law, clock), clock=clock, store=store)
    runs = store.runs(sweep.id)
    keys = [(r.size_n, r.axes, r.repeat, r.warmup) for r in runs]
    assert len(keys) == len(set(keys))
    assert _classes(sweep, runs) == {"rows": "n^2", "cols": "n"}


def test_time_that_leaves_an_axis_open_is_counted_at_the_points_it_chose(store: Store) -> None:
    """Wall time scattered ±60% leaves a size open; counting (run.multicount) reads the points
    the adaptive sweep measured, and the exact count settles rows², cols."""
    clock = FakeClock(START)
    counter = FakeExecutor(lambda argv: Measurement(
        {**measurement(0.05).values, "instructions": 3 * int(argv[-2]) ** 2 * int(argv[-1])},
        exit_code=0), clock)
    counting = Counting(lambda: Measuring(counter, "valgrind", "counted under a fake"),
                        "instructions", "instructions", Cost(slowdown=30.0, startup_s=0.3))
    rng = random.Random(1)
    timed = FakeExecutor(lambda argv: measurement(
        (1e-7 * int(argv[-2]) ** 2 * int(argv[-1]) + 0.01) * (1 + 0.6 * (2 * rng.random() - 1))),
        clock)
    sweep = run_sweep(_spec(10.0), executor=timed, clock=clock, store=store, counting=counting)
    runs = store.runs(sweep.id)
    if sweep.meter != "instructions":  # time settled it after all: nothing to count
        assert not counter.calls
        return
    counted = {(int(a[-2]), int(a[-1])) for a in counter.calls}
    assert counted <= set(sweep.points)
    assert _classes(sweep, runs) == {"rows": "n^2", "cols": "n"}
