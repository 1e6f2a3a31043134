"""Signals at seeded points of a real sweep, then --resume: no run lost or repeated, no process left."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from faults import TOTAL_RUNS, fault_cycle, group_kill_cycle
from quadscope.errors import ToolMissingError
from quadscope.measure.resident import build_launcher

# (signal, seed, the exit code quadscope gives): SIGKILL leaves no exit code of its own.
CASES = [
    (signal.SIGKILL, 1, -signal.SIGKILL),
    (signal.SIGTERM, 2, 143),
    (signal.SIGHUP, 3, 129),
    (signal.SIGINT, 4, 130),
]


@pytest.fixture(scope="module", autouse=True)
def launcher() -> None:
    try:
        build_launcher()
    except ToolMissingError as e:
        pytest.skip(f"no C launcher to test: {e}")


@pytest.mark.parametrize(("signum", "seed", "code"), CASES,
                         ids=[signal.Signals(s).name for s, _, _ in CASES])
@pytest.mark.slow
def test_signal_then_resume_loses_nothing_and_leaves_nothing(
        signum: int, seed: int, code: int, tmp_path: Path) -> None:
    """Each signal mid-sweep: its exit code, then a resume to all 41 runs: none lost, twice or left."""
    out = fault_cycle(signum, seed, tmp_path)
    assert out.exit_code == code, out.stderr
    assert out.runs_before >= 1
    assert (out.left_after_signal, out.left_after_resume) == (0, 0)
    assert out.resume_exit_code in (0, 8, 9), out.stderr  # gates aside, the resume finished
    assert (out.runs_lost, out.duplicates, out.runs_after) == (0, 0, TOTAL_RUNS), out.stderr


@pytest.mark.slow
def test_stop_sentence_names_the_signal_and_the_resume(tmp_path: Path) -> None:
    """SIGTERM's one sentence names the signal, the sweep and the command that continues it."""
    out = fault_cycle(signal.SIGTERM, 5, tmp_path)
    assert ("quadscope: stopped by SIGTERM; every finished run of sweep 1 is stored; continue "
            "with `quadscope run --resume 1`") in out.stderr


@pytest.mark.slow
def test_ctrl_c_sentence_counts_the_runs_kept_in_words(tmp_path: Path) -> None:
    """Ctrl-C's sentence once said "the 0 finished runs of sweep 1 are stored" (a count
    under Valgrind, before the first run ended); now it counts in words and names the resume."""
    out = fault_cycle(signal.SIGINT, 5, tmp_path)
    said = re.search(r"quadscope: interrupted sweep 1: (its \d+ finished runs? (is|are) stored|"
                     r"no run had finished); continue with `quadscope run --resume 1`", out.stderr)
    assert said is not None and "the 0 finished" not in out.stderr, out.stderr


@pytest.mark.parametrize("seed", [11, 12, 13])
@pytest.mark.slow
def test_sigkill_of_the_whole_process_group_loses_no_finished_run(seed: int,
                                                                  tmp_path: Path) -> None:
    """quadscope, its launcher and the run in flight SIGKILLed at once: every run that had
    finished is stored exactly once after the resume (none run twice), and nothing the runs
    started in the background (a setsid child) outlives the kill."""
    out = group_kill_cycle(seed, tmp_path)
    assert out.exit_code == -signal.SIGKILL, out.stderr
    assert out.resume_exit_code in (0, 8, 9), out.stderr
    assert (out.runs_lost, out.duplicates, out.runs_after) == (0, 0, TOTAL_RUNS), out
    assert (out.left_after_signal, out.left_after_resume) == (0, 0), out
