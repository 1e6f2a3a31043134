"""Accumulate mode counts every 2^k-th launch in place of its timed run (run.accumulate)."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from tests.conftest import measurement, size_of

from quadscope.analyse.analysis import analyse
from quadscope.analyse.launches import counted_apart
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.meters import Cost, Measuring
from quadscope.model import Measurement, Run, Sweep
from quadscope.run.accumulate import InPlacePlan, counted_launches
from quadscope.run.counting import Counting
from quadscope.run.plan import plan_accumulate
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore, Store

LAUNCHES = 300
POWERS = (2, 4, 8, 16, 32, 64, 128, 256)  # the 2^k launches of 300


def _timed(f: Callable[[int], float], noise: float, seed: int = 1
           ) -> Callable[[Sequence[str]], Measurement]:
    """Launch i's wall time f(i) scattered by ±`noise` (relative): start-up under load."""
    rng = random.Random(seed)

    def cost(argv: Sequence[str]) -> Measurement:
        return measurement(f(size_of(argv)) * (1 + noise * (2 * rng.random() - 1)))
    return cost


def _counted(work: Callable[[str, int], int], count_s: float
             ) -> Callable[[Sequence[str]], Measurement]:
    """A launch counted alone: the counting run's time (`count_s`) and the exact count of
    the program named by argv[0] at launch argv[-1]."""
    def cost(argv: Sequence[str]) -> Measurement:
        m = measurement(count_s)
        return Measurement({**m.values, "instructions": work(argv[0], size_of(argv))},
                           exit_code=0)
    return cost


def _probing(prog: str, i: int) -> int:
    """The probing logger probes i names (1,190 instructions each); the fixed one none."""
    return 137_000 + (1_190 * i if prog == "probe" else 0)


def _sweep(store: Store, timed: Callable[[Sequence[str]], Measurement],
           counted: Callable[[Sequence[str]], Measurement], launches: int = LAUNCHES,
           ) -> tuple[Sweep, tuple[Run, ...], FakeExecutor, FakeExecutor]:
    clock = FakeClock(1000.0)
    counter, timer = FakeExecutor(counted, clock), FakeExecutor(timed, clock)
    counting = Counting(lambda: Measuring(counter, "valgrind", "counted under a fake"),
                        "instructions", "instructions", Cost(slowdown=30.0, startup_s=0.3))
    spec = SweepSpec(command=("probe", "{i}"), vs_command=("fixed", "{i}"),
                     mode="accumulate", runs=launches)
    sweep = run_sweep(spec, executor=timer, clock=clock, store=store, counting=counting)
    return sweep, tuple(store.runs(sweep.id)), timer, counter


def test_the_launches_counted_are_every_power_of_two_from_two() -> None:
    assert counted_launches(LAUNCHES) == POWERS
    assert counted_launches(600)[-1] == 512
    assert counted_launches(1) == ()


def test_launches_counted_in_place_decide_what_time_leaves_open(store: Store) -> None:
    """Launch time ~1 ms ±60% with 10 µs per probed name: time leaves the class open. Every
    2^k-th launch of each logger runs once, counted instead of timed, in order; the sweep
    leads with the work: the probing logger's grows as i, the fixed one's not at all."""
    sweep, runs, timer, counter = _sweep(
        store, _timed(lambda i: 1e-3 + (1e-5 * i if i else 0), 0.6),
        _counted(_probing, 0.3))
    assert [(a[0], size_of(a)) for a in counter.calls] == [
        *(("probe", i) for i in POWERS), *(("fixed", i) for i in POWERS)]
    # Each launch ran once, in order: the counted ones never also timed.
    assert [(a[0], size_of(a)) for a in (*timer.calls, *counter.calls)].count(("probe", 4)) == 1
    assert len(timer.calls) + len(counter.calls) == 2 * LAUNCHES
    order = [(r.variant, r.size_n) for r in sorted(runs, key=lambda r: r.seq)]
    assert order == [(v, i) for v in "AB" for i in range(1, LAUNCHES + 1)]
    assert sweep.meter == "instructions" and sweep.counters == "valgrind"
    assert ("launches 2, 4, …, 256 were counted under Valgrind in place of their timed runs ("
            in sweep.counters_note)
    assert "the timed launches' " in sweep.counters_note  # what counting cost against timing
    assert "time alone left" in sweep.counters_note
    a = analyse(sweep, runs)
    work_a, work_b = a.fits["A"]["instructions"], a.fits["B"]["instructions"]
    assert work_a.confident and work_a.cls == "n" and work_a.n_points == len(POWERS)
    assert work_b.confident and work_b.cls == "1"
    assert a.fits["A"]["wall_s"].n_points > 10  # time still fitted, on the timed launches


def test_time_fits_leave_out_the_counting_runs_own_times(store: Store) -> None:
    """Time that settles (a clean 1 ms + 10 µs·i) is not disturbed by the 0.3 s the counted
    launches took under the counter: the sweep stays timed, the counts kept beside it."""
    sweep, runs, _timer, counter = _sweep(store, _timed(lambda i: 1e-3 + 1e-5 * i, 0.0),
                                          _counted(_probing, 0.3))
    assert len(counter.calls) == 2 * len(POWERS)
    assert sweep.meter == "auto"
    assert "time alone settled the class" in sweep.counters_note
    a = analyse(sweep, runs)
    assert a.fits["A"]["wall_s"].confident and a.fits["A"]["wall_s"].cls == "n"
    assert "instructions" not in a.fits["A"]


def test_counts_stop_within_each_variants_share_of_the_budget(store: Store) -> None:
    """Counts costing 6 s each against a 15 s budget, four counts of B kept back from A's:
    the first count of each is priced by the meter's model and taken; its real cost leaves
    room for no more,
    so the rest run timed, the sweep stays timed and says what `--meter instructions` does."""
    sweep, _runs, timer, counter = _sweep(
        store, _timed(lambda i: 1e-3 + 1e-5 * i, 0.6), _counted(_probing, 6.0))
    assert [size_of(a) for a in counter.calls] == [2, 2]
    assert len(timer.calls) == 2 * LAUNCHES - 2  # the launches left uncounted were timed
    assert sweep.meter == "auto"
    assert "did not fit in the sweep's budget" in sweep.counters_note
    assert "`--meter instructions`" in sweep.counters_note


def test_the_first_variant_counts_all_it_needs_and_the_next_keeps_four(store: Store) -> None:
    """Counts of 1 s against 15 s: the probing logger counts all 8 of its launches (the
    fixed one's four counts kept back), the fixed one what is left, spread, the last kept."""
    sweep, _runs, _timer, counter = _sweep(
        store, _timed(lambda i: 1e-3 + 1e-5 * i, 0.6), _counted(_probing, 1.0))
    counted = {v: [size_of(a) for a in counter.calls if a[0] == v] for v in ("probe", "fixed")}
    assert counted["probe"] == list(POWERS)
    assert 4 <= len(counted["fixed"]) < len(POWERS) and counted["fixed"][-1] == POWERS[-1]
    assert sweep.meter == "instructions"


def _drive(plan: InPlacePlan, count_s: float) -> list[int]:
    """Run `plan` against fakes by hand; the launches it counted."""
    history: list[Run] = []
    counted: list[int] = []
    while (batch := plan.next_batch(tuple(history), None)) is not None:
        for s in batch:
            if plan.counting:
                counted.append(s.run.size_n)
                m = _counted(_probing, count_s)(("probe", str(s.run.size_n)))
            else:
                m = measurement(1e-3)
            history.append(Run(sweep_id=1, seq=len(history), variant=s.run.variant,
                               size_n=s.run.size_n, repeat=0, warmup=False, started_at=0.0,
                               measurement=m))
    return counted


def test_an_exact_meter_counts_every_power_of_two_whatever_it_costs() -> None:
    plan = InPlacePlan(plan_accumulate(LAUNCHES), metric="instructions",
                       cost=Cost(slowdown=30.0, startup_s=0.3), timeout_s=None, budgeted=False)
    assert _drive(plan, 60.0) == list(POWERS)


def test_a_budget_for_some_counts_spreads_them_in_log_i_keeping_the_last() -> None:
    """Counts of 2.5 s against a 15 s budget (one variant): after the first the plan sees
    it can afford 5 more of the 7 ahead, and keeps them spread, the last included."""
    plan = InPlacePlan(plan_accumulate(LAUNCHES), metric="instructions",
                       cost=Cost(slowdown=30.0, startup_s=0.3), timeout_s=None)
    counted = _drive(plan, 2.5)
    assert counted[0] == 2 and counted[-1] == 256
    assert 4 <= len(counted) <= 6
    assert sum(2.5 for _ in counted) <= 15.0
    assert any("were timed, not counted" in s for s in plan.left_out)


def test_counted_apart_leaves_launches_that_all_carry_a_count_together() -> None:
    def run(i: int, count: int | None) -> Run:
        m = measurement(1e-3)
        if count is not None:
            m = Measurement({**m.values, "instructions": count}, exit_code=0)
        return Run(sweep_id=1, seq=i, variant="A", size_n=i, repeat=0, warmup=False,
                   started_at=0.0, measurement=m)

    mixed = [run(1, None), run(2, 10), run(3, None)]
    timed, counted = counted_apart(mixed, "instructions")
    assert [r.size_n for r in timed] == [1, 3] and [r.size_n for r in counted] == [2]
    every = [run(1, 5), run(2, 10)]
    assert counted_apart(every, "instructions") == (tuple(every), ())
    assert counted_apart(mixed, None) == (tuple(mixed), ())


PROBING_LOGGER = r"""
#include <fcntl.h>
#include <stdio.h>
#include <errno.h>
#include <unistd.h>
/* usage: probe DIR: creates DIR/app.K.dat for the first K whose name is free */
int main(int argc, char **argv) {
    char path[4096];
    for (long k = 0;; k++) {
        snprintf(path, sizeof path, "%s/app.%06ld.dat", argv[1], k);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) { close(fd); return 0; }
        if (errno != EEXIST) return 1;
    }
}
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_a_real_probing_logger_counted_in_place_grows_as_i(tmp_path: Path) -> None:
    """64 launches of a tiny probing logger under `--meter instructions`: launches 2, 4, …,
    64 run once each under Valgrind in place of their timed runs (so launch i still finds
    i - 1 files), and their counts grow as i. Bounded: 6 counts of a small C program."""
    from quadscope.measure.cbuild import compile_c
    from quadscope.measure.clock import SystemClock
    from quadscope.run import session

    prog = str(compile_c(PROBING_LOGGER, name="qs-test-probing-logger"))
    logs = tmp_path / "logs"
    logs.mkdir()
    spec = SweepSpec(command=(prog, str(logs), "{i}"), mode="accumulate", runs=64,
                     meter="instructions", timeout_s=60.0)
    with SqliteStore(tmp_path / "r.db") as store:
        sweep = session.start(spec, store=store, clock=SystemClock(),
                              machine=session.Machine.real(), no_perf=True)
        runs = store.runs(sweep.id)
        a = analyse(sweep, runs)
    assert len(list(logs.iterdir())) == 64  # every launch ran once, the counted ones too
    counted = sorted((r.size_n, r.value("instructions")) for r in runs
                     if r.value("instructions") is not None)
    assert [i for i, _ in counted] == [2, 4, 8, 16, 32, 64]
    per_name = (counted[-1][1] - counted[-2][1]) / 32  # type: ignore[operator]
    assert per_name > 50  # each name probed is a formatted path and a failed open
    work = a.fits["A"]["instructions"]
    # Never confidently wrong, not one exact class: n, or n beside a hidden n log n term the
    # counts' assumed jitter cannot rule out against a start-up this large (exactfit).
    assert (work.cls == "n") if work.confident else (work.at_least, work.at_most) == (
        "n", "n log n")
    from quadscope.analyse.text import counted_how

    assert sweep.counters in ("qemu", "valgrind")  # QEMU where it counts here
    assert (f"launches 2, 4, …, 64 were counted {counted_how(sweep.counters)} in place"
            in sweep.counters_note)


def test_the_report_names_the_launches_counted_in_place(store: Store) -> None:
    from quadscope.render.terminal import TerminalRenderer

    sweep, runs, _timer, _counter = _sweep(
        store, _timed(lambda i: 1e-3 + (1e-5 * i if i else 0), 0.6), _counted(_probing, 0.3))
    text = TerminalRenderer(width=200).render(analyse(sweep, runs)).decode()
    assert ("the work was counted at launches 2, 4, …, 256 (A and B), "
            "each in place of its timed run") in text  # the same launches said once


def test_the_launches_counted_in_place_are_not_shown_as_timed_runs(store: Store) -> None:
    """A sweep that stays timed keeps its counted launches' 0.3 s (the counter's time) out of
    what it shows as time, as out of the fit: the per-size table and --json's size_stats,
    the plots' points and residuals, and the 95% band. (An accumulate sweep of a probing
    shell script once drew its four Valgrind launches at 1.1 s in every time plot, its band
    up to 0.9 s, and listed launch 4 at 772 ms of CPU time.)"""
    from quadscope.render.plotdata import report_data
    from quadscope.render.plotmodel import Points
    from quadscope.render.sizes import sizes_tables

    sweep, runs, _timer, _counter = _sweep(store, _timed(lambda i: 1e-3 + 1e-5 * i, 0.0),
                                           _counted(_probing, 0.3))
    assert sweep.meter == "auto"
    a = analyse(sweep, runs)
    apart = {r.seq for r in runs if r.value("instructions") is not None}
    assert len(apart) == 2 * len(POWERS) and a.counted_in_place == frozenset(apart)
    stats = a.to_dict()["size_stats"]["wall_s"]
    assert [row["n"] for row in stats] == [i for i in range(1, LAUNCHES + 1)
                                                if i not in POWERS]
    assert max(row["max"] for row in stats) < 0.01
    table = "".join(str(t.columns[0]._cells) for t in sizes_tables(a, "wall_s", 200)
                    if hasattr(t, "columns"))
    assert "'256'" not in table and "'255'" in table
    data = report_data(a)
    shown = [data.values["wall_s"][i] for i, seq in enumerate(data.runs["seq"]) if seq in apart]
    assert shown == [None] * len(apart)
    resid = next(p for p in data.plots if p.id == "wall_s-resid")
    (errors,) = [lay.y for lay in resid.layers if isinstance(lay, Points) and lay.rows == "A"]
    assert isinstance(errors, tuple) and len(errors) == len(data.rowsets["A"])
    rows_apart = [k for k, i in enumerate(data.rowsets["A"]) if data.runs["seq"][i] in apart]
    assert len(rows_apart) == len(POWERS) and all(errors[k] is None for k in rows_apart)
    assert max(abs(y) for y in errors if y is not None) < 1  # the clean 1 ms + 10 µs·i
    assert max(a.bands["A"]["wall_s"].hi) < 0.01
