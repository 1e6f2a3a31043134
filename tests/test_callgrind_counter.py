"""Counting a sweep under Callgrind within its budget, with a fake valgrind and a fake clock."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from quadscope.errors import FitRefusedError
from quadscope.model import Measurement, Run, Sweep
from quadscope.profile.callgrind import count_sweep, plan_sizes, sweep_seconds, wall_by_size
from quadscope.profile.callgrind_format import FunctionKey

WALLS = {1000: 0.01, 2000: 0.02, 4000: 0.04, 8000: 0.08, 16000: 0.16, 32000: 0.32}


# The first count took 0.1 s at a timed wall of 0.01 s: n costs 0.1 s · n / 1000 to count.
def test_a_large_budget_spreads_the_sizes_over_all_of_them() -> None:
    """2000 + 4000 + 16000 + 32000 cost 5.4 s: the geometric pick of 5 over the whole range."""
    assert plan_sizes(WALLS, first_s=0.1, remaining_s=5.4) == (1000, 2000, 4000, 16000, 32000)


def test_a_tighter_budget_lowers_the_top_size() -> None:
    """0.2 + 0.4 + 0.8 + 1.6 = 3.0 s fits 3.0 s; under it, the top size drops to 8000."""
    assert plan_sizes(WALLS, first_s=0.1, remaining_s=3.0) == (1000, 2000, 4000, 8000, 16000)
    assert plan_sizes(WALLS, first_s=0.1, remaining_s=2.9) == (1000, 2000, 4000, 8000)


def test_no_budget_still_counts_the_fewest_sizes_a_fit_needs() -> None:
    assert plan_sizes(WALLS, first_s=0.1, remaining_s=0.0) == (1000, 2000, 4000, 8000)


def test_a_size_costs_at_least_the_first_count() -> None:
    """Valgrind's start-up is paid every run: equal walls cost 1 s each, 4 more need 4 s."""
    flat = dict.fromkeys(WALLS, 0.01)
    assert plan_sizes(flat, first_s=1.0, remaining_s=4.0) == (1000, 2000, 4000, 16000, 32000)
    assert plan_sizes(flat, first_s=1.0, remaining_s=3.9) == (1000, 2000, 4000, 8000)


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
    """1 s per count on the fake clock, 5.5 s of budget: the smallest, then 4 more (4 s at
    least, and the timed walls scale 16000 to 16 s: so the 4 smallest after the first)."""
    fake = FakeValgrind()
    got = count_sweep(_sweep(), _runs(), valgrind="valgrind", budget_s=5.5, run=fake.run,
                      clock=fake.clock)
    assert got.sizes == (1000, 2000, 4000, 8000)
    work = FunctionKey("work", "/home/u/prog")
    assert [c.self_ir[work] for c in got.counts] == [2 * n * n for n in got.sizes]
    assert got.spent_s == 4.0 and got.budget_s == 5.5 and got.notes == ()
    first = fake.argvs[0]
    assert first[:2] == ["env", "PYTHONHASHSEED=0"] and "setarch" in first
    assert "--tool=callgrind" in first and "--trace-children=yes" in first
    assert first[-2:] == ["./prog", "1000"]


def test_going_over_the_budget_says_so() -> None:
    fake = FakeValgrind()
    got = count_sweep(_sweep(), _runs(), valgrind="valgrind", budget_s=0.5, run=fake.run,
                      clock=fake.clock)
    assert got.sizes == (1000, 2000, 4000, 8000)
    assert got.notes and "over its budget of 0.5 s" in got.notes[0]


def test_the_default_budget_is_the_timed_sweeps_wall_time() -> None:
    assert sweep_seconds(_runs()) == pytest.approx(sum(WALLS.values()))
    assert wall_by_size(_runs()) == WALLS


def test_a_failed_count_is_one_sentence() -> None:
    fake = FakeValgrind(fail_at=2000)
    with pytest.raises(FitRefusedError, match="failed under callgrind at n=2000"):
        count_sweep(_sweep(), _runs(), valgrind="valgrind", budget_s=100.0, run=fake.run,
                    clock=fake.clock)


def test_strict_refuses_a_count_predicted_over_the_budget() -> None:
    """`--callgrind auto`: after the first second, 2 + 4 + 8 s more over 2 s are not made."""
    fake = FakeValgrind()
    with pytest.raises(FitRefusedError, match=r"about 15 s at n = 1000\.\.8000, over its budget of 2 s"):
        count_sweep(_sweep(), _runs(), valgrind="valgrind", budget_s=2.0, run=fake.run,
                    clock=fake.clock, strict=True)
    assert len(fake.argvs) == 1


def test_the_budget_has_a_floor_for_fast_programs() -> None:
    """A sweep of 0.63 s still gets 5 s: Valgrind's start-up alone is a quarter second."""
    fake = FakeValgrind()
    got = count_sweep(_sweep(), _runs(), valgrind="valgrind", run=fake.run, clock=fake.clock)
    assert got.budget_s == 5.0 and got.sizes == (1000, 2000, 4000, 8000)


def test_a_millisecond_program_s_first_count_is_mostly_valgrind_s_start_up() -> None:
    """csvjoin: 2.0 s to count n = 2000 (timed 1 ms); n = 16000 (timed 10 ms) is not 20 s
    but at most 2 s + 100 × 9 ms: four sizes fit a 5 s budget's remaining 8 s."""
    from quadscope.profile.callgrind import predicted_s

    walls = {2000: 0.001, 4000: 0.002, 8000: 0.004, 16000: 0.010}
    assert predicted_s(walls, 2.0, 16000) == pytest.approx(2.9)
    assert plan_sizes(walls, first_s=2.0, remaining_s=8.0) == (2000, 4000, 8000, 16000)
