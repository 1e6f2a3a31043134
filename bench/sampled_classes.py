"""Per-function classes from real perf profiles: each function's self time fitted blind and honest.

Every workload of the accuracy suite with a `culprit` (mode sizes) is profiled
once with perf at `--sizes` of its sizes (the profiler's default is 5); the same
profiles are then attributed with the culprit's self time fitted two ways:
blind (the fit judges the noise from the sizes' own scatter, as attribution did
before `profile.noise`) and honest (each size weighted by its Poisson and load
error, `noise.sampled_sd`). Each culprit verdict is scored against the
workload's true class: right (settled as it), WRONG (settled as another),
bracket (a bracket or "inconclusive" whose ends hold it) or open (no bracket
given, or one that misses it: not settled wrong, but not informative).

    PYTHONPATH=src python bench/sampled_classes.py [--sizes 5] [--quick]
Run it quiet and under `/work/shared/tools/busy --cores 1 --memory 64 -- ...`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from quadscope.analyse.fitting import fit_metric
from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.model import Fit, Sweep
from quadscope.profile.driver import choose_sizes, profile_sweep
from quadscope.profile.perf import PerfSampler, detect_perf
from quadscope.workloads import WORKLOADS, build


def score(fit: Fit | None, truth: str) -> str:
    if fit is None:
        return "open"
    if fit.cls != INCONCLUSIVE:
        return "right" if fit.cls == truth else "WRONG"
    lo, hi = fit.at_least, fit.at_most
    if lo and hi and REGISTRY.index(lo) <= REGISTRY.index(truth) <= REGISTRY.index(hi):
        return "bracket"
    return "open"


def words(fit: Fit | None) -> str:
    if fit is None:
        return "—"
    k = "" if fit.exponent is None or fit.exponent_ci is None else (
        f", k = {fit.exponent:.2f} [{fit.exponent_ci[0]:.2f}, {fit.exponent_ci[1]:.2f}]")
    if fit.cls != INCONCLUSIVE:
        return fit.cls + k
    return (f"{fit.at_least} … {fit.at_most}" if fit.at_least else "?") + k


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="one workload, its self times printed")
    args = ap.parse_args()
    sampler = PerfSampler(detect_perf())
    ws = [w for w in WORKLOADS.values() if w.suite and w.culprit and w.mode == "sizes"]
    ws = ws[:4] if args.quick else ws
    ws = [w for w in ws if w.name == args.only] if args.only else ws
    totals = {"blind": dict.fromkeys(("right", "WRONG", "bracket", "open"), 0),
              "honest": dict.fromkeys(("right", "WRONG", "bracket", "open"), 0)}
    print(f"load average {os.getloadavg()[0]:.1f}, {args.sizes} sizes a workload")
    print("| workload | true class | culprit samples at max n | blind | honest |")
    print("|---|---|---|---|---|")
    for w in ws:
        fits: dict[str, tuple[Fit, Fit]] = {}

        def both(metric: str, sizes: list[int], values: list[float], *, sd: Any = None,
                 fits: dict[str, tuple[Fit, Fit]] = fits, **kw: Any) -> Fit:
            # Blind is attribution before `profile.noise`: no errors, no `strict`.
            blind = fit_metric(metric, sizes, values,
                               **{k: v for k, v in kw.items() if k != "strict"})
            honest = fit_metric(metric, sizes, values, sd=sd, **kw)
            fits[metric] = (blind, honest)
            if args.only:
                print(metric, sizes, values, sd, file=sys.stderr)
            return honest

        sweep = Sweep(id=0, name=w.name, mode="sizes", command=w.argv(build(w.name)))
        with tempfile.TemporaryDirectory(prefix="quadscope-bench-classes-") as tmp:
            a = profile_sweep(sweep, choose_sizes(w.sizes, args.sizes), sampler=sampler,
                              out_dir=Path(tmp), measure_overhead=False, fit=both)
        row = next((c for c in a.culprits
                    if (c.user_caller or c.symbol).split(".")[0] == w.culprit), None)
        pair = fits.get(f"self time of {row.symbol}") if row is not None else None
        verdicts = [score(None if pair is None else pair[i], w.expected) for i in (0, 1)]
        for name, v in zip(("blind", "honest"), verdicts, strict=True):
            totals[name][v] += 1
        samples = "—" if row is None else f"{row.share_at_max * a.samples[-1]:.0f}"
        cells = [f"{words(None if pair is None else pair[i])} ({verdicts[i]})" for i in (0, 1)]
        print(f"| {w.name} | {w.expected} | {samples} | {cells[0]} | {cells[1]} |", flush=True)
    for name, t in totals.items():
        print(f"\n{name}: " + ", ".join(f"{k} {v}" for k, v in t.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
