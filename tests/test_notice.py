"""Warnings and gate sentences on stderr wrap at the terminal's width with a hanging indent."""

from __future__ import annotations

import io

import pytest

from quadscope.commands.run import warn_skews
from quadscope.notice import error, stderr_width, wrapped

LOAD = ("the load average was 3.52 on 2 CPUs when the sweep started: other programs compete "
        "for the CPU and inflate the timings; close them, or pin the sweep with --cpu 1 and "
        "raise --repeat so the median shrugs off the slow runs")


def test_a_notice_wraps_at_80_columns_with_a_hanging_indent_when_not_a_tty(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The load warning was one 197-character line."""
    monkeypatch.delenv("COLUMNS", raising=False)
    warn_skews([LOAD])
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) > 2 and max(map(len, lines)) <= 80
    assert lines[0].startswith("quadscope: warning: the load average")
    assert all(line.startswith(" " * 11) and line[11] != " " for line in lines[1:])
    assert " ".join(line.strip() for line in lines) == f"quadscope: warning: {LOAD}"


def test_columns_sets_the_width_and_long_words_stay_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "50")
    assert stderr_width() == 50
    path = "/very/long/path/" + "x" * 60 + "/results.db"
    text = wrapped(f"cannot open {path}: permission denied", 50)
    assert path in text.splitlines()[1]  # a path is never broken, so it can be copied
    monkeypatch.setenv("COLUMNS", "5")
    assert stderr_width() == 40


def test_each_line_of_a_several_line_message_wraps_on_its_own() -> None:
    text = wrapped("first\nsecond " + "word " * 20, 40)
    assert text.splitlines()[:2] == ["quadscope: first", "           second word word word word"]



@pytest.mark.parametrize("label", ["n log n", "log n", "log² n", "i log i"])
def test_a_class_with_spaces_stays_on_one_line(label: str) -> None:
    """"gate failed: … faster than the allowed n log n" never ends a line on "n log"."""
    text = f"gate failed: instructions grows as n², faster than the allowed {label}"
    for width in range(40, 90):
        out = wrapped(text, width)
        assert label in out.replace("\n" + " " * 11, " ")
        assert all(label in line or not any(part in line.split() for part in ("log", "log²"))
                   for line in out.splitlines())
        assert " ".join(line.strip() for line in out.splitlines()) == f"quadscope: {text}"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_an_error_wraps_on_a_terminal_and_stays_one_line_when_captured(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal an error wraps at its width with a hanging indent; piped or captured
    (scripts, CI logs, tests) it stays the one line they read; control characters are
    made visible either way."""
    monkeypatch.setenv("COLUMNS", "60")
    text = ("--metric instructions was not measured in this sweep; give one of: wall_s, "
            "user_s, sys_s, cpu_s, max_rss_bytes, minor_faults \x1b[2J")
    tty = _Terminal()
    error(text, tty)
    lines = tty.getvalue().splitlines()
    assert len(lines) > 2 and max(map(len, lines)) <= 60
    assert all(line.startswith(" " * 11) and line[11] != " " for line in lines[1:])
    assert "\x1b" not in tty.getvalue() and "\\x1b[2J" in tty.getvalue()
    piped = io.StringIO()
    error(text, piped)
    assert piped.getvalue().count("\n") == 1 and piped.getvalue().startswith("quadscope: --metric")
    assert " ".join(line.strip() for line in lines) == piped.getvalue().strip()


def test_cli_errors_go_through_the_wrapper(monkeypatch: pytest.MonkeyPatch) -> None:
    """`cli.main`'s error sentences (here an unknown option, argparse's) wrap on a terminal."""
    from quadscope.cli import main

    monkeypatch.setenv("COLUMNS", "50")
    tty = _Terminal()
    monkeypatch.setattr("sys.stderr", tty)
    assert main(["list", "--no-such-option", "--db", "x.db"]) == 2
    lines = tty.getvalue().splitlines()
    assert len(lines) > 1 and max(map(len, lines)) <= 50
    assert lines[0].startswith("quadscope: ")
    assert all(line.startswith(" " * 11) for line in lines[1:])
