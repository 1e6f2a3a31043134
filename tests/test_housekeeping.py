"""What quadscope leaves behind in a user's tree and temporary directory: only what it must.

Each test pins one piece of housekeeping from issue 27: reports `assert_scales`
writes without `report=` do not pile up, `.quadscope/` ignores itself in git,
no journal file outlives a clean run, and numpy's warnings stay inside the
analysis.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

from quadscope.analyse.stats import nnls2
from quadscope.api import report_path
from quadscope.cli import main
from quadscope.store import open_store


def test_assert_scales_reports_without_a_path_reuse_one_file_per_target() -> None:
    """The same target's report lands at the same path each run: nothing accumulates."""
    first = report_path("python:tests.mod:sorted")
    assert first == report_path("python:tests.mod:sorted")
    assert first.parent.parent == Path(tempfile.gettempdir())
    assert first.parent.name.startswith("quadscope-reports-")
    assert first.name == "python_tests.mod_sorted.html"
    assert report_path("../../etc/passwd").parent == first.parent
    assert report_path("").name == "scaling.html"


def _run_in(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small in-process `quadscope run` with the default store, in `folder`."""
    monkeypatch.chdir(folder)
    monkeypatch.delenv("QUADSCOPE_DB", raising=False)
    assert main(["run", "--no-perf", "--sizes", "1000,2000,4000,8000", "--repeat", "1",
                 "--", "python:math:factorial", "{n}"]) == 0


@pytest.mark.slow  # `run` asks git for the commit it measures
def test_a_clean_run_leaves_no_journal_and_ignores_its_folder_in_git(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After `quadscope run`: `.quadscope/` holds a `*` .gitignore and no results.db-runs-*."""
    _run_in(tmp_path, monkeypatch)
    folder = tmp_path / ".quadscope"
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert [p.name for p in folder.iterdir() if "-runs-" in p.name] == []


@pytest.mark.slow
def test_a_gitignore_the_user_wrote_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".quadscope").mkdir()
    (tmp_path / ".quadscope" / ".gitignore").write_text("!results.db\n")
    _run_in(tmp_path, monkeypatch)
    assert (tmp_path / ".quadscope" / ".gitignore").read_text() == "!results.db\n"


def test_a_db_outside_a_quadscope_folder_gets_no_gitignore(tmp_path: Path) -> None:
    """Only quadscope's own folder ignores itself: a --db the user placed is theirs."""
    open_store(tmp_path / "mine" / "results.db").close()
    assert not (tmp_path / "mine" / ".gitignore").exists()


def test_nnls_on_a_near_singular_curve_warns_nothing_and_stays_finite() -> None:
    """sgy/sgg overflowed ("overflow encountered in divide") where g barely varies."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b, rss = nnls2(np.array([0.0, 1e-161, 0.0]), np.array([0.0, 1e150, 0.0]), np.ones(3))
    assert np.isfinite([a, b, rss]).all()
    assert float(b) == 0.0 and float(a) == pytest.approx(1e150 / 3)


def test_reading_commands_leave_no_wal_or_shm_beside_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`list`, `show`, `export` (`history` too, which asks git): the read-only store is
    closed when the command ends, and with it go the -wal and -shm files SQLite keeps
    while a reader has it open."""
    import json

    db = tmp_path / "results.db"
    doc = tmp_path / "hf.json"
    doc.write_text(json.dumps({"results": [
        {"command": f"p {n}", "parameters": {"n": str(n)}, "times": [1e-3 * n, 1.1e-3 * n]}
        for n in (1, 2, 4, 8)]}))
    assert main(["import", str(doc), "--db", str(db)]) == 0
    for argv in (["list"], ["show", "1"], ["export", "1", "--json", str(tmp_path / "e.json")]):
        assert main([*argv, "--db", str(db)]) == 0, argv
        assert sorted(p.name for p in tmp_path.glob("results.db*")) == ["results.db"], argv
    capsys.readouterr()
