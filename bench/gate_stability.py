"""Gate stability: does a blatant quadratic fail its gate, and its fix pass, on every run?

Six gates, each run R times (`--runs`, default 20; `--quick`: 5) as a user
runs them, with quadscope's defaults (`--meter auto`: the work is counted when
time alone cannot decide), in a fresh database each time:

* C strcat — a C program building a string of n numbers with `strcat`
  (quadratic), `quadscope run --sizes 5000..80000 --fail-above "n log n"`:
  must exit 8 (fail) every time;
* C fixed — the same program keeping a pointer to the end (linear),
  `--fail-above n`: must exit 0 (pass) every time;
* Python set — `assert_scales(dedup_set, at_most="n", sizes=1000..16000)`
  (bench/gate_targets.py: membership in a hash set, linear): must pass;
* Python list — the same gate on `dedup_list` (membership in a list,
  quadratic): must fail;
* Python set, lambda — the set gate on `lambda items: dedup_set(items)` with
  `setup=lambda n: make_items(n)`: must pass;
* Python list, closure — the list gate on a closure defined in the gate's own
  `__main__`, deduplicating into a list it closes over, with a lambda setup:
  must fail. These two are sent to Valgrind's child Python by value
  (cloudpickle, `measure.pycount`) when the work is counted.

Each row reports how many of the R runs passed (exit 0), failed (8) or were
undecided (9, or anything else), for a Python gate how many ended with the
work counted (the sweep's meter "instructions"), and the median seconds per gate. With
`--busy` every run happens under `../shared/tools/busy --cores 1 --memory 64`
(a bounded competing load, started once for the whole benchmark); the
BENCHMARKS.md section reports both, quiet and busy.

usage: .venv/bin/python bench/gate_stability.py [--runs 20] [--quick] [--busy]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import log, machine, table

from quadscope.measure.cbuild import compile_c

ROOT = Path(__file__).resolve().parent.parent
BUSY = next((p for p in (ROOT.parent / "shared" / "tools" / "busy",  # beside the checkout,
                          ROOT.parent.parent / "shared" / "tools" / "busy")  # or a worktree's
             if p.exists()), ROOT.parent / "shared" / "tools" / "busy")

STRCAT_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    char *s = calloc(n * 6 + 16, 1), *end = s, field[16];
    for (long i = 0; i < n; i++) {
        snprintf(field, sizeof field, "%ld,", i % 10000);
#ifdef FIXED
        end = stpcpy(end, field);
#else
        strcat(s, field);
#endif
    }
    printf("%zu\n", strlen(s));
    return 0;
}
"""

_PY_GATE = """\
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from bench.gate_targets import make_items, dedup_set, dedup_list
from quadscope.api import assert_scales, ScalingError, ScalingUndecided

def closure():
    out = []
    def dedup(items):
        out.clear()
        for x in items:
            if x not in out:
                out.append(x)
        return out
    return dedup

try:
    result = assert_scales({target}, at_most="n", sizes=[1000, 2000, 4000, 8000, 16000],
                           setup={setup}, db={db!r}, report=Path({report!r}))
except ScalingError as exc:
    print(exc.result.analysis.sweep.meter, exc.result.analysis.sweep.counters_note)
    sys.exit(8)
except ScalingUndecided as exc:
    print(exc.result.analysis.sweep.meter, exc.result.analysis.sweep.counters_note)
    sys.exit(9)
print(result.analysis.sweep.meter, result.analysis.sweep.counters_note)
"""


def _cli(args: list[str], db: str) -> list[str]:
    return [sys.executable, "-m", "quadscope", "run", "--db", db, "--quiet", *args]


def gates() -> list[tuple[str, str, int, list[str]]]:
    """(name, gate, the exit expected, argv) of each gate; argv holds {db} and {report}."""
    strcat = compile_c(STRCAT_C, name="bench-strcat")
    fixed = compile_c(STRCAT_C, name="bench-strcat-fixed", flags=("-O2", "-DFIXED"))
    return [
        ("C strcat (n²)", '--fail-above "n log n"', 8,
         _cli(["--sizes", "5000..80000", "--fail-above", "n log n", "--", str(strcat), "{n}"],
              "{db}")),
        ("C strcat fixed (n)", "--fail-above n", 0,
         _cli(["--sizes", "5000..80000", "--fail-above", "n", "--", str(fixed), "{n}"],
              "{db}")),
        ("Python set dedup (n)", 'at_most="n"', 0, _py("dedup_set", "make_items")),
        ("Python list dedup (n²)", 'at_most="n"', 8, _py("dedup_list", "make_items")),
        ("Python set dedup, lambda (n)", 'at_most="n"', 0,
         _py("lambda items: dedup_set(items)", "lambda n: make_items(n)")),
        ("Python list dedup, closure (n²)", 'at_most="n"', 8,
         _py("closure()", "lambda n: make_items(n)")),
    ]


def _py(target: str, setup: str) -> list[str]:
    """The argv of a Python gate on `target` (an expression) with `setup`."""
    return [sys.executable, "-c", _PY_GATE.format(root=str(ROOT), target=target, setup=setup,
                                                  db="{db}", report="{report}")]


def run_gate(argv: list[str], tmp: str, k: int) -> tuple[int, float, str]:
    db, report = f"{tmp}/g{k}.db", f"{tmp}/g{k}.html"
    argv = [a.replace("{db}", db).replace("{report}", report) for a in argv]
    t0 = time.monotonic()
    path = os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False,
                          cwd=tmp, env={**os.environ, "PYTHONPATH": path})
    said = " / ".join(line.strip() for line in (done.stdout + done.stderr).splitlines()
                      if line.strip() and "warning" not in line and not line.startswith(" " * 5))
    # A run that exited otherwise than 0 or 8 keeps the end of what it said (a traceback's
    # exception is its last line: session 19 lost one to the first 400 characters).
    kept = said[:400] if done.returncode in (0, 8, 9) else said[-600:]
    return done.returncode, time.monotonic() - t0, kept


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--busy", action="store_true")
    ap.add_argument("--only", default="", help="comma list of gate numbers (1-6) to run")
    args = ap.parse_args(argv)
    runs = 5 if args.quick else args.runs
    busy = None
    if args.busy:
        busy = subprocess.Popen([str(BUSY), "--cores", "1", "--memory", "64", "--seconds",
                                 "3600"], start_new_session=True)
        time.sleep(2)
        if busy.poll() is not None:
            raise SystemExit(f"busy exited at once ({busy.returncode}): no load to measure under")
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="quadscope-gates-") as tmp:
            only = {int(k) for k in args.only.split(",") if k}
            for number, (name, gate, want, argv) in enumerate(gates(), 1):
                if only and number not in only:
                    continue
                codes, secs, counted = [], [], 0
                for k in range(runs):
                    code, s, said = run_gate(argv, tmp, len(rows) * 1000 + k)
                    codes.append(code)
                    secs.append(s)
                    counted += said.startswith("instructions ")  # a Python gate's meter
                    log(f"{name}: run {k + 1}/{runs} exit {code} in {s:.1f} s"
                        + (f": {said[:200]}" if code != want or name.startswith("Python")
                           else ""))
                rows.append((name, gate, {0: "pass", 8: "fail"}[want],
                             f"{codes.count(want)}/{runs}",
                             codes.count(0), codes.count(8), runs - codes.count(0) - codes.count(8),
                             f"{counted}/{runs}" if name.startswith("Python") else "-",
                             f"{statistics.median(secs):.1f}"))
    finally:
        if busy is not None:
            os.killpg(busy.pid, signal.SIGTERM)
            busy.wait(timeout=30)
    m = machine()
    print(f"Gate stability ({'under busy --cores 1 --memory 64' if args.busy else 'quiet'}; "
          f"{m['date']}, {m['nproc']} CPUs, {m['cpu']}), {runs} runs per gate:\n")
    print(table(["gate", "rule", "expected", "as expected", "pass (0)", "fail (8)",
                 "undecided/other", "work counted", "median s"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
