"""`quadscope history NAME --run A..B`: sweeping a commit range in a worktree, as asv does.

The options and the sweep each commit gets, on stores in tmp (fast); one real
throwaway repository (slow): the commits are built and swept in a worktree,
those already stored are skipped, and the history names the commit that made
the loop quadratic.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import subprocess
import time
from pathlib import Path

import pytest

from quadscope.cli import main
from quadscope.commands.history_run import (
    _sweep_commits,
    parse_range,
    range_spec,
    stored_commits,
)
from quadscope.errors import UsageError
from quadscope.model import Sweep
from quadscope.store import SqliteStore, open_store
from quadscope.workloads.regression_repo import BUILD, SUBJECTS, make_repo
from test_report import synth_runs


def test_a_range_is_two_refs_and_anything_else_one_sentence() -> None:
    assert parse_range("v1.0..HEAD") == ("v1.0", "HEAD")
    assert parse_range("abc..main~2") == ("abc", "main~2")
    for bad in ("HEAD", "..HEAD", "v1..", "a...b", ""):
        with pytest.raises(UsageError, match=r"is not a commit range: give A\.\.B"):
            parse_range(bad)


def _store_sweep(db: Path, *, name: str, commit: str, dirty: bool = False,
                 sizes: tuple[int, ...] = (100, 200, 400, 800), meter: str = "time") -> int:
    sweep = Sweep(id=0, name=name, mode="sizes", command=("./prog", "{n}"), sizes=sizes,
                  repeat=2, status="complete", git_commit=commit, git_dirty=dirty, meter=meter)
    with SqliteStore(db) as store:
        stored = store.create_sweep(sweep)
        for r in synth_runs(sizes, 2, power=1.0):
            store.add_run(dataclasses.replace(r, sweep_id=stored.id))
    return stored.id


def _args(**given: object) -> argparse.Namespace:
    base: dict[str, object] = dict(name="p", command=[], sizes=None, meter=None, repeat=None,
                                   timeout=None, build_timeout=None)
    return argparse.Namespace(**{**base, **given})


def test_each_commit_is_swept_as_names_newest_sweep_options_overriding_it(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _store_sweep(db, name="p", commit="a" * 40, sizes=(100, 200, 400), meter="time")
    _store_sweep(db, name="p", commit="b" * 40, sizes=(1000, 2000, 4000), meter="instructions")
    _store_sweep(db, name="p", commit="c" * 40, dirty=True)
    _store_sweep(db, name="other", commit="d" * 40)
    with SqliteStore(db) as store:
        spec = range_spec(_args(), store)
        # The newest sweep of the name: the dirty one's command, sizes and meter.
        assert (spec.command, spec.sizes, spec.meter, spec.name) == (
            ("./prog", "{n}"), (100, 200, 400, 800), "time", "p")
        spec = range_spec(_args(sizes="10,20,40,80", repeat=5, meter="instructions"), store)
        assert (spec.sizes, spec.repeat, spec.meter) == ((10, 20, 40, 80), 5, "instructions")
        # A commit swept in a dirty tree is not "already stored": it is swept again.
        newest = range_spec(_args(), store)  # c's meter and sizes, but c's tree was dirty
        assert stored_commits(store, "p", newest) == set()
        assert stored_commits(store, "p", dataclasses.replace(newest, sizes=(100, 200, 400))) == {
            "a" * 40}
        spec = range_spec(_args(command=["--", "./other", "{n}"], sizes="8,16,32,64",
                                meter="time"), store)
        assert spec.command == ("./other", "{n}") and spec.sizes == (8, 16, 32, 64)
        with pytest.raises(UsageError, match="give --sizes with the command"):
            range_spec(_args(command=["./other", "{n}"]), store)
        with pytest.raises(UsageError, match="no stored sweep is named 'new' to sweep"):
            range_spec(_args(name="new"), store)


def test_a_commit_stored_under_another_meter_or_sizes_is_swept_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"Already stored" was any sweep of the commit under NAME, whatever it measured."""
    from quadscope.commands import commits as commits_module
    from quadscope.commands.commits import Measured
    from quadscope.run import worktree

    db = tmp_path / "r.db"
    a, b, c, d, e = (x * 40 for x in "abcde")
    _store_sweep(db, name="p", commit=a, meter="time")  # as the range sweeps it
    _store_sweep(db, name="p", commit=b, meter="instructions")  # another meter
    _store_sweep(db, name="p", commit=c, sizes=(100, 200, 400), meter="time")  # other sizes
    _store_sweep(db, name="q", commit=d, meter="time")  # another name
    swept: list[str] = []

    class FakeMeasurer:  # no worktree, no build, no process: records what it was asked
        def __init__(self, *_: object) -> None:
            pass

        def __call__(self, commit: str) -> Measured:
            swept.append(commit)
            return Measured(sweep_id=len(swept))

    monkeypatch.setattr(commits_module, "Measurer", FakeMeasurer)
    monkeypatch.setattr(worktree, "temporary_worktree",
                        lambda repo, commit: contextlib.nullcontext(tmp_path))
    monkeypatch.setattr("quadscope.measure.provenance.commit_subjects", lambda repo, cs: {})
    args = _args(sizes="100,200,400,800", meter="time")
    with SqliteStore(db) as store:
        done = _sweep_commits(args, store, tmp_path, [a, b, c, d, e], tmp_path)
        assert (done.stored, done.swept) == ((a,), (b, c, d, e)) and swept == [b, c, d, e]
        # Under --meter auto, a sweep whose work auto counted (stored as instructions) is it.
        spec = range_spec(_args(sizes="100,200,400,800", meter="auto"), store)
        assert stored_commits(store, "p", spec) == {b}
        spec = dataclasses.replace(spec, sizes=(400, 100, 200), meter="time")  # in any order
        assert stored_commits(store, "p", spec) == {c}


def test_how_to_sweep_without_run_is_one_sentence(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.db"
    _store_sweep(db, name="p", commit="a" * 40)
    assert main(["history", "p", "--db", str(db), "--build", "make"]) == 2
    err = capsys.readouterr().err
    assert "--build only say(s) how --run A..B sweeps commits" in " ".join(err.split())
    assert "Traceback" not in err
    assert main(["history", "p", "--db", str(db), "--run", "HEAD"]) == 2
    assert "is not a commit range" in capsys.readouterr().err


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


@pytest.mark.slow
def test_history_run_sweeps_the_range_in_a_worktree_and_skips_stored_commits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact counts: the first range sweeps two commits from a command; the second, given no
    command, sweeps the others as those were swept, and the history names the n² commit."""
    repo = tmp_path / "repo"  # four commits: the second doubles the constant, the fourth is n²
    commits = make_repo(repo, commits=4, twice_at=2, quadratic_at=4)
    db = tmp_path / "results.db"
    monkeypatch.chdir(repo)
    monkeypatch.setenv("COLUMNS", "200")
    started = time.monotonic()
    assert main(["history", "sumprog", "--run", f"{commits[0]}..{commits[1]}", "--build", BUILD,
                 "--meter", "instructions", "--sizes", "250..2000", "--db", str(db),
                 "--", "./prog", "{n}"]) == 0
    out, err = capsys.readouterr()
    assert err.count("quadscope: swept") == 2 and SUBJECTS["twice"] in out
    assert main(["history", "sumprog", "--run", f"{commits[0]}..HEAD", "--build", BUILD,
                 "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    took_s = time.monotonic() - started
    assert err.count("quadscope: stored") == 2 and err.count("quadscope: swept") == 2, err
    assert "n → n²" in out and SUBJECTS["quadratic"] in out
    assert f"at {commits[3][:10]}: n → n²" in out
    assert took_s < 150, f"history --run took {took_s:.0f} s"
    # One sweep per commit, each at its own commit, as the first was swept.
    with open_store(db, readonly=True) as store:
        sweeps = [s for s, _ in store.list_sweeps()]
    assert sorted(s.git_commit for s in sweeps) == sorted(commits)
    assert {(s.meter, s.sizes) for s in sweeps} == {("instructions", (250, 500, 1000, 2000))}
    # The user's tree: no other worktree left, nothing changed, no build output.
    assert _git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert _git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert not (repo / "prog").exists()


def test_a_range_backwards_is_one_sentence_naming_a_and_b() -> None:
    """`--run B..A` (not an ancestor) names A and B, not bisect's GOOD and BAD."""
    from quadscope.run.worktree import commits_between

    def git(args: list[str], cwd: Path) -> str | None:
        return None  # `git merge-base --is-ancestor` says no

    with pytest.raises(UsageError, match=r"^A \(bbbbbbbbbb\) is not an ancestor of B "
                                         r"\(aaaaaaaaaa\): give an older A, or swap them$"):
        commits_between(Path("."), "b" * 40, "a" * 40, git, names=("A", "B"))
    with pytest.raises(UsageError, match=r"^GOOD and BAD are the same commit"):
        commits_between(Path("."), "a" * 40, "a" * 40, git)
