"""Counting a sweep under Callgrind within its budget, with a fake valgrind and a fake clock."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from quadscope.errors import FitRefusedError
from quadscope.model import Measurement, Run, Sweep
from quadscope.profile.callgrind import (
    CallgrindSkipped,
    count_sweep,
    plan_sizes,
    planned_s,
    sweep_seconds,
    wall_by_size,
)
from quadscope.profile.callgrind_format import FunctionKey

WALLS = {1000: 0.01, 2000: 0.02, 4000: 0.04, 8000: 0.08, 16000: 0.16, 32000: 0.32}


def test_the_plan_is_the_four_smallest_sizes_spanning_a_factor_four() -> None:
    """The fewest counts that settle a class, the cheapest sizes: 1000..8000, not 32000."""
    assert plan_sizes(list(WALLS)) == (1000, 2000, 4000, 8000)


def test_close_sizes_raise_the_top_until_they_span() -> None:
    """1000..1300 spans 1.3×: the top goes to the first size at least 4× the smallest, the
    middle ones spread geometrically below it."""
    sizes = [1000, 1100, 1200, 1300, 2000, 4000, 8000]
    assert plan_sizes(sizes) == (1000, 1300, 2000, 4000)
    assert plan_sizes([1000, 1100, 1200, 1300, 1400]) == (1000, 1100, 1300, 1400)


def test_a_sweep_of_three_sizes_counts_three() -> None:
    assert plan_sizes([1000, 2000, 4000]) == (1000, 2000, 4000)


def _file(n: int, pid: int) -> str:
    return f"""\
# callgrind format
pid: {pid}
cmd: ./prog {n}
positions: line
events: Ir
ob=(1) /home/u/prog
fl=(1) /home/u/prog.c
fn=(1) work
7 {n * n}
totals: {n * n}
"""


class FakeValgrind:
    """Writes two processes' files per run, each a second on the fake clock."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.now = 0.0
        self.argvs: list[list[str]] = []
        self.fail_at = fail_at

    def clock(self) -> float:
        return self.now

    def run(self, argv: Sequence[str], timeout_s: float | None) -> bool:
        self.argvs.append(list(argv))
        self.now += 1.0
        n = int(argv[-1])
        out = next(a for a in argv if a.startswith("--callgrind-out-file="))
        folder = Path(out.split("=", 1)[1]).parent
        for pid in (1, 2):
            (folder / f"callgrind.{pid}").write_text(_file(n, pid))
        return n != self.fail_at


def _runs() -> list[Run]:
    return [Run(1, i, "A", n, 0, False, 0.0, Measurement(wall_s=w, exit_code=0))
            for i, (n, w) in enumerate(WALLS.items())]


def _sweep() -> Sweep:
    return Sweep(id=1, name="t", mode="sizes", command=("./prog", "{n}"))


def test_counts_every_process_held_still_within_the_budget() -> None:
    """1 s per count on the fake clock, 20 s of budget (16.2 s predicted): the four planned
    sizes, 4 s."""
    fake = FakeValgrind()
    got = count_sweep(_sweep(), _runs(), valgrind="valgrind", budget_s=20.0, run=fake.run,
                      clock=fake.clock, strict=True)
    assert got.sizes == (1000, 2000, 4000, 8000)
    work = FunctionKey("work", "/home/u/prog")
    assert [c.self_ir[work] for c in got.counts] == [2 * n * n for n in got.sizes]
    assert got.spent_s == 4.0 and got.budget_s == 20.0 and got.notes == ()
    first = fake.argvs[0]
    assert first[:2] == ["env", "PYTHONHASHSEED=0"] and "setarch" in first
    assert "--tool=callgrind" in first and "--trace-children=yes" in first
    assert first[-2:] == ["./prog", "1000"]


def test_on_going_over_the_budget_says_so() -> None:
    """`--callgrind on` (not strict) counts the plan whatever it costs, and says so."""
    fake = FakeValgrind()
    got = count_sweep(_sweep(), _runs(), valgrind="valgrind", budget_s=0.5, run=fake.run,
                      clock=fake.clock, budget_what="the timed runs and the sampling")
    assert got.sizes == (1000, 2000, 4000, 8000)
    assert got.notes and "over its budget of 0.5 s (the timed runs and the sampling)" in \
        got.notes[0]


def test_the_default_budget_is_the_timed_sweeps_wall_time() -> None:
    assert sweep_seconds(_runs()) == pytest.approx(sum(WALLS.values()))
    assert wall_by_size(_runs()) == WALLS
    fake = FakeValgrind()
    got = count_sweep(_sweep(), _runs(), valgrind="valgrind", run=fake.run, clock=fake.clock)
    assert got.budget_s == pytest.approx(sum(WALLS.values()))  # no floor any more


def test_a_failed_count_is_one_sentence() -> None:
    fake = FakeValgrind(fail_at=2000)
    with pytest.raises(FitRefusedError, match="failed under callgrind at n=2000"):
        count_sweep(_sweep(), _runs(), valgrind="valgrind", budget_s=100.0, run=fake.run,
                    clock=fake.clock)


def test_auto_skips_a_plan_predicted_over_the_budget_before_counting() -> None:
    """Start-up 0.3 s + 100 × the timed wall per size: 1 + 2 + 4 + 8 s + 1.2 s = 16.2 s over
    2 s: nothing runs, and the sentence gives the cost `--callgrind on` would have."""
    fake = FakeValgrind()
    with pytest.raises(CallgrindSkipped, match=r"Callgrind skipped: its 4 counts at "
                       r"n = 1000\.\.8000 would take about 16\.2 s, more than the 2\.0 s "
                       r"the timed sweep took; `--callgrind on`") as e:
        count_sweep(_sweep(), _runs(), valgrind="valgrind", budget_s=2.0, run=fake.run,
                    clock=fake.clock, strict=True)
    assert fake.argvs == []
    assert e.value.predicted_s == pytest.approx(16.2) and e.value.spent_s == 0.0


def test_auto_stops_after_a_first_count_slower_than_predicted() -> None:
    """A millisecond program predicted at 4 × 0.4 s fits 3 s; its first count took 1 s
    (the fake's), so the four would take 4 s: skipped after the one."""
    fast = {n: 0.001 for n in WALLS}
    runs = [Run(1, i, "A", n, 0, False, 0.0, Measurement(wall_s=w, exit_code=0))
            for i, (n, w) in enumerate(fast.items())]
    fake = FakeValgrind()
    with pytest.raises(CallgrindSkipped, match=r"skipped \(after 1\.0 s on n = 1000\)") as e:
        count_sweep(_sweep(), runs, valgrind="valgrind", budget_s=3.0, run=fake.run,
                    clock=fake.clock, strict=True)
    assert len(fake.argvs) == 1 and e.value.predicted_s == pytest.approx(4.0)


def test_a_millisecond_program_s_first_count_is_mostly_valgrind_s_start_up() -> None:
    """csvjoin: 2.0 s to count n = 2000 (timed 1 ms); n = 16000 (timed 10 ms) is not 20 s
    but at most 2 s + 100 × 9 ms."""
    from quadscope.profile.callgrind import predicted_s

    walls = {2000: 0.001, 4000: 0.002, 8000: 0.004, 16000: 0.010}
    assert predicted_s(walls, 2.0, 16000) == pytest.approx(2.9)


def test_the_prediction_before_counting_stretches_start_up_by_contention() -> None:
    """Runs that took twice their CPU time on the clock: each start-up 0.6 s, not 0.3 s."""
    runs = [Run(1, i, "A", n, 0, False, 0.0,
                Measurement(wall_s=0.002, user_s=0.001, sys_s=0.0, exit_code=0))
            for i, n in enumerate((1000, 2000, 4000, 8000))]
    walls = wall_by_size(runs)
    assert planned_s(walls, (1000, 2000, 4000, 8000), runs) == pytest.approx(4 * (0.6 + 0.2))
