"""`quadscope bisect`: the search with fake judges and fake git, exact; one real repository (slow)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import re
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from quadscope.analyse.history import History, HistoryPoint, with_subjects
from quadscope.classes import INCONCLUSIVE
from quadscope.cli import build_parser, main
from quadscope.commands.bisect import _spec, exact_meter, options_after_refs
from quadscope.errors import UsageError
from quadscope.measure.provenance import commit_subjects
from quadscope.meters import Measuring, Meter, Registry, Target
from quadscope.model import Fit, Sweep
from quadscope.run.bisect import (
    ALL_SKIPPED,
    BAD,
    BAD_NOT_BAD,
    FOUND,
    GOOD,
    GOOD_NOT_GOOD,
    SKIP,
    Growth,
    Probe,
    bisect,
    limit_of,
    probe_of,
)
from quadscope.run.worktree import Built, build, commits_between, resolve, temporary_worktree
from quadscope.store import open_store
from quadscope.workloads.regression_repo import BUILD, make_repo

COMMITS = [f"c{i}" for i in range(10)]  # c0 is GOOD, c9 BAD


class FakeJudge:
    """Judges from a table (commit → verdict) and records the order it was asked in."""

    def __init__(self, verdicts: dict[str, str]) -> None:
        self.verdicts = verdicts
        self.asked: list[str] = []

    def __call__(self, commit: str) -> Probe:
        self.asked.append(commit)
        return Probe(commit, self.verdicts[commit], f"{commit} is {self.verdicts[commit]}")


def table(first_bad: int, skipped: Sequence[int] = ()) -> dict[str, str]:
    return {c: SKIP if i in skipped else GOOD if i < first_bad else BAD
            for i, c in enumerate(COMMITS)}


def test_the_first_bad_commit_is_found_by_halving() -> None:
    """GOOD, then BAD, then the middles: c4 bad, c2 good, c3 good, so c4 is the first bad."""
    judge = FakeJudge(table(first_bad=4))
    result = bisect(COMMITS, judge)
    assert result.outcome == FOUND
    assert judge.asked == ["c0", "c9", "c4", "c2", "c3"]
    assert result.first_bad is not None and result.first_bad.commit == "c4"
    assert result.last_good is not None and result.last_good.commit == "c3"


@pytest.mark.parametrize("first_bad", range(1, 10))
def test_every_position_of_the_first_bad_commit_is_found(first_bad: int) -> None:
    """Wherever the change is, it is named, in at most 2 + ⌈log2 9⌉ probes (nine candidates)."""
    judge = FakeJudge(table(first_bad))
    result = bisect(COMMITS, judge)
    assert result.first_bad is not None and result.first_bad.commit == f"c{first_bad}"
    assert len(judge.asked) <= 6


def test_skipped_commits_around_the_first_bad_are_stepped_round() -> None:
    """c4 (the middle) and c7 are skipped: the search tries their neighbours and names c6."""
    judge = FakeJudge(table(first_bad=6, skipped=(4, 7)))
    result = bisect(COMMITS, judge)
    assert judge.asked == ["c0", "c9", "c4", "c5", "c7", "c6"]
    assert result.outcome == FOUND
    assert result.first_bad is not None and result.first_bad.commit == "c6"
    assert result.last_good is not None and result.last_good.commit == "c5"


def test_when_only_skipped_commits_are_left_the_answer_is_their_range() -> None:
    """c3 and c4 skipped with c2 good and c5 bad: any of c3, c4, c5 may be the first bad."""
    judge = FakeJudge(table(first_bad=3, skipped=(3, 4)))
    result = bisect(COMMITS, judge)
    assert result.outcome == ALL_SKIPPED
    assert result.candidates == ("c3", "c4", "c5")
    assert result.first_bad is not None and result.first_bad.commit == "c5"


def test_everything_between_skipped_names_the_whole_range() -> None:
    """A build broken on every commit between GOOD and BAD: nothing is blamed."""
    verdicts = {c: SKIP for c in COMMITS} | {"c0": GOOD, "c9": BAD}
    judge = FakeJudge(verdicts)
    result = bisect(COMMITS, judge)
    assert result.outcome == ALL_SKIPPED
    assert result.candidates == tuple(COMMITS[1:])
    assert sorted(judge.asked) == sorted(COMMITS)


def test_good_not_good_and_bad_not_bad_stop_at_once() -> None:
    """GOOD must be good (BAD is then not swept) and BAD bad; an undecided BAD is not bad."""
    judge = FakeJudge(table(first_bad=0))
    assert bisect(COMMITS, judge).outcome == GOOD_NOT_GOOD
    assert judge.asked == ["c0"]
    judge = FakeJudge(table(first_bad=10) | {"c9": SKIP})
    assert bisect(COMMITS, judge).outcome == BAD_NOT_BAD
    assert judge.asked == ["c0", "c9"]


def test_known_probes_are_not_judged_again() -> None:
    """GOOD's probe, made first to set the limit, is reused rather than swept twice."""
    judge = FakeJudge(table(first_bad=1))
    known = {"c0": Probe("c0", GOOD, "measured first")}
    result = bisect(COMMITS, judge, known=known)
    assert "c0" not in judge.asked and result.probes[0] is known["c0"]
    with pytest.raises(ValueError):
        bisect(["c0"], judge)


def fit(metric: str, cls: str, lo: str = "", hi: str = "", k: float = 1.0) -> Fit:
    return Fit(metric=metric, cls=cls, exponent=k, exponent_ci=(k - 0.1, k + 0.1),
               coefficients={"a": 0.0, "b": 1.0}, r2=1.0, candidates=(), n_points=12,
               best=cls if cls != INCONCLUSIVE else lo,
               at_least=lo or (cls if cls != INCONCLUSIVE else ""),
               at_most=hi or (cls if cls != INCONCLUSIVE else ""))


def test_the_gate_judges_a_commit_and_undecided_is_a_skip() -> None:
    """Within the limit is good, above it bad; a bracket straddling it is a skip, never blamed."""
    within = probe_of("a", {"instructions": fit("instructions", "n")},
                      metric="instructions", limit="n", sweep_id=3)
    above = probe_of("b", {"instructions": fit("instructions", "n^2", k=2.0)},
                     metric="instructions", limit="n")
    noisy = probe_of("c", {"instructions": fit("instructions", INCONCLUSIVE, "n", "n^2")},
                     metric="instructions", limit="n")
    missing = probe_of("d", {}, metric="instructions", limit="n")
    assert [p.verdict for p in (within, above, noisy, missing)] == [GOOD, BAD, SKIP, SKIP]
    assert within.sweep_id == 3 and within.growth == (Growth("instructions", "n", 1.0),)
    assert above.why.startswith("gate failed: instructions grows as n²")
    assert noisy.growth == (Growth("instructions", "", 1.0),)


def test_the_time_fit_is_shown_beside_the_gated_metric() -> None:
    """Work and time before and after: the gated count first, then the headline time."""
    fits = {"instructions": fit("instructions", "n"), "wall_s": fit("wall_s", "n", k=0.9)}
    p = probe_of("a", fits, metric="instructions", limit="n")
    assert p.growth == (Growth("instructions", "n", 1.0), Growth("wall_s", "n", 0.9))
    assert probe_of("a", fits, metric=None, limit="n").growth == (Growth("wall_s", "n", 0.9),)


def test_goods_own_fit_sets_the_limit_to_the_slowest_class_it_supports() -> None:
    """A bracket n … n log n allows n log n; a settled class allows itself; nothing, no limit."""
    assert limit_of(fit("wall_s", INCONCLUSIVE, "n", "n log n")) == "n log n"
    assert limit_of(fit("wall_s", "n^2")) == "n^2"
    assert limit_of(fit("wall_s", INCONCLUSIVE)) is None
    assert limit_of(None) is None


class FakeGit:
    """Answers git by the argv's first words; records every call in order."""

    def __init__(self, answers: dict[str, str | None]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def __call__(self, args: Sequence[str], cwd: Path) -> str | None:
        self.calls.append(list(args))
        for prefix, out in self.answers.items():
            if " ".join(args).startswith(prefix):
                return out
        return ""


def test_refs_are_resolved_and_bad_ones_refused_in_one_sentence() -> None:
    """An option-looking ref never reaches git; an unknown one is a UsageError naming it."""
    git = FakeGit({"rev-parse": "abc123\n"})
    assert resolve(Path("/r"), "v1.0", git) == "abc123"
    assert git.calls == [["rev-parse", "--verify", "--quiet", "--end-of-options", "v1.0^{commit}"]]
    with pytest.raises(UsageError, match="'--upload-pack=x' is not a commit"):
        resolve(Path("/r"), "--upload-pack=x", git)
    with pytest.raises(UsageError, match="'nope' is not a commit of /r"):
        resolve(Path("/r"), "nope", FakeGit({"rev-parse": None}))


def test_commits_between_lists_good_then_the_ancestry_path() -> None:
    """GOOD first, BAD last; GOOD not an ancestor of BAD, or GOOD = BAD, is refused."""
    git = FakeGit({"rev-list": "b1\nb2\nbad\n"})
    assert commits_between(Path("/r"), "good", "bad", git) == ["good", "b1", "b2", "bad"]
    with pytest.raises(UsageError, match="not an ancestor"):
        commits_between(Path("/r"), "good", "bad", FakeGit({"merge-base": None}))
    with pytest.raises(UsageError, match="the same commit"):
        commits_between(Path("/r"), "x", "x", git)


def test_the_worktree_is_removed_even_when_the_block_fails() -> None:
    """An error (or Ctrl-C) inside the block still removes and prunes the worktree; before it
    starts, git forgets the trees of bisects killed outright (their folders reaped)."""
    git = FakeGit({})
    with pytest.raises(KeyboardInterrupt), temporary_worktree(Path("/r"), "abc", git) as tree:
        assert tree.is_absolute() and tree.parent.is_dir()
        assert tree.parent.name.startswith(f"quadscope-bisect-p{os.getpid()}.")
        raise KeyboardInterrupt
    assert [c[:2] for c in git.calls] == [["worktree", "prune"], ["worktree", "add"],
                                          ["worktree", "remove"], ["worktree", "prune"]]
    assert not tree.parent.exists()


def test_subjects_are_read_in_one_call_and_fall_back_one_by_one() -> None:
    """One `git log` for every commit; when git refuses (an unknown hash), each alone."""
    git = FakeGit({"log --no-walk": "a1\0first one\nb2\0second: two\n"})
    assert commit_subjects(Path("/r"), ["b2", "a1", "", "b2"], git) == {
        "a1": "first one", "b2": "second: two"}
    assert len(git.calls) == 1
    git = FakeGit({"log --no-walk": None, "log -1 --format=%H%x00%s a1": "a1\0only\n",
                   "log -1": None})
    assert commit_subjects(Path("/r"), ["a1", "zz"], git) == {"a1": "only"}


def test_history_points_get_their_subjects_and_old_ones_keep_none() -> None:
    """A sweep whose commit git does not know (or that ran outside git) shows no subject."""
    point = HistoryPoint(sweep_id=1, commit="a1", branch="", dirty=False, created_at=0.0,
                         machine="", meter="time", cls="n", exponent=1.0, exponent_ci=None,
                         cost=None, cost_lo=None, cost_hi=None)
    history = History("x", "wall_s", 10, "git", 0.0,
                      (point, dataclasses.replace(point, sweep_id=2, commit="")))
    shown = with_subjects(history, {"a1": "make it fast"})
    assert [p.subject for p in shown.points] == ["make it fast", ""]


class FakeStore:
    """The one stored sweep `--like` reads."""

    def get_sweep(self, ref: str) -> Sweep:
        assert ref == "7"
        return Sweep(id=7, name="hot", mode="sizes", command=("./prog", "{n}"),
                     sizes=(100, 200, 400), repeat=5, meter="instructions")


def bisect_args(*argv: str) -> argparse.Namespace:
    return options_after_refs(build_parser("bisect").parse_args(["bisect", *argv]))


def test_options_may_follow_good_and_bad() -> None:
    """`GOOD BAD --sizes ... -- PROG` reads as `--sizes ... GOOD BAD -- PROG`."""
    args = bisect_args("v1", "HEAD", "--sizes", "1,2", "--build", "make", "--", "./p", "-x", "{n}")
    assert (args.good, args.bad, args.sizes, args.build) == ("v1", "HEAD", "1,2", "make")
    assert args.command == ["--", "./p", "-x", "{n}"]
    args = bisect_args("--repeat", "4", "v1", "HEAD", "--", "./p", "--sizes", "{n}")
    assert args.repeat == 4 and args.sizes is None and args.command[-2:] == ["--sizes", "{n}"]


def test_like_takes_the_command_sizes_meter_and_name_from_a_stored_sweep() -> None:
    """`--like 7` sweeps each commit as sweep 7 was swept, under its name (so history has them)."""
    spec = _spec(bisect_args("v1", "HEAD", "--like", "7"), FakeStore())  # type: ignore[arg-type]
    assert (spec.command, spec.sizes, spec.meter, spec.name, spec.repeat) == (
        ("./prog", "{n}"), (100, 200, 400), "instructions", "hot", 5)
    with pytest.raises(UsageError, match="--like 7 takes the command and sizes"):
        _spec(bisect_args("v1", "HEAD", "--like", "7", "--", "./q"), FakeStore())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="give --sizes"):
        _spec(bisect_args("v1", "HEAD", "--", "./q", "{n}"), FakeStore())  # type: ignore[arg-type]


def test_the_meter_is_exact_where_one_counts_here() -> None:
    """Without --meter, the first exact meter that can count the command; else the default."""
    def never(target: Target) -> Measuring:
        raise AssertionError("nothing is measured while choosing")

    plain = Meter("plain", ("wall_s",), False, never)
    counted = Meter("counted", ("instructions",), True, never)
    absent = Meter("absent", ("instructions",), True, never, unavailable=lambda t: "no counter")
    assert exact_meter(("./p",), False, Registry((plain, counted))) == "counted"
    assert exact_meter(("./p",), False, Registry((plain, absent))) == "plain"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


@pytest.mark.slow
def test_bisect_names_the_commit_that_made_the_loop_quadratic(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact instruction counts: the fifth commit is named, the 2× constant is not blamed, the
    sweeps carry the worktree's commits, and the user's tree is as it was."""
    repo = tmp_path / "repo"  # ten commits: the third doubles the constant, the fifth is n²
    commits = make_repo(repo)
    db = tmp_path / "results.db"
    monkeypatch.chdir(repo)
    started = time.monotonic()
    code = main(["bisect", commits[0], "HEAD", "--build", BUILD,
                 "--meter", "instructions", "--sizes", "250..4000", "--name", "sumprog",
                 "--db", str(db), "--", "./prog", "{n}"])
    took_s = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.splitlines()[0] == f"first bad commit: {commits[4][:10]} sum against every earlier item"
    assert re.search(r"before \(\w+\): instructions n \(k = (0\.9\d|1\.0\d)\)", out)
    assert re.search(r"after  \(\w+\): instructions n² \(k = (1\.9\d|2\.0\d)\)", out)
    assert f"good {commits[2][:10]} each item costs twice as much" in err  # probed, not blamed
    assert took_s < 120, f"bisect took {took_s:.0f} s"
    # The user's tree: no other worktree left, nothing changed, no build output.
    assert _git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert _git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert not (repo / "prog").exists()
    # Every sweep recorded the commit it measured, so history lines them up with subjects.
    monkeypatch.setenv("COLUMNS", "200")  # wide enough for the subject column
    code = main(["history", "sumprog", "--db", str(db), "--metric", "instructions"])
    shown, _ = capsys.readouterr()
    assert code == 0
    assert "sum against every earlier item" in shown and "n → n²" in shown
    assert shown.count("each item costs twice") == 1
    # The provenance is the worktree's commit, not the user's HEAD (commits[-1]).
    swept = {s.git_commit for s, _ in open_store(db, readonly=True).list_sweeps()}
    assert swept == {commits[0], commits[2], commits[3], commits[4], commits[9]}


@pytest.mark.slow
def test_bisect_outside_a_repository_or_with_an_unknown_commit_is_one_sentence(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Exit 2 and one line, before anything is swept or stored."""
    monkeypatch.chdir(tmp_path)
    args = ["--sizes", "1,2,3,4", "--db", str(tmp_path / "r.db"), "--", "true", "{n}"]
    assert main(["bisect", "a", "b", *args]) == 2
    assert "is not inside a git repository" in capsys.readouterr().err
    make_repo(tmp_path / "repo")
    monkeypatch.chdir(tmp_path / "repo")
    assert main(["bisect", "HEAD~2", "nope", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'nope' is not a commit" in err
    assert not (tmp_path / "r.db").exists()


@pytest.mark.slow
def test_a_good_that_is_not_good_is_one_sentence_and_exit_13(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """GOOD already quadratic against --fail-above n: GOOD is swept, BAD is not, exit 13."""
    commits = make_repo(tmp_path / "repo", commits=6, quadratic_at=4)
    monkeypatch.chdir(tmp_path / "repo")
    code = main(["bisect", commits[4], commits[5], "--fail-above", "n", "--build", BUILD,
                 "--meter", "instructions", "--sizes", "250..2000", "--db", str(tmp_path / "r.db"),
                 "--", "./prog", "{n}"])
    err = capsys.readouterr().err
    assert code == 13
    assert err.splitlines()[-1].startswith(f"quadscope: GOOD {commits[4][:10]} is not good: "
                                           "gate failed: instructions grows as n²")
    assert len(open_store(tmp_path / "r.db", readonly=True).list_sweeps()) == 1


@pytest.mark.slow
def test_a_build_that_fails_says_why_in_its_last_lines(tmp_path: Path) -> None:
    """Exit status and the tail of stderr; a build that succeeds is ok."""
    assert build(tmp_path, "echo one >&2; echo two >&2; exit 3") == Built(
        False, "the build exited 3: one / two")
    assert build(tmp_path, "true") == Built(True)
    assert build(tmp_path, "sleep 5", timeout_s=0.2) == Built(False, "the build took more than 0.2 s")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_a_build_leaves_no_process_behind_and_is_not_held_by_one(tmp_path: Path) -> None:
    """A timed-out build's children kept running (a make -j's compilers through the next
    sweep); a build that left a background process behind is done when its shell is."""
    pids = tmp_path / "pids"
    started = time.monotonic()
    assert build(tmp_path, f"sleep 60 & echo $! >> {pids}; sleep 60", timeout_s=0.5) == Built(
        False, "the build took more than 0.5 s")
    assert build(tmp_path, f"sleep 60 & echo $! >> {pids}; echo built") == Built(True)
    # A daemon out of the build's session (setsid) outlived bisect itself.
    assert build(tmp_path, f"setsid sleep 60 & echo $! >> {pids}; sleep 0.5; echo built") == Built(
        True)
    assert time.monotonic() - started < 30  # neither waited for its leftover sleep
    left = [int(p) for p in pids.read_text().split()]
    try:
        deadline = time.monotonic() + 10  # killed, then reaped by init: a moment as a zombie
        while any(_alive(p) for p in left) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(left) == 3 and not any(_alive(p) for p in left)
    finally:
        for p in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)


def test_a_build_without_build_timeout_is_bounded_by_the_default(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`bisect --build 'sleep 1000'` without --build-timeout waited forever: the build gets
    DEFAULT_BUILD_TIMEOUT_S, and a build stopped there says which option gives it longer."""
    from quadscope.commands.commits import Measurer
    from quadscope.run import worktree

    limits: list[float] = []

    def never_ends(tree: Path, command: str, *, timeout_s: float) -> Built:
        limits.append(timeout_s)
        return Built(False, worktree.timed_out(timeout_s))

    monkeypatch.setattr(worktree, "checkout", lambda tree, commit: True)
    monkeypatch.setattr(worktree, "build", never_ends)
    for given, said in ((None, "the build took more than 600 s (--build-timeout's default, "
                                "600 s); give a longer build --build-timeout S"),
                        (5.0, "the build took more than 5 s")):
        args = argparse.Namespace(build="sleep 1000", build_timeout=given)
        # No spec or store: the sweep is never reached, the build fails first.
        measured = Measurer(args, None, None, tmp_path, tmp_path)("abc")  # type: ignore[arg-type]
        assert measured.failed == said
    assert limits == [worktree.DEFAULT_BUILD_TIMEOUT_S, 5.0] and limits[0] == 600

