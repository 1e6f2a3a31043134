"""An exact sweep's time answer: timed repeats at the counted sizes once the counts are done,
never counted, within their share of what the sweep spent."""

from __future__ import annotations

import random
from collections.abc import Sequence

from tests.conftest import measurement

from quadscope.measure.clock import FakeClock
from quadscope.measure.exact import InstructionMeter
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement, Run
from quadscope.run.plan import Batch, PlannedRun, Scheduled
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.run.timed_repeats import REPEATS, TimedRepeats
from quadscope.store import Store


class _Counts:
    """A plan that counts the given sizes one at a time, then is done."""

    def __init__(self, sizes: Sequence[int]) -> None:
        self.left = list(sizes)

    @property
    def total_runs(self) -> int:
        return 4

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        if not self.left:
            return None
        return (Scheduled(PlannedRun("A", self.left.pop(0), 0), None),)


def _counted(n: int, wall: float) -> Run:
    m = Measurement({**measurement(wall).values, "instructions": 1000 * n}, exit_code=0)
    return Run(sweep_id=1, seq=0, variant="A", size_n=n, repeat=0, warmup=False,
               started_at=0.0, measurement=m)


def _drive(plan: TimedRepeats, walls: dict[int, float], budget: float,
           count_s: float) -> list[Batch]:
    history: list[Run] = []
    remaining, batches = budget, []
    while (batch := plan.next_batch(history, remaining)) is not None:
        batches.append(batch)
        for s in batch:
            if s.run.repeat == 0:
                history.append(_counted(s.run.size_n, walls[s.run.size_n]))
                remaining -= count_s + walls[s.run.size_n]
            else:
                remaining -= walls[s.run.size_n]
    return batches


def test_the_counts_come_first_then_every_counted_size_timed_again_in_one_batch() -> None:
    sizes = [1000, 2000, 4000, 8000]
    plan = TimedRepeats(_Counts(sizes), metric="instructions", timeout_s=None, seed=1)
    batches = _drive(plan, {n: 0.001 for n in sizes}, budget=30.0, count_s=0.05)
    assert [b[0].run.size_n for b in batches[:4]] == sizes
    assert not any(TimedRepeats.timed(b) for b in batches[:4])
    (last,) = batches[4:]
    assert TimedRepeats.timed(last)
    assert sorted((s.run.size_n, s.run.repeat) for s in last) == sorted(
        (n, r) for n in sizes for r in range(1, REPEATS + 1))
    assert [s.run.size_n for s in last] != sorted(s.run.size_n for s in last)  # shuffled


def test_repeats_keep_within_their_share_of_what_the_sweep_spent() -> None:
    """Timed runs as dear as the counts: half of what was spent buys one more run a size,
    not four; dearer still, only the cheapest sizes, and below three sizes none."""
    sizes = [1000, 2000, 4000, 8000]
    walls = {1000: 0.1, 2000: 0.1, 4000: 0.1, 8000: 0.1}
    plan = TimedRepeats(_Counts(sizes), metric="instructions", timeout_s=None)
    *_, last = _drive(plan, walls, budget=30.0, count_s=0.15)
    assert {s.run.repeat for s in last} == {1} and len(last) == 4
    walls = {1000: 0.1, 2000: 0.1, 4000: 0.1, 8000: 3.0}
    plan = TimedRepeats(_Counts(sizes), metric="instructions", timeout_s=None)
    *_, last = _drive(plan, walls, budget=30.0, count_s=0.0)
    assert sorted(s.run.size_n for s in last) == [1000, 2000, 4000]
    plan = TimedRepeats(_Counts(sizes[:2]), metric="instructions", timeout_s=None)
    assert not any(TimedRepeats.timed(b) for b in _drive(plan, walls, 30.0, 0.0))


def test_an_exact_sweep_times_its_counted_sizes_again_uncounted(store: Store) -> None:
    """`--meter instructions --budget`: four counts, then the timed repeats on the timed
    executor alone: the counting runner runs four times, the timed one four plus the
    repeats, and every size holds one count and five times."""
    clock = FakeClock(1000.0)
    noise = iter(random.Random(4).uniform(0.2, 5.0) for _ in range(100))
    timed = FakeExecutor(lambda argv: measurement(0.001 * next(noise)), clock)  # no class

    def count(argv: Sequence[str]) -> Measurement:
        from pathlib import Path
        Path(argv[argv.index("count-into") + 1], "c").write_text(str(3 * int(argv[-1]) ** 2))
        return measurement(0.05)

    class _Tool:
        def prefix(self, out_dir: str) -> list[str]:
            return ["count-into", out_dir]

        def total(self, out_dir: str) -> int | None:
            from pathlib import Path
            return int((Path(out_dir) / "c").read_text())

    counter = FakeExecutor(count, clock)
    meter = InstructionMeter(timed, counter, _Tool())
    sweep = run_sweep(SweepSpec(command=("prog", "{n}"), mode="adaptive", budget_s=30.0,
                                start_n=1000, meter="instructions"),
                      executor=meter, clock=clock, store=store)
    runs = store.runs(sweep.id)
    assert len(counter.calls) == 4
    by_size = {n: [r for r in runs if r.size_n == n] for n in (1000, 2000, 4000, 8000)}
    assert all(len(rs) == 1 + REPEATS for rs in by_size.values())
    assert all(sum(r.value("instructions") is not None for r in rs) == 1
               for rs in by_size.values())
    assert len(timed.calls) == 4 * (1 + REPEATS)


def test_no_repeats_where_the_counted_jobs_timed_runs_already_decide() -> None:
    sizes = [1000, 2000, 4000, 8000]
    asked: list[int] = []

    def decided(runs: Sequence[Run]) -> bool:
        asked.append(len(runs))
        return True

    plan = TimedRepeats(_Counts(sizes), metric="instructions", timeout_s=None, decided=decided)
    batches = _drive(plan, {n: 0.001 for n in sizes}, budget=30.0, count_s=0.05)
    assert len(batches) == 4 and asked == [4]
