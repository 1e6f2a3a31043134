"""Programs no one here tuned for: run quadscope on them as a user would, and grade each verdict.

Contract: `WORKLOADS` are small programs of known growth whose shapes differ
from the other benches' (shell loops, perl, awk, jq, node, sqlite one-liners,
Python idioms, kernel-bound and sublinear programs, a program that fails at
large n, one whose quadratic term is a few percent of its cost); `API_CASES`
are Python functions given to the API (lambdas, closures, methods, generators).
`python bench/unseen.py [--busy] [--only NAME,...] [--jobs 2]` runs each once
through `quadscope run` (adaptive, `--budget`, `--fail-above GATE`) or
`assert_scales`, optionally under `/work/shared/tools/busy --cores 1 --memory 64`,
and prints a Markdown table: the headline bracket, its grade against the
truth, the gate's exit against the expected one, and quadscope's own wall time.

Grades: `right` (the class settled, and true), `bracket` (two neighbouring
classes, one true), `wider`, `undecided` (no bracket), `WRONG` (a class or
bracket that excludes the truth: confidently wrong). The truths, and why:

* bash `while read` over a file appended to each iteration — n² (i lines read
  at iteration i; measured 1.7 s at 500, 8.5 s at 1000).
* awk associative array of n keys, then a `for (k in a)` sum — n.
* `seq | shuf | sort -u` — n log n (or n: a factor log n is hard to see).
* jq nested `range` with `select` — n² comparisons; jq `sort` — n log n / n.
* node `Array.includes(-1)` n times on an n array — n².
* perl prepend `$s = "x" . $s` — n² (memmove; 0.15 s at 1e5, 6 s at 4e5).
* sqlite3 insert of n rows into an integer primary key, then sum — n / n log n.
* CPython `l[0] = l[0] + "x"` (a list-held str: no in-place resize) — n²
  (0.4 s at 1e5, 15 s at 4e5); the local `s = s + "x"` is resized in place — n.
* CPython `-i in lst` for i < n — n²; `heapq` push and pop n — n log n / n;
  naive `fib(n)` — cⁿ.
* bisect over a file of n fixed-width records made untimed by `--setup`,
  2000 look-ups through mmap — log n (start-up dominates: 1 or log n).
* CPython with a big import start-up and a `sum(range(n))` — n.
* CPython creating n files in a fresh directory — n (ext4's htree: n log n).
* CPython printing n lines to stdout — n.
* CPython summing n numbers and exiting 3 above n = 200000 — n (the failing
  sizes must end growth, not the verdict).
* CPython with a linear loop plus a quadratic term of (n/400)² list scans —
  n² asymptotically; a few percent of the cost at n ≈ 64000.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV_PY = "/work/main/.venv/bin/python"
PY = "/root/.pyenv/versions/3.11.7/bin/python3"  # the real interpreter, not the pyenv shim
BUSY = ("/work/shared/tools/busy", "--cores", "1", "--memory", "64", "--seconds", "600", "--")
ORDER = ("1", "log n", "sqrt n", "n", "n log n", "n^2", "n^3", "c^n")
DATA = Path("/tmp/quadscope-bench-unseen")


@dataclass(frozen=True, slots=True)
class Workload:
    """One program: its command ({n} the size), the true classes, and a gate with its expected exit."""

    name: str
    truth: frozenset[str]
    command: tuple[str, ...]
    gate: str  # the class given to --fail-above
    gate_exit: int  # 0: passes; 8: fails
    shell: bool = False
    start: int = 1
    setup: str | None = None
    extra: tuple[str, ...] = field(default=())


def _py(name: str, code: str, truth: set[str], gate: str, gate_exit: int, start: int = 1,
        setup: str | None = None, python: str = PY) -> Workload:
    return Workload(name, frozenset(truth), (python, "-c", code, "{n}"), gate, gate_exit,
                    start=start, setup=setup)


_BISECT = """import mmap, sys
n = int(sys.argv[1])
with open(f"/tmp/quadscope-bench-unseen/rec-{n}.txt", "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    hits = 0
    for q in range(2000):
        key, lo, hi = (q * 7919) % (2 * n), 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if int(m[mid * 16:mid * 16 + 15]) < key: lo = mid + 1
            else: hi = mid
        hits += lo < n and int(m[lo * 16:lo * 16 + 15]) == key
print(hits)"""
_BISECT_SETUP = (f"mkdir -p {DATA} && [ -s {DATA}/rec-{{n}}.txt ] || "
                 f"awk -v n={{n}} 'BEGIN {{ for (i = 0; i < n; i++) printf \"%015d\\n\", 2 * i }}'"
                 f" > {DATA}/rec-{{n}}.txt")
_FILES = """import os, shutil, sys, tempfile
d = tempfile.mkdtemp(prefix="qs-unseen-")
for i in range(int(sys.argv[1])):
    with open(os.path.join(d, f"f{i}"), "w") as f: f.write("x")
shutil.rmtree(d)"""
_FIB = "import sys\nf = lambda k: k if k < 2 else f(k - 1) + f(k - 2)\nprint(f(int(sys.argv[1])))"
_MIXED = """import sys
n = int(sys.argv[1])
d = {}
for i in range(n): d[i] = str(i)
k = n // 400
lst = list(range(k))
print(len(d), sum(1 for i in range(k) if -1 in lst))"""

WORKLOADS: tuple[Workload, ...] = (
    Workload("bash append+read loop", frozenset({"n^2"}),
             ('f=$(mktemp); for i in $(seq {n}); do echo $i >> $f; c=0; '
              'while read l; do c=$((c+1)); done < $f; done; rm $f',), "n", 8, shell=True),
    Workload("awk assoc array", frozenset({"n"}),
             ("awk", "-v", "n={n}", "BEGIN { for (i = 0; i < n; i++) a[i] = i; "
              "for (k in a) s += a[k]; print s }"), "n", 0),
    Workload("seq|shuf|sort -u", frozenset({"n", "n log n"}),
             ("seq {n} | shuf --random-source=/dev/zero | sort -u | wc -l",), "n log n", 0,
             shell=True),
    Workload("jq nested select", frozenset({"n^2"}),
             ("jq", "-n", "[range({n}) as $i | range({n}) | select(. == $i)] | length"), "n", 8),
    Workload("jq sort", frozenset({"n", "n log n"}),
             ("jq", "-n", "[range({n}) | (. * 7919) % {n}] | sort | length"), "n log n", 0),
    Workload("node includes loop", frozenset({"n^2"}),
             ("node", "-e", "const n = +process.argv[1], a = [...Array(n).keys()]; let c = 0; "
              "for (let i = 0; i < n; i++) c += a.includes(-i - 1); console.log(c)", "{n}"),
             "n", 8),
    Workload("perl prepend", frozenset({"n^2"}),
             ("perl", "-e", '$s = ""; for (1..$ARGV[0]) { $s = "x" . $s } print length $s', "{n}"),
             "n", 8),
    Workload("sqlite pk insert", frozenset({"n", "n log n"}),
             ("sqlite3", ":memory:", "CREATE TABLE t(x INTEGER PRIMARY KEY, y); WITH RECURSIVE "
              "c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {n}) INSERT INTO t "
              "SELECT i, i * 7 FROM c; SELECT sum(y) FROM t;"), "n log n", 0),
    _py("py list-held str +", "import sys\nl = ['']\nfor i in range(int(sys.argv[1])): "
        "l[0] = l[0] + 'x'", {"n^2"}, "n", 8),
    _py("py local str +", "import sys\ndef f(n):\n    s = ''\n    for i in range(n): s = s + 'x'\n"
        "    return len(s)\nprint(f(int(sys.argv[1])))", {"n"}, "n", 0),
    _py("py x in list", "import sys\nn = int(sys.argv[1])\nl = list(range(n))\n"
        "print(sum(1 for i in range(n) if -i in l))", {"n^2"}, "n", 8),
    _py("py heapq", "import heapq, sys\nh = []\nn = int(sys.argv[1])\n"
        "for i in range(n): heapq.heappush(h, (i * 7919) % n)\n"
        "print(sum(heapq.heappop(h) for _ in range(n)))", {"n", "n log n"}, "n log n", 0),
    _py("py fib", _FIB, {"c^n"}, "n^3", 8),
    _py("py bisect mmap", _BISECT, {"1", "log n"}, "n", 0, setup=_BISECT_SETUP),
    _py("py big import", "import sys, decimal, json, email.parser, http.client, asyncio, "
        "unittest\nprint(sum(range(int(sys.argv[1]))))", {"n"}, "n", 0),
    _py("py n files", _FILES, {"n", "n log n"}, "n log n", 0),
    _py("py prints n lines", "import sys\nfor i in range(int(sys.argv[1])): print(i)",
        {"n"}, "n", 0),
    _py("py exits 3 at n>2e5", "import sys\nn = int(sys.argv[1])\nprint(sum(range(n)))\n"
        "sys.exit(3 if n > 200000 else 0)", {"n"}, "n", 0),
    _py("py n + 3% n²", _MIXED, {"n^2"}, "n", 8),
    _py("shim: py dict build", "import sys\nd = {i: i for i in range(int(sys.argv[1]))}\n"
        "print(len(d))", {"n"}, "n", 0, python="python3"),
)


# --- Python functions through the API (run in a child: `unseen.py --api NAME`) -----------------

class _Index:
    """A class whose method is the target: a linear scan per query (a bound method)."""

    def __init__(self) -> None:
        self.items: list[int] = []

    def fill(self, n: int) -> int:
        self.items = []
        for i in range(n):
            if i not in self.items:  # n² : a membership test on a list
                self.items.append(i)
        return len(self.items)


def _closure(k: int) -> Callable[[int], int]:
    def build(n: int) -> int:
        return len({i * k: i for i in range(n)})
    return build


def _gen(n: int) -> int:
    return sum(x for x in (i * i for i in range(n)))


API_CASES: dict[str, tuple[Callable[[], Callable[[int], object]], frozenset[str], str, str]] = {
    # name: (target factory, truth, at_most, expected outcome)
    "api lambda sorted": (lambda: (lambda n: sorted(range(n, 0, -1))), frozenset({"n", "n log n"}),
                          "n log n", "pass"),
    "api closure dict": (lambda: _closure(3), frozenset({"n"}), "n", "pass"),
    "api method n²": (lambda: _Index().fill, frozenset({"n^2"}), "n", "fail"),
    "api generator sum": (lambda: _gen, frozenset({"n"}), "n", "pass"),
}


def _run_api(name: str, budget_s: float) -> dict[str, object]:
    from quadscope.api import ScalingError, ScalingUndecided, assert_scales
    factory, _truth, at_most, _expected = API_CASES[name]
    try:
        result = assert_scales(factory(), at_most=at_most, budget_s=budget_s)
        outcome = result.outcome
        analysis = result.analysis
        message = result.message
    except (ScalingError, ScalingUndecided) as exc:
        outcome, analysis, message = exc.result.outcome, exc.result.analysis, str(exc)
    work = analysis.work_metric
    fits = analysis.fits.get("A", {})
    fit = fits.get(work) if work and work in fits and fits[work].at_least else fits.get("wall_s")
    return {"outcome": outcome, "lo": _lo(fit), "hi": _hi(fit),
            "headline": message.splitlines()[0] if message else ""}


def _lo(fit: object) -> str:
    return str(getattr(fit, "at_least", "") or "")


def _hi(fit: object) -> str:
    return str(getattr(fit, "at_most", "") or "")


# --- grading ------------------------------------------------------------------------------------

def grade(lo: str, hi: str, truth: frozenset[str]) -> str:
    """right / bracket / wider / undecided / WRONG, from the headline's bracket [lo, hi]."""
    if lo not in ORDER or hi not in ORDER:
        return "undecided"
    span = set(ORDER[ORDER.index(lo):ORDER.index(hi) + 1])
    if not span & truth:
        return "WRONG"
    if lo == hi:
        return "right"
    return "bracket" if len(span) == 2 else "wider"


def _headline_fit(report: dict[str, object]) -> tuple[str, str]:
    fits = report["fits"]
    assert isinstance(fits, dict)
    sweep = report["sweep"]
    assert isinstance(sweep, dict)
    fit = fits.get("instructions") if sweep.get("meter") == "instructions" else None
    if not fit or (fit.get("class") == "inconclusive" and not fit.get("at_least")):
        fit = fits.get("wall_s", {})
    return fit.get("at_least") or "", fit.get("at_most") or ""


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    truth: str
    bracket: str
    grade: str
    gate: str
    gate_ok: bool
    wall_s: float
    headline: str


def run_workload(w: Workload, busy: bool, budget_s: float, db: Path) -> Row:
    with tempfile.TemporaryDirectory(prefix="qs-unseen-") as tmp:
        report = Path(tmp) / "r.json"
        argv = [VENV_PY, "-m", "quadscope", "run", "--db", str(db), "--budget", str(budget_s),
                "--timeout", str(budget_s), "--start", str(w.start), "--json", str(report),
                "--fail-above", w.gate, "--quiet"]
        if w.setup:
            argv += ["--setup", w.setup]
        if w.shell:
            argv += ["--shell"]
        argv += ["--", *w.command]
        if busy:
            argv = [*BUSY, *argv]
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        t0 = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        wall = time.monotonic() - t0
        if not report.exists():
            err = (proc.stderr.strip().splitlines() or ["?"])[-1]
            return Row(w.name, "/".join(sorted(w.truth)), "—", "no report", str(proc.returncode),
                       proc.returncode == w.gate_exit, wall, err[:70])
        data = json.loads(report.read_text())
    lo, hi = _headline_fit(data)
    verdict = str(data.get("verdict", "")).split(";")[0]
    return Row(w.name, "/".join(sorted(w.truth)), lo if lo == hi else f"{lo}…{hi}",
               grade(lo, hi, w.truth), f"{w.gate}: {proc.returncode}",
               proc.returncode == w.gate_exit, wall, verdict[:70])


def run_api(name: str, busy: bool, budget_s: float) -> Row:
    _factory, truth, at_most, expected = API_CASES[name]
    argv = [VENV_PY, __file__, "--api", name, "--budget", str(budget_s)]
    if busy:
        argv = [*BUSY, *argv]
    t0 = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    wall = time.monotonic() - t0
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        err = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return Row(name, "/".join(sorted(truth)), "—", "crashed", "—", False, wall, err[:70])
    lo, hi = str(out["lo"]), str(out["hi"])
    return Row(name, "/".join(sorted(truth)), lo if lo == hi else f"{lo}…{hi}",
               grade(lo, hi, truth), f"{at_most}: {out['outcome']}", out["outcome"] == expected,
               wall, str(out["headline"])[:70])


def table(rows: list[Row], busy: bool) -> str:
    lines = [f"### {'busy (busy --cores 1 --memory 64)' if busy else 'quiet'}", "",
             "| workload | truth | headline bracket | grade | gate: exit | gate ok | quadscope s |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.name} | {r.truth} | {r.bracket} | {r.grade} | {r.gate} | "
                     f"{'yes' if r.gate_ok else 'NO'} | {r.wall_s:.0f} |")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.grade] = counts.get(r.grade, 0) + 1
    gates = sum(r.gate_ok for r in rows)
    where = f"stores: {DATA}/{'busy' if busy else 'quiet'}/w*.db"
    lines += ["", where, "", ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
              + f"; gates as expected: {gates}/{len(rows)}"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", action="store_true")
    parser.add_argument("--only", default="", help="comma list of workload names (substrings)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--budget", type=float, default=25.0)
    parser.add_argument("--api", default="", help=argparse.SUPPRESS)
    parser.add_argument("--verbose", action="store_true", help="also print each headline")
    args = parser.parse_args()
    if args.api:
        print(json.dumps(_run_api(args.api, args.budget)))
        return 0
    wanted = [s.strip() for s in args.only.split(",") if s.strip()]

    def pick(name: str) -> bool:
        return not wanted or any(s in name for s in wanted)

    jobs: list[Callable[[], Row]] = []
    stores = DATA / ("busy" if args.busy else "quiet")  # kept: `quadscope show 1 --db ...`
    stores.mkdir(parents=True, exist_ok=True)
    for i, w in enumerate(WORKLOADS):
        if pick(w.name):
            db = stores / f"w{i}.db"
            db.unlink(missing_ok=True)
            jobs.append(partial(run_workload, w, args.busy, args.budget, db))
    for name in API_CASES:
        if pick(name):
            jobs.append(partial(run_api, name, args.busy, args.budget))
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(lambda job: job(), jobs))
    print(table(rows, args.busy))
    if args.verbose:
        print()
        for r in rows:
            print(f"- {r.name}: {r.headline}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
