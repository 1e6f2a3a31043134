"""An exact sweep's counts at once against the same sweep counting one at a time (the peer).

For every accuracy-suite workload (quadscope.workloads.SUITE), the sweep
`quadscope run --meter instructions --budget 30 --start SMALLEST` runs as the
CLI runs it (`run.session.start`), once with the counts one at a time
(`QUADSCOPE_COUNT_JOBS=1`) and once with as many at a time as this machine's
CPUs allow (`meters.instructions.count_jobs`, at most four), alternating which
goes first, REPEATS times each. Reported per workload: each protocol's median
seconds from start to stored, their ratio (at once / one at a time), whether
both counted the same sizes and the same count at every size (an exact count
must not depend on what else ran beside it), and both verdicts of the work.

usage: .venv/bin/python bench/counts_at_once.py [--quick] [--busy] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import busy_load, log, machine, table

from quadscope.analyse.analysis import analyse
from quadscope.analyse.headline import lead_fit
from quadscope.measure.clock import SystemClock
from quadscope.meters.instructions import COUNT_JOBS, count_jobs
from quadscope.run import session
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore
from quadscope.workloads import SUITE, WORKLOADS, build

REPEATS = 3
BUDGET_S = 30.0
QUICK = ("constant", "linear_offset", "cubic", "fibonacci", "big_offset", "bubble_sort")


def one(name: str, jobs: int, store: SqliteStore) -> tuple[float, dict[int, float], str]:
    """(seconds to a stored verdict, the count at each size, the work's class) of one sweep
    counting `jobs` at a time."""
    w = WORKLOADS[name]
    os.environ[COUNT_JOBS] = str(jobs)
    try:
        spec = SweepSpec(command=w.argv(build(name)), name=f"at once {name} {jobs}",
                         mode="adaptive", budget_s=BUDGET_S, start_n=w.sizes[0],
                         meter="instructions", timeout_s=60.0)
        t0 = time.monotonic()
        sw = session.start(spec, store=store, clock=SystemClock(),
                           machine=session.Machine.real())
        elapsed = time.monotonic() - t0
    finally:
        del os.environ[COUNT_JOBS]
    runs = store.runs(sw.id)
    counts = {r.size_n: float(c) for r in runs if (c := r.value("instructions")) is not None}
    a = analyse(sw, runs)
    fit = lead_fit(a.fits.get("A", {}), a.work_metric)
    return elapsed, counts, "—" if fit is None else fit.cls


def measure(names: tuple[str, ...], repeats: int) -> tuple[list[list[object]], list[float]]:
    wide = count_jobs()
    rows, ratios = [], []
    with tempfile.TemporaryDirectory(prefix="qs-at-once-") as d:
        store = SqliteStore(Path(d) / "s.db")
        one("constant", 1, store)  # the probes (QEMU's, perf's) once, before any is timed
        for name in names:
            took: dict[int, list[float]] = {1: [], wide: []}
            seen: dict[int, set[tuple[tuple[int, float], ...]]] = {1: set(), wide: set()}
            classes: dict[int, set[str]] = {1: set(), wide: set()}
            for k in range(repeats):
                for jobs in ((1, wide) if k % 2 == 0 else (wide, 1)):
                    s, counts, cls = one(name, jobs, store)
                    took[jobs].append(s)
                    seen[jobs].add(tuple(sorted(counts.items())))
                    classes[jobs].add(cls)
            alone, together = statistics.median(took[1]), statistics.median(took[wide])
            same = len(seen[1] | seen[wide]) == 1
            ratios.append(together / alone)
            rows.append([name, f"{alone:.2f} s", f"{together:.2f} s", f"{together / alone:.2f}",
                         "yes" if same else "no", " / ".join(sorted(classes[1])),
                         " / ".join(sorted(classes[wide]))])
            log(f"counts at once: {rows[-1]}")
    return rows, ratios


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    ap.add_argument("--busy", action="store_true",
                    help="under ../shared/tools/busy --cores 1 --memory 64")
    ap.add_argument("--repeats", type=int, default=REPEATS)
    args = ap.parse_args(argv)
    facts = machine()
    with busy_load(args.busy):
        rows, ratios = measure(QUICK if args.quick else SUITE, args.repeats)
    print(f"# Counts at once against one at a time ({'busy' if args.busy else 'quiet'}, "
          f"{count_jobs()} at once)\n")
    print(", ".join(f"{k} {v}" for k, v in facts.items()) + "\n")
    print(table(["workload", "one at a time (median)", f"{count_jobs()} at once (median)",
                 "at once / one at a time", "same sizes and counts", "work, one at a time",
                 "work, at once"], rows))
    print(f"\nmedian at once / one at a time: {statistics.median(ratios):.2f} over "
          f"{len(rows)} workloads")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
