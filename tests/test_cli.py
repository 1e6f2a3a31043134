"""The command line: every bad input is one sentence and a non-zero exit, never a traceback."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from quadscope.cli import main
from quadscope.store import SqliteStore


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_sentence(err: str) -> str:
    """The error output is a single `quadscope: ...` line with no traceback."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err
    assert len(lines) == 1, err
    assert lines[0].startswith("quadscope: ")
    return lines[0]


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "r.db")


def test_no_n_placeholder(capsys: pytest.CaptureFixture[str], db: str) -> None:
    """A sweep whose command has no {n} is refused with exit 2."""
    code, _, err = run_cli(capsys, "run", "--db", db, "--no-perf", "--sizes", "1,2,3,4", "--",
                           "true")
    assert code == 2
    assert "no {n} in `true`" in one_sentence(err)


def test_sizes_do_not_parse(capsys: pytest.CaptureFixture[str], db: str) -> None:
    """Unparsable sizes are refused with exit 2 and the reason."""
    code, _, err = run_cli(capsys, "run", "--db", db, "--sizes", "ten,20", "--", "true", "{n}")
    assert code == 2
    assert "'ten' is not a number" in one_sentence(err)


def test_too_few_sizes(capsys: pytest.CaptureFixture[str], db: str) -> None:
    """Fewer than 4 sizes is refused, saying why four are needed."""
    code, _, err = run_cli(capsys, "run", "--db", db, "--sizes", "1,2,3", "--", "true", "{n}")
    assert code == 2
    assert "at least 4" in one_sentence(err)


def test_program_not_found(capsys: pytest.CaptureFixture[str], db: str) -> None:
    """A program that does not exist is exit 3, before anything runs."""
    code, _, err = run_cli(capsys, "run", "--db", db, "--sizes", "1,2,3,4", "--",
                           "no-such-program-xyz", "{n}")
    assert code == 3
    assert "no-such-program-xyz" in one_sentence(err)
    assert not Path(db).exists() or SqliteStore(Path(db)).list_sweeps() == []


def test_program_not_executable(capsys: pytest.CaptureFixture[str], db: str,
                                tmp_path: Path) -> None:
    """A file without the execute bit is exit 3."""
    prog = tmp_path / "prog.sh"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(stat.S_IRUSR | stat.S_IWUSR)
    code, _, err = run_cli(capsys, "run", "--db", db, "--sizes", "1,2,3,4", "--", str(prog),
                           "{n}")
    assert code == 3
    assert "not executable" in one_sentence(err)


def test_corrupt_database(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A database file that is not SQLite is exit 4."""
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database at all" * 200)
    code, _, err = run_cli(capsys, "list", "--db", str(bad))
    assert code == 4
    assert "not a SQLite database" in one_sentence(err)


def test_foreign_database(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Someone else's SQLite database is exit 4, untouched."""
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("create table t (x)")
    con.commit()
    con.close()
    code, _, err = run_cli(capsys, "show", "1", "--db", str(other))
    assert code == 4
    assert "not a quadscope store" in one_sentence(err)


def test_newer_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A store written by a newer quadscope is exit 4 and says to upgrade."""
    path = tmp_path / "new.db"
    SqliteStore(path).close()
    con = sqlite3.connect(path)
    con.execute("pragma user_version = 99")
    con.commit()
    con.close()
    code, _, err = run_cli(capsys, "list", "--db", str(path))
    assert code == 4
    assert "newer quadscope" in one_sentence(err)


@pytest.mark.parametrize("command", [["show", "42"], ["export", "42", "--json", "x.json"],
                                     ["compare", "42", "43"], ["run", "--resume", "42"]])
def test_unknown_run(capsys: pytest.CaptureFixture[str], db: str, command: list[str]) -> None:
    """An unknown RUN id is exit 5 for every command that takes one."""
    SqliteStore(Path(db)).close()
    code, _, err = run_cli(capsys, *command, "--db", db)
    assert code == 5
    assert "no stored sweep with id or name '42'" in one_sentence(err)


def test_unknown_option_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse mistakes read like every other error."""
    code, _, err = run_cli(capsys, "run", "--sizez", "1,2,3,4")
    assert code == 2
    assert "unrecognized arguments" in one_sentence(err)


def test_bad_gate_class(capsys: pytest.CaptureFixture[str], db: str) -> None:
    """--fail-above with a class that does not exist is refused."""
    code, _, err = run_cli(capsys, "run", "--db", db, "--no-perf", "--sizes", "1,2,3,4",
                           "--fail-above", "n^5", "--", "true", "{n}")
    assert code == 2
    assert "'n^5' is not a class" in one_sentence(err)


def test_unwritable_output_is_refused_before_the_sweep(capsys: pytest.CaptureFixture[str],
                                                       db: str) -> None:
    """A --json path that cannot be written is refused before anything runs."""
    code, _, err = run_cli(capsys, "run", "--db", db, "--no-perf", "--sizes", "1,2,3,4",
                           "--json", "/proc/no/such/out.json", "--", "true", "{n}")
    assert code == 2
    assert "--json /proc/no/such/out.json: cannot create /proc/no/such" in one_sentence(err)
    assert not Path(db).exists() or SqliteStore(Path(db)).list_sweeps() == []


def test_python_function_target_that_does_not_exist(capsys: pytest.CaptureFixture[str],
                                                    db: str) -> None:
    """A python:MODULE:FUNC target whose function is missing is exit 3 before anything runs."""
    code, _, err = run_cli(capsys, "run", "--db", db, "--sizes", "1,2,3,4", "--",
                           "python:os.path:nope", "{n}")
    assert code == 3
    assert "'os.path' has no function 'nope'" in one_sentence(err)


def test_compare_with_a_file_that_is_not_an_export(capsys: pytest.CaptureFixture[str], db: str,
                                                   tmp_path: Path) -> None:
    """`compare RUN other.json` with a JSON file that is not a quadscope export is exit 2."""
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    code, _, err = run_cli(capsys, "compare", str(other), str(other), "--db", db)
    assert code == 2
    assert "is not a quadscope JSON export" in one_sentence(err)


_SWEEP = {"id": 1, "name": "x", "mode": "sizes", "command": ["p", "{n}"]}
_RUN = {"sweep_id": 1, "seq": 0, "variant": "A", "size_n": 10, "repeat": 0, "warmup": False,
        "started_at": 0, "wall_s": 0.5, "exit_code": 0}


@pytest.mark.parametrize("doc, why", [
    ({"hello": 1}, "it has no 'sweep' field"),
    ({"schema": 2, "sweep": _SWEEP}, "it has no 'runs' field"),
    ({"schema": 2, "sweep": _SWEEP, "runs": None}, "its 'runs' is null, not a list of runs"),
    ({"schema": 2, "sweep": _SWEEP, "runs": "many"}, "its 'runs' is a string, not a list of runs"),
    ({"schema": 2, "sweep": [], "runs": []}, "its 'sweep' is a list, not an object"),
    ({"schema": 2, "sweep": _SWEEP, "runs": [_RUN, 5]}, "run 1 is a number, not an object"),
    ({"schema": 2, "sweep": _SWEEP, "runs": [{k: v for k, v in _RUN.items() if k != "size_n"}]},
     "run 0 has no 'size_n' field"),
    ({"schema": 2, "sweep": _SWEEP, "runs": [{**_RUN, "size_n": "big"}]},
     "run 0 has a field of the wrong type or value (invalid literal for int() with base 10: "
     "'big')"),
    ([1, 2], "the top level is a list, not an object"),
])
def test_an_export_that_does_not_parse_says_what_is_wrong_in_words(
        doc: object, why: str, capsys: pytest.CaptureFixture[str], db: str,
        tmp_path: Path) -> None:
    """`compare RUN other.json` names the field that is missing or malformed, in words, not
    Python's exception and message ("(KeyError: 'sweep')", "(TypeError: 'NoneType' object
    is not iterable)", "(TypeError: string indices must be integers, not 'str')")."""
    import json

    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    code, _, err = run_cli(capsys, "compare", str(other), str(other), "--db", db)
    assert code == 2
    assert one_sentence(err) == f"quadscope: {other} is not a quadscope JSON export: {why}"


def test_importing_a_quadscope_export_points_at_compare(capsys: pytest.CaptureFixture[str],
                                                        db: str, tmp_path: Path) -> None:
    """`import` of a file `export --json` wrote says what reads it, not that it is "neither
    hyperfine nor pytest-benchmark" output."""
    import json

    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"schema": 2, "sweep": _SWEEP, "runs": [_RUN]}))
    code, _, err = run_cli(capsys, "import", str(mine), "--db", db)
    assert code == 2
    assert one_sentence(err) == (
        f"quadscope: {mine} is a sweep `quadscope export --json` wrote, not one to import: "
        f"`quadscope compare RUN {mine}` compares a stored sweep with it")


def test_compare_with_an_export_not_named_json_says_why_it_was_not_read(
        capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path) -> None:
    """A file given to compare without the .json ending is looked up as a sweep's name; the
    sentence says that it is a file and what name an export needs."""
    import json

    export = tmp_path / "export"
    export.write_text(json.dumps({"schema": 2, "sweep": _SWEEP, "runs": [_RUN]}))
    code, _, err = run_cli(capsys, "compare", str(export), str(export), "--db", db)
    assert code == 5
    assert one_sentence(err).endswith(
        f"; {export} is a file, but an exported sweep is read only from a name ending in .json")


@pytest.mark.parametrize("value, said", [("\uff11\uff10", "U+FF11 (FULLWIDTH DIGIT ONE)"),
                                         ("1_0", "a separator")])
def test_a_number_option_takes_ascii_digits_alone(
        value: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """int() read `--repeat １０` as 10 and `1_0` as 10: refused like a bad --sizes item."""
    from quadscope.cli import main

    assert main(["run", "--sizes", "1..100", "--repeat", value, "--", "true", "{n}"]) == 2
    err = capsys.readouterr().err
    assert f"--repeat '{value}' is not a number: it holds {said}" in err
    assert "Traceback" not in err and err.count("quadscope:") == 1
