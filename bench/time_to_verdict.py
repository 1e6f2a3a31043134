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

`--counting` adds two protocols that count the work (issue 25), both run as
`quadscope run` runs them (the session, the meter choosing its executor):

* count — `--meter instructions` in adaptive mode from the same smallest
  size with the same budget: the work counted once per size (Valgrind here,
  no hardware counter), doubling until the counts settle
  (`run.counting.exact_plan`).
* auto — the default meter in adaptive mode: the timed adaptive sweep, then
  the work counted where time left the class open (`run.counting`).

Their verdict is the headline's (`headline.lead_fit`: the work where counted
and settled, else the time), scored as above, and their ratio is to the
time-only fixed grid. Goal (issue 25): median count / fixed ≤ 1/10.
`--busy` runs everything under `../shared/tools/busy --cores 1 --memory 64`.

`--simulate` replaces the real programs by their simulated cost (each
workload's law, scaled so its largest suggested size takes 0.5 s, or
`--sim-top` s, plus 1 ms of start-up and 5% log-normal noise) on a fake
clock: seconds, not minutes,
to see where a policy spends its time. With `--charge-analysis` the fake clock
also moves by the real time quadscope itself takes (planning, fitting the runs
so far, storing): what a sweep of runs that cost nothing to launch would take
on this machine. `--quick` runs QUICK only.

usage: .venv/bin/python bench/time_to_verdict.py [--quick] [--counting] [--busy]
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
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy import NONE, RIGHT_BRACKET, RIGHT_CLASS, WRONG, Verdict, kind
from common import Swept, busy_load, log, medians_by_size, scratch_store, sweep, table

from quadscope.analyse.analysis import analyse
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore, Store
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
    count: Outcome | None = None  # --counting: --meter instructions, adaptive
    auto: Outcome | None = None  # --counting: the default meter (time, then counting), adaptive

    def kind(self, which: str) -> str:
        o: Outcome | None = getattr(self, which)
        return NONE if o is None else kind(self.name, o.verdict)

    def ratio_of(self, which: str) -> float | None:
        """`which`'s seconds over the fixed grid's, where both reached a correct verdict."""
        good = (RIGHT_CLASS, RIGHT_BRACKET)
        o: Outcome | None = getattr(self, which)
        if (o is not None and self.kind("fixed") in good and self.kind(which) in good
                and self.fixed.seconds > 0):
            return o.seconds / self.fixed.seconds
        return None

    @property
    def ratio(self) -> float | None:
        return self.ratio_of("adaptive")


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


def _counted(spec: SweepSpec, store: Store) -> Outcome:
    """A sweep as `quadscope run` makes it (the spec's meter picks the executor and any
    counting), timed from start to stored, scored on its headline (`lead_fit`)."""
    from quadscope.analyse.headline import lead_fit
    from quadscope.measure.clock import SystemClock
    from quadscope.run import session

    t0 = time.monotonic()
    sw = session.start(spec, store=store, clock=SystemClock(), machine=session.Machine.real())
    elapsed = time.monotonic() - t0
    analysis = analyse(sw, store.runs(sw.id))
    fit = lead_fit(analysis.fits.get("A", {}), analysis.work_metric)
    measured = analysis.measured()
    counted = sorted({r.size_n for r in measured if r.value("instructions") is not None})
    verdict = None if fit is None else Verdict(fit.cls, fit.at_least, fit.at_most)
    log(f"time-to-verdict: {spec.name}: {elapsed:.1f} s, "
        f"{verdict.text() if verdict else '∅'}, meter {sw.meter}, counted at {counted}\n"
        f"    {analysis.verdict}")
    return Outcome(elapsed, verdict, len({r.size_n for r in measured}), len(measured))


def _counting_specs(w: Workload, argv: tuple[str, ...],
                    budget_s: float) -> tuple[SweepSpec, SweepSpec]:
    count = SweepSpec(command=argv, name=f"ttv count {w.name}", mode="adaptive",
                      budget_s=budget_s, start_n=w.sizes[0], meter="instructions",
                      timeout_s=60.0)
    auto = SweepSpec(command=argv, name=f"ttv auto {w.name}", mode="adaptive",
                     budget_s=budget_s, start_n=w.sizes[0], until=("wall_s",), timeout_s=30.0)
    return count, auto


def measure(names: Sequence[str], budget_s: float, counting: bool = False) -> list[Row]:
    rows = []
    with scratch_store() as store:
        for k, name in enumerate(names):
            w = WORKLOADS[name]
            argv = w.argv(build(name))
            grid, adaptive = _specs(w, argv, budget_s)
            if k % 2 == 0:
                fixed_sw, adapt_sw = sweep(grid, store), sweep(adaptive, store)
            else:
                adapt_sw = sweep(adaptive, store)
                fixed_sw = sweep(grid, store)
            row = _row(w, fixed_sw, adapt_sw)
            if counting:
                count, auto = _counting_specs(w, argv, budget_s)
                row = replace(row, count=_counted(count, store), auto=_counted(auto, store))
            rows.append(row)
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
    if any(r.count is not None for r in rows):
        tail += "\n\n" + counting_markdown(rows, budget_s)
    how = (f"Simulated on a fake clock (each law scaled to {top_s:g} s at the largest suggested size, "
           f"{SIM_START_S * 1e3:.0f} ms start-up, {SIM_SCENARIO.cv:.0%} noise"
           + ("; the clock also charged with quadscope's own real time" if charged else "")
           + "). ") if simulated else ""
    return (f"{how}{len(rows)} workloads; adaptive budget {budget_s:.0f} s, watching wall_s only. "
            f"Median ratio adaptive / fixed over the {len(ratios)} workloads where both reached "
            f"a correct verdict: {med} (goal ≤ 0.33).\n\n" + summary + "\n\n" + body + tail)


def counting_markdown(rows: list[Row], budget_s: float) -> str:
    """The counting protocols against the time-only fixed grid (issue 25)."""
    def cell(r: Row, which: str) -> str:
        o: Outcome | None = getattr(r, which)
        if o is None:
            return "—"
        text = o.verdict.text() if o.verdict else "no verdict"
        mark = {RIGHT_CLASS: "✓", RIGHT_BRACKET: "✓[]", WRONG: "✗", NONE: "∅"}.get(
            r.kind(which), "?")
        return f"{o.seconds:.1f} s ({text} {mark}), {o.sizes} sizes / {o.runs} runs"

    def ratio(r: Row, which: str) -> str:
        x = r.ratio_of(which)
        return "—" if x is None else f"{x:.2f}"

    body = table(["workload", "expected", f"fixed doubling grid, ×{GRID_REPEAT} (time)",
                  "count (--meter instructions, adaptive)", "count / fixed",
                  "auto (time, then counting)", "auto / fixed"],
                 [[r.name, r.expected, cell(r, "fixed"), cell(r, "count"), ratio(r, "count"),
                   cell(r, "auto"), ratio(r, "auto")] for r in rows])
    counts, medians = [], []
    for which in ("fixed", "count", "auto"):
        kinds = [r.kind(which) for r in rows]
        right = sum(k in (RIGHT_CLASS, RIGHT_BRACKET) for k in kinds)
        wrong = kinds.count(WRONG)
        total = sum(o.seconds for r in rows if (o := getattr(r, which)) is not None)
        counts.append([which, right, wrong, len(kinds) - right - wrong, f"{total:.0f} s"])
        if which != "fixed":
            ratios = [x for r in rows if (x := r.ratio_of(which)) is not None]
            medians.append(f"{which} / fixed **{statistics.median(ratios):.2f}** over "
                           f"{len(ratios)} workloads" if ratios else f"{which} / fixed —")
    summary = table(["protocol", "correct (class or bracket)", "confidently wrong",
                     "inconclusive", "total time"], counts)
    return (f"Counting the work (budget {budget_s:.0f} s each; verdict: the headline, the work "
            f"where counted and settled, else the time). Median ratio, where both reached a "
            f"correct verdict: {'; '.join(medians)} (goal ≤ 0.10).\n\n{summary}\n\n{body}")


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
    p.add_argument("--counting", action="store_true",
                   help="also --meter instructions and --meter auto, adaptive (issue 25)")
    p.add_argument("--busy", action="store_true",
                   help="under ../shared/tools/busy --cores 1 --memory 64 throughout")
    args = p.parse_args(argv)
    names = tuple(args.only.split(",")) if args.only else QUICK if args.quick else SUITE
    if args.simulate:
        rows = simulate(names, args.budget, charge=args.charge_analysis, top_s=args.sim_top)
    else:
        with busy_load(args.busy):
            rows = measure(names, args.budget, counting=args.counting)
    print(markdown(rows, args.budget, args.simulate, args.charge_analysis, args.sim_top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
