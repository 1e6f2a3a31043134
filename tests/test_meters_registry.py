"""The meter registry, and the one session every entry point starts its sweeps through.

The sweep tests below add a meter the way a new one is added: its record and
executor factory (here, in this file, standing for the meter's own module)
and one line registering it (`REGISTRY.with_meter`, standing for the line in
`meters/__init__.py`): two files, and the real spec check, plan, runner,
store and analysis take it from there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.conftest import measurement, size_of

from quadscope import meters
from quadscope.analyse.analysis import analyse
from quadscope.errors import UsageError
from quadscope.host import Host
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.measure.provenance import Provenance
from quadscope.measure.system import CPU_DIR, LOADAVG, STAT, THP, FakeReader
from quadscope.meters import REGISTRY, Cost, Measuring, Meter, Registry, Target
from quadscope.model import Measurement
from quadscope.run import session
from quadscope.run.spec import SweepSpec, check_spec
from quadscope.store import Store

HOST = Host(hostname="box", kernel="6.1", cpus=2)


def test_builtin_meters_in_order_with_their_metrics_and_costs() -> None:
    """auto (the default: time, counting the work when time cannot decide), time, then
    instructions, the one exact meter; units from the metric registry."""
    assert meters.NAMES == ("auto", "time", "instructions")
    assert REGISTRY.default.name == "auto"
    assert [(m.name, m.metrics, m.exact, m.counts_with) for m in REGISTRY] == [
        ("auto", ("wall_s",), False, "instructions"), ("time", ("wall_s",), False, None),
        ("instructions", ("instructions",), True, None)]
    assert REGISTRY.get("instructions").units == {"instructions": "count"}
    assert REGISTRY.get("time").cost.run_s(2.0) == 2.0
    cost = REGISTRY.get("instructions").cost
    assert (cost.slowdown, cost.startup_s) == (30.0, 0.3)
    # A Python function's sizes under one start: dearer per second of the call than a program.
    assert cost.batch is not None and cost.batch.slowdown > cost.slowdown
    assert cost.batch.run_s([0.1, 0.2]) > cost.batch.startup_s + 2 * cost.batch.per_call_s
    assert meters.exact_metric("instructions") == "instructions"
    assert meters.exact_metric("time") is None
    assert meters.exact_metric("auto") is None  # an auto sweep that counted is stored as such
    assert meters.exact_metric("gone") is None  # a stored sweep of a meter no longer known


def test_an_unknown_meter_is_one_sentence_naming_the_choices() -> None:
    """`--meter` and the API refuse a meter the registry lacks, listing the ones it has."""
    with pytest.raises(UsageError, match=r"--meter is one of auto, time, instructions, not 'cycles'"):
        meters.choose_measuring(("prog", "{n}"), meter="cycles")
    with pytest.raises(UsageError, match="not 'cycles'"):
        check_spec(SweepSpec(command=("prog", "{n}"), sizes=(1, 2, 4, 8), meter="cycles"))
    with pytest.raises(KeyError, match="known: auto, time, instructions"):
        REGISTRY.get("cycles")


def test_a_meter_names_known_metrics_and_a_registry_distinct_meters() -> None:
    """A typo in a meter's metric, an exact meter counting nothing, or a name twice is refused."""
    fake = _faults_meter(FakeExecutor(lambda argv: measurement(1.0), FakeClock()))
    with pytest.raises(KeyError, match="unknown metric 'page_fault'"):
        Meter("pf", metrics=("page_fault",), exact=True, measuring=fake.measuring)
    with pytest.raises(ValueError, match="names no metric"):
        Meter("nothing", metrics=(), exact=True, measuring=fake.measuring)
    with pytest.raises(ValueError, match="distinct"):
        REGISTRY.with_meter(Meter("time", metrics=(), exact=False, measuring=fake.measuring))


def test_the_instruction_meter_says_why_it_cannot_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """No hardware counter for a Python call and no Valgrind: one sentence with the fix."""
    from quadscope.measure import exact

    monkeypatch.setattr(exact.shutil, "which", lambda name: None)
    why = REGISTRY.get("instructions").unavailable(Target(("python:m:f", "{n}")))
    assert why == ("no hardware instruction counter here and valgrind is not installed: install "
                   "it with `apt-get install valgrind` (scripts/setup does)")
    assert REGISTRY.get("time").unavailable(Target(("prog", "{n}"))) == ""


def _faults_cost(argv: Sequence[str]) -> Measurement:
    """A workload whose page faults are exactly 5n + 40 on every run; its time moves."""
    n = size_of(argv)
    return Measurement(wall_s=1e-3 * n * (1 + n % 3 / 10), page_faults=5 * n + 40, exit_code=0)


def _faults_meter(executor: FakeExecutor) -> Meter:
    """A new exact meter, as its module would declare it: page faults counted the same each run."""

    def measuring(target: Target) -> Measuring:
        return Measuring(executor, "fake-faults", f"page faults of {target.command[0]}, exactly")

    return Meter("faults", metrics=("page_faults",), exact=True, measuring=measuring,
                 cost=Cost(slowdown=1.0, startup_s=0.01))


def _machine(files: dict[str, str] | None = None) -> session.Machine:
    return session.Machine(FakeReader(files or {}), host_info=lambda: HOST,
                           provenance=lambda host: Provenance(git_commit="abc123"))


def test_a_meter_registered_in_a_test_registry_sweeps_and_is_fitted(store: Store) -> None:
    """The new meter passes the spec check, picks its executor, gets the exact meter's plan
    (a size's third repeat only where its two counts disagree), is recorded, and is fitted."""
    clock = FakeClock(start=1000.0)
    executor = FakeExecutor(_faults_cost, clock)
    registry: Registry = REGISTRY.with_meter(_faults_meter(executor))
    spec = SweepSpec(command=("prog", "{n}"), sizes=(100, 200, 400, 800), repeat=3, warmup=1,
                     meter="faults")
    with pytest.raises(UsageError):  # quadscope's own registry does not know it
        check_spec(spec)
    sweep = session.start(spec, store=store, clock=clock, machine=_machine(), registry=registry)
    assert (sweep.meter, sweep.counters, sweep.counters_note) == (
        "faults", "fake-faults", "page faults of prog, exactly")
    runs = store.runs(sweep.id)
    # One warm-up and two rounds of four sizes; the counts agree, so no third round.
    assert len(executor.calls) == len(runs) == 1 + 2 * 4
    assert {r.measurement.page_faults for r in runs if r.size_n == 800} == {4040}
    fit = analyse(sweep, runs).fits["A"]["page_faults"]
    assert (fit.cls, fit.confident) == ("n", True)


def test_the_session_records_host_facts_and_skew_checks(store: Store) -> None:
    """host_info, the skew checks' facts and provenance are recorded, and the analysis advises."""
    clock = FakeClock(start=1000.0)
    executor = FakeExecutor(_faults_cost, clock)
    machine = _machine({THP: "[always] madvise never\n"})
    facts = session.read_host(machine)
    assert facts.host == dataclasses.replace(HOST, thp="always")
    assert len(facts.advice) == 1 and "transparent huge pages are 'always'" in facts.advice[0]
    spec = SweepSpec(command=("prog", "{n}"), sizes=(1, 2, 4, 8), repeat=1, warmup=0)
    sweep = session.start(spec, store=store, clock=clock, machine=machine,
                          measuring=Measuring(executor, "rusage", ""), facts=facts)
    stored = store.get_sweep(str(sweep.id))
    assert (stored.host, stored.git_commit) == (facts.host, "abc123")
    assert facts.advice[0] in analyse(stored, store.runs(sweep.id)).notes


@dataclasses.dataclass
class _TwoStats:
    """/proc/stat as read at a sweep's start, then at its end; the other files as given."""

    stats: list[str]
    files: dict[str, str]

    def read(self, path: str) -> str | None:
        return self.stats.pop(0) if path == STAT and self.stats else self.files.get(path)


def test_the_session_records_the_steal_and_the_other_work_over_the_sweep(store: Store) -> None:
    """Between the two readings: 2000 ticks on 2 CPUs, 1500 busy, 100 stolen; quadscope and
    its runs used 5 CPU seconds (the `own_cpu` readings 10 then 15): others kept 1 CPU busy,
    which the analysis advises on in place of the load average at the start."""
    reader = _TwoStats(["cpu  0 0 0 0 0 0 0 0 0 0\n", "cpu  1300 100 50 400 0 50 0 100 0 0\n"],
                       {f"{CPU_DIR}/online": "0-1\n", LOADAVG: "1.90 1.5 1.2 3/300 42\n"})
    own = iter([10.0, 15.0])
    machine = dataclasses.replace(_machine(), reader=reader, own_cpu=lambda: next(own),
                                  clock_ticks=100)
    clock = FakeClock(start=1000.0)
    spec = SweepSpec(command=("prog", "{n}"), sizes=(1, 2, 4, 8), repeat=1, warmup=0)
    sweep = session.start(spec, store=store, clock=clock, machine=machine,
                          measuring=Measuring(FakeExecutor(_faults_cost, clock), "rusage", ""))
    stored = store.get_sweep(str(sweep.id))
    assert (stored.host.steal_pct, stored.host.other_load, stored.host.load_1m) == (
        "5.0", "1.00/2", "1.90/2")
    notes = analyse(stored, store.runs(sweep.id)).notes
    assert any(n.startswith("other work kept 1.00 of the 2 CPUs busy") for n in notes)
    assert not any("load average" in n for n in notes)


def test_resume_continues_with_the_stored_meter(store: Store, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    """A resumed sweep asks the registry for its own meter, fork and CPUs, perf only if it had it."""
    seen: dict[str, object] = {}

    def choose(command: Sequence[str], **kwargs: object) -> Measuring:
        seen.update(kwargs, command=tuple(command))
        raise UsageError("chosen")

    monkeypatch.setattr(meters, "choose_measuring", choose)
    from quadscope.model import Sweep

    sweep = Sweep(id=1, name="s", mode="sizes", command=("python:m:f", "{n}"), meter="instructions",
                  counters="valgrind", fork=True, cpus=(1,))
    with pytest.raises(UsageError, match="chosen"):
        session.measuring_to_resume(sweep)
    assert seen == {"command": ("python:m:f", "{n}"), "meter": "instructions", "no_perf": True,
                    "fork": True, "cpus": (1,), "registry": REGISTRY,
                    "no_qemu": True}  # counted under Valgrind: it counts on under Valgrind


def _count_up(n: int) -> int:
    return sum(range(n))


def test_the_api_records_the_same_host_facts_as_run(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """sweep_function goes through the session: the skew checks are recorded, and advised on."""
    from quadscope.api import sweep_function

    monkeypatch.setattr(session.Machine, "real",
                        classmethod(lambda cls: _machine({THP: "[always] madvise never\n"})))
    analysis = sweep_function(_count_up, sizes=[1, 2, 4, 8], repeat=1, warmup=0,
                              db=tmp_path / "api.db", meter="time")  # in process: no Valgrind
    assert analysis.sweep.host == dataclasses.replace(HOST, thp="always")
    assert analysis.sweep.git_commit == "abc123"
    assert any("transparent huge pages are 'always'" in note for note in analysis.notes)


def test_the_api_stores_rescued_runs_of_its_database_first(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs a killed quadscope left with its launcher go into the API's database before it sweeps,
    as they do when the CLI opens a store."""
    from quadscope.api import sweep_function
    from quadscope.run import rescue

    opened: list[str] = []
    monkeypatch.setattr(session.Machine, "real", classmethod(lambda cls: _machine({})))
    monkeypatch.setattr(rescue, "ingest", lambda store, directory=None: opened.append(
        str(store.location)) or 0)
    sweep_function(_count_up, sizes=[1, 2, 4, 8], repeat=1, warmup=0, db=tmp_path / "api.db",
                   meter="time")  # in process: no Valgrind
    assert opened == [str(tmp_path / "api.db")]


def test_the_api_names_a_sweep_of_an_oddly_named_function_it_can_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A function renamed with an escape and a newline, or with a qualname past 200 characters,
    was refused as '--name ... must be printable' (a flag the caller never gave): its default
    name is now the label with its controls visible, cut to 200 characters."""
    from quadscope.api import sweep_function

    def odd(n: int) -> int:
        return sum(range(n))

    odd.__qualname__ = "odd\x1b]0;title\x07\n<b>" + "x" * 300
    monkeypatch.setattr(session.Machine, "real", classmethod(lambda cls: _machine({})))
    analysis = sweep_function(odd, sizes=[1, 2, 4, 8], repeat=1, warmup=0,
                              db=tmp_path / "api.db", meter="time")  # in process: no Valgrind
    name = analysis.sweep.name
    assert name.isprintable() and len(name) <= 200 and "\\x1b" in name
