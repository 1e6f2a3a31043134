"""Counting under QEMU: the plugin's file read, a part never reported as the whole (Valgrind
takes over, and stays), the sweep's counters saying which tool counted, and real counts that
repeat exactly, see a `rep movsb` byte by byte and sum a pipeline through the fallback."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.conftest import measurement

from quadscope.measure import qemu
from quadscope.measure.clock import FakeClock
from quadscope.measure.exact import CountedAlone, InstructionMeter, counted_by
from quadscope.measure.launcher import FakeExecutor
from quadscope.measure.qemu import PartCounted, Qemu, read_count
from quadscope.model import Measurement


def test_the_plugins_line_is_the_count(tmp_path: Path) -> None:
    """One process that started nothing: its count; no file, or a torn line: None."""
    path = tmp_path / "c"
    assert read_count(str(path)) is None
    path.write_text("4242 105416 0\n")
    assert read_count(str(path)) == 105416
    path.write_text("4242 10541")
    assert read_count(str(path)) is None


@pytest.mark.parametrize("text", ["4242 197329 1\n", "4242 100 0\n4243 120 0\n"])
def test_a_process_or_thread_started_is_a_part_never_a_count(tmp_path: Path, text: str) -> None:
    """A clone, fork or exec seen (STARTED 1), or a second process's line: the count is not
    the whole command's."""
    path = tmp_path / "c"
    path.write_text(text)
    with pytest.raises(PartCounted):
        read_count(str(path))


def test_the_prefix_names_the_plugin_and_its_file_and_refuses_a_comma() -> None:
    tool = Qemu("/usr/bin/qemu-x86_64", "/cache/plugin")
    assert tool.prefix("/tmp/o") == ["/usr/bin/qemu-x86_64", "-plugin",
                                     "/cache/plugin,out=/tmp/o/qemu.count"]
    with pytest.raises(PartCounted):
        tool.prefix("/tmp/a,b")


def test_opting_out_finds_no_qemu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(qemu.OPT_OUT, "1")
    assert qemu.find() is None


class _Tool:
    """A counting tool whose 'file' the fake runner writes; `part_at` sizes it sees only part of."""

    def __init__(self, name: str, part_at: Sequence[int] = ()) -> None:
        self.name = name
        self.part_at = set(part_at)

    def prefix(self, out_dir: str) -> list[str]:
        return [f"count-{self.name}", out_dir]

    def total(self, out_dir: str) -> int | None:
        n, by = (Path(out_dir) / "n").read_text().split()
        if by == self.name and int(n) in self.part_at:
            raise PartCounted("started a child")
        return (1000 if self.name == "qemu" else 1010) * int(n)


def _runner(clock: FakeClock, exit_codes: dict[int, int] | None = None) -> FakeExecutor:
    def run(argv: Sequence[str]) -> Measurement:
        tool = next(a for a in argv if a.startswith("count-"))
        out = argv[argv.index(tool) + 1]
        (Path(out) / "n").write_text(f"{argv[-1]} {tool[len('count-'):]}")
        code = (exit_codes or {}).get(int(argv[-1]), 0) if tool == "count-qemu" else 0
        return measurement(9.0, exit_code=code)

    return FakeExecutor(run, clock)


def _meter(part_at: Sequence[int] = (), exit_codes: dict[int, int] | None = None
           ) -> tuple[InstructionMeter, FakeExecutor]:
    clock = FakeClock()
    runner = _runner(clock, exit_codes)
    timed = FakeExecutor(lambda argv: measurement(0.5), clock)
    return InstructionMeter(timed, runner, _Tool("qemu", part_at),
                            fallback=_Tool("valgrind")), runner


def _tools(runner: FakeExecutor) -> list[str]:
    return [next(a for a in call if a.startswith("count-")) for call in runner.calls]


def test_counts_stay_with_qemu_while_it_sees_the_whole_command() -> None:
    meter, runner = _meter()
    assert [meter.count(["./prog", str(n)], None) for n in (1, 2)] == [1000, 2000]
    assert _tools(runner) == ["count-qemu", "count-qemu"]
    assert counted_by(meter, "qemu") == "qemu"


def test_a_part_is_recounted_under_valgrind_which_counts_every_run_after() -> None:
    """The first count saw a child started: Valgrind counts it and every later run (one
    tool's counts in one sweep), and the sweep says Valgrind counted them."""
    meter, runner = _meter(part_at=(1, 2, 3))
    assert [meter.count(["./prog", str(n)], None) for n in (1, 2, 3)] == [1010, 2020, 3030]
    assert _tools(runner) == ["count-qemu", "count-valgrind", "count-valgrind", "count-valgrind"]
    assert counted_by(meter, "qemu") == "valgrind"


def test_a_switch_after_some_counts_names_both_tools() -> None:
    meter, _ = _meter(part_at=(2,))
    assert [meter.count(["./prog", str(n)], None) for n in (1, 2)] == [1000, 2020]
    assert counted_by(meter, "qemu") == "qemu, then valgrind"
    assert counted_by(CountedAlone(meter), "qemu") == "qemu, then valgrind"


def test_a_run_killed_by_a_signal_under_qemu_is_recounted_but_a_failing_program_is_not() -> None:
    """SIGILL under the emulator (an instruction it lacks) is the tool's failure; an exit
    status of the program's own is the program's, and Valgrind would see the same."""
    meter, runner = _meter(exit_codes={1: -4})
    assert meter.count(["./prog", "1"], None) == 1010
    assert _tools(runner) == ["count-qemu", "count-valgrind"]
    meter, runner = _meter(exit_codes={1: 3})
    assert meter.count(["./prog", "1"], None) is None
    assert _tools(runner) == ["count-qemu"] and counted_by(meter, "qemu") == "qemu"


def test_without_a_fallback_a_part_is_no_count() -> None:
    clock = FakeClock()
    runner = _runner(clock)
    meter = InstructionMeter(runner, runner, _Tool("qemu", part_at=(1,)))
    assert meter.count(["./prog", "1"], None) is None
    alone = meter.count_alone(["./prog", "1"], None)
    assert not alone.ok and alone.value("instructions") is None


def test_counts_under_qemu_are_priced_as_qemus_and_valgrinds_as_the_meters() -> None:
    """A plan prices a count by the tool counting now: QEMU's start, not Valgrind's 0.3 s
    (which capped an exponential's next count at 16 × 0.3 s); Valgrind's (the fallback,
    or no QEMU) is the meter's own `Cost`."""
    from quadscope.measure.exact import Cachegrind
    from quadscope.meters.base import Cost

    clock = FakeClock()
    runner = _runner(clock)
    cost = Cost(slowdown=30.0, startup_s=0.3)
    under_qemu = InstructionMeter(runner, runner, Qemu("qemu-x86_64", "/p"))
    assert cost.under(under_qemu) == Cost(slowdown=qemu.SLOWDOWN, startup_s=qemu.STARTUP_S)
    assert cost.under(CountedAlone(under_qemu)).startup_s == qemu.STARTUP_S
    assert cost.under(InstructionMeter(runner, runner, Cachegrind("valgrind"))) is cost
    assert cost.under(runner) is cost
    meter = InstructionMeter(runner, runner, _PartQemu("qemu-x86_64", "/p"),
                             fallback=_Tool("valgrind"))
    assert cost.under(meter) != cost
    assert meter.count(["./prog", "1"], None) == 1010  # Valgrind took over: its price
    assert cost.under(meter) is cost


class _PartQemu(Qemu):
    """QEMU that sees only part of every command."""

    def prefix(self, out_dir: str) -> list[str]:
        raise PartCounted("a child")


def test_an_executor_that_counts_nothing_keeps_its_label() -> None:
    assert counted_by(FakeExecutor(lambda argv: measurement(0.1), FakeClock()), "perf") == "perf"


needs_qemu = pytest.mark.skipif(
    qemu.executable() is None or shutil.which("cc") is None,
    reason="needs qemu-user and a C compiler (scripts/setup installs both)")

_REP = r"""
#include <stdlib.h>
static char a[1 << 20], b[1 << 20];
int main(int argc, char **argv) {
    long n = atol(argv[1]); char *d = a, *s = b;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    return argc > 2;
}
"""


@pytest.mark.integration
@needs_qemu
def test_qemu_counts_repeat_exactly_and_see_every_byte_a_rep_movsb_copies() -> None:
    """The same count twice, held still; 99,000 more bytes copied by one `rep movsb` count
    about 99,000 more instructions (the CPU's counter would add one)."""
    from quadscope.measure.cbuild import compile_c
    from quadscope.measure.launcher import ProcessExecutor

    tool = qemu.find()
    assert tool is not None, "qemu-user is installed but counts nothing here"
    prog = str(compile_c(_REP, name="qs-test-rep", flags=("-O2",)))
    runner = ProcessExecutor()
    meter = InstructionMeter(runner, runner, tool)
    small, again, big = (meter.count([prog, str(n)], 60.0) for n in (1000, 1000, 100000))
    assert small is not None and big is not None
    assert small == again
    assert 0.95 * 99000 < big - small < 1.05 * 99000


@pytest.mark.integration
@needs_qemu
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_a_pipeline_under_the_meter_is_counted_whole_by_valgrind() -> None:
    """`sh -c 'seq n | sort -r'`: QEMU would count only the shell, so the meter counts it
    under Valgrind, whole (sort's work grows with n), and says so."""
    from quadscope import meters

    command = ("/bin/sh", "-c", 'seq "$0" | sort -r >/dev/null')
    measuring = meters.choose_measuring(command, meter="instructions", no_perf=True)
    assert measuring.counters == "qemu"
    meter = measuring.executor
    assert isinstance(meter, InstructionMeter)
    counts = [meter.count([*command, str(n)], 60.0) for n in (2000, 16000)]
    assert counts[0] is not None and counts[1] is not None
    assert counts[1] > 4 * counts[0]
    assert measuring.counted() == "valgrind"


def test_a_part_seen_in_a_batch_counted_at_once_switches_once_and_names_both() -> None:
    """Three jobs counted at once on two runners, QEMU seeing only part of the second: it is
    recounted under Valgrind, the third too (whichever thread ends first), the first's QEMU
    count is kept, and the sweep says both tools counted."""
    from quadscope.measure.launcher import Job

    clock = FakeClock()
    timed = FakeExecutor(lambda argv: measurement(0.5), clock)
    meter = InstructionMeter(timed, _runner(clock), _Tool("qemu", (2, 3)),
                             fallback=_Tool("valgrind"), spares=[_runner(FakeClock())])
    out = list(meter.execute_many([Job(("./prog", str(n)), 60.0) for n in (1, 2, 3)]))
    assert [m.value("instructions") for m in out] == [1000, 2020, 3030]
    assert counted_by(meter, "qemu") == "qemu, then valgrind"


@pytest.mark.integration
@needs_qemu
def test_counts_made_at_once_are_the_counts_made_one_by_one() -> None:
    """A real program counted two at a time on two runners gives every count it gives one
    at a time: an exact count does not depend on what else runs."""
    from quadscope.measure.cbuild import compile_c
    from quadscope.measure.launcher import Job, ProcessExecutor

    tool = qemu.find()
    assert tool is not None, "qemu-user is installed but counts nothing here"
    prog = str(compile_c(_REP, name="qs-test-rep", flags=("-O2",)))
    runner = ProcessExecutor()
    jobs = [Job((prog, str(n)), 60.0) for n in (1000, 2000, 4000, 8000)]
    alone = [m.value("instructions") for m in
             InstructionMeter(runner, runner, tool).execute_many(jobs)]
    meter = InstructionMeter(runner, runner, tool, spares=[ProcessExecutor()])
    together = [m.value("instructions") for m in meter.execute_many(jobs)]
    assert None not in alone and together == alone
