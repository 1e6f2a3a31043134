"""Real programs of known growth for bench/accuracy.py: code nobody here wrote, run as users run it.

Contract: `programs()` returns each program's command (argv, or a shell string),
an untimed per-size `setup` where it reads an input file, its sizes for the
fixed grid and the classes its growth may truthfully read as (`truth`: the work
and the time share it, as the text beside each says). Nothing here runs a
sweep; the C programs are compiled on first use (`measure.cbuild`).

The truths, and why:

* CPython `list.insert(0, i)` n times — n²: each insert moves the whole list
  (memmove of i pointers).
* CPython `b += b"x"` on bytes n times — n²: bytes are immutable and CPython
  has no in-place concatenation for them (only for str), so every += copies.
* CPython `sorted` of n random floats — n log n (Timsort on random data makes
  about n log₂ n comparisons); the list's construction adds a linear term.
* CPython set membership, n lookups in a set of n ints — n.
* coreutils `sort` of n random numbers, one a line — n log n (merge sort).
* coreutils `tac` of n lines — n. The lines are fixed-width (`012345678`, 10
  bytes each), so the bytes grow exactly as n: `seq {n}` adds a digit per
  decade, bytes ≈ n·log₁₀ n, and the truth would be "n … n log n".
* sqlite3 self-join of n rows on an unindexed column, automatic indexes off —
  n² (a nested loop over both sides); the same join with an index — n log n
  (building the B-tree and n lookups, each log n).
* mawk `s = s "x"` n times — n²: each concatenation allocates a new string
  and copies the old one (Valgrind's counts at 10k..80k: ratios per doubling
  6.5, 4.3, 4.03, converging on 4). Large strings come from mmap, so the
  kernel's share (page faults on fresh pages) grows too, also as n².
* C `strcat` into one buffer n times — n² (strcat scans the string so far);
  the same with `stpcpy` keeping the end — n.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gate_stability import STRCAT_C  # one C source: the gate bench's strcat builder

PYTHON = "/root/.pyenv/versions/3.11.7/bin/python3"  # the real interpreter, not the pyenv shim
DATA = Path("/tmp/quadscope-bench-real")  # generated inputs, one file per size


_INSERT = "import sys\nl = []\nfor i in range(int(sys.argv[1])): l.insert(0, i)"
_BYTES = "import sys\nb = b''\nfor i in range(int(sys.argv[1])): b += b'x'\nprint(len(b))"
_SORTED = ("import random, sys\nrandom.seed(1)\n"
           "a = [random.random() for _ in range(int(sys.argv[1]))]\nprint(sorted(a)[0])")
_SET = ("import sys\nn = int(sys.argv[1])\ns = set(range(0, 2 * n, 2))\n"
        "print(sum(1 for i in range(n) if i in s))")
_LINES = ("/usr/bin/mawk -v n={n} 'BEGIN { srand(1); "
          "for (i = 0; i < n; i++) printf \"%.0f\\n\", int(rand() * 1e12) }'")
_SQL = ("CREATE TABLE t(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
        "WHERE i < {n}) INSERT INTO t SELECT (i * 7919) % {n} FROM c; {index}"
        "SELECT count(*) FROM t a JOIN t b ON a.x = b.x;")


def doubling(lo: int, steps: int = 5) -> tuple[int, ...]:
    """`steps` sizes doubling from `lo` (a factor 16 for 5)."""
    return tuple(lo * 2 ** k for k in range(steps))


@dataclass(frozen=True, slots=True)
class Program:
    """One real program: how to run it at size n, and the classes it may truthfully read as."""

    name: str
    truth: frozenset[str]  # the class names (classes.REGISTRY) the growth truly is
    command: tuple[str, ...]  # argv with {n}, or one shell string when `shell`
    sizes: tuple[int, ...]  # the fixed grid; adaptive mode starts at its first
    shell: bool = False
    setup: str | None = None  # untimed, once per size: writes the input file

    @property
    def expected(self) -> str:
        return "/".join(sorted(self.truth))


def _input_setup(kind: str, lines: str = _LINES) -> str:
    """Write the input once, atomically: a setup killed half-way (a timeout, Ctrl-C) left a
    truncated tac-8000000.txt of 2.4M lines that every later sweep read as 8M."""
    target = DATA / f"{kind}-{{n}}.txt"
    return (f"mkdir -p {DATA} && [ -s {target} ] || "
            f"{{ {lines} > {target}.$$ && mv -f {target}.$$ {target}; }}")


def programs() -> tuple[Program, ...]:
    """Every real program, in the order the bench sweeps them."""
    from quadscope.measure.cbuild import compile_c

    strcat = compile_c(STRCAT_C, name="bench-strcat")
    stpcpy = compile_c(STRCAT_C, name="bench-strcat-fixed", flags=("-O2", "-DFIXED"))
    no_index = _SQL.replace("{index}", "PRAGMA automatic_index = off; ")
    index = _SQL.replace("{index}", "CREATE INDEX ix ON t(x); ")
    return (
        Program("py list.insert(0)", frozenset({"n^2"}), (PYTHON, "-c", _INSERT, "{n}"),
                doubling(4000)),
        Program("py bytes +=", frozenset({"n^2"}), (PYTHON, "-c", _BYTES, "{n}"),
                doubling(8000)),
        Program("py sorted", frozenset({"n log n"}), (PYTHON, "-c", _SORTED, "{n}"),
                doubling(62500)),
        Program("py set membership", frozenset({"n"}), (PYTHON, "-c", _SET, "{n}"),
                doubling(125000)),
        Program("coreutils sort", frozenset({"n log n"}),
                ("/usr/bin/sort", str(DATA / "sort-{n}.txt")), doubling(62500),
                setup=_input_setup("sort")),
        Program("coreutils tac", frozenset({"n"}),
                ("/usr/bin/tac", str(DATA / "tac10-{n}.txt")), doubling(250000),
                setup=_input_setup("tac10", "/usr/bin/yes 012345678 | /usr/bin/head -n {n}")),  # 0.1 s
        Program("sqlite3 join (no index)", frozenset({"n^2"}),
                ("/usr/bin/sqlite3", ":memory:", no_index), doubling(250)),
        Program("sqlite3 join (index)", frozenset({"n log n"}),
                ("/usr/bin/sqlite3", ":memory:", index), doubling(25000)),
        Program("mawk s = s \"x\"", frozenset({"n^2"}),
                ("/usr/bin/mawk", "-v", "n={n}",
                 'BEGIN { s = ""; for (i = 0; i < n; i++) s = s "x"; print length(s) }'),
                doubling(10000)),
        Program("C strcat", frozenset({"n^2"}), (str(strcat), "{n}"), doubling(5000)),
        Program("C stpcpy", frozenset({"n"}), (str(stpcpy), "{n}"), doubling(5000)),
    )
