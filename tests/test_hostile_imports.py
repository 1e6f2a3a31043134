"""Files from elsewhere (imports, exports to compare) are bounded, checked whole, and never poison a store."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from quadscope import jsonfile
from quadscope.cli import main
from quadscope.interop import ImportFormatError
from quadscope.store import SqliteStore


def _hyperfine(times: list[Any], codes: list[Any] | None = None, command: str = "p") -> dict[str, Any]:
    """A hyperfine --parameter-scan document: four sizes, `times` and `codes` at the first."""
    results = [{"command": f"{command} {n}", "parameters": {"n": str(n)},
                "times": [0.1, 0.2, 0.3], "exit_codes": [0, 0, 0]} for n in (1, 2, 4, 8)]
    results[0]["times"] = times
    if codes is not None:
        results[0]["exit_codes"] = codes
    return {"results": results}


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))  # allow_nan: json writes NaN and Infinity as hyperfine never would
    return path


def _one_sentence(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("quadscope: "), err
    return err


@pytest.mark.parametrize("times, codes, said", [
    ([0.1, 0.2, 0.3], [0, 10**23, 0], "exit code 100000000000000000000000"),
    ([0.1, math.nan, 0.3], None, "time nan"),
    ([0.1, -0.2, 0.3], None, "time -0.2"),
    ([0.1, math.inf, 0.3], None, "time inf"),
    ([0.1, "fast", 0.3], None, "time 'fast'"),
    ([0.1, 1e308, 0.3], None, "time 1e+308"),
    ([0.1, 5e-324, 0.3], None, "time 5e-324"),
])
def test_an_import_with_one_bad_number_stores_nothing_and_the_store_stays_usable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], times: list[Any],
        codes: list[Any] | None, said: str) -> None:
    """Every number is checked before the store is touched: exit 2, no sweep, no journal left."""
    db = tmp_path / "r.db"
    assert main(["import", str(_write(tmp_path / "hf.json", _hyperfine(times, codes))),
                 "--db", str(db)]) == 2
    err = _one_sentence(capsys.readouterr().err)
    assert said in err and "nothing was stored" in err
    assert not list(tmp_path.glob("r.db*"))  # not even a database was made
    assert main(["import", str(_write(tmp_path / "ok.json", _hyperfine([0.1, 0.2, 0.3]))),
                 "--db", str(db)]) == 0
    assert main(["list", "--db", str(db)]) == 0 and main(["show", "1", "--db", str(db)]) == 0


def test_a_leftover_journal_row_no_column_can_hold_is_dropped_not_fatal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A journal left by a writer that died holding a 10^23 exit code: the next open keeps the rest."""
    db = tmp_path / "r.db"
    assert main(["import", str(_write(tmp_path / "hf.json", _hyperfine([0.1, 0.2, 0.3]))),
                 "--db", str(db), "--name", "hf"]) == 0
    with SqliteStore(db) as store:
        sweep = store.get_sweep("hf")
        stored = store.runs(sweep.id)
    from quadscope.model import RUN_KEYS
    from quadscope.store import journal

    columns = tuple(RUN_KEYS)
    good = dict(stored[0].to_dict(), seq=100)
    bad = dict(good, seq=101, exit_code=10**23)
    orphan = journal.RunJournal.create(db, columns)
    orphan.append(tuple(good[c] for c in columns))
    orphan.append(tuple(bad[c] for c in columns))
    orphan.close(keep=True)
    capsys.readouterr()
    assert main(["list", "--db", str(db)]) == 0
    assert not list(tmp_path.glob("r.db-runs-*"))
    with SqliteStore(db) as store:
        assert [r.seq for r in store.runs(sweep.id)][-1] == 100


def test_importing_dev_zero_is_refused_at_the_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """An endless file is read up to the limit and refused in one sentence; nothing is stored."""
    monkeypatch.setattr(jsonfile, "MAX_JSON_BYTES", 4 * 2**20)
    assert main(["import", "/dev/zero", "--db", str(tmp_path / "r.db")]) == 2
    assert "larger than 4 MiB" in _one_sentence(capsys.readouterr().err)
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(5 * 2**20)  # sparse: refused by its size before a byte is read
    assert main(["import", str(big), "--db", str(tmp_path / "r.db")]) == 2
    assert "larger than 4 MiB" in _one_sentence(capsys.readouterr().err)


def test_deeply_nested_json_is_one_sentence(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """100k levels of brackets (import, compare, doctor --vs): exit 2 and a sentence, never 70."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["import", str(deep), "--db", str(tmp_path / "r.db")]) == 2
    assert "nests too deeply" in _one_sentence(capsys.readouterr().err)
    assert main(["compare", str(deep), str(deep), "--db", str(tmp_path / "r.db")]) == 2
    assert "nests too deeply" in _one_sentence(capsys.readouterr().err)
    assert main(["doctor", "--vs", str(deep), "--only", "clock"]) == 2
    assert "--vs" in _one_sentence(capsys.readouterr().err)


def test_import_name_gets_run_names_check_and_file_text_is_shown_visible(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`import --name` is refused as `run --name` is; a command from the file prints escaped."""
    path = _write(tmp_path / "hf.json", _hyperfine([0.1, 0.2, 0.3], command="x\x1b]52;c;aGk=\x07"))
    db = str(tmp_path / "r.db")
    assert main(["import", str(path), "--db", db, "--name", "a\x1b[2Jb"]) == 2
    err = _one_sentence(capsys.readouterr().err)
    assert "\x1b" not in err and "must be printable" in err
    assert main(["import", str(path), "--db", db, "--name", "42"]) == 2
    assert "looks like a sweep id" in capsys.readouterr().err
    assert main(["import", str(path), "--db", db]) == 0
    err = " ".join(capsys.readouterr().err.split())  # wrapped at 80 columns (`notice`)
    assert "imported sweep 1 (x\\x1b]52;c;aGk=\\x07 {n}" in err and "\x1b" not in err


@pytest.mark.parametrize("value", [math.nan, -1.0, math.inf])
def test_an_export_with_a_time_that_is_no_duration_is_refused_by_compare(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float) -> None:
    """compare --fail-on on an export whose wall_s is NaN, negative or infinite: exit 2, one sentence."""
    db = str(tmp_path / "r.db")
    assert main(["import", str(_write(tmp_path / "hf.json", _hyperfine([0.1, 0.2, 0.3]))),
                 "--db", db, "--name", "a", "--json", str(tmp_path / "a.json")]) == 0
    doc = json.loads((tmp_path / "a.json").read_text())
    doc["runs"][0]["wall_s"] = value
    _write(tmp_path / "b.json", doc)
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--fail-on", "slower=1.1"]) == 2
    assert "not a duration" in _one_sentence(capsys.readouterr().err)


@pytest.mark.slow  # starts quadscope to signal it
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_an_import_waiting_on_a_silent_pipe_stops_on_a_signal(tmp_path: Path, signum: int,
                                                                code: int) -> None:
    """`import <(slow writer)`: SIGTERM and Ctrl-C stop the read at once, with their exit codes."""
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "quadscope", "import", str(fifo),
                             "--db", str(tmp_path / "r.db")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    writer = os.open(fifo, os.O_WRONLY)  # opened, so quadscope is past open() and in read()
    try:
        os.write(writer, b'{"results": [')
        time.sleep(0.5)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
    finally:
        os.close(writer)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert not list(tmp_path.glob("r.db*"))
def test_sizes_past_two_to_the_53_import_exactly(tmp_path: Path) -> None:
    """A parameter 2^60 + 1 is read as that exact integer; two a double cannot part are refused."""
    from quadscope.interop import read_sweeps

    sizes = [2**60 + 1, 2**61 + 1, 2**62 + 1, 2**63 - 1]
    doc = {"results": [{"command": f"p {n}", "parameters": {"n": str(n)}, "times": [0.1]}
                       for n in sizes]}
    (item,) = read_sweeps(doc, source="f.json", now=0.0)
    assert [n for n, _ in item.runs] == sizes
    twins = {"results": [{"command": f"p {n}", "parameters": {"n": n}, "times": [0.1]}
                         for n in (1, 2, 2**60, 2**60 + 1)]}
    with pytest.raises(ImportFormatError, match="the same number to a fit"):
        read_sweeps(twins, source="f.json", now=0.0)




@pytest.mark.parametrize("times", [[1e-15, 1e-15], [1e9, 1e9], [1e-15, 1e9], [0.0, 1e-15]])
def test_times_at_the_bounds_of_a_duration_import_and_fit(
        tmp_path: Path, times: list[float]) -> None:
    """The extreme durations accepted are fitted and shown without overflow (exit 0)."""
    doc = {"results": [{"command": f"p {n}", "parameters": {"n": str(n)},
                        "times": times if n != 8 else times[::-1]} for n in (1, 2, 4, 8)]}
    assert main(["import", str(_write(tmp_path / "b.json", doc)),
                 "--db", str(tmp_path / "r.db")]) == 0


def test_pytest_benchmark_metadata_of_another_shape_is_left_out(tmp_path: Path) -> None:
    """commit_info and machine_info that are not objects: the rounds import, the metadata not."""
    doc = {"benchmarks": [{"name": f"t[{n}]", "params": {"n": n}, "stats": {"median": 0.1 * n}}
                          for n in (1, 2, 3, 4)],
           "datetime": "2020-13-45", "commit_info": [1], "machine_info": {"cpu": "x"}}
    db = tmp_path / "r.db"
    assert main(["import", str(_write(tmp_path / "b.json", doc)), "--db", str(db)]) == 0
    with SqliteStore(db) as store:
        sweep = store.get_sweep("t")
    assert (sweep.git_commit, sweep.machine) == ("", "")


def test_an_import_is_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A store that fails at the last run keeps nothing of the sweep: no half-stored import."""
    import sqlite3

    from quadscope.store import base

    real = base.run_values
    calls: list[int] = []

    def fail_at_the_last(run: Any) -> Any:
        calls.append(run.seq)
        if run.seq == 11:
            raise sqlite3.OperationalError("disk is full")
        return real(run)

    monkeypatch.setattr(base, "run_values", fail_at_the_last)
    db = tmp_path / "r.db"
    assert main(["import", str(_write(tmp_path / "hf.json", _hyperfine([0.1, 0.2, 0.3]))),
                 "--db", str(db)]) == 4
    assert "the disk is full" in capsys.readouterr().err and calls[-1] == 11
    monkeypatch.setattr(base, "run_values", real)
    with SqliteStore(db) as store:
        assert store.list_sweeps() == []
