"""--setup, --prepare, --cpu and the size padding: who runs what, when, and what is stored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from tests.conftest import fake_executor, measurement

from quadscope.cli import build_parser
from quadscope.commands.run import RichProgress, parse_cpus
from quadscope.errors import SetupError, UsageError
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import Job, SerialExecutor
from quadscope.model import Measurement, Run, Sweep
from quadscope.run.runner import resume_sweep, run_sweep
from quadscope.run.spec import PAD_VAR, SweepSpec, check_spec, size_padding, substitute
from quadscope.store import Store


def _child_bytes(command: Sequence[str], n: int) -> int:
    """What argv and the padding variable take on the child's stack: strings and their NULs."""
    argv = substitute(command, False, n)
    ((name, value),) = size_padding(command, n)
    return sum(len(a) + 1 for a in argv) + len(f"{name}={value}") + 1


def test_padding_keeps_argv_and_environment_one_size_at_every_n() -> None:
    """Whatever the digits of n, argv plus the padding variable take the same bytes."""
    command = ("prog", "--n={n}", "{n}.txt")
    sizes = [1, 9, 10, 12345, 10**9, 2**62]
    assert len({_child_bytes(command, n) for n in sizes}) == 1
    assert size_padding(command, 1) == ((PAD_VAR, "x" * 38),)


def test_padding_is_empty_without_a_hole() -> None:
    """A command without {n} is the same at every n: the variable is there, empty."""
    assert size_padding(("prog",), 123) == ((PAD_VAR, ""),)


def test_setup_runs_once_per_size_and_prepare_before_every_run(store: Store,
                                                              clock: FakeClock) -> None:
    """The first job of each size carries --setup, every job --prepare and the padding."""
    ex = fake_executor(lambda n: 1e-3, clock)
    spec = SweepSpec(command=("prog", "{n}"), sizes=(1, 20), repeat=2, warmup=1,
                     setup="make in.{n}", prepare="sync {n}")
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    sizes = [int(c[-1]) for c in ex.calls]
    expected: list[tuple[str, tuple[str, ...]]] = []
    seen: set[int] = set()
    for n in sizes:
        if n not in seen:
            seen.add(n)
            expected.append(("--setup", ("/bin/sh", "-c", f"make in.{n}")))
        expected.append(("--prepare", ("/bin/sh", "-c", f"sync {n}")))
    assert ex.untimed_calls == tuple(expected)
    assert len(store.runs(sweep.id)) == 5
    stored = store.get_sweep(sweep.id)
    assert (stored.setup, stored.prepare) == ("make in.{n}", "sync {n}")


def test_resume_runs_setup_again_for_the_sizes_it_still_runs(store: Store,
                                                             clock: FakeClock) -> None:
    """A resumed sweep knows its --setup from the store and runs it before its first run."""
    spec = SweepSpec(command=("prog", "{n}"), sizes=(5,), repeat=2, warmup=0, setup="mk {n}")
    ex = fake_executor(lambda n: 1e-3, clock)
    sweep = run_sweep(spec, executor=ex, clock=clock, store=store)
    store.set_status(sweep.id, "interrupted")
    with store._write() as c:  # forget the last run, as a Ctrl-C would have
        c.execute("DELETE FROM runs WHERE sweep_id = ? AND seq = 1", (sweep.id,))
    again = fake_executor(lambda n: 1e-3, clock)
    resume_sweep(store.get_sweep(sweep.id), executor=again, clock=clock, store=store)
    assert again.untimed_calls == (("--setup", ("/bin/sh", "-c", "mk 5")),)


class _Failing(SerialExecutor):
    """Every command exits 2 saying why on stderr."""

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        return replace(measurement(0.001, exit_code=2),
                       stderr_tail="warning\nno such file: in.7\n")


def test_a_failing_prepare_is_one_sentence_and_nothing_is_measured() -> None:
    """A --prepare that exits 2 raises SetupError naming it, its status and its last words."""
    job = Job(("prog", "7"), None, prepare=("/bin/sh", "-c", "cat in.7"))
    with pytest.raises(SetupError) as e:
        next(_Failing().execute_many([job]))
    assert str(e.value) == ("--prepare `cat in.7` exited with status 2 saying: no such file: "
                            "in.7; nothing was measured for this run")


def test_setup_is_refused_for_a_python_function() -> None:
    """--setup runs shell commands; a Python function target is told to use its setup(n)."""
    with pytest.raises(UsageError, match="its own setup"):
        check_spec(SweepSpec(command=("python:m:f", "{n}"), sizes=(1, 2), setup="x"))


def test_cpu_list_parses_ranges_and_refuses_unusable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """--cpu takes the kernel's list format; a CPU this process may not use is refused."""
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert parse_cpus("0,2-3") == (0, 2, 3)
    assert parse_cpus(None) == ()
    with pytest.raises(UsageError, match="only CPUs 0,1,2,3"):
        parse_cpus("7")
    with pytest.raises(UsageError, match="not a CPU list"):
        parse_cpus("a-b")


def test_sweep_records_cpus(store: Store, clock: FakeClock) -> None:
    """The CPUs a sweep was pinned to are stored with it and read back as a tuple."""
    spec = SweepSpec(command=("prog", "{n}"), sizes=(1, 2), repeat=1, warmup=0, cpus=(1,))
    sweep = run_sweep(spec, executor=fake_executor(lambda n: 1e-3, clock), clock=clock,
                      store=store)
    assert store.get_sweep(sweep.id).cpus == (1,)


class _Bar:
    def __init__(self) -> None:
        self.updates: list[int] = []

    def update(self, task: object, *, completed: float, description: str) -> None:
        self.updates.append(int(completed))


def test_progress_updates_at_most_every_tenth_of_a_second() -> None:
    """Runs 10 ms apart update the bar on the first run and then once per 0.1 s."""
    p = RichProgress()
    bar = _Bar()
    p._bar = bar  # type: ignore[assignment]
    p._task = 0
    m = measurement(0.01)
    for i in range(30):
        p.ran(Run(1, i, "A", 5, 0, False, 0.0, m), i + 1, i * 0.01)
    assert bar.updates == [1, 11, 21]


def test_parse_args_reach_the_spec() -> None:
    """--setup, --prepare and --cpu land in the spec as given."""
    from quadscope.commands.run import build_spec

    args = build_parser().parse_args(["run", "--sizes", "1,2,3,4", "--repeat", "1",
                                      "--setup", "mk {n}", "--prepare", "p", "--",
                                      "/bin/true", "{n}"])
    spec = build_spec(args)
    assert (spec.setup, spec.prepare, spec.cpus) == ("mk {n}", "p", ())


def test_sweep_from_schema2_without_new_fields_reads_defaults() -> None:
    """A stored sweep written before --setup existed reads as having none."""
    sw = Sweep.from_dict({"id": 1, "name": "x", "mode": "sizes", "command": ["a", "{n}"]})
    assert (sw.setup, sw.prepare, sw.cpus) == (None, None, ())


class _Limits(SerialExecutor):
    """A fake that records each job's own timeout and the limit its untimed commands get."""

    def __init__(self, clock: FakeClock) -> None:
        self._inner = fake_executor(lambda n: 1e-3 + 1e-7 * n * n, clock)
        self.limits: list[tuple[float | None, float | None]] = []

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        return self._inner.execute(argv, timeout_s)

    def run_untimed(self, what: str, argv: Sequence[str], timeout_s: float | None) -> None:
        self._setup_limit = [timeout_s]  # a written input: nothing on the fake's clock

    def execute_job(self, job: Job) -> Measurement:
        for limit in getattr(self, "_setup_limit", []):
            self.limits.append((job.timeout_s, limit))
        self._setup_limit = []
        return super().execute_job(job)


def test_a_setup_gets_the_users_timeout_within_the_budget_not_the_runs_cap(
        store: Store, clock: FakeClock) -> None:
    """An adaptive sweep caps a growing run near its predicted time; the size's input is
    written first and may cost far more than the run reads (it must not time out there)."""
    ex = _Limits(clock)
    spec = SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=60.0, start_n=16,
                     timeout_s=30.0, setup="gen {n}", until=("wall_s",))
    run_sweep(spec, executor=ex, clock=clock, store=store)
    assert len(ex.limits) >= 4
    assert all(u is not None and 0 < u <= 30.0 for _, u in ex.limits)
    assert any(t is not None and u is not None and u > t for t, u in ex.limits)  # the run's cap
    t0 = clock.monotonic()
    fixed = _Limits(clock)
    run_sweep(SweepSpec(command=("p", "{n}"), sizes=(10, 20, 40, 80), setup="gen {n}"),
              executor=fixed, clock=clock, store=store)
    assert fixed.limits and all(u is None for _, u in fixed.limits)  # no --timeout, no budget
    assert clock.monotonic() > t0


class _SlowSetup(_Limits):
    """Writing size n's input takes n/64 s on the fake clock, cut off at its limit."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self._inner = fake_executor(lambda n: 1e-3, clock)  # flat: n grows while it is cheap
        self._clock = clock
        self.cut = 0

    def run_untimed(self, what: str, argv: Sequence[str], timeout_s: float | None) -> None:
        from quadscope.errors import SetupTimeoutError

        cost = int(argv[-1].split()[-1]) / 64
        if timeout_s is not None and cost > timeout_s:
            self._clock.advance(timeout_s)
            self.cut += 1
            raise SetupTimeoutError(f"--setup timed out after {timeout_s:.3g} s")
        self._clock.advance(cost)


def test_a_setup_that_spends_the_budget_ends_the_sweep_with_what_was_measured(
        store: Store, clock: FakeClock) -> None:
    """Past the budget left, a setup ends an adaptive sweep as a spent budget does; past the
    user's own --timeout it is an error, as before."""
    slow = _SlowSetup(clock)
    sweep = run_sweep(SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=20.0,
                                start_n=16, setup="gen {n}", until=("wall_s",)),
                      executor=slow, clock=clock, store=store)
    assert slow.cut == 1 and store.get_sweep(sweep.id).status == "complete"
    assert len({r.size_n for r in store.runs(sweep.id) if r.measurement.ok}) >= 3
    with pytest.raises(SetupError, match="timed out"):
        run_sweep(SweepSpec(command=("p", "{n}"), mode="adaptive", budget_s=600.0, start_n=16,
                            timeout_s=2.0, setup="gen {n}", until=("wall_s",)),
                  executor=_SlowSetup(clock), clock=clock, store=store)
