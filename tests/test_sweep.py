"""Sweeps with a fake clock and executor: what runs, in what order, in which batches, what is stored."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pytest
from tests.conftest import fake_executor, measurement

from quadscope.errors import UsageError
from quadscope.host import Host
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import Chunk, FakeExecutor, Job, SerialExecutor
from quadscope.model import Measurement, Run
from quadscope.run.plan import Batch, PlannedRun, Scheduled
from quadscope.run.runner import NoProgress, Runner, resume_sweep, run_sweep
from quadscope.run.spec import SweepSpec, new_sweep, substitute
from quadscope.store import SqliteStore, Store


def test_substitute_replaces_n_and_i_and_never_resplits() -> None:
    """{n} and {i} are replaced inside arguments; an argument with spaces stays one argument."""
    assert substitute(["prog", "--n={n}", "a b", "{i}"], False, 7) == ["prog", "--n=7", "a b", "7"]
    assert substitute(["echo {n} | wc"], True, 3) == ["/bin/sh", "-c", "echo 3 | wc"]


def test_fixed_sweep_stores_every_planned_run(store: Store, clock: FakeClock) -> None:
    """Every (size, repeat) plus warm-ups is run once, stored in order, and the sweep completes."""
    ex = fake_executor(lambda n: 1e-3 * n, clock)
    spec = SweepSpec(command=("prog", "{n}"), sizes=(1, 2, 4, 8), repeat=3, warmup=1)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    runs = store.runs(sweep.id)
    assert len(runs) == 4 * 3 + 1
    assert [r.seq for r in runs] == list(range(13))
    assert runs[0].warmup and not any(r.warmup for r in runs[1:])
    assert store.get_sweep(sweep.id).status == "complete"
    assert sorted(int(c[-1]) for c in ex.calls[1:]) == sorted([1, 2, 4, 8] * 3)
    assert all(r.measurement.wall_s == pytest.approx(1e-3 * r.size_n) for r in runs)


def test_no_n_in_the_command_is_refused(store: Store, clock: FakeClock) -> None:
    """A sweep without {n} has nothing to vary: one sentence, nothing stored."""
    spec = SweepSpec(command=("prog", "10"), sizes=(1, 2, 4, 8))
    with pytest.raises(UsageError, match=r"no \{n\} in `prog 10`"):
        run_sweep(spec, executor=fake_executor(lambda n: 1.0, clock), clock=clock, store=store)
    assert store.list_sweeps() == []


def test_vs_runs_alternate(store: Store, clock: FakeClock) -> None:
    """With --vs, A and B alternate run by run over the same sizes."""
    ex = fake_executor(lambda n: 1e-3, clock)
    spec = SweepSpec(command=("a", "{n}"), vs_command=("b", "{n}"), sizes=(1, 2, 3, 4),
                     repeat=2, warmup=0)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    runs = store.runs(sweep.id)
    assert [r.variant for r in runs] == ["A", "B"] * 8
    assert [c[0] for c in ex.calls] == ["a", "b"] * 8


def test_accumulate_launches_in_order(store: Store, clock: FakeClock) -> None:
    """Accumulate mode runs launches 1..K in order with {i} replaced, no warm-up, one each."""
    ex = FakeExecutor(lambda argv: measurement(1e-3), clock)
    spec = SweepSpec(command=("launch", "--index={i}"), mode="accumulate", runs=5)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    assert [c[1] for c in ex.calls] == [f"--index={i}" for i in range(1, 6)]
    assert [r.size_n for r in store.runs(sweep.id)] == [1, 2, 3, 4, 5]
    assert store.get_sweep(sweep.id).sizes == (1, 2, 3, 4, 5)


class _Interrupting(SerialExecutor):
    """Runs `limit` runs, then raises KeyboardInterrupt as Ctrl-C would."""

    def __init__(self, inner: FakeExecutor, limit: int) -> None:
        self.inner = inner
        self.limit = limit
        self.count = 0

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        if self.count == self.limit:
            raise KeyboardInterrupt
        self.count += 1
        return self.inner.execute(argv, timeout_s)


def test_interrupt_keeps_finished_runs_and_resume_completes(store: Store,
                                                            clock: FakeClock) -> None:
    """Ctrl-C after 5 runs keeps those 5; --resume runs only the 8 missing ones."""
    spec = SweepSpec(command=("p", "{n}"), sizes=(1, 2, 3, 4), repeat=3, warmup=1)
    ex = _Interrupting(fake_executor(lambda n: 0.01 * n, clock), limit=5)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, executor=ex, clock=clock, store=store)
    sweep = store.list_sweeps()[0][0]
    assert sweep.status == "interrupted"
    assert len(store.runs(sweep.id)) == 5
    ex2 = fake_executor(lambda n: 0.01 * n, clock)
    done = resume_sweep(sweep, executor=ex2, clock=clock, store=store)
    runs = store.runs(done.id)
    assert len(ex2.calls) == 8
    assert len(runs) == 13
    assert sorted((r.size_n, r.repeat) for r in runs if not r.warmup) == sorted(
        (n, k) for n in (1, 2, 3, 4) for k in range(3))
    assert store.get_sweep(done.id).status == "complete"


def test_resume_of_a_complete_sweep_is_refused(store: Store, clock: FakeClock) -> None:
    """Resuming a finished sweep says so rather than running anything."""
    spec = SweepSpec(command=("p", "{n}"), sizes=(1, 2, 3, 4), repeat=1, warmup=0)
    sweep = run_sweep(spec, executor=fake_executor(lambda n: 0.1, clock), clock=clock,
                      store=store)
    with pytest.raises(UsageError, match="already complete"):
        resume_sweep(sweep, executor=fake_executor(lambda n: 0.1, clock), clock=clock,
                     store=store)


class _StoreWatcher(SerialExecutor):
    """A serial executor that notes each batch's size and, before each run, how many are stored."""

    def __init__(self, inner: FakeExecutor, store: Store) -> None:
        self.inner = inner
        self.store = store
        self.batches: list[int] = []
        self.stored_before: list[int] = []

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        return self.inner.execute(argv, timeout_s)

    def execute_many(self, jobs: Iterable[Job]) -> Iterator[Measurement]:
        jobs = list(jobs)
        self.batches.append(len(jobs))
        sweep = self.store.list_sweeps()[0][0]
        for job in jobs:
            self.stored_before.append(len(self.store.runs(sweep.id)))
            yield self.execute(job.argv, job.timeout_s)


def test_fixed_sweep_is_one_batch_and_each_run_is_stored_before_the_next_starts(
        store: Store, clock: FakeClock) -> None:
    """The executor gets the whole fixed plan at once; the runner stores every run as it comes."""
    ex = _StoreWatcher(fake_executor(lambda n: 1e-3 * n, clock), store)
    spec = SweepSpec(command=("p", "{n}"), sizes=(1, 2, 4, 8), repeat=3, warmup=1)
    run_sweep(spec, executor=ex, clock=clock, store=store)
    assert ex.batches == [13]
    assert ex.stored_before == list(range(13))


class _Endless:
    """A plan that always wants one more run, noting what it was told each time."""

    def __init__(self) -> None:
        self.told: list[tuple[int, float | None]] = []

    @property
    def total_runs(self) -> None:
        return None

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch:
        self.told.append((len(history), remaining_s))
        return (Scheduled(PlannedRun("A", 1, len(history)), None),)


def test_runner_stops_once_the_budget_is_spent(store: Store, clock: FakeClock) -> None:
    """With 1 s of budget and 0.4 s runs, the third run overspends it and no fourth is asked for."""
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive")
    sweep = store.create_sweep(new_sweep(spec, clock=clock, counters="rusage", counters_note="",
                                         host=Host()))
    runner = Runner(sweep, executor=fake_executor(lambda n: 0.4, clock), clock=clock,
                    store=store, progress=NoProgress())
    plan = _Endless()
    runner.run(plan, budget_s=1.0)
    assert [n for n, _ in plan.told] == [0, 1, 2]
    assert [r for _, r in plan.told] == pytest.approx([1.0, 0.6, 0.2])
    assert [r.seq for r in store.runs(sweep.id)] == [0, 1, 2]
    assert clock.monotonic() == pytest.approx(1001.2)


class _Looks(SerialExecutor):
    """An executor that, like the launcher, brings a batch's runs in `per_look` at a time,
    logged; it notes, at each look, how many runs the store had committed (seen from another
    connection) and whether the store kept a journal."""

    def __init__(self, inner: FakeExecutor, db: Path, per_look: int) -> None:
        self.inner, self.db, self.per_look = inner, db, per_look
        self.looks: list[tuple[int, int, bool]] = []  # (runs brought, committed before, journal)

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        return self.inner.execute(argv, timeout_s)

    def execute_chunks(self, jobs: Iterable[Job]) -> Iterator[Chunk]:
        jobs = list(jobs)
        assert all(job.tag for job in jobs)  # each run named for the launcher's rescue
        for k in range(0, len(jobs), self.per_look):
            look = jobs[k:k + self.per_look]
            with sqlite3.connect(self.db) as other:
                committed = other.execute("SELECT count(*) FROM runs").fetchone()[0]
            journal = any("-runs-" in p.name for p in self.db.parent.iterdir())
            self.looks.append((len(look), committed, journal))
            yield Chunk(tuple(self.execute(j.argv, j.timeout_s) for j in look), logged=True)


class _CountingStore:
    """A store that counts its writes of runs: (add_run calls, add_runs calls with logged)."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.single = 0
        self.bulk: list[tuple[int, bool]] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    def add_run(self, run: Run) -> None:
        self.single += 1
        self._store.add_run(run)

    def add_runs(self, runs: Sequence[Run], *, logged: bool = False) -> None:
        self.bulk.append((len(runs), logged))
        self._store.add_runs(runs, logged=logged)


def test_a_logged_look_is_one_transaction_committed_before_the_next_look(
        tmp_path: Path, clock: FakeClock) -> None:
    """The whole interleaved plan goes to the executor in one batch; the runner wakes once a
    look, not once a run: each look's runs are one add_runs, committed (no journal) before the
    executor is asked for the next look, and stored in plan order."""
    db = tmp_path / "results.db"
    store = _CountingStore(SqliteStore(db, batch_s=3600.0))  # never commits by time
    ex = _Looks(fake_executor(lambda n: 1e-3 * n, clock), db, per_look=5)
    spec = SweepSpec(command=("p", "{n}"), sizes=(1, 2, 4, 8), repeat=3, warmup=1)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)  # type: ignore[arg-type]
    assert [n for n, _, _ in ex.looks] == [5, 5, 3]  # 12 runs and a warm-up, one batch
    assert [c for _, c, _ in ex.looks] == [0, 5, 10]
    assert not any(journal for _, _, journal in ex.looks)
    assert (store.single, store.bulk) == (0, [(5, True), (5, True), (3, True)])
    runs = store.runs(sweep.id)
    assert [r.seq for r in runs] == list(range(13))
    assert [r.size_n for r in runs] == [int(argv[-1]) for argv in ex.inner.calls]
    assert sorted(r.size_n for r in runs if not r.warmup) == sorted([1, 2, 4, 8] * 3)
    store.close()


def test_a_serial_executor_is_stored_run_by_run_through_the_journal(
        tmp_path: Path, clock: FakeClock) -> None:
    """Runs not logged elsewhere (a serial executor) each go to the journal, as before."""
    store = _CountingStore(SqliteStore(tmp_path / "results.db"))
    spec = SweepSpec(command=("p", "{n}"), sizes=(1, 2), repeat=2, warmup=0)
    run_sweep(spec, executor=fake_executor(lambda n: 1e-3, clock), clock=clock,
              store=store)  # type: ignore[arg-type]
    assert store.bulk == [(1, False)] * 4
    store.close()
