"""The exact meter: held-still argv, tool output parsed, counts merged into the timed run,
repeats stopped once two counts agree, the time-outgrows-instructions note, and a CI gate
on instructions that gives the same answer every time."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.conftest import measurement

from quadscope.analyse.analysis import count_growth, time_outgrows_instructions
from quadscope.cli import main
from quadscope.measure.clock import FakeClock
from quadscope.measure.exact import (
    NO_REP_STRINGS,
    PAGE_BYTES,
    Cachegrind,
    Callgrind,
    InstructionMeter,
    hold_still,
)
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Fit, Measurement, Run
from quadscope.run.plan import AgreeingPlan, plan_runs
from quadscope.store import SqliteStore


def _env_bytes(argv: Sequence[str]) -> int:
    """Bytes of the program's argv strings plus the padding variable, as the stack holds them."""
    prog = list(argv[argv.index("-R") + 1:])
    pad = next(a for a in argv if a.startswith("QUADSCOPE_PAD="))
    return sum(len(a) + 1 for a in prog) + len(pad) + 1


def test_hold_still_pads_argv_to_the_same_size_modulo_a_page() -> None:
    """ASLR off, a fixed hash seed, and argv + padding the same size mod a page at every n."""
    small, big = hold_still(["./prog", "9"]), hold_still(["./prog", "1000000"])
    assert small[:2] == ["env", "PYTHONHASHSEED=0"] and small[4:6] == ["setarch", "-R"]
    assert small[-2:] == ["./prog", "9"]
    assert _env_bytes(small) % PAGE_BYTES == _env_bytes(big) % PAGE_BYTES


def test_counted_runs_copy_in_loops_and_keep_the_users_tunables() -> None:
    """glibc's rep-string thresholds out of reach (Valgrind counts `rep movsb` per byte, the
    CPU once), after whatever GLIBC_TUNABLES the user set for the program."""
    argv = hold_still(["./prog", "9"], environ={})
    assert argv[2] == f"GLIBC_TUNABLES={NO_REP_STRINGS}"
    assert "x86_rep_movsb_threshold" in NO_REP_STRINGS
    assert "x86_rep_stosb_threshold" in NO_REP_STRINGS
    own = hold_still(["./prog"], environ={"GLIBC_TUNABLES": "glibc.malloc.arena_max=1"})
    assert own[2] == f"GLIBC_TUNABLES=glibc.malloc.arena_max=1:{NO_REP_STRINGS}"


def test_tools_read_their_totals() -> None:
    """Cachegrind's `summary:` and Callgrind's `totals:` lines are the counts; absent is None."""
    assert Cachegrind().read("desc: I1\nsummary: 2690990\n") == 2690990
    assert Callgrind().read("events: Ir\ntotals: 251030\nsummary: 251030\n") == 251030
    assert Cachegrind().read("cut short") is None
    assert "--cache-sim=no" in Cachegrind().prefix("/tmp/o")
    assert "--instr-atstart=no" in Callgrind().prefix("/tmp/o")


def test_cachegrind_counts_every_process_of_the_command(tmp_path: Path) -> None:
    """Every process image the command runs (children, execs) is followed and summed, so a
    shim that execs the real program, or a pipeline, is counted whole; no file at all is None."""
    prefix = Cachegrind().prefix(str(tmp_path))
    assert "--trace-children=yes" in prefix
    assert any(a.endswith("%p.%n") for a in prefix)
    assert Cachegrind().total(str(tmp_path)) is None
    (tmp_path / "cachegrind.10.1").write_text("desc: I1\nsummary: 300\n")
    (tmp_path / "cachegrind.11.1").write_text("summary: 4000\n")
    (tmp_path / "cachegrind.12.1").write_text("cut short")
    assert Cachegrind().total(str(tmp_path)) == 4300


class _Recorder:
    """A tool whose 'output file' the fake runner writes: the count is the argv's last number."""

    def prefix(self, out_dir: str) -> list[str]:
        return ["count-into", out_dir]

    def total(self, out_dir: str) -> int | None:
        texts = [p.read_text() for p in Path(out_dir).iterdir()]
        return sum(int(t) for t in texts) if texts else None


def _writing_runner(clock: FakeClock) -> FakeExecutor:
    def cost(argv: Sequence[str]) -> Measurement:
        out = argv[argv.index("count-into") + 1]
        Path(out, "process").write_text(str(1000 * int(argv[-1])))
        return measurement(99.0)  # the counted run's time is never reported

    return FakeExecutor(cost, clock)


def test_meter_keeps_the_timed_run_and_adds_the_count() -> None:
    """wall_s and rusage come from the timed run; instructions from the counted run, held still."""
    clock = FakeClock()
    timed = FakeExecutor(lambda argv: measurement(0.5), clock)
    runner = _writing_runner(clock)
    m = InstructionMeter(timed, runner, _Recorder()).execute(["./prog", "7"], None)
    assert m.wall_s == 0.5 and m.value("instructions") == 7000
    assert runner.calls[0][:2] == ("env", "PYTHONHASHSEED=0")


def test_a_failed_timed_run_is_not_counted() -> None:
    """A run that failed has no count (None), and the counted run is never started."""
    clock = FakeClock()
    timed = FakeExecutor(lambda argv: measurement(0.5, exit_code=3), clock)
    runner = _writing_runner(clock)
    m = InstructionMeter(timed, runner, _Recorder()).execute(["./prog", "7"], None)
    assert m.value("instructions") is None and runner.calls == ()


def test_a_setup_runs_as_the_timed_runs_do_and_is_never_counted() -> None:
    """`--setup` and `--prepare` are untimed and uncounted: under Valgrind a setup writing a
    16M-line input cost seconds of the counting budget for a count no one reads."""
    from quadscope.measure.exact import CountedAlone
    from quadscope.measure.launcher import Job
    clock = FakeClock()
    timed = FakeExecutor(lambda argv: measurement(0.5), clock)
    runner = _writing_runner(clock)
    meter = InstructionMeter(timed, runner, _Recorder())
    job = Job(("./prog", "7"), None, setup=("seq", "16000000"), prepare=("touch", "x"))
    (m,) = meter.execute_many([job])
    assert m.value("instructions") == 7000
    assert [c[0] for c in timed.calls] == ["seq", "touch", "./prog"]
    assert len(runner.calls) == 1 and runner.calls[0][-2:] == ("./prog", "7")
    (alone,) = CountedAlone(meter).execute_many([job])
    assert alone.value("instructions") == 7000 and len(runner.calls) == 2
    assert [c[0] for c in timed.calls][3:] == ["seq", "touch"]


def _run(n: int, repeat: int, count: int | None, warmup: bool = False) -> Run:
    m = measurement(0.1)
    m = Measurement({**m.values, "instructions": count}, exit_code=0)
    return Run(sweep_id=1, seq=0, variant="A", size_n=n, repeat=repeat, warmup=warmup,
               started_at=0.0, measurement=m)


def test_agreeing_plan_stops_repeating_sizes_whose_two_counts_agree() -> None:
    """First warm-ups and two rounds; then third repeats only where the two counts differ."""
    plan = AgreeingPlan(tuple(plan_runs([10, 20, 40], repeat=3, warmup=1, seed=0)), None,
                        metric="instructions")
    first = plan.next_batch((), None)
    assert first is not None
    assert {(s.run.size_n, s.run.repeat, s.run.warmup) for s in first} == {
        (10, 0, True), *((n, r, False) for n in (10, 20, 40) for r in (0, 1))}
    history = (_run(10, 0, 5, warmup=True), _run(10, 0, 100), _run(10, 1, 100),
               _run(20, 0, 200), _run(20, 1, 260), _run(40, 0, 400), _run(40, 1, None))
    second = plan.next_batch(history, None)
    assert second is not None
    assert sorted((s.run.size_n, s.run.repeat) for s in second) == [(20, 2), (40, 2)]
    assert plan.next_batch((*history, _run(20, 2, 1), _run(40, 2, 1)), None) is None


def _fit(cls: str, at_least: str = "", at_most: str = "") -> Fit:
    return Fit(metric="m", cls=cls, exponent=None, exponent_ci=None, coefficients={},
               r2=1.0, candidates=(), n_points=8, at_least=at_least, at_most=at_most)


def test_note_when_time_surely_outgrows_instructions() -> None:
    """The note appears only when wall time's slowest supported class beats the count's
    fastest one."""
    assert "wall_s grows at least as n^2 but instructions at most as n" in (
        time_outgrows_instructions({"wall_s": _fit("n^2", "n^2", "n^2"),
                                    "instructions": _fit("n", "n", "n")}))
    assert time_outgrows_instructions({"wall_s": _fit("inconclusive", "n", "n^2"),
                                       "instructions": _fit("n", "n", "n")}) == ""
    assert time_outgrows_instructions({"wall_s": _fit("n", "n", "n"),
                                       "instructions": _fit("n", "n", "n")}) == ""
    assert time_outgrows_instructions({"wall_s": _fit("n^2", "n^2", "n^2")}) == ""


def test_note_when_time_grows_and_counts_barely_move() -> None:
    """Counts within 1% over the sweep (too little to class) beside growing time: the note
    says so; counts that grew more, or time that may be flat, say nothing."""
    flat = [_run(10, 0, 126614), _run(10, 1, 126614), _run(50, 0, 126636), _run(50, 1, 126636)]
    growth = count_growth(flat)
    assert growth == 126636 / 126614
    fits = {"wall_s": _fit("n", "n", "n log n"), "instructions": _fit("inconclusive", "1", "n^3")}
    assert "instructions changed by 0.02% over the sizes" in time_outgrows_instructions(fits, growth)
    assert time_outgrows_instructions(fits, 1.5) == ""
    assert time_outgrows_instructions({**fits, "wall_s": _fit("inconclusive", "1", "n")},
                                      growth) == ""
    assert count_growth([_run(10, 0, None)]) is None


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_fail_above_on_instructions_gives_the_same_answer_ten_times(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Ten sweeps of merge sort under --meter instructions: the gate instructions=n fails
    every time with the same sentence, and every sweep counts the same instructions."""
    from quadscope.workloads import build

    prog = str(build("sort"))
    db = str(tmp_path / "r.db")
    answers = set()
    for _ in range(10):
        code = main(["run", "--db", db, "--no-perf", "--meter", "instructions", "--warmup", "0",
                     "--sizes", "500,1000,2000,4000", "--fail-above", "instructions=n",
                     "--", prog, "{n}"])
        err = capsys.readouterr().err
        answers.add((code, tuple(ln for ln in err.splitlines() if "instructions" in ln)))
    assert len(answers) == 1 and next(iter(answers))[0] == 8
    with SqliteStore(Path(db)) as store:
        counts = {tuple(sorted((r.size_n, r.value("instructions")) for r in store.runs(s.id)))
                  for s, _ in store.list_sweeps()}
    assert len(counts) == 1


def test_headline_says_when_time_outgrows_the_instructions() -> None:
    """An instruction-meter sweep whose wall time grows as n while its count stays put:
    the headline gives both answers, the work first (counted exactly), then the time, and
    one sentence on the gap: time outgrows the count, the kernel and caches ruled out."""
    from quadscope.analyse.analysis import OUTGROWS_HEADLINE, analyse
    from quadscope.model import Sweep

    runs = []
    for i, n in enumerate([1000, 2000, 4000, 8000, 16000, 32000]):
        for r in range(3):
            wall = 1e-3 + n * 1e-6 * (1 + 0.01 * ((r * 7 + i) % 3 - 1))
            m = Measurement({**measurement(wall).values, "instructions": 126614}, exit_code=0)
            runs.append(Run(sweep_id=1, seq=len(runs), variant="A", size_n=n, repeat=r,
                            warmup=False, started_at=0.0, measurement=m))
    timed = Sweep(id=1, name="zero", mode="sizes", command=("z", "{n}"))
    counted = Sweep(id=1, name="zero", mode="sizes", command=("z", "{n}"), meter="instructions")
    verdict = analyse(counted, runs).verdict
    assert verdict.startswith("constant: the work does not grow with n (instructions, exact); "
                              "wall time grows as n (k = 1.00")
    assert "; wall time grows faster than the work (k 1.00 vs 0.00): each instruction cost " in verdict
    assert verdict.endswith("neither the kernel (system time 0% of the CPU time) nor the caches "
                            "explain it")
    assert OUTGROWS_HEADLINE not in verdict
    assert "than the work" not in analyse(timed, runs).verdict


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_a_pipeline_is_counted_whole_not_only_its_shell() -> None:
    """`sh -c 'seq n | sort -r'` counts sort's work too: the shell alone is flat in n."""
    from quadscope.measure.launcher import ProcessExecutor

    runner = ProcessExecutor()
    meter = InstructionMeter(runner, runner, Cachegrind(shutil.which("valgrind") or "valgrind"))
    counts = [meter.count(["/bin/sh", "-c", 'seq "$0" | sort -r >/dev/null', str(n)], 60.0)
              for n in (2000, 16000)]
    assert counts[0] is not None and counts[1] is not None
    assert counts[1] > 4 * counts[0]  # about 8× the work (sort's n log n), not the shell's constant
