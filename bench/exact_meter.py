"""The exact meter against wall time: the sizes and seconds each needs for a correct verdict.

For accuracy-suite workloads (quadscope.workloads; `--quick`: `sort` alone)
both meters sweep five sizes spread over a 16x range ending at max n, for
max n on a ladder (4·10³, 10⁴, 3·10⁴, ... up to the workload's own largest
size), until the verdict is correct (in the workload's `acceptable` set):

* wall time — `wall_s` of a plain sweep (rusage only, repeat 5, 1 warm-up),
  the verdict quadscope reports by default;
* exact — `instructions` of a `--meter instructions` sweep on this machine
  (perf `instructions:u` where the CPU counts it, else Valgrind), through
  `choose_measuring`, as `quadscope run --meter instructions` would.

Each row says the smallest max n at which the meter was right, the seconds
the sweeps took up to and including that rung, and what it said on the way.
Goal: n log n told from n at n ≤ 10⁴ on `sort` with the exact meter.
For one sweep at the rung the goal names, it also prints the instructions
fit's 95% exponent interval, so a zero-width interval cannot go unseen.

usage: .venv/bin/python bench/exact_meter.py [--quick] [--only name,name]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import log, machine, scratch_store, table

from quadscope.analyse.analysis import analyse
from quadscope.classes import INCONCLUSIVE
from quadscope.measure.clock import SystemClock
from quadscope.measure.counters import NoCounters
from quadscope.measure.launcher import Executor, ProcessExecutor
from quadscope.meters import choose_measuring
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import Store
from quadscope.workloads import SUITE, WORKLOADS, Workload, build

LADDER = (4_000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000)


def sizes_to(max_n: int) -> tuple[int, ...]:
    return tuple(sorted({max(1, round(max_n / 16 * 2 ** k)) for k in range(5)}))


def verdict(store: Store, executor: Executor, argv: tuple[str, ...], sizes: tuple[int, ...],
            meter: str, counters: str) -> tuple[str, float, str]:
    """(class, seconds, k interval) of one sweep's headline metric for this meter."""
    metric = "instructions" if meter == "instructions" else "wall_s"
    spec = SweepSpec(command=argv, sizes=sizes, repeat=5 if meter == "time" else 3,
                     warmup=1 if meter == "time" else 0, meter=meter, timeout_s=120)
    t0 = time.monotonic()
    sw = run_sweep(spec, executor=executor, clock=SystemClock(), store=store, counters=counters)
    elapsed = time.monotonic() - t0
    fit = analyse(sw, store.runs(sw.id)).fits["A"].get(metric)
    if fit is None:
        return INCONCLUSIVE, elapsed, "—"
    ci = fit.exponent_ci
    return fit.cls, elapsed, "—" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def climb(w: Workload, store: Store, executor: Executor, meter: str,
          counters: str) -> list[object]:
    exe = build(w.name)
    argv = w.argv(exe)
    top = max(w.sizes)
    spent = 0.0
    said: list[str] = []
    for max_n in [n for n in LADDER if n <= top] or [top]:
        cls, s, ci = verdict(store, executor, argv, sizes_to(max_n), meter, counters)
        spent += s
        said.append(f"{max_n:g}: {cls}")
        log(f"{w.name} {meter} max n {max_n}: {cls} ({s:.1f} s, k {ci})")
        if cls in w.acceptable and cls != INCONCLUSIVE:
            return [w.name, meter, f"{max_n:,}", f"{spent:.1f}", ci, "; ".join(said)]
    return [w.name, meter, "not reached", f"{spent:.1f}", "—", "; ".join(said)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the sort workload alone")
    ap.add_argument("--only", default="", help="comma list of workloads")
    args = ap.parse_args(argv)
    names = [x for x in args.only.split(",") if x] or (["sort"] if args.quick else [
        n for n in SUITE if WORKLOADS[n].mode == "sizes"])
    exact = choose_measuring(["/bin/true"], meter="instructions")
    plain = ProcessExecutor(NoCounters())
    rows = []
    with scratch_store() as store:
        for name in names:
            w = WORKLOADS[name]
            rows.append(climb(w, store, plain, "time", "rusage"))
            rows.append(climb(w, store, exact.executor, "instructions", exact.counters))
    m = machine()
    print("## Exact meter\n")
    print(f"`bench/exact_meter.py{' --quick' if args.quick else ''}` on {m['date']}: "
          f"{m['nproc']} cores, kernel {m['kernel']}, {m['cpu']}, Python {m['python']}; "
          f"instructions counted by {exact.counters}.\n")
    print("Five sizes over a 16x range ending at max n; the first max n on the ladder whose "
          "verdict is correct, and the seconds spent on the ladder up to it.\n")
    print(table(["workload", "meter", "max n for a correct verdict", "seconds",
                 "k 95% at that rung", "verdicts on the way"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
