"""Where a sweep ran: the git commit, branch and dirtiness, and the machine.

Contract: `collect_provenance(*, host, cwd=None, git=run_git)` returns a
`Provenance` (`git_commit`, `git_branch`, `git_dirty`, and `machine`:
`machine_label(host)`, "hostname (CPU)") that the session (`run.session`)
hands to `run_sweep`, whose `new_sweep` copies it into the stored `Sweep` (the
meter comes from the spec), so `quadscope history` can line sweeps up commit by commit,
as asv does for timings. It never fails: outside a git repository, without
git, or when git errors, the git fields stay empty. Git is reached only
through a `GitRunner` (argv, cwd) -> stdout or None, so tests pass a fake;
`run_git` is the real one (bounded by a timeout, never prompting).
`commit_order(repo, git=)` is git's own order of the commits reachable from
HEAD, oldest first (`git rev-list --topo-order --reverse HEAD`), or None
without a repository. `commit_subjects(repo, commits, git=)` is each commit's
subject line read from git at display time ({} without a repository; a commit
git does not know is left out), so sweeps stored before subjects were shown
get theirs too; the caller makes the text safe to print (`textsafe.visible`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from quadscope.host import Host

GitRunner = Callable[[Sequence[str], Path], "str | None"]

_GIT_TIMEOUT_S = 5.0


def run_git(args: Sequence[str], cwd: Path) -> str | None:
    """`git ARGS` in `cwd`: its stdout, or None when git is absent, fails or hangs."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=_GIT_TIMEOUT_S, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass(frozen=True, slots=True)
class Provenance:
    git_commit: str = ""
    git_branch: str = ""
    git_dirty: bool = False
    machine: str = ""


def machine_label(host: Host) -> str:
    """"hostname (CPU model)" from `host_info()`'s facts; what is missing is left out."""
    name, cpu = host.hostname or "", host.cpu or ""
    return f"{name} ({cpu})" if name and cpu else name or cpu


def collect_provenance(*, host: Host, cwd: Path | None = None,
                       git: GitRunner = run_git) -> Provenance:
    """The provenance of a sweep started now in `cwd` (the working directory by default)."""
    where = cwd or Path.cwd()
    commit = (git(["rev-parse", "--verify", "HEAD"], where) or "").strip()
    branch = dirty = ""
    if commit:
        branch = (git(["symbolic-ref", "--quiet", "--short", "HEAD"], where) or "").strip()
        # Untracked files do not count: build outputs and result databases live there.
        dirty = (git(["status", "--porcelain", "--untracked-files=no"], where) or "").strip()
    return Provenance(git_commit=commit, git_branch=branch, git_dirty=bool(dirty),
                      machine=machine_label(host))


def commit_order(repo: Path, git: GitRunner = run_git) -> list[str] | None:
    """Commits reachable from HEAD in `repo`, oldest first, in git's topological order."""
    out = git(["rev-list", "--topo-order", "--reverse", "HEAD"], repo)
    return None if out is None else out.split()


def commit_subjects(repo: Path, commits: Sequence[str], git: GitRunner = run_git) -> dict[str, str]:
    """Each known commit's subject line, by full hash; {} when git cannot say."""
    wanted = sorted({c for c in commits if c and not c.startswith("-")})
    if not wanted:
        return {}
    # One process for all of them; %x00 keeps a subject's own spaces out of the split.
    out = git(["log", "--no-walk=unsorted", "--ignore-missing", "--format=%H%x00%s", *wanted], repo)
    if out is None:  # an unknown hash fails the whole call: ask one by one
        found = [git(["log", "-1", "--format=%H%x00%s", c, "--"], repo) for c in wanted]
        out = "".join(f for f in found if f)
    pairs = (line.split("\0", 1) for line in out.splitlines() if "\0" in line)
    return {commit: subject for commit, subject in pairs}
