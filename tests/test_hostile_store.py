"""A damaged store, a closed stdout: one sentence and a documented exit code, never 70."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from quadscope.cli import main
from quadscope.errors import StoreError


def _stored(tmp_path: Path) -> Path:
    db = tmp_path / "r.db"
    doc = tmp_path / "hf.json"
    doc.write_text('{"results": [' + ", ".join(
        f'{{"command": "p {n}", "parameters": {{"n": "{n}"}}, "times": [0.1, 0.2]}}'
        for n in (1, 2, 4, 8)) + "]}")
    assert main(["import", str(doc), "--db", str(db)]) == 0
    return db


@pytest.mark.parametrize("damage, said", [
    ("PRAGMA user_version = 0", "its schema version is 0"),
    ("DROP TABLE runs", "it lacks the runs table"),
    ("DROP TABLE sweeps", "it lacks the sweeps table"),
    ("UPDATE sweeps SET data = '{'", "sweep 1's record in the store cannot be read"),
    ("UPDATE sweeps SET data = '[]'", "sweep 1's record in the store cannot be read"),
    ("UPDATE sweeps SET data = '{}'", "sweep 1's record in the store cannot be read (KeyError"),
])
@pytest.mark.parametrize("command", [["list"], ["show", "1"], ["export", "1", "--json", "-"]])
def test_a_store_changed_by_something_else_is_one_sentence_exit_4(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, said: str,
        command: list[str]) -> None:
    """A file with quadscope's mark but no schema version or a table gone: exit 4, not a KeyError."""
    db = _stored(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute(damage)
    capsys.readouterr()
    assert main([*command, "--db", str(db)]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and "point --db at a new file" in err


@pytest.mark.slow  # starts quadscope with its standard output closed
def test_a_closed_stdout_is_one_sentence_exit_2(tmp_path: Path) -> None:
    """`quadscope list >&-`: nowhere to print is said, exit 2, no traceback file."""
    db = _stored(tmp_path)
    done = subprocess.run([sys.executable, "-m", "quadscope", "list", "--db", str(db)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=60, preexec_fn=lambda: __import__("os").close(1))
    assert done.returncode == 2
    assert done.stderr.startswith("quadscope: standard output is closed") and \
        done.stderr.count("\n") == 1


def test_an_imported_sweep_without_cpu_times_has_a_wall_reference() -> None:
    """Profiling a hyperfine import: wall time only, so the reference is wall, faults unknown."""
    from quadscope.model import Measurement, Run
    from quadscope.profile.driver import reference_seconds, should_sample_faults

    runs = [Run(sweep_id=1, seq=i, variant="A", size_n=8, repeat=i, warmup=False,
                started_at=0.0, measurement=Measurement(wall_s=0.1 * (i + 1), exit_code=0))
            for i in range(3)]
    assert reference_seconds(runs, 8) == pytest.approx(0.2)
    assert should_sample_faults(runs) == (False, None)


@pytest.mark.slow  # starts quadscope with an ASCII-only standard output
@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}])
def test_an_output_that_cannot_encode_a_dash_gets_an_escape_not_exit_70(
        tmp_path: Path, env: dict[str, str]) -> None:
    """`show` and `list` under LANG=C or PYTHONIOENCODING=ascii print `\\u2014`, exit 0."""
    import os

    db = _stored(tmp_path)
    for command in (["show", "1"], ["list"]):
        done = subprocess.run([sys.executable, "-m", "quadscope", *command, "--db", str(db)],
                              capture_output=True, timeout=60, env={**os.environ, **env})
        assert done.returncode == 0, done.stderr
        done.stdout.decode("ascii")


def test_store_sweep_keeps_a_sweep_and_its_runs_together(store_location: Path | str) -> None:
    """On both back ends: the sweep gets an id, every run gets it, in order; a failure keeps none."""
    from quadscope.model import Measurement, Run, Sweep
    from quadscope.store import open_store

    sweep = Sweep(id=0, name="imp", mode="sizes", command=("p", "{n}"), sizes=(1, 2),
                  repeat=1, warmup=0, created_at=1.0, status="complete")
    runs = [Run(sweep_id=0, seq=i, variant="A", size_n=n, repeat=0, warmup=False,
                started_at=1.0, measurement=Measurement(wall_s=0.1 * n, exit_code=0))
            for i, n in enumerate((1, 2))]
    with open_store(store_location) as store:
        stored = store.store_sweep(sweep, runs)
        assert [(r.sweep_id, r.size_n) for r in store.runs(stored.id)] == [(stored.id, 1),
                                                                           (stored.id, 2)]
        with pytest.raises(StoreError):
            store.store_sweep(sweep, [*runs, runs[0]])  # a duplicate seq: the whole sweep goes
        assert [s.id for s, _ in store.list_sweeps()] == [stored.id]


@pytest.mark.parametrize("text", ["[", "[]", "1"])
def test_a_damaged_stored_result_is_a_store_error(text: str) -> None:
    """A blob (profile, doctor, fits) that is not a JSON object: StoreError, exit 4."""
    from quadscope.store.base import blob_from_text

    with pytest.raises(StoreError, match="something other than quadscope changed"):
        blob_from_text(text)


@pytest.mark.parametrize("command", [["list"], ["show", "1"], ["import", "{doc}"]])
def test_a_db_that_is_a_pipe_is_refused_not_waited_on(tmp_path: Path, command: list[str],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """--db naming a FIFO blocked the first read forever; now one sentence, exit 4."""
    import os

    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    doc = _stored(tmp_path).parent / "hf.json"
    capsys.readouterr()
    assert main([c.format(doc=doc) for c in command] + ["--db", str(fifo)]) == 4
    assert "is not a regular file" in capsys.readouterr().err
