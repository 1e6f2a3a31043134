"""Counts at once: an exact sweep's first sizes counted together, one per runner, their
timed runs after them one at a time; the plan's caps hold as when counted one by one."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from tests.conftest import measurement
from tests.test_exact_meter import _Recorder

from quadscope.measure.clock import FakeClock
from quadscope.measure.concurrent import each_on
from quadscope.measure.exact import InstructionMeter
from quadscope.measure.launcher import FakeExecutor, Job
from quadscope.meters.base import Cost
from quadscope.meters.instructions import COUNT_JOBS, MAX_COUNT_JOBS, count_jobs
from quadscope.model import Measurement, Run
from quadscope.run import counting


def test_each_on_gives_results_in_order_and_each_resource_to_one_call_at_a_time() -> None:
    """Six calls on two resources: all six results in the order of the calls, never two
    calls on one resource at once, and both resources used."""
    busy: dict[str, int] = {"a": 0, "b": 0}
    most: dict[str, int] = {"a": 0, "b": 0}
    lock = threading.Lock()

    def call(k: int) -> Callable[[str], int]:
        def on(resource: str) -> int:
            with lock:
                busy[resource] += 1
                most[resource] = max(most[resource], busy[resource])
            time.sleep(0.01 * (6 - k))  # later calls end first
            with lock:
                busy[resource] -= 1
            return k * 10
        return on

    assert each_on([call(k) for k in range(6)], ["a", "b"]) == [0, 10, 20, 30, 40, 50]
    assert most == {"a": 1, "b": 1}


def test_each_on_raises_the_first_error_once_every_call_has_ended() -> None:
    """A call that fails does not leave the others running behind the caller."""
    ended: list[int] = []

    def ok(resource: str) -> int:
        time.sleep(0.05)
        ended.append(1)
        return 1

    def bad(resource: str) -> int:
        raise ValueError("no count")

    with pytest.raises(ValueError, match="no count"):
        each_on([bad, ok], ["a", "b"])
    assert ended == [1]


def test_each_on_with_one_resource_runs_in_the_callers_thread() -> None:
    threads: list[str] = []
    each_on([lambda r: threads.append(threading.current_thread().name)] * 2, ["only"])
    assert threads == [threading.current_thread().name] * 2
    with pytest.raises(ValueError):
        each_on([lambda r: 1], [])


def test_count_jobs_is_the_cpus_the_runs_may_use_at_most_four(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(COUNT_JOBS, raising=False)
    assert count_jobs((3,)) == 1
    assert count_jobs((0, 1)) == 2
    assert count_jobs(tuple(range(16))) == MAX_COUNT_JOBS
    monkeypatch.setenv(COUNT_JOBS, "1")
    assert count_jobs((0, 1, 2)) == 1
    monkeypatch.setenv(COUNT_JOBS, "lots")  # not a number: as if unset
    assert count_jobs((0, 1)) == 2


def _runner(log: list[str], name: str, fail_at: int | None = None,
            slow_at: int | None = None) -> FakeExecutor:
    def cost(argv: Sequence[str]) -> Measurement:
        n = int(argv[-1])
        log.append(f"count {n} on {name}")
        if n == fail_at:
            return measurement(0.1, exit_code=2)
        Path(argv[argv.index("count-into") + 1], "process").write_text(str(1000 * n))
        time.sleep(0.02)
        return measurement(99.0 if n == slow_at else 0.3)

    return FakeExecutor(cost, FakeClock())


def _timed(log: list[str]) -> FakeExecutor:
    def cost(argv: Sequence[str]) -> Measurement:
        log.append(f"timed {argv[-1]}")
        return measurement(0.01 * int(argv[-1]) if argv[-1].isdigit() else 0.0)

    return FakeExecutor(cost, FakeClock())


def test_a_batch_is_counted_at_once_then_timed_one_by_one() -> None:
    """Two jobs, two runners: each count on its own runner, both before any timed run (a
    timed run meets nothing else of quadscope's), each job's time its own timed run's."""
    log: list[str] = []
    meter = InstructionMeter(_timed(log), _runner(log, "first"), _Recorder(),
                             spares=[_runner(log, "spare")])
    assert meter.workers == 2
    out = list(meter.execute_many([Job(("./prog", "3"), 5.0), Job(("./prog", "4"), 5.0)]))
    assert [m.value("instructions") for m in out] == [3000, 4000]
    assert [m.wall_s for m in out] == [pytest.approx(0.03), pytest.approx(0.04)]
    assert {e.split(" on ")[1] for e in log[:2]} == {"first", "spare"}
    assert log[2:] == ["timed 3", "timed 4"]


def test_a_job_whose_count_failed_is_timed_and_one_cut_short_is_not() -> None:
    """A count that failed leaves the job its timed run, uncounted (as one at a time); a
    count cut short at the job's timeout is the job's measurement, never timed: the size
    costs more than its plan allows."""
    log: list[str] = []
    meter = InstructionMeter(_timed(log), _runner(log, "first", fail_at=4, slow_at=5),
                             _Recorder(), spares=[_runner(log, "spare", fail_at=4, slow_at=5)])
    jobs = [Job(("./prog", str(n)), 5.0) for n in (3, 4, 5)]
    ok, failed, cut = meter.execute_many(jobs)
    assert ok.value("instructions") == 3000 and ok.ok
    assert failed.ok and failed.value("instructions") is None
    assert failed.wall_s == pytest.approx(0.04)  # its timed run's
    assert cut.timed_out and cut.value("instructions") is None
    assert [e for e in log if e.startswith("timed")] == ["timed 3", "timed 4"]


def test_a_batch_with_a_setup_and_a_meter_without_spares_stay_one_by_one() -> None:
    log: list[str] = []
    meter = InstructionMeter(_timed(log), _runner(log, "first"), _Recorder(),
                             spares=[_runner(log, "spare")])
    jobs = [Job(("./prog", "3"), 5.0, setup=("true",)), Job(("./prog", "4"), 5.0)]
    list(meter.execute_many(jobs))
    assert log == ["timed true", "timed 3", "count 3 on first", "timed 4", "count 4 on first"]
    log.clear()
    alone = InstructionMeter(_timed(log), _runner(log, "first"), _Recorder())
    assert alone.workers == 1
    list(alone.execute_many([Job(("./prog", "3"), 5.0), Job(("./prog", "4"), 5.0)]))
    assert log == ["timed 3", "count 3 on first", "timed 4", "count 4 on first"]


# The plan: an exact sweep (`exact_plan`) driven as the runner drives it, each batch's
# counts at once (its wall time the dearest count's plus its timed runs).

QEMU = Cost(slowdown=10.0, startup_s=0.05)


def _drive_exact(count_s: Callable[[int], float], work: Callable[[int], int], *,
                 workers: int, budget_s: float = 30.0,
                 timed_s: Callable[[int], float] = lambda n: 0.001,
                 ) -> tuple[list[tuple[int, ...]], list[Run]]:
    plan = counting.exact_plan(["A"], 1000, metric="instructions", cost=QEMU, timeout_s=None)
    plan.workers = workers
    remaining, batches, history = budget_s, [], []
    while remaining > 0 and (batch := plan.next_batch(history, remaining)) is not None:
        assert len(batch) <= workers
        batches.append(tuple(s.run.size_n for s in batch))
        spent = 0.0
        for s in batch:
            n, limit = s.run.size_n, s.timeout_s
            cut = limit is not None and count_s(n) > limit
            took = limit if cut and limit is not None else count_s(n)
            spent = max(spent, took)
            m = (Measurement({**measurement(limit or 0.0).values}, exit_code=-9, timed_out=True)
                 if cut else Measurement({**measurement(timed_s(n)).values,
                                          "instructions": work(n)}, exit_code=0))
            history.append(Run(sweep_id=1, seq=len(history), variant="A", size_n=n, repeat=0,
                               warmup=False, started_at=0.0, measurement=m))
        remaining -= spent + sum(timed_s(s.run.size_n) for s in batch)
    return batches, history


def test_two_workers_count_the_first_four_sizes_in_two_rounds() -> None:
    """A quick program (counts of 0.05 s, start-up dominated): 1000 and 2000 together, then
    4000 and 8000, settled; one worker takes four rounds to the same counts."""
    def work(n: int) -> int:
        return 100_000 + 3 * n * n

    together, runs2 = _drive_exact(lambda n: 0.05, work, workers=2)
    alone, runs1 = _drive_exact(lambda n: 0.05, work, workers=1)
    assert together == [(1000, 2000), (4000, 8000)]
    assert alone == [(1000,), (2000,), (4000,), (8000,)]
    assert ({r.size_n: r.value("instructions") for r in runs2}
            == {r.size_n: r.value("instructions") for r in runs1})


def test_an_exponential_size_counted_at_once_is_cut_short_as_soon_as_alone() -> None:
    """2ⁿ-like growth: the size above the first is cut short at GROWTH_CAP times the first's
    price, not left to spend the budget on another core, and not counted again."""
    def cost(n: int) -> float:
        return 0.05 if n <= 1000 else 1e6

    batches, runs = _drive_exact(cost, lambda n: 10 ** min(n // 500, 300), workers=2)
    assert batches[0] == (1000, 2000)
    cut = [r for r in runs if r.size_n == 2000]
    assert len(cut) == 1 and cut[0].measurement.timed_out
    assert cut[0].measurement.wall_s <= counting.GROWTH_CAP * QEMU.startup_s + 1e-9
    assert all(2000 not in b for b in batches[1:])


def test_a_size_cut_short_by_a_cap_priced_on_too_little_is_counted_again() -> None:
    """A program whose every count costs 2 s (more than the cap GROWTH_CAP × the meter's
    start-up gives the size counted beside the first): that size is counted again, under the
    cap a count alone would have, the sizes above it beside it, and the counts settle at
    four sizes, no other size counted twice."""
    batches, runs = _drive_exact(lambda n: 2.0, lambda n: 5_000_000 + 40 * n, workers=2,
                                 timed_s=lambda n: 0.2)
    counted = sorted({r.size_n for r in runs if r.value("instructions") is not None})
    assert counted == [1000, 2000, 4000, 8000], batches
    assert batches == [(1000, 2000), (2000, 4000), (8000,)]
    assert sum(1 for r in runs if r.size_n == 2000) == 2


def test_the_partner_is_priced_by_the_counts_growth_and_must_fit() -> None:
    """After two counts growing 8× a doubling, the sizes above are priced at 8× and 64× the
    next: a budget that fits the next alone hands it out alone."""
    def cost(n: int) -> float:
        return 0.05 * (n / 1000) ** 3

    batches, _ = _drive_exact(cost, lambda n: n ** 3, workers=2, budget_s=4.0)
    assert batches[0] == (1000, 2000)
    assert batches[1] == (4000,)  # 4000 priced 3.2 s; 8000 at 25.6 s does not fit beside it
    assert math.isclose(cost(4000), 3.2)


def test_a_long_batch_is_counted_as_many_jobs_at_a_time_as_there_are_runners() -> None:
    """Five jobs on two runners: two counts, their timed runs, two more, theirs, the last:
    an interrupt loses at most the jobs in flight, never a whole batch's counts."""
    log: list[str] = []
    meter = InstructionMeter(_timed(log), _runner(log, "first"), _Recorder(),
                             spares=[_runner(log, "spare")])
    list(meter.execute_many([Job(("./prog", str(n)), 5.0) for n in range(1, 6)]))
    kinds = [e.split()[0] for e in log]
    assert kinds == ["count"] * 2 + ["timed"] * 2 + ["count"] * 2 + ["timed"] * 2 + [
        "count", "timed"]
    assert [e for e in log if e.startswith("timed")] == [f"timed {n}" for n in range(1, 6)]
