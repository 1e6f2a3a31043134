"""Time to verdict: adaptive mode against a fixed doubling grid with 10 repeats.

For every workload of the accuracy suite (quadscope.workloads.SUITE), two
sweeps run back to back (their order alternating from one workload to the next):

* fixed grid — n doubling from the workload's smallest suggested size up to
  its largest (its suggested sizes themselves where they step by a constant,
  as the exponential ones do: doubling 12 → 24 would leave two sizes),
  `--repeat 10`, one warm-up: what a careful user would run by hand. Its time
  to verdict is the whole sweep's wall time: a fixed grid gives its verdict
  only at the end.
* adaptive — `SweepSpec(mode="adaptive", budget_s=B, start_n=smallest,
  until=("wall_s",))` with the default repeats: quadscope grows n and adds
  repeats only until the wall_s verdict is reached. Its time is run_sweep's
  wall time.

Each final wall_s verdict is scored as bench/accuracy.py scores it: a right
class or a right bracket (at most two neighbouring classes holding the truth)
is a correct verdict; a settled class or a bracket that excludes the truth is
confidently wrong; anything else is inconclusive. Reported: per workload the
seconds, verdict, sizes and runs of each protocol and the ratio adaptive /
fixed; the median ratio over the workloads where both reached a correct
verdict; and for each protocol how many verdicts were correct, wrong and
inconclusive. Goal: median ratio ≤ 1/3, no wrong verdict.

`--simulate` replaces the real programs by their simulated cost (each
workload's law, scaled so its largest suggested size takes 0.5 s, or
`--sim-top` s, plus 1 ms of start-up and 5% log-normal noise) on a fake
clock: seconds, not minutes,
to see where a policy spends its time. With `--charge-analysis` the fake clock
also moves by the real time quadscope itself takes (planning, fitting the runs
so far, storing): what a sweep of runs that cost nothing to launch would take
on this machine. `--quick` runs QUICK only.

usage: .venv/bin/python bench/time_to_verdict.py [--quick]
           [--simulate [--charge-analysis] [--sim-top 0.5]] [--budget 30] [--only name,name]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy import NONE, RIGHT_BRACKET, RIGHT_CLASS, WRONG, Verdict, kind
from common import Swept, log, medians_by_size, scratch_store, sweep, table

from quadscope.analyse.analysis import analyse
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore
from quadscope.workloads import SUITE, WORKLOADS, Workload, build
from quadscope.workloads.synthetic import Scenario, Truth, cost, truth_for

GRID_REPEAT = 10
BUDGET_S = 30.0
# --quick: one workload of each speed of growth, the slow-to-settle ones included.
QUICK = ("constant", "sqrt", "sort", "insertion_sort", "cubic", "fibonacci", "short_linear")
# --simulate: what a run costs beyond the law (process start-up), and the noise.
SIM_START_S = 1e-3
SIM_TOP_S = 0.5  # a law's cost at its largest suggested size (--sim-top)
SIM_SCENARIO = Scenario(cv=0.05)
SIM_EXP_BASE = {"exponential": 2.0, "fibonacci": 1.618}


def grid_sizes(sizes: Sequence[int]) -> tuple[int, ...]:
    """n doubling over the suggested range, or the suggested sizes where they step by a constant."""
    lo, hi = sizes[0], sizes[-1]
    if len(sizes) > 2 and len({b - a for a, b in itertools.pairwise(sizes)}) == 1:
        return tuple(sizes)
    out, n = [], lo
    while n <= hi:
        out.append(n)
        n *= 2
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Outcome:
    seconds: float
    verdict: Verdict | None
    sizes: int
    runs: int


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    expected: str
    fixed: Outcome
    adaptive: Outcome
    adaptive_medians: str  # "n: median wall_s" per size, to diagnose a wrong verdict

    def kind(self, which: str) -> str:
        return kind(self.name, getattr(self, which).verdict)

    @property
    def ratio(self) -> float | None:
        good = (RIGHT_CLASS, RIGHT_BRACKET)
        if self.kind("fixed") in good and self.kind("adaptive") in good and self.fixed.seconds > 0:
            return self.adaptive.seconds / self.fixed.seconds
        return None


def _specs(w: Workload, argv: tuple[str, ...], budget_s: float) -> tuple[SweepSpec, SweepSpec]:
    grid = SweepSpec(command=argv, name=f"ttv grid {w.name}", mode="sizes",
                     sizes=grid_sizes(w.sizes), repeat=GRID_REPEAT, warmup=1, timeout_s=30.0)
    adaptive = SweepSpec(command=argv, name=f"ttv adaptive {w.name}", mode="adaptive",
                         budget_s=budget_s, start_n=w.sizes[0], until=("wall_s",),
                         timeout_s=30.0)
    return grid, adaptive


def _outcome(swept: Swept) -> Outcome:
    fit = swept.analysis.fits.get("A", {}).get("wall_s")
    measured = swept.analysis.measured()
    return Outcome(swept.elapsed_s, None if fit is None else Verdict(fit.cls, fit.at_least,
                                                                      fit.at_most),
                   len({r.size_n for r in measured}), len(measured))


def _row(w: Workload, fixed: Swept, adaptive: Swept) -> Row:
    sizes, medians = medians_by_size(adaptive.analysis)
    trace = ", ".join(f"{n}: {m * 1e3:.1f} ms" for n, m in zip(sizes, medians, strict=True))
    row = Row(w.name, w.expected, _outcome(fixed), _outcome(adaptive), trace)
    for which in ("fixed", "adaptive"):
        o: Outcome = getattr(row, which)
        log(f"time-to-verdict: {w.name} {which}: {o.seconds:.1f} s, "
            f"{o.verdict.text() if o.verdict else '∅'} ({row.kind(which)}), "
            f"{o.sizes} sizes, {o.runs} runs")
    return row


def measure(names: Sequence[str], budget_s: float) -> list[Row]:
    rows = []
    with scratch_store() as store:
        for k, name in enumerate(names):
            w = WORKLOADS[name]
            grid, adaptive = _specs(w, w.argv(build(name)), budget_s)
            if k % 2 == 0:
                fixed_sw, adapt_sw = sweep(grid, store), sweep(adaptive, store)
            else:
                adapt_sw = sweep(adaptive, store)
                fixed_sw = sweep(grid, store)
            rows.append(_row(w, fixed_sw, adapt_sw))
    return rows


def sim_truth(w: Workload, top_s: float = SIM_TOP_S) -> Truth:
    """The workload's law over its suggested sizes: `top_s` at the largest, plus start-up."""
    law = "exp" if w.expected == "c^n" else w.expected
    t = truth_for(law, w.sizes, 0.0, base=SIM_EXP_BASE.get(w.name, 2.0), top_s=top_s)
    return Truth(t.law, t.a + SIM_START_S, t.b, t.base)


class ChargedClock(FakeClock):
    """A fake clock that also moves with the real time passed since it was made."""

    def __init__(self, start: float) -> None:
        super().__init__(start)
        self._real0 = time.perf_counter()

    def monotonic(self) -> float:
        return super().monotonic() + time.perf_counter() - self._real0

    def time(self) -> float:
        return self.monotonic()


def _simulated(spec: SweepSpec, truth: Truth, seed: int, charge: bool = False) -> Swept:
    disturbed = cost(truth, SIM_SCENARIO, np.random.default_rng(seed), expected_runs=100)

    def one(argv: Sequence[str]) -> Measurement:
        return Measurement(wall_s=disturbed(int(argv[-1])), exit_code=0)

    clock = ChargedClock(start=1000.0) if charge else FakeClock(start=1000.0)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "sim.db")
        sw = run_sweep(spec, executor=FakeExecutor(one, clock), clock=clock, store=store)
        elapsed_s = clock.monotonic() - 1000.0  # as `sweep` times a real one: before analysing
        swept = Swept(analyse(sw, store.runs(sw.id)), elapsed_s)
        store.close()
    return swept


def simulate(names: Sequence[str], budget_s: float, seed: int = 0,
             charge: bool = False, top_s: float = SIM_TOP_S) -> list[Row]:
    rows = []
    for k, name in enumerate(names):
        w = WORKLOADS[name]
        grid, adaptive = _specs(w, ("sim", "{n}"), budget_s)
        truth = sim_truth(w, top_s)
        rows.append(_row(w, _simulated(grid, truth, seed + k, charge),
                         _simulated(adaptive, truth, seed + k, charge)))
    return rows


def markdown(rows: list[Row], budget_s: float, simulated: bool, charged: bool = False,
             top_s: float = SIM_TOP_S) -> str:
    def cell(r: Row, which: str) -> str:
        o: Outcome = getattr(r, which)
        text = o.verdict.text() if o.verdict else "no verdict"
        mark = {RIGHT_CLASS: "✓", RIGHT_BRACKET: "✓[]", WRONG: "✗", NONE: "∅"}.get(
            r.kind(which), "?")
        return f"{o.seconds:.1f} s ({text} {mark}), {o.sizes} sizes / {o.runs} runs"

    body = table(
        ["workload", "expected", f"fixed doubling grid, ×{GRID_REPEAT}", "adaptive",
         "adaptive / fixed"],
        [[r.name, r.expected, cell(r, "fixed"), cell(r, "adaptive"),
          "—" if r.ratio is None else f"{r.ratio:.2f}"] for r in rows],
    )
    counts = []
    for which in ("fixed", "adaptive"):
        kinds = [r.kind(which) for r in rows]
        right = sum(k in (RIGHT_CLASS, RIGHT_BRACKET) for k in kinds)
        wrong = kinds.count(WRONG)
        total = sum(getattr(r, which).seconds for r in rows)
        counts.append([which, right, wrong, len(kinds) - right - wrong, f"{total:.0f} s"])
    summary = table(["protocol", "correct (class or bracket)", "confidently wrong",
                     "inconclusive", "total time"], counts)
    ratios = [r.ratio for r in rows if r.ratio is not None]
    med = f"**{statistics.median(ratios):.2f}**" if ratios else "—"
    wrong_rows = [f"- {r.name}: adaptive said {r.adaptive.verdict.text()} from median wall_s "
                  f"{r.adaptive_medians}" for r in rows
                  if r.kind("adaptive") == WRONG and r.adaptive.verdict]
    tail = ("\n\nConfidently wrong adaptive verdicts, with the data they came from:\n\n"
            + "\n".join(wrong_rows)) if wrong_rows else ""
    how = (f"Simulated on a fake clock (each law scaled to {top_s:g} s at the largest suggested size, "
           f"{SIM_START_S * 1e3:.0f} ms start-up, {SIM_SCENARIO.cv:.0%} noise"
           + ("; the clock also charged with quadscope's own real time" if charged else "")
           + "). ") if simulated else ""
    return (f"{how}{len(rows)} workloads; adaptive budget {budget_s:.0f} s, watching wall_s only. "
            f"Median ratio adaptive / fixed over the {len(ratios)} workloads where both reached "
            f"a correct verdict: {med} (goal ≤ 0.33).\n\n" + summary + "\n\n" + body + tail)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=BUDGET_S)
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    p.add_argument("--simulate", action="store_true",
                   help="simulated costs on a fake clock instead of the real programs")
    p.add_argument("--charge-analysis", action="store_true",
                   help="with --simulate: the fake clock also moves by quadscope's own real time")
    p.add_argument("--sim-top", type=float, default=SIM_TOP_S,
                   help="with --simulate: each law's cost in seconds at its largest suggested size")
    p.add_argument("--only", default="", help="comma-separated workload names")
    args = p.parse_args(argv)
    names = tuple(args.only.split(",")) if args.only else QUICK if args.quick else SUITE
    rows = (simulate(names, args.budget, charge=args.charge_analysis, top_s=args.sim_top)
            if args.simulate else measure(names, args.budget))
    print(markdown(rows, args.budget, args.simulate, args.charge_analysis, args.sim_top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
