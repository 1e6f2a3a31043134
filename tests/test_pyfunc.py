"""Sweeping a Python function: calibrated in-process batches or forked calls, failures and
timeouts kept, and its instructions counted alone under Valgrind."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from quadscope.api import sweep_function
from quadscope.errors import ProgramError
from quadscope.measure.pyfunc import (
    FunctionExecutor,
    _call_rusage,
    next_loops,
    resolve_function,
    resolve_target,
)


def touch_pages(n: int) -> int:
    buf = bytearray(n * 4096)  # calloc'd: each page faults on first write below
    for i in range(0, len(buf), 4096):
        buf[i] = 1
    return len(buf)


def fails(n: int) -> None:
    raise ValueError(f"no good at {n}")


def sleeps(n: int) -> None:
    time.sleep(30)


@pytest.mark.slow
def test_a_call_is_measured_in_a_child() -> None:
    """One forked call: exit 0, a positive wall time, faults counted for the call's own pages."""
    m = FunctionExecutor({"t": touch_pages}, fork=True).execute(["t", "4000"], timeout_s=30)
    assert m.exit_code == 0 and not m.timed_out
    assert m.wall_s > 0
    assert m.minor_faults >= 4000 * 0.9


@pytest.mark.parametrize("fork", [False, True])
@pytest.mark.slow
def test_an_exception_is_exit_1_with_its_traceback(fork: bool) -> None:
    """A raising function is a failed run whose stderr tail holds the exception."""
    m = FunctionExecutor({"f": fails}, fork=fork).execute(["f", "7"], timeout_s=30)
    assert m.exit_code == 1
    assert "ValueError: no good at 7" in m.stderr_tail
    assert m.wall_s > 0 and m.user_s is None and m.max_rss_bytes is None  # unmeasured, not 0


@pytest.mark.slow
def test_timeout_kills_the_forked_call() -> None:
    """A forked call that outlives --timeout is killed and marked timed out."""
    m = FunctionExecutor({"s": sleeps}, fork=True).execute(["s", "1"], timeout_s=0.3)
    assert m.timed_out
    assert m.exit_code == -9


def test_timeout_interrupts_an_in_process_batch() -> None:
    """An in-process call that outlives --timeout is interrupted by SIGALRM, marked timed out."""
    m = FunctionExecutor({"s": sleeps}).execute(["s", "1"], timeout_s=0.3)
    assert m.timed_out and m.exit_code == -signal.SIGALRM
    assert m.wall_s == 0.3


def test_in_process_batches_grow_until_one_lasts_the_minimum() -> None:
    """A fast call is timed over a batch of many loops, the per-call time reported; the loop
    count is kept for the size's later runs; setup(n) builds the argument once per run."""
    calls: list[object] = []
    built: list[int] = []

    def setup(n: int) -> list[int]:
        built.append(n)
        return [0] * n

    ex = FunctionExecutor({"f": calls.append}, setup=setup, min_batch_s=0.002)
    m = ex.execute(["f", "5"], timeout_s=None)
    assert m.ok and built == [5] and len(calls) > 100 and calls[0] == [0] * 5
    loops = ex._loops[("f", 5)]  # the next run of n = 5 starts from it
    assert loops > 100
    # The time reported is per call: times the loop count it is the batch, which lasted the minimum.
    assert m.wall_s > 0 and m.wall_s * loops >= 0.002


def test_next_loops_aims_at_one_and_a_half_minimum_batches() -> None:
    """The loop count jumps to where a batch lasts 1.5 × the minimum, between 2× and 100×."""
    assert next_loops(1, 1e-3, 0.01) == 15
    assert next_loops(10, 1e-3, 0.01) == 20
    assert next_loops(1, 1e-9, 0.01) == 100


def test_setup_is_named_after_the_function_in_the_target() -> None:
    """python:MODULE:FUNC:SETUP resolves both from the module."""
    func, setup = resolve_target("python:os.path:join:basename")
    assert func is os.path.join and setup is os.path.basename
    assert resolve_target("python:os.path:join")[1] is None


def test_call_rusage_is_deltas_but_peak_rss_as_read() -> None:
    """Running totals are differences of the readings; peak RSS is the later reading in bytes."""
    import resource

    r0 = resource.struct_rusage((1.0, 0.5, 100) + (0,) * 3 + (10, 1) + (0,) * 6 + (3, 4))
    r1 = resource.struct_rusage((1.25, 0.75, 200) + (0,) * 3 + (15, 1) + (0,) * 6 + (5, 9))
    assert _call_rusage(r0, r1) == {
        "user_s": 0.25, "sys_s": 0.25, "max_rss_bytes": 200 * 1024, "minor_faults": 5,
        "major_faults": 0, "voluntary_ctx_switches": 2, "involuntary_ctx_switches": 5,
    }


def test_resolve_function_errors_are_one_sentence() -> None:
    """Bad MODULE:FUNC targets raise ProgramError naming what is missing."""
    with pytest.raises(ProgramError, match="has no function 'nope'"):
        resolve_function("python:os.path:nope")
    with pytest.raises(ProgramError, match="cannot import 'no_such_module_xyz'"):
        resolve_function("python:no_such_module_xyz:f")
    with pytest.raises(ProgramError, match="is not MODULE:FUNC"):
        resolve_function("python:justmodule")
    assert resolve_function("python:os.path:join") is __import__("os").path.join


@pytest.mark.integration
def test_sweep_function_fits_page_faults_as_linear(tmp_path: Path) -> None:
    """The Python API sweeps forked calls and stores them: touching n pages is n minor faults."""
    analysis = sweep_function(touch_pages, sizes=[1000, 4000, 16000, 64000], repeat=2,
                              db=tmp_path / "r.db", fork=True, meter="time")  # the 8 runs alone
    assert analysis.fits["A"]["minor_faults"].cls == "n"
    assert analysis.sweep.command[0].endswith(":touch_pages")
    assert len(analysis.measured()) == 8


_SMALL_MODULE = """
def make_list(n):
    return list(range(n))


def scan(xs):
    return xs.index(xs[-1])
"""


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_instruction_meter_counts_the_call_alone(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the exact meter a function's count is the call's alone: list.index over n grows
    as n, two runs per size agree, so no third run is made."""
    # A module of its own: the child Python imports it under Valgrind, and this test
    # module would drag pytest in.
    (tmp_path / "qs_small_module.py").write_text(_SMALL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import qs_small_module as mod

    analysis = sweep_function(mod.scan, setup=mod.make_list, sizes=[2000, 8000, 32000],
                              repeat=3, warmup=0, meter="instructions", db=tmp_path / "r.db")
    runs = analysis.measured()
    assert analysis.sweep.meter == "instructions" and analysis.sweep.counters == "valgrind"
    assert len(runs) == 6
    counts = {r.size_n: r.value("instructions") for r in runs}
    assert counts[32000] > 10 * counts[2000]  # startup and setup are not counted
    assert analysis.fits["A"]["instructions"].cls == "n"
