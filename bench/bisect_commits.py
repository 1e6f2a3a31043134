"""`quadscope bisect` against sweeping every commit (as asv's `run` over a range does).

On `quadscope.workloads.regression_repo`'s repository (a C loop; commit 3
doubles the constant, the middle commit makes it quadratic) of 10 and 30
commits (`--quick`: 10), both ways sweep with `--meter instructions` at the
same sizes, each commit built with `regression_repo.BUILD` in a temporary
worktree:

* bisect — `quadscope bisect FIRST HEAD`, which sweeps GOOD, BAD and the
  commits its binary search asks about;
* every commit — checkout, build and `quadscope run` of each commit in turn,
  then `quadscope history`'s changepoint marks name the commit where the
  class changed.

Each row gives the seconds, the sweeps made, the ratio and whether each named
the quadratic commit.

usage: .venv/bin/python bench/bisect_commits.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine

from quadscope.cli import main as quadscope
from quadscope.commands.history import load_history
from quadscope.run.worktree import build, checkout, temporary_worktree
from quadscope.store import open_store
from quadscope.workloads.regression_repo import BUILD, make_repo

SWEEP = ["--meter", "instructions", "--sizes", "250..4000"]


def quiet(argv: list[str]) -> tuple[int, str]:
    """`quadscope ARGV` with its output kept: the exit code and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = quadscope(argv)
    if code in (129, 130, 143):  # quadscope caught the signal meant to stop this benchmark
        raise SystemExit(code)
    return code, out.getvalue()


def by_bisect(repo: Path, commits: list[str], db: Path) -> tuple[float, int, str]:
    """Seconds, sweeps and the commit `quadscope bisect` named."""
    started = time.monotonic()
    with contextlib.chdir(repo):
        code, out = quiet(["bisect", commits[0], "HEAD", "--build", BUILD, *SWEEP,
                           "--name", "bisect", "--db", str(db), "--", "./prog", "{n}"])
    took_s = time.monotonic() - started
    named = out.split()[3] if code == 0 else "none"
    return took_s, len(open_store(db, readonly=True).list_sweeps()), named


def by_every_commit(repo: Path, commits: list[str], db: Path) -> tuple[float, int, str]:
    """Seconds, sweeps and the commit where `history` marks the class change."""
    started = time.monotonic()
    with temporary_worktree(repo, commits[0]) as tree, contextlib.chdir(tree):
        for commit in commits:
            if checkout(tree, commit) and build(tree, BUILD).ok:
                quiet(["run", *SWEEP, "--name", "every", "--db", str(db), "--", "./prog", "{n}"])
    took_s = time.monotonic() - started
    history = load_history(open_store(db, readonly=True), "every", "instructions", repo)
    changed = [p.commit for p in history.points if p.class_changed]
    return took_s, len(history.points), changed[0][:10] if changed else "none"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="bisect against sweeping every commit")
    parser.add_argument("--quick", action="store_true", help="10 commits only")
    args = parser.parse_args(argv)
    m = machine()
    print(f"`bench/bisect_commits.py{' --quick' if args.quick else ''}` on {m['date']}: {m['nproc']} "
          f"cores, kernel {m['kernel']}, {m['cpu']}, Python {m['python']}.\n")
    print("Both ways sweep each commit they try with `--meter instructions` at sizes 250..4000, "
          "built with `cc -O0` in a temporary worktree; the repository "
          "(`quadscope.workloads.regression_repo`) doubles the constant at commit 3 and makes the "
          "loop quadratic at its middle commit. \"Every commit\" sweeps all of them and reads the "
          "class change from `quadscope history`'s marks, as asv does over a range.\n")
    print("| commits | bisect: s (sweeps) | every commit: s (sweeps) | ratio | "
          "bisect named | every commit named | the n² commit |")
    print("|---|---|---|---|---|---|---|")
    for count in (10,) if args.quick else (10, 30):
        with tempfile.TemporaryDirectory(prefix="quadscope-bench-bisect-") as scratch:
            root = Path(scratch)
            commits = make_repo(root / "repo", commits=count, quadratic_at=count // 2)
            b_s, b_n, b_named = by_bisect(root / "repo", commits, root / "bisect.db")
            e_s, e_n, e_named = by_every_commit(root / "repo", commits, root / "every.db")
        print(f"| {count} | {b_s:.1f} ({b_n}) | {e_s:.1f} ({e_n}) | {e_s / b_s:.1f}× | "
              f"{b_named} | {e_named} | {commits[count // 2 - 1][:10]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
