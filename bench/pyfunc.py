"""Python functions: a ~1 µs function's growth class, and the cost per measured call vs pyperf.

1. Growth: `quadscope.api.sweep_function` (calibrated in-process batches,
   the default) sweeps `bisect.bisect` and `list.index` halfway along a
   sorted list of n (bench/pyfunc_targets.py) over sizes 10³..10⁶ (`--quick`:
   10³..6.4·10⁴), timed (wall_s) and with the exact meter (instructions of
   the call alone under Valgrind, sizes ×4 apart); we report each verdict
   (true: log n and n) and the per-call time at the smallest n.
2. Cost: for the bisect function at n = 10⁴, the harness seconds quadscope
   spends per measured value (one run = one calibrated batch, mean of the
   repeats of a sweep of that one size) and per point (all repeats), against
   the named peer pyperf (`python -m pyperf timeit`, `--fast` with `--quick`,
   run on the same statement in the same process run); and the per-call
   time each reports, with their ratio.

usage: .venv/bin/python bench/pyfunc.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyfunc_targets as targets
from common import log, machine, table

from quadscope.api import sweep_function
from quadscope.measure.pyfunc import FunctionExecutor
from quadscope.units import fmt_value

HERE = Path(__file__).resolve().parent


def growth(quick: bool, db: Path) -> list[list[object]]:
    top = 64_000 if quick else 1_000_000
    rows: list[list[object]] = []
    for meter, step in (("time", 2), ("instructions", 4)):
        sizes = [n for n in (1000 * step**k for k in range(11)) if n <= top]
        metric = "wall_s" if meter == "time" else "instructions"
        for func, truth in ((targets.bisect_middle, "log n"), (targets.index_middle, "n")):
            t0 = time.monotonic()
            a = sweep_function(func, setup=targets.make_list, sizes=sizes,
                               repeat=3 if quick else 5, db=db, meter=meter)
            elapsed = time.monotonic() - t0
            fit = a.fits["A"][metric]
            smallest = min(r.measurement.wall_s for r in a.measured() if r.size_n == sizes[0])
            rows.append([func.__name__, truth, metric, fit.cls, fmt_value("wall_s", smallest),
                         f"{sizes[0]:,}..{sizes[-1]:,} ({len(sizes)})", len(a.measured()),
                         f"{elapsed:.1f}"])
            log(f"{func.__name__} {metric}: {fit.cls} ({elapsed:.1f} s)")
    return rows


def ours(n: int, repeat: int) -> tuple[float, float, float]:
    """(seconds per measured value, seconds per point, per-call s) for one size."""
    ex = FunctionExecutor({"f": targets.bisect_middle}, setup=targets.make_list)
    t0 = time.monotonic()
    values = [ex.execute(["f", str(n)], None).wall_s for _ in range(repeat)]
    spent = time.monotonic() - t0
    return spent / repeat, spent, sorted(values)[len(values) // 2]


def pyperf(n: int, quick: bool) -> tuple[float, float, float]:
    """(seconds per value, seconds per point, mean per-call s) from `python -m pyperf timeit`."""
    with tempfile.TemporaryDirectory(prefix="quadscope-bench-pyperf-") as tmp:
        out = Path(tmp) / "b.json"
        argv = [sys.executable, "-m", "pyperf", "timeit", "--quiet", "-o", str(out),
                *(["--fast"] if quick else []),
                "-s", f"import sys; sys.path.insert(0, {str(HERE)!r}); import pyfunc_targets as "
                      f"t; xs = t.make_list({n}); f = t.bisect_middle",
                "f(xs)"]
        t0 = time.monotonic()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        spent = time.monotonic() - t0
        data = json.loads(out.read_text())
    values = [v for run in data["benchmarks"][0]["runs"] for v in run.get("values", [])]
    mean = sum(values) / len(values)
    return spent / len(values), spent, mean


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, pyperf --fast")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="quadscope-bench-") as tmp:
        db = Path(tmp) / "bench.db"
        rows = growth(args.quick, db)
        n = 10_000
        q = ours(n, 3 if args.quick else 20)
    p = pyperf(n, args.quick)
    m = machine()
    print("## Python functions\n")
    print(f"`bench/pyfunc.py{' --quick' if args.quick else ''}` on {m['date']}: "
          f"{m['nproc']} cores, kernel {m['kernel']}, {m['cpu']}, Python {m['python']}.\n")
    print(table(["function", "true class", "metric", "quadscope's verdict", "per call at min n",
                 "sizes", "runs", "sweep s"], rows))
    print(f"\nCost at n = {n:,} (`bisect_middle`): harness seconds per measured value and per "
          "point, and the per-call time reported; ratios are quadscope / pyperf.\n")
    print(table(["tool", "s per value", "s per point", "per call"], [
        ["quadscope (in-process batches)", f"{q[0]:.4f}", f"{q[1]:.2f}", fmt_value("wall_s", q[2])],
        ["pyperf timeit" + (" --fast" if args.quick else ""), f"{p[0]:.4f}", f"{p[1]:.2f}",
         fmt_value("wall_s", p[2])],
        ["ratio", f"{q[0] / p[0]:.2f}×", f"{q[1] / p[1]:.2f}×", f"{q[2] / p[2]:.2f}×"],
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
