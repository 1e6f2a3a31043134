"""Git for `quadscope bisect`: the commits to search, a throwaway worktree, a build.

Contract: the user's working tree and index are never touched. `repo_root(cwd,
git=)` is the repository's top directory; `resolve(repo, ref, git=)` a ref's
full commit hash; `commits_between(repo, good, bad, git=)` GOOD, then every
commit on the ancestry path to BAD, oldest first: each raises `UsageError` with
one sentence (not a repository, an unknown ref, a ref that looks like an
option, GOOD not an ancestor of BAD). `temporary_worktree(repo, commit, git=)`
is a context manager around a detached `git worktree` in a temporary
directory, removed (and pruned from the repository's list) when the block
ends, however it ends: an error, Ctrl-C or SIGTERM (`errors.Stopped`).
`checkout(tree, commit, git=)` moves it to a commit and deletes what the last
build left (`git clean -fdx`), so every commit is built from its own sources.
`build(tree, command, timeout_s=)` runs `command` through /bin/sh -c inside the
tree, for at most `timeout_s` (DEFAULT_BUILD_TIMEOUT_S, 600 s, unless given), and
returns a `Built` (ok, and the last lines of its output to say why not). Git is
reached through a `GitRunner` (`measure.provenance`), so tests can pass a fake;
`long_git` is the real one with a timeout fit for checkouts.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from quadscope.errors import UsageError
from quadscope.measure.provenance import GitRunner
from quadscope.scratch import make_scratch

GIT_TIMEOUT_S = 300.0  # a checkout of a large repository takes more than provenance's 5 s
TAIL_LINES = 5


def long_git(args: Sequence[str], cwd: Path) -> str | None:
    """`git ARGS` in `cwd`: its stdout, or None when git is absent, fails or outlasts GIT_TIMEOUT_S."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def repo_root(cwd: Path, git: GitRunner = long_git) -> Path:
    """The top directory of the repository `cwd` is in; UsageError outside one."""
    out = git(["rev-parse", "--show-toplevel"], cwd)
    if not out or not out.strip():
        raise UsageError(f"{cwd} is not inside a git repository: run quadscope in the "
                         "repository whose commits to sweep")
    return Path(out.strip())


def resolve(repo: Path, ref: str, git: GitRunner = long_git) -> str:
    """`ref`'s full commit hash; UsageError when it names no commit."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"{ref!r} is not a commit: give a hash, a tag or a branch")
    out = git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], repo)
    if not out or not out.strip():
        raise UsageError(f"{ref!r} is not a commit of {repo}: give a hash, a tag or a branch "
                         "that `git log` shows")
    return out.strip()


def commits_between(repo: Path, good: str, bad: str, git: GitRunner = long_git, *,
                    names: tuple[str, str] = ("GOOD", "BAD")) -> list[str]:
    """GOOD, then the commits on the ancestry path from it to BAD, oldest first (BAD last);
    `names` are what the sentences call them (`history --run` says A and B)."""
    first, last = names
    if good == bad:
        raise UsageError(f"{first} and {last} are the same commit: there is nothing between "
                         "them to sweep")
    if git(["merge-base", "--is-ancestor", good, bad], repo) is None:
        raise UsageError(f"{first} ({good[:10]}) is not an ancestor of {last} ({bad[:10]}): "
                         f"give an older {first}, or swap them")
    out = git(["rev-list", "--topo-order", "--reverse", "--ancestry-path", f"{good}..{bad}"], repo)
    after = (out or "").split()
    if not after or after[-1] != bad:
        raise UsageError(f"git lists no commits from {good[:10]} to {bad[:10]}")
    return [good, *after]


@contextlib.contextmanager
def temporary_worktree(repo: Path, commit: str, git: GitRunner = long_git) -> Iterator[Path]:
    """A detached worktree of `repo` at `commit` in a temporary directory, removed afterwards."""
    parent = make_scratch("bisect")  # a SIGKILLed bisect's tree goes with the next quadscope
    tree = parent / "tree"
    git(["worktree", "prune"], repo)  # and git forgets the trees reaped so
    try:
        if git(["worktree", "add", "--detach", "--force", str(tree), commit], repo) is None:
            raise UsageError(f"git could not make a worktree of {repo} at {commit[:10]} in "
                             f"{tree}: check `git worktree list` and the disk space")
        yield tree
    finally:
        # Removed even when the block was interrupted: the user's repository keeps no trace.
        git(["worktree", "remove", "--force", "--force", str(tree)], repo)
        shutil.rmtree(parent, ignore_errors=True)
        git(["worktree", "prune"], repo)


def checkout(tree: Path, commit: str, git: GitRunner = long_git) -> bool:
    """Move the worktree to `commit` with nothing left from the last build; False if git failed."""
    moved = git(["checkout", "--quiet", "--force", "--detach", commit], tree) is not None
    return moved and git(["clean", "-fdxq"], tree) is not None


@dataclass(frozen=True, slots=True)
class Built:
    """A build's outcome: ok, and the last lines of its output when it failed."""

    ok: bool
    tail: str = ""


# A build with no --build-timeout: `bisect --build 'sleep 1000'` once waited forever. Ten
# minutes outlasts the build of most projects' one program; a longer one gives its own.
DEFAULT_BUILD_TIMEOUT_S = 600.0


def build(tree: Path, command: str, *, timeout_s: float = DEFAULT_BUILD_TIMEOUT_S) -> Built:
    """`/bin/sh -c COMMAND` in `tree`: ok on exit 0; a failure, a timeout or no shell is not ok.

    However the build ends (done, timed out, Ctrl-C), every process it started is
    killed: a timed-out `make -j` kept its compilers running through the next commit's
    sweep, a build that started a background process held the output pipe open so
    `bisect` waited for that process, and one that started a daemon with `setsid`
    (out of its session) outlived `bisect` itself. So the build runs as a run of
    quadscope's launcher (`measure.resident`: a cgroup of its own, else a child
    subreaper, killed whole after the run), its stdout and stderr together kept as the
    run's stderr tail; without a C compiler for the launcher, in a session of its own,
    that session killed afterwards, and what left it adopted and killed (`orphans`).
    """
    from quadscope.errors import ToolMissingError
    from quadscope.measure.resident import build_launcher

    try:
        launcher = build_launcher()
    except ToolMissingError:
        return _build_in_session(tree, command, timeout_s)
    return _build_in_launcher(launcher, tree, command, timeout_s)


_BUILD_SH = 'cd -- "$1" || exit 126; exec /bin/sh -c "$2" 1>&2'  # both streams: the tail


def _build_in_launcher(launcher: str, tree: Path, command: str, timeout_s: float) -> Built:
    from quadscope.measure.resident import Request, ResidentLauncher

    try:
        resident = ResidentLauncher(launcher, tail_bytes=_TAIL_BYTES)
    except (OSError, RuntimeError) as exc:
        return Built(False, f"the build could not start: {exc}")
    try:
        reply = resident.run(Request("/bin/sh", ("/bin/sh", "-c", _BUILD_SH, "quadscope-build",
                                                 str(tree), command), (), timeout_s))
    finally:
        resident.close()
    if reply.errno:
        return Built(False, f"the build could not start: {os.strerror(reply.errno)}")
    if reply.timed_out:
        return Built(False, timed_out(timeout_s))
    code = os.waitstatus_to_exitcode(reply.status)
    return Built(True) if code == 0 else _failed(code, reply.stderr_tail)


_TAIL_BYTES = 4000


def timed_out(timeout_s: float) -> str:
    """Why a build stopped at its limit `timeout_s` failed."""
    return f"the build took more than {timeout_s:g} s"


def _failed(code: int, said: str) -> Built:
    lines = said.strip().splitlines()[-TAIL_LINES:]
    return Built(False, f"the build exited {code}" + (": " + " / ".join(lines) if lines else ""))


def _build_in_session(tree: Path, command: str, timeout_s: float) -> Built:
    """The build in a session of its own, that session killed afterwards; output via files."""
    from quadscope.orphans import adopting

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, adopting() as adopted:
        try:
            proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=tree, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
        except OSError as exc:
            return Built(False, f"the build could not start: {exc.strerror or exc}")
        adopted.watch(proc.pid)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return Built(False, timed_out(timeout_s))
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if code == 0:
            return Built(True)
        said = [_text(f) for f in (err, out)]
    return _failed(code, said[0] or said[1])


def _text(f: IO[bytes]) -> str:
    f.seek(0)
    return f.read().decode(errors="replace")


__all__ = ["DEFAULT_BUILD_TIMEOUT_S", "GIT_TIMEOUT_S", "Built", "build", "checkout",
           "commits_between", "long_git", "repo_root", "resolve", "temporary_worktree",
           "timed_out"]
