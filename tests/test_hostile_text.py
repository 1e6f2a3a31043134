"""Other people's text (a child's stderr, paths, commands) reaches the terminal only made visible."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from tests.conftest import measurement

from quadscope.cli import main
from quadscope.errors import SetupError
from quadscope.measure.launcher import Job, SerialExecutor
from quadscope.model import Measurement

HOSTILE = "\x1b]52;c;aGVsbG8=\x07\x1b]0;pwned\x07\x1b[2J\x9b31m"  # clipboard, title, clear, C1 CSI


class _SaysHostile(SerialExecutor):
    """Every command exits 1, its stderr's last line full of terminal control."""

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        return replace(measurement(0.001, exit_code=1), stderr_tail=f"first\n{HOSTILE}oops\n")


@pytest.mark.parametrize("what", ["setup", "prepare"])
def test_a_failing_setup_quotes_its_stderr_and_command_visible(what: str) -> None:
    """The --setup/--prepare failure sentence carries no raw control character."""
    job = Job(("prog", "7"), None, **{what: ("/bin/sh", "-c", f"mk\x1b[2J {HOSTILE}")})
    with pytest.raises(SetupError) as e:
        next(_SaysHostile().execute_many([job]))
    sentence = str(e.value)
    assert sentence.isprintable(), sentence
    assert "saying: \\x1b]52;c;aGVsbG8=\\x07" in sentence and "\\x9b31moops" in sentence
    assert sentence.startswith(f"--{what} `mk\\x1b[2J ")


@pytest.mark.parametrize("argv", [
    ["run", "--sizes", "1,2,4,8", "--db", "{db}", "--", f"./no{HOSTILE}such", "{{n}}"],
    ["run", "--sizes", "1,2,4,8", "--db", "{db}", "--vs", f"./no{HOSTILE}", "--", "true", "{{n}}"],
    ["show", "1", "--db", f"{{tmp}}/no{HOSTILE}.db"],
    ["import", f"{{tmp}}/no{HOSTILE}.json", "--db", "{db}"],
    ["compare", f"{{tmp}}/a{HOSTILE}.json", f"{{tmp}}/b{HOSTILE}.json", "--db", "{db}"],
])
def test_error_sentences_echo_user_paths_visible(tmp_path: Path, argv: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A program, --vs, --db, import or compare path with escapes is quoted as text, exit not 0/70."""
    args = [a.format(db=tmp_path / "r.db", tmp=tmp_path) for a in argv]
    code = main(args)
    err = capsys.readouterr().err
    assert code not in (0, 70), err
    assert err.startswith("quadscope: ") and err.count("\n") == 1, err
    assert err[:-1].isprintable() and "\\x1b]52" in err, err


def test_list_of_a_missing_database_names_its_path_visible(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`list --db` of a path with escapes that holds no database: exit 0, the path as text."""
    assert main(["list", "--db", f"{tmp_path}/no{HOSTILE}dir/x.db"]) == 0
    out = capsys.readouterr().out
    assert "no sweeps stored" in out and out[:-1].isprintable() and "\\x1b]52" in out


def test_the_wrote_line_names_an_output_path_visible(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`--json PATH` with escapes in PATH: the file is written there, the line names it as text."""
    doc = tmp_path / "hf.json"
    doc.write_text('{"results": [' + ", ".join(
        f'{{"command": "p {n}", "parameters": {{"n": "{n}"}}, "times": [0.1, 0.2]}}'
        for n in (1, 2, 4, 8)) + "]}")
    out = tmp_path / f"a{HOSTILE}.json"
    assert main(["import", str(doc), "--db", str(tmp_path / "r.db"), "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert out.exists() and "quadscope: wrote" in err  # the path may wrap onto the next line
    assert all(line.isprintable() for line in err.splitlines())


def test_a_notice_shows_control_characters_as_text() -> None:
    """Warnings and gate sentences (notice) quote others' text: escapes, not terminal control."""
    import io

    from quadscope.notice import notice

    out = io.StringIO()
    notice(f"warning: the command `x{HOSTILE}` looks odd", out)
    assert "\x1b" not in out.getvalue() and "\x9b" not in out.getvalue()
    assert "\\x1b]52;c;aGVsbG8=\\x07" in out.getvalue()


def test_csv_writes_a_programs_stderr_visible_and_the_json_keeps_it_exactly() -> None:
    """`--csv -` on a terminal once sent a failing run's stderr raw: its OSC 52 set the
    clipboard. Every CSV (one size, several sizes) escapes it, one line a run."""
    import csv
    import io
    import json

    from quadscope.analyse.analysis import analyse
    from quadscope.model import Run, Sweep
    from quadscope.render import get_renderer
    from quadscope.render.multi_csv import runs_csv

    tail = f"first\n{HOSTILE}oops\n"
    sweep = Sweep(id=1, name="t", mode="sizes", command=("prog", "{n}"), sizes=(1, 2, 3))
    runs = [Run(sweep_id=1, seq=i, variant="A", size_n=n, repeat=0, warmup=False,
                started_at=0.0, measurement=replace(measurement(0.001 * n, exit_code=1),
                                                    stderr_tail=tail))
            for i, n in enumerate((1, 2, 3))]
    a = analyse(sweep, runs)
    for out in (get_renderer("csv").render(a), runs_csv(("n",), [(sweep, runs)])):
        text = out.decode()
        assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
        assert len(text.splitlines()) == 1 + len(runs), text
        cells = list(csv.DictReader(io.StringIO(text)))
        assert cells[0]["stderr_tail"] == ("first\\x0a\\x1b]52;c;aGVsbG8=\\x07\\x1b]0;pwned\\x07"
                                           "\\x1b[2J\\x9b31moops\\x0a")
    exported = json.loads(get_renderer("json").render(a))
    assert exported["runs"][0]["stderr_tail"] == tail
