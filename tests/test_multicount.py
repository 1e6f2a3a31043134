"""A sweep over several sizes counts the work at points when time leaves an axis open
(run.multicount, through run.counting's `Counting`)."""

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
from quadscope.run.design import MIN_POINTS, Axis, design
from quadscope.run.multicount import MAX_POINTS
from quadscope.run.runner import resume_sweep, run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import Store
from quadscope.units import fmt_seconds

AXES = (Axis("rows", (50, 100, 200, 400, 800)), Axis("cols", (4, 8, 16, 32, 64)))


def _sizes(argv: Sequence[str]) -> tuple[int, int]:
    return int(argv[-2]), int(argv[-1])


def _timed(f: Callable[[int, int], float], noise: float) -> Callable[[Sequence[str]], Measurement]:
    rng = random.Random(3)

    def cost(argv: Sequence[str]) -> Measurement:
        return measurement(f(*_sizes(argv)) * (1 + noise * (2 * rng.random() - 1)))
    return cost


def _counted(work: Callable[[int, int], int], count_s: float) -> Callable[[Sequence[str]], Measurement]:
    def cost(argv: Sequence[str]) -> Measurement:
        return Measurement({**measurement(count_s).values, "instructions": work(*_sizes(argv))},
                           exit_code=0)
    return cost


def _sweep(store: Store, timed: Callable[[Sequence[str]], Measurement],
           counted: Callable[[Sequence[str]], Measurement],
           vs: tuple[str, ...] | None = None,
           ) -> tuple[Sweep, tuple[Run, ...], FakeExecutor]:
    clock = FakeClock(1000.0)
    counter = FakeExecutor(counted, clock)
    counting = Counting(lambda: Measuring(counter, "valgrind", "counted under a fake"),
                        "instructions", "instructions", Cost(slowdown=30.0, startup_s=0.3))
    spec = SweepSpec(command=("prog", "{rows}", "{cols}"), sizes=AXES[0].sizes, repeat=3,
                     warmup=0, axes=tuple((a.name, a.sizes) for a in AXES),
                     points=design(AXES, max_points=36), vs_command=vs)
    sweep = run_sweep(spec, executor=FakeExecutor(timed, clock), clock=clock, store=store,
                      counting=counting)
    return sweep, tuple(store.runs(sweep.id)), counter


def test_an_open_axis_is_decided_by_the_work_counted_at_spanning_points(store: Store) -> None:
    """Wall time scattered ±90% leaves an axis bracketed; the count, 3·rows²·cols, taken once
    per point at the corners, the lines' ends and the base, leads the report: rows², cols."""
    sweep, runs, counter = _sweep(store, _timed(lambda r, c: 1e-7 * r * r * c + 0.01, 0.9),
                                  _counted(lambda r, c: 3 * r * r * c, 0.05))
    assert sweep.meter == "instructions" and sweep.counters == "valgrind"
    assert "time alone left the class in" in sweep.counters_note
    calls = [_sizes(a) for a in counter.calls]
    assert len(calls) == len(set(calls)) and MIN_POINTS <= len(calls) <= MAX_POINTS
    assert calls[:4] == [(50, 4), (800, 4), (50, 64), (800, 64)]  # the corners first
    assert {(50, 16), (800, 16), (200, 4), (200, 64), (200, 16)} <= set(calls)
    report = analyse_multi(sweep, runs)
    assert report.metric == "instructions" and report.verdict is not None
    classes = {a.axis: a.growth.name for a in report.verdict.axes}
    assert classes == {"rows": "n^2", "cols": "n"}


def test_the_report_says_what_was_counted_and_its_cost_as_the_one_size_report_does(
        store: Store) -> None:
    """The report over several sizes carries the one-size report's note (`text.counting_note`,
    test_counting): why the work was counted, under what, at how many points, and what it
    cost against the timed sweep."""
    from quadscope.render.multi import terminal

    sweep, runs, _ = _sweep(store, _timed(lambda r, c: 1e-7 * r * r * c + 0.01, 0.9),
                            _counted(lambda r, c: 3 * r * r * c, 0.05))
    text = terminal(analyse_multi(sweep, runs), 80)
    flat = " ".join(text.split())
    assert "so the work was counted under Valgrind at" in flat
    assert "× the timed sweep's" in flat or "% of the timed sweep's" in flat
    assert all(len(line) <= 80 for line in text.splitlines())


def test_time_that_settles_every_axis_is_not_counted(store: Store) -> None:
    sweep, _, counter = _sweep(store, _timed(lambda r, c: 1e-7 * r * r * c, 0.01),
                               _counted(lambda r, c: 3 * r * r * c, 0.05))
    assert not counter.calls and sweep.meter != "instructions"


def test_counting_too_dear_for_enough_points_leaves_the_sweep_timed(store: Store) -> None:
    """Each count costing far more than the whole timed sweep: fewer than MIN_POINTS fit."""
    sweep, _, counter = _sweep(store, _timed(lambda r, c: 1e-7 * r * r * c + 0.01, 0.9),
                               _counted(lambda r, c: 3 * r * r * c, 50.0))
    assert len(counter.calls) < MIN_POINTS
    assert sweep.meter != "instructions"
    assert "did not fit in the sweep's own time" in sweep.counters_note


def test_a_sweep_with_vs_counts_both_commands_at_the_same_points(store: Store) -> None:
    """A settled by time, B's time scattered: B's open axis has both commands counted at
    the same points, so A and B are then compared on the work (multi_compare.shared_metric)."""
    from quadscope.analyse.multi_compare import shared_metric

    steady, scattered = _timed(lambda r, c: 1e-7 * r * r * c, 0.0), _timed(
        lambda r, c: 1e-7 * r * c + 0.01, 0.9)

    def timed(argv: Sequence[str]) -> Measurement:
        return (scattered if argv[0] == "fast" else steady)(argv)

    def counted(argv: Sequence[str]) -> Measurement:
        r, c = _sizes(argv)
        work = r * c if argv[0] == "fast" else 3 * r * r * c
        return Measurement({**measurement(0.05).values, "instructions": work}, exit_code=0)

    sweep, runs, counter = _sweep(store, timed, counted, vs=("fast", "{rows}", "{cols}"))
    assert "time alone left the class of B in" in sweep.counters_note
    a = {_sizes(c) for c in counter.calls if c[0] == "prog"}
    b = {_sizes(c) for c in counter.calls if c[0] == "fast"}
    assert a == b and len(a) >= MIN_POINTS
    assert sweep.meter == "instructions"
    assert shared_metric(sweep, runs, "A", sweep, runs, "B") == "instructions"
    report = analyse_multi(sweep, runs, variant="B")
    assert {a.axis: a.growth.name for a in report.verdict.axes} == {"rows": "n", "cols": "n"}


def _timed_s(runs: Sequence[Run]) -> float:
    return sum(r.measurement.wall_s for r in runs if r.value("instructions") is None)


def test_the_note_states_the_timed_sweeps_real_cost(store: Store) -> None:
    """A timed sweep of about 0.02 s (75 runs of about 0.3 ms) is said as such, not as "0.0 s"."""
    sweep, runs, _ = _sweep(store, _timed(lambda r, c: 1e-12 * r * r * c + 3e-4, 0.9),
                            _counted(lambda r, c: 3 * r * r * c, 0.05))
    assert sweep.meter == "instructions"
    timed_s = _timed_s(runs)
    assert 0.01 < timed_s < 0.04
    assert f"the timed sweep's {fmt_seconds(timed_s)})" in sweep.counters_note
    assert "took 0.0 s" not in sweep.counters_note


def test_a_resumed_sweep_states_the_timed_cost_of_its_earlier_session(store: Store) -> None:
    """Interrupted at its first count, resumed: the timed runs were all measured in the first
    session, and the note says what they took (not the resumed session's 0 s of timing)."""
    clock = FakeClock(1000.0)

    def interrupted(argv: Sequence[str]) -> Measurement:
        raise KeyboardInterrupt

    def counting(executor: FakeExecutor) -> Counting:
        return Counting(lambda: Measuring(executor, "valgrind", "counted under a fake"),
                        "instructions", "instructions", Cost(slowdown=30.0, startup_s=0.3))

    spec = SweepSpec(command=("prog", "{rows}", "{cols}"), sizes=AXES[0].sizes, repeat=3,
                     warmup=0, axes=tuple((a.name, a.sizes) for a in AXES),
                     points=design(AXES, max_points=36))
    timed = FakeExecutor(_timed(lambda r, c: 1e-7 * r * r * c + 0.01, 0.9), clock)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, executor=timed, clock=clock, store=store,
                  counting=counting(FakeExecutor(interrupted, clock)))
    sweep = store.get_sweep("last")
    assert sweep.status == "interrupted"
    timed_s = _timed_s(store.runs(sweep.id))
    resumed = resume_sweep(sweep, executor=timed, clock=clock, store=store,
                           counting=counting(FakeExecutor(
                               _counted(lambda r, c: 3 * r * r * c, 0.05), clock)))
    assert resumed.meter == "instructions"
    assert f"the timed sweep's {fmt_seconds(timed_s)})" in resumed.counters_note
