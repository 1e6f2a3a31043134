"""The renderer registry: the CLI's output options, checks and files all come from it.

A renderer (a `render.Renderer` subclass, its abilities left at their
defaults) added to `render.RENDERERS` (here for one test, through
monkeypatch) gets its option on every command that writes files, and its
bytes land where the option says, with no other change anywhere.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

from quadscope import cli, render
from quadscope.analyse.analysis import Analysis

FIXTURE = Path(__file__).parent / "fixtures" / "schema1" / "store-schema1.db"


class VerdictRenderer(render.Renderer):
    name = "verdict"
    flag = "--verdict"
    metavar = "FILE"
    help = "write the verdict line"
    extension = ".txt"
    folder = False

    def render(self, analysis: Analysis) -> bytes:
        return f"{analysis.sweep.id}: {analysis.verdict}\n".encode()


class RunsRenderer(render.Renderer):
    name = "runs"
    flag = "--runs-dir"
    metavar = "DIR"
    help = "write one file per variant with its run count"
    extension = ".txt"
    folder = True

    def render(self, analysis: Analysis) -> Mapping[str, bytes]:
        return {f"{v}.txt": str(len(analysis.measured(v))).encode() for v in analysis.fits}


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(render, "RENDERERS", (*render.RENDERERS, VerdictRenderer, RunsRenderer))
    shutil.copy(FIXTURE, tmp_path / "old.db")
    return tmp_path / "old.db"


@pytest.mark.parametrize("command", ["run", "show", "export", "report", "compare", "doctor"])
def test_a_registered_renderer_is_an_option_of_every_writing_command(
    db: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each command that writes files offers the new renderers' flags with their help."""
    assert cli.main([command, "--help"]) == 0
    usage = " ".join(capsys.readouterr().out.split())
    assert "--verdict FILE write the verdict line" in usage
    assert "--runs-dir DIR write one file per variant with its run count" in usage


def test_a_registered_renderer_writes_its_file_and_its_folder(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export --verdict F --runs-dir D` writes the renderer's bytes, one file per folder entry."""
    out = tmp_path / "out"
    assert cli.main(["export", "14", "--db", str(db), "--verdict", str(out / "v.txt"),
                     "--runs-dir", str(out / "runs")]) == 0
    assert (out / "v.txt").read_text().startswith("14: ")
    assert {p.name: p.read_text() for p in (out / "runs").iterdir()} == {"A.txt": "12",
                                                                           "B.txt": "12"}
    # Each on its own line (a long path wraps under it, whole: `notice`).
    err = capsys.readouterr().err
    assert [" ".join(x.split()) for x in err.split("quadscope: ") if x] == [
        f"wrote {out / 'v.txt'}", f"wrote 2 RUNS file(s) to {out / 'runs'}"]


def test_export_without_an_output_names_every_registered_option(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal lists the options from the registry, the new ones included."""
    assert cli.main(["export", "14", "--db", str(db)]) == 2
    assert capsys.readouterr().err == (
        "quadscope: export needs somewhere to write: --json FILE, --csv FILE, --html FILE, "
        "--png DIR, --markdown FILE, --junit FILE, --speedscope FILE, --folded FILE, --verdict FILE "
        "or --runs-dir DIR\n")


def test_report_without_an_output_writes_the_default_page(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report RUN` alone writes quadscope-<id>.html in the working directory."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", "14", "--db", str(db)]) == 0
    assert sorted(p.name for p in tmp_path.glob("quadscope-*")) == ["quadscope-14.html"]
    assert (tmp_path / "quadscope-14.html").read_text().startswith("<!DOCTYPE html>")


def test_renderer_abilities_are_declared_on_the_class() -> None:
    """The CLI reads abilities off each class: a renderer has its own `render_fleet`
    exactly when it declares `writes_fleet`, and JUnit alone reads the gates."""
    for r in render.RENDERERS:
        assert (r.render_fleet is not render.Renderer.render_fleet) == r.writes_fleet, r.name
    assert [r.name for r in render.RENDERERS if r.writes_fleet] == ["json", "csv", "html",
                                                                    "markdown"]
    assert [r.name for r in render.RENDERERS if r.reads_gates] == ["junit"]
    assert [r.name for r in render.RENDERERS if r.step_summary] == ["markdown"]


def _sweep_args(tmp_path: Path, *output: str) -> list[str]:
    return ["run", "--db", str(tmp_path / "r.db"), "--sizes", "10,20,40,80", *output,
            "--", "python:math:factorial", "{n}"]


@pytest.mark.parametrize("flag", ["--html", "--json", "--png"])
def test_an_output_where_no_file_can_be_made_is_refused_before_the_sweep(
        tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    """/proc takes no new file even from root, whom `os.access` waves through: exit 2 at once."""
    assert cli.main(_sweep_args(tmp_path, flag, "/proc/quadscope-out")) == 2
    err = capsys.readouterr().err
    assert "/proc" in err and "Traceback" not in err
    assert not (tmp_path / "r.db").exists()  # nothing was measured, nothing stored


def test_an_existing_file_that_refuses_writing_is_refused_before_the_sweep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A file the system will not open for writing (immutable, read-only mount) is tried, not
    asked about: the probe opens it for appending, and that refusal is the sentence."""
    target = tmp_path / "old.json"
    target.write_text("kept")
    real_open = os.open

    def refusing(path: object, flags: int, *rest: int) -> int:
        if str(path) == str(target) and flags & os.O_WRONLY:
            raise PermissionError(1, "Operation not permitted", str(target))
        return real_open(path, flags, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing)
    assert cli.main(_sweep_args(tmp_path, "--json", str(target))) == 2
    assert "cannot write in " + str(target) in " ".join(capsys.readouterr().err.split())
    assert target.read_text() == "kept"
