"""Time to verdict: adaptive mode against a fixed doubling grid with 10 repeats.

For each workload of a subset of the accuracy suite, two sweeps run back to
back (their order alternating from one workload to the next):

* fixed grid — n doubling from the workload's smallest suggested size up to
  its largest, `--repeat 10`, one warm-up: what a careful user would run by
  hand. Its time to verdict is the whole sweep's wall time: a fixed grid
  gives its verdict only at the end.
* adaptive — `SweepSpec(mode="adaptive", budget_s=B, start_n=smallest,
  until=("wall_s",))`: quadscope grows n and adds repeats only until the wall_s
  verdict is confident. Its time is run_sweep's wall time.

A sweep counts only if its final wall_s verdict is correct and confident;
otherwise its time is shown as "—" and the ratio is not computed. Reported:
seconds for each, the ratio adaptive / fixed per workload and its median.
Goal: median ratio ≤ 1/3.

usage: .venv/bin/python bench/time_to_verdict.py [--budget 30] [--only name,name]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Swept, log, medians_by_size, scratch_store, sweep, table

from quadscope.run.spec import SweepSpec
from quadscope.workloads import WORKLOADS, build

SUBSET = ("linear", "sort", "insertion_sort", "first_fit", "cubic", "sqrt", "memory",
          "linear_quadratic")
GRID_REPEAT = 10


def doubling(lo: int, hi: int) -> tuple[int, ...]:
    sizes, n = [], lo
    while n <= hi:
        sizes.append(n)
        n *= 2
    return tuple(sizes)


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    expected: str
    fixed_s: float
    fixed_verdict: str
    fixed_ok: bool
    adaptive_s: float
    adaptive_verdict: str
    adaptive_ok: bool
    adaptive_sizes: int
    adaptive_runs: int
    adaptive_medians: str  # "n: median wall_s" per size, to diagnose a wrong verdict

    @property
    def ratio(self) -> float | None:
        if self.fixed_ok and self.adaptive_ok and self.fixed_s > 0:
            return self.adaptive_s / self.fixed_s
        return None


def _ok(name: str, swept: Swept) -> bool:
    return WORKLOADS[name].verdict_kind(swept.verdict()) == "correct"


def measure(names: tuple[str, ...], budget_s: float) -> list[Row]:
    rows = []
    with scratch_store() as store:
        for k, name in enumerate(names):
            w = WORKLOADS[name]
            argv = w.argv(build(name))
            grid = SweepSpec(command=argv, name=f"ttv grid {name}", mode="sizes",
                             sizes=doubling(w.sizes[0], w.sizes[-1]), repeat=GRID_REPEAT,
                             warmup=1, timeout_s=30.0)
            adaptive = SweepSpec(command=argv, name=f"ttv adaptive {name}", mode="adaptive",
                                 budget_s=budget_s, start_n=w.sizes[0], until=("wall_s",),
                                 timeout_s=30.0)
            if k % 2 == 0:
                fixed_sw, adapt_sw = sweep(grid, store), sweep(adaptive, store)
            else:
                adapt_sw = sweep(adaptive, store)
                fixed_sw = sweep(grid, store)
            measured = adapt_sw.analysis.measured()
            sizes, medians = medians_by_size(adapt_sw.analysis)
            trace = ", ".join(f"{n}: {m * 1e3:.1f} ms" for n, m in zip(sizes, medians, strict=True))
            row = Row(name, w.expected, fixed_sw.elapsed_s, fixed_sw.verdict(),
                      _ok(name, fixed_sw), adapt_sw.elapsed_s, adapt_sw.verdict(),
                      _ok(name, adapt_sw), len({r.size_n for r in measured}), len(measured), trace)
            log(f"time-to-verdict: {name}: grid {row.fixed_s:.1f} s ({row.fixed_verdict}), "
                f"adaptive {row.adaptive_s:.1f} s ({row.adaptive_verdict}, "
                f"{row.adaptive_sizes} sizes, {row.adaptive_runs} runs)")
            rows.append(row)
    return rows


def markdown(rows: list[Row], budget_s: float) -> str:
    def secs(ok: bool, s: float, verdict: str) -> str:
        return f"{s:.1f} s ({verdict})" if ok else f"— ({verdict} after {s:.1f} s)"

    body = table(
        ["workload", "expected", f"fixed doubling grid, ×{GRID_REPEAT}", "adaptive",
         "adaptive sizes / runs", "adaptive / fixed"],
        [[r.name, r.expected, secs(r.fixed_ok, r.fixed_s, r.fixed_verdict),
          secs(r.adaptive_ok, r.adaptive_s, r.adaptive_verdict),
          f"{r.adaptive_sizes} / {r.adaptive_runs}",
          "—" if r.ratio is None else f"{r.ratio:.2f}"] for r in rows],
    )
    ratios = [r.ratio for r in rows if r.ratio is not None]
    med = f"**{statistics.median(ratios):.2f}**" if ratios else "—"
    wrong = [f"- {r.name}: adaptive said {r.adaptive_verdict} from median wall_s "
             f"{r.adaptive_medians}"
             for r in rows
             if WORKLOADS[r.name].verdict_kind(r.adaptive_verdict) == "wrong"]
    tail = ("\n\nConfidently wrong adaptive verdicts, with the data they came from:\n\n"
            + "\n".join(wrong)) if wrong else ""
    return (f"Adaptive budget {budget_s:.0f} s, watching wall_s only. Median ratio adaptive / "
            f"fixed over the {len(ratios)} workloads where both reached a correct verdict: "
            f"{med} (goal ≤ 0.33).\n\n" + body + tail)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=30.0)
    p.add_argument("--only", default="", help="comma-separated workload names")
    args = p.parse_args(argv)
    names = tuple(args.only.split(",")) if args.only else SUBSET
    rows = measure(names, args.budget)
    print(markdown(rows, args.budget))
    return 0


if __name__ == "__main__":
    sys.exit(main())
