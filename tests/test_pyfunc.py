"""Sweeping a Python function: each call forked, timed alone, failures and timeouts kept."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from quadscope.api import sweep_function
from quadscope.errors import ProgramError
from quadscope.measure.pyfunc import FunctionExecutor, _call_rusage, resolve_function


def touch_pages(n: int) -> int:
    buf = bytearray(n * 4096)  # calloc'd: each page faults on first write below
    for i in range(0, len(buf), 4096):
        buf[i] = 1
    return len(buf)


def fails(n: int) -> None:
    raise ValueError(f"no good at {n}")


def sleeps(n: int) -> None:
    time.sleep(30)


def test_a_call_is_measured_in_a_child() -> None:
    """One call: exit 0, a positive wall time, faults counted for the call's own pages."""
    m = FunctionExecutor({"t": touch_pages}).execute(["t", "4000"], timeout_s=30)
    assert m.exit_code == 0 and not m.timed_out
    assert m.wall_s > 0
    assert m.minor_faults >= 4000 * 0.9


def test_an_exception_is_exit_1_with_its_traceback() -> None:
    """A raising function is a failed run whose stderr tail holds the exception."""
    m = FunctionExecutor({"f": fails}).execute(["f", "7"], timeout_s=30)
    assert m.exit_code == 1
    assert "ValueError: no good at 7" in m.stderr_tail
    assert m.wall_s > 0 and m.user_s is None and m.max_rss_bytes is None  # unmeasured, not 0


def test_timeout_kills_the_call() -> None:
    """A call that outlives --timeout is killed and marked timed out."""
    m = FunctionExecutor({"s": sleeps}).execute(["s", "1"], timeout_s=0.3)
    assert m.timed_out
    assert m.exit_code == -9


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
    """The Python API sweeps a function and stores it: touching n pages is n minor faults."""
    analysis = sweep_function(touch_pages, sizes=[1000, 4000, 16000, 64000], repeat=2,
                              db=tmp_path / "r.db")
    assert analysis.fits["A"]["minor_faults"].cls == "n"
    assert analysis.sweep.command[0].endswith(":touch_pages")
    assert len(analysis.measured()) == 8
