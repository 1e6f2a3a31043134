"""A `python:` target that leaves the interpreter is a failed run, never the end of quadscope."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from quadscope.cli import main
from quadscope.measure.pyfunc import FunctionExecutor
from quadscope.store import SqliteStore


def exits_through_the_module(n: int) -> None:
    """Leaves as library code does: through the os module's attribute, looked up at call time."""
    os._exit(3)


def exits_with_zero(n: int) -> None:
    sys.exit(0)


@pytest.mark.slow  # `run` asks git for the commit
@pytest.mark.parametrize("target, codes", [
    ("python:sys:exit", {1, 2, 4, 8}),
    ("python:os:_exit", {1, 2, 4, 8}),
    ("python:os:abort", {1}),  # the size is one argument too many: a TypeError, still a run
])
def test_a_target_that_leaves_is_a_failed_sweep_not_the_end_of_quadscope(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, codes: set[int]) -> None:
    """Every run fails with the status it left with; the sweep is complete; exit 6, one sentence."""
    db = tmp_path / "r.db"
    assert main(["run", "--db", str(db), "--sizes", "1,2,4,8", "--repeat", "1", "--warmup", "0",
                 "--", target, "{n}"]) == 6
    assert "every run of the command failed" in capsys.readouterr().err
    with SqliteStore(db) as store:
        sweep = store.get_sweep("last")
        runs = store.runs(sweep.id)
    assert sweep.status == "complete"
    assert {r.measurement.exit_code for r in runs} == codes


@pytest.mark.parametrize("func, code, said", [
    (exits_through_the_module, 3, "called os._exit(3)"),
    (exits_with_zero, 1, "SystemExit: 0"),
])
def test_leaving_in_process_is_a_failed_run_with_one_sentence(func: object, code: int,
                                                              said: str) -> None:
    """os._exit inside the function raises instead; sys.exit(0) is still a run that returned nothing."""
    m = FunctionExecutor({"f": func}).execute(["f", "5"], timeout_s=30)  # type: ignore[dict-item]
    assert m.exit_code == code and not m.ok and said in m.stderr_tail
    assert os._exit is not exits_through_the_module and os._exit.__name__ == "_exit"
    assert os._exit.__module__ in ("posix", "os", "nt")  # the real one is back


@pytest.mark.slow  # `run` asks git for the commit
def test_resume_of_a_target_that_leaves_finishes_the_sweep(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--resume runs the missing runs in-process too: failed runs, the sweep complete, exit 6."""
    db = tmp_path / "r.db"
    assert main(["run", "--db", str(db), "--sizes", "1,2,4,8", "--repeat", "2", "--warmup", "0",
                 "--", "python:os:_exit", "{n}"]) == 6
    with SqliteStore(db) as store:
        sweep = store.get_sweep("last")
        store.set_status(sweep.id, "interrupted")
        with store._write() as c:  # forget the last runs, as a Ctrl-C would have
            c.execute("DELETE FROM runs WHERE sweep_id = ? AND seq >= 4", (sweep.id,))
    assert main(["run", "--db", str(db), "--resume", str(sweep.id)]) == 6
    with SqliteStore(db) as store:
        assert store.get_sweep(sweep.id).status == "complete"
        assert len(store.runs(sweep.id)) == 8


@pytest.mark.slow  # the probe forks
def test_a_segfault_in_c_code_is_a_failed_run_with_one_sentence() -> None:
    """ctypes.string_at(0) reads address 0: in a fork first, so quadscope lives to say so,
    once per size (the next run at that size is the same failed run, not another fork)."""
    ex = FunctionExecutor()
    m = ex.execute(["python:ctypes:string_at", "0"], timeout_s=30)
    assert m.exit_code == -11 and not m.ok
    assert m.stderr_tail.startswith("python:ctypes:string_at crashed with SIGSEGV at n = 0")
    assert ex.execute(["python:ctypes:string_at", "0"], timeout_s=30) is m
    fine = ex.execute(["python:math:factorial", "20"], timeout_s=30)
    assert fine.ok and fine.wall_s > 0


@pytest.mark.slow  # `run` asks git for the commit; the probe forks
def test_a_sweep_of_a_target_that_segfaults_ends_with_one_sentence(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.db"
    assert main(["run", "--db", str(db), "--sizes", "0,1,2,3", "--repeat", "1", "--warmup", "0",
                 "--", "python:ctypes:string_at", "{n}"]) == 6
    assert "every run of the command failed (killed by SIGSEGV (signal 11))" in capsys.readouterr().err
    with SqliteStore(db) as store:
        sweep = store.get_sweep("last")
        runs = store.runs(sweep.id)
    assert sweep.status == "complete" and len(runs) == 4
    assert all("crashed with SIGSEGV" in r.measurement.stderr_tail for r in runs)
