"""A throwaway git repository of known history: one commit makes a linear loop quadratic.

Contract: `make_repo(path, commits=, quadratic_at=, twice_at=)` creates a new
repository at `path` (which must not exist) holding `commits` commits of a tiny
C program, `prog.c` (built with BUILD; it prints the sum of its loop for n in
argv[1]): the first sums n items of constant work, commit `twice_at` (1-based)
doubles each item's work (the constant, not the class), commit `quadratic_at`
sums every item against every earlier one (n²), and the others only append to
`notes.txt`. It returns the commits' full hashes, oldest first, and
`SUBJECTS` names the commits that change the program. `quadscope bisect`'s
real test and `bench/bisect.py` sweep it; it needs git and a C compiler, and
commits as a fixed author, whatever the user's git configuration.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

BUILD = "cc -O0 -o prog prog.c"  # -O0 and a volatile sum: the compiler keeps every loop
SUBJECTS = {"linear": "sum the items", "twice": "each item costs twice as much",
            "quadratic": "sum against every earlier item"}

_PROG = """#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    volatile long s = 0;
%s
    printf("%%ld\\n", (long)s);
    return 0;
}
"""
_LOOPS = {
    "linear": "    for (long i = 0; i < n; i++) for (long k = 0; k < 200; k++) s += k;",
    "twice": "    for (long i = 0; i < n; i++) for (long k = 0; k < 400; k++) s += k;",
    "quadratic": "    for (long i = 0; i < n; i++) for (long j = 0; j < i; j++) s += j;",
}
_AUTHOR = {"GIT_AUTHOR_NAME": "quadscope", "GIT_AUTHOR_EMAIL": "quadscope@example.com",
           "GIT_COMMITTER_NAME": "quadscope", "GIT_COMMITTER_EMAIL": "quadscope@example.com"}


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **_AUTHOR}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True, env=env).stdout


def make_repo(path: Path, *, commits: int = 10, quadratic_at: int = 5,
              twice_at: int = 3) -> list[str]:
    """The repository (module docstring); its commits' hashes, oldest first."""
    if not 1 < twice_at < quadratic_at <= commits:
        raise ValueError("need 1 < twice_at < quadratic_at <= commits")
    path.mkdir(parents=True)
    _git(path, "init", "-q")
    for i in range(1, commits + 1):
        change = {1: "linear", twice_at: "twice", quadratic_at: "quadratic"}.get(i)
        if change is None:
            with (path / "notes.txt").open("a") as notes:
                notes.write(f"note {i}\n")
            _git(path, "add", "notes.txt")
            subject = f"notes {i}"
        else:
            (path / "prog.c").write_text(_PROG % _LOOPS[change])
            _git(path, "add", "prog.c")
            subject = SUBJECTS[change]
        _git(path, "commit", "-q", "--no-gpg-sign", "-m", subject)
    return _git(path, "rev-list", "--reverse", "HEAD").split()


__all__ = ["BUILD", "SUBJECTS", "make_repo"]
