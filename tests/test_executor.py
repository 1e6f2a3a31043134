"""Tests for quadscope.measure.launcher: fake logic exactly, a few real processes."""

from __future__ import annotations

import os
import re
import signal
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from quadscope.errors import ProgramError
from quadscope.measure.clock import FakeClock
from quadscope.measure.counters import NoCounters
from quadscope.measure.detect import detect_counters
from quadscope.measure.launcher import (
    FakeExecutor,
    Job,
    ProcessExecutor,
    resolve_program,
    rusage_values,
)
from quadscope.model import Measurement

MiB = 1024 * 1024


def test_rusage_values_map_struct_fields_through_the_registry() -> None:
    """Each rusage metric reads its struct rusage field; ru_maxrss KiB become bytes."""
    ru = {"ru_utime": 1.5, "ru_stime": 0.25, "ru_maxrss": 3.0, "ru_minflt": 7.0,
          "ru_majflt": 1.0, "ru_nvcsw": 2.0, "ru_nivcsw": 4.0}
    got = rusage_values(ru.__getitem__)
    assert got == {"user_s": 1.5, "sys_s": 0.25, "max_rss_bytes": 3072, "minor_faults": 7,
                   "major_faults": 1, "voluntary_ctx_switches": 2, "involuntary_ctx_switches": 4}
    assert [type(v) for v in got.values()] == [float, float, int, int, int, int, int]


def _m(wall_s: float, exit_code: int = 0) -> Measurement:
    return Measurement(
        wall_s=wall_s,
        user_s=wall_s / 2,
        sys_s=0.0,
        max_rss_bytes=1000,
        minor_faults=10,
        major_faults=0,
        voluntary_ctx_switches=1,
        involuntary_ctx_switches=0,
        exit_code=exit_code,
    )


def _cost(argv: Sequence[str]) -> Measurement:
    return _m(float(argv[-1]))


# --- FakeExecutor -----------------------------------------------------------


def test_fake_executor_returns_cost_and_advances_clock_by_wall() -> None:
    """FakeExecutor returns cost(argv) unchanged and moves the clock by its wall_s."""
    clock = FakeClock(start=10.0)
    ex = FakeExecutor(_cost, clock)
    assert ex.execute(["prog", "1.5"], None) == _m(1.5)
    assert ex.execute(["prog", "0.25"], 5.0) == _m(0.25)
    assert clock.monotonic() == 11.75


def test_fake_executor_records_calls_in_order() -> None:
    """Every argv given to FakeExecutor is recorded, as tuples, in call order."""
    ex = FakeExecutor(_cost, FakeClock())
    ex.execute(["a", "1"], None)
    ex.execute(("b", "2"), None)
    assert ex.calls == (("a", "1"), ("b", "2"))


def test_fake_executors_do_not_share_calls() -> None:
    """Two FakeExecutors keep separate call records (no class-level state)."""
    one, two = FakeExecutor(_cost, FakeClock()), FakeExecutor(_cost, FakeClock())
    one.execute(["a", "1"], None)
    assert (one.calls, two.calls) == ((("a", "1"),), ())


def test_fake_executor_timeout_advances_by_timeout_only() -> None:
    """A cost longer than timeout_s yields a timed-out, SIGKILLed run lasting timeout_s."""
    clock = FakeClock()
    m = FakeExecutor(_cost, clock).execute(["prog", "7.0"], 2.0)
    assert m.timed_out
    assert m.wall_s == 2.0
    assert m.exit_code == -signal.SIGKILL
    assert clock.monotonic() == 2.0


def test_fake_executor_wall_equal_to_timeout_is_not_a_timeout() -> None:
    """A run that takes exactly timeout_s has finished in time."""
    clock = FakeClock()
    m = FakeExecutor(_cost, clock).execute(["prog", "2.0"], 2.0)
    assert (m.timed_out, m.wall_s, clock.monotonic()) == (False, 2.0, 2.0)


def test_execute_many_runs_jobs_in_order_with_their_timeouts() -> None:
    """The serial execute_many yields one measurement per job, in order, each with its timeout."""
    clock = FakeClock()
    ex = FakeExecutor(_cost, clock)
    jobs = [Job(("a", "1.0"), None), Job(("b", "3.0"), 2.0), Job(("c", "0.5"), 1.0)]
    got = list(ex.execute_many(jobs))
    assert [m.wall_s for m in got] == [1.0, 2.0, 0.5]
    assert [m.timed_out for m in got] == [False, True, False]
    assert ex.calls == (("a", "1.0"), ("b", "3.0"), ("c", "0.5"))
    assert clock.monotonic() == 3.5


def test_execute_many_starts_a_run_only_when_asked_for_its_measurement() -> None:
    """Nothing runs until the first measurement is asked for; stopping early starts no more runs."""
    ex = FakeExecutor(_cost, FakeClock())
    measurements = ex.execute_many([Job(("a", "1"), None), Job(("b", "2"), None)])
    assert ex.calls == ()
    assert next(measurements) == _m(1.0)
    assert ex.calls == (("a", "1"),)


# --- resolve_program ----------------------------------------------------------


def test_resolve_program_missing_on_path() -> None:
    """A bare name not on PATH is one sentence naming it."""
    with pytest.raises(ProgramError) as e:
        resolve_program("quadscope-no-such-program")
    assert str(e.value) == "program 'quadscope-no-such-program' not found on PATH"


def test_resolve_program_not_executable(tmp_path: Path) -> None:
    """A path to a file without the execute bit is refused as not executable."""
    f = tmp_path / "x"
    f.write_text("#!/bin/sh\n")
    f.chmod(0o644)
    with pytest.raises(ProgramError) as e:
        resolve_program(str(f))
    assert str(e.value) == f"'{f}' is not executable"


def test_resolve_program_missing_path() -> None:
    """A path that does not exist says so."""
    with pytest.raises(ProgramError) as e:
        resolve_program("./quadscope-no-such-file")
    assert str(e.value) == "'./quadscope-no-such-file' does not exist"


def test_resolve_program_finds_on_path_and_keeps_paths(tmp_path: Path) -> None:
    """A bare name resolves like `which`; an executable path is returned as given."""
    f = tmp_path / "prog"
    f.write_text("#!/bin/sh\n")
    f.chmod(f.stat().st_mode | stat.S_IXUSR)
    assert resolve_program(str(f)) == str(f)
    assert os.path.basename(resolve_program("sh")) == "sh"


# --- real processes ---------------------------------------------------------

PY = sys.executable


@pytest.fixture(scope="module", params=["launcher", "posix_spawn"])
def executor(request: pytest.FixtureRequest) -> ProcessExecutor:
    if request.param == "launcher":
        return ProcessExecutor()
    return ProcessExecutor(launcher=None)


@pytest.fixture(scope="module")
def perf_executor() -> ProcessExecutor:
    backend, note = detect_counters()
    if isinstance(backend, NoCounters):
        pytest.skip(f"perf is not usable here: {note}")
    return ProcessExecutor(counters=backend)


def _killed(pid: int) -> bool:
    """Gone, a zombie, or with SIGKILL pending (it cannot run another instruction)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/status") as f:
            pending = [int(ln.split()[1], 16) for ln in f if ln.startswith(("SigPnd", "ShdPnd"))]
    except FileNotFoundError:
        return True
    sigkill_bit = 1 << (signal.SIGKILL - 1)
    return state in ("Z", "X") or any(p & sigkill_bit for p in pending)


@pytest.mark.integration
def test_exit_code_is_the_childs_status(executor: ProcessExecutor) -> None:
    """A child exiting 3 gives exit_code 3 and not timed_out."""
    m = executor.execute(["sh", "-c", "exit 3"], 10.0)
    assert (m.exit_code, m.timed_out, m.ok) == (3, False, False)


@pytest.mark.integration
def test_killed_by_signal_is_negative(executor: ProcessExecutor) -> None:
    """A child killed by SIGTERM gives exit_code -15."""
    m = executor.execute(["sh", "-c", "kill -TERM $$"], 10.0)
    assert m.exit_code == -signal.SIGTERM


@pytest.mark.integration
def test_timeout_kills_the_whole_group(executor: ProcessExecutor) -> None:
    """On timeout the child and its sleeping grandchild are both killed and the run is marked."""
    m = executor.execute(["sh", "-c", "sleep 30 & echo $! >&2; wait"], 0.5)
    grandchild = int(re.findall(r"\d+", m.stderr_tail)[0])
    assert m.timed_out
    assert m.exit_code == -signal.SIGKILL
    if executor.launcher is not None:
        # The launcher is the group's subreaper and reaps every member before it reports.
        assert not os.path.exists(f"/proc/{grandchild}")
    else:
        assert _killed(grandchild)


@pytest.mark.integration
def test_stderr_tail_keeps_the_last_bytes() -> None:
    """Only the last stderr_tail_bytes of stderr are kept; stdout is discarded."""
    code = "import sys; sys.stdout.write('o' * 100); sys.stderr.write('a' * 5000 + 'THE-END')"
    for ex in (
        ProcessExecutor(stderr_tail_bytes=10),
        ProcessExecutor(stderr_tail_bytes=10, launcher=None),
    ):
        assert ex.execute([PY, "-c", code], 10.0).stderr_tail == "aaaTHE-END"


@pytest.mark.integration
def test_missing_program_raises(executor: ProcessExecutor) -> None:
    """A program that is not on PATH raises ProgramError instead of running."""
    with pytest.raises(ProgramError, match="not found on PATH"):
        executor.execute(["quadscope-no-such-program"], 10.0)


@pytest.mark.integration
def test_memory_toucher_shows_rss_and_faults(executor: ProcessExecutor) -> None:
    """A child writing 64 MiB reports max_rss >= 64 MiB and >= 90% of 64·256 minor faults."""
    m = executor.execute([PY, "-c", f"b = b'x' * {64 * MiB}"], 30.0)
    assert m.exit_code == 0
    assert m.max_rss_bytes >= 64 * MiB
    assert m.minor_faults >= 64 * 256 * 0.9


@pytest.mark.integration
def test_launcher_rss_is_the_childs_own() -> None:
    """Through the launcher a tiny child's max_rss is its own, not quadscope's peak RSS."""
    ballast = b"q" * (96 * MiB)  # raises this process's peak well above the bound below
    m = ProcessExecutor().execute(["/bin/true"], 10.0)
    assert len(ballast) == 96 * MiB
    assert m.max_rss_bytes < 32 * MiB


@pytest.mark.integration
def test_perf_page_faults_match_rusage_for_grandchild(perf_executor: ProcessExecutor) -> None:
    """perf's page-faults for a grandchild (under sh -c) touching 64 MiB ≈ rusage minor faults."""
    m = perf_executor.execute(["sh", "-c", f"{PY} -c \"b = b'x' * {64 * MiB}\"; true"], 30.0)
    assert m.exit_code == 0
    assert m.page_faults is not None
    assert m.page_faults >= 64 * 256 * 0.9
    assert abs(m.page_faults - m.minor_faults) <= 0.05 * m.minor_faults


@pytest.mark.integration
def test_perf_timeout_kills_group_and_still_counts(perf_executor: ProcessExecutor) -> None:
    """With perf attached, a timeout still kills the whole group and counts are still read."""
    m = perf_executor.execute(["sh", "-c", "sleep 30 & echo $! >&2; wait"], 0.5)
    grandchild = int(re.findall(r"\d+", m.stderr_tail)[0])
    assert m.timed_out
    assert not os.path.exists(f"/proc/{grandchild}")
    assert m.context_switches is not None and m.context_switches > 0
